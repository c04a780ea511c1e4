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
    return p


def run_app(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        from troubleshooter.tui.app import main as tui_main
    except ModuleNotFoundError as exc:  # pragma: no cover
        print(f"troubleshooter: the interactive app is unavailable ({exc}); use a verb, e.g. `troubleshooter check`", file=sys.stderr)
        return 2
    return tui_main(args)
