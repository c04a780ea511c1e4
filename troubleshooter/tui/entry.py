"""Start the interactive app (imports Textual only here, so headless verbs stay light)."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    from troubleshooter.probe.targetspec import add_target_options

    p = argparse.ArgumentParser(prog="troubleshooter", description="Guided troubleshooting of a slow GPU training job. "
                                "Verbs: check, capture, parse, diagnose, export, sessions, trees, demo ... (troubleshooter VERB --help)")
    add_target_options(p)
    p.add_argument("--resume", nargs="?", const="latest", metavar="ID", help="resume a session (default: the latest)")
    p.add_argument("--symptom", metavar="ID", help="start directly on this symptom's tree")
    p.add_argument("--demo", metavar="CASE", help="practise on a reference case (case1..case4, healthy)")
    p.add_argument("--learn", action="store_true", help="learn mode: explain every step")
    p.add_argument("--evidence", nargs="+", action="extend", metavar="[SIDE:][KIND=]FILE",
                   help="open on tool outputs someone pasted (files or folders), as diagnose --evidence reads them; "
                   "outputs of two or more nodes (gpu07:a.txt gpu08:b.txt, a pdsh paste) are diagnosed node by node")
    return p


def evidence_error(args: argparse.Namespace) -> str:
    """What keeps ``--evidence`` from opening ("" if nothing): read once before the app starts, so outputs
    nothing can be read from are exit 2 and a message, never the app opening on an error dialog."""
    if not getattr(args, "evidence", None):
        return ""
    if args.bundle or args.job or args.exec_prefix or "-" in args.evidence:
        return "--evidence opens pasted files (not standard input); it does not combine with --bundle/--job/--exec"
    from troubleshooter.service.outputs import OutputsReader

    args.outputs = OutputsReader()  # the app starts from this reading (a long log is not read twice)
    try:
        args.outputs.read(args.evidence)
    except Exception as exc:  # noqa: BLE001 - PastedError: none of them could be read, and why
        return f"--evidence: {exc}"
    return ""


def run_app(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    problem = evidence_error(args)
    if problem:  # redacted and escaped as every argument error (tui.app.main)
        from troubleshooter import settings
        from troubleshooter.output.redact import Redactor
        from troubleshooter.output.safe import escape_controls

        print(f"troubleshooter: {escape_controls(Redactor(settings.load().redact_extra).text(problem))}", file=sys.stderr)
        return 2
    try:
        from troubleshooter.tui.app import main as tui_main
    except ModuleNotFoundError as exc:  # pragma: no cover
        print(f"troubleshooter: the interactive app is unavailable ({exc}); use a verb, e.g. `troubleshooter check`", file=sys.stderr)
        return 2
    return tui_main(args)
