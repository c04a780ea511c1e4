"""The headless command line: check, capture, parse, diagnose, export ... and the TUI when given no verb.

Machine output goes to stdout (``--json`` on every headless verb), diagnostics to stderr.
Exit codes: 0 ok, 1 something failed (a check, a root cause found for diagnose), 2 could not run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from troubleshooter import __version__

EXIT_OK, EXIT_FAIL, EXIT_CANNOT = 0, 1, 2


class CliError(Exception):
    """A user-facing error: printed as one line on stderr, exit 2."""


def _err(msg: str) -> None:
    print(f"troubleshooter: {msg}", file=sys.stderr)


def add_target_options(p: argparse.ArgumentParser, *, bundle: bool = True) -> None:
    g = p.add_argument_group("where to run (default: here)")
    if bundle:
        g.add_argument("--bundle", metavar="PATH", help="replay a captured bundle (directory or .tar.gz)")
    g.add_argument("--job", metavar="J", help="run inside running Slurm job J (srun --jobid J --overlap)")
    g.add_argument("--node", metavar="N", help="with --job: the node of the allocation to run on")
    g.add_argument("--container-name", metavar="C", help="with --job: the pyxis container of the job")
    g.add_argument("--exec", dest="exec_prefix", metavar="PREFIX",
                   help="run inside a container or wrapper, e.g. 'docker exec trainer' (with --job: inside the step)")
    g.add_argument("--pid", type=int, metavar="PID", help="the training process (numastat -p, its environment)")
    g.add_argument("--steps-log", metavar="FILE", help="a training log with step times (Megatron/NeMo/Lightning, CSV, one per line)")
    g.add_argument("--nccl-log", metavar="FILE", help="an NCCL_DEBUG=INFO log of the job")
    g.add_argument("--nccl-tests-dir", metavar="DIR", help="where all_gather_perf & co. live (for --measure)")
    p.add_argument("--profile", metavar="ID", help="reference profile (h100, h200, b200, gb200, gb300, generic; default: from the GPUs seen)")


def make_target(args: argparse.Namespace):
    from troubleshooter.bundle import BundleError
    from troubleshooter.targets import make_target as mk

    try:
        return mk(bundle=getattr(args, "bundle", None), job=args.job, node=args.node,
                  container_name=args.container_name, exec_prefix=args.exec_prefix)
    except (BundleError, ValueError) as exc:
        raise CliError(str(exc)) from exc


def make_params(args: argparse.Namespace, target=None):
    from troubleshooter.sources import Params

    params = Params(pid=getattr(args, "pid", None))
    if getattr(args, "job", None):
        params.extra["job"] = args.job
    for opt in ("steps_log", "nccl_log", "nccl_tests_dir"):
        if getattr(args, opt, None):
            params.extra[opt] = getattr(args, opt)
    if target is not None and getattr(target, "kind", "") == "bundle":
        saved = target.bundle.params
        if params.pid is None and saved.get("pid"):
            params.pid = saved["pid"]
    return params


def pick_profile(args: argparse.Namespace, fs) -> Any:
    from troubleshooter import profiles

    try:
        if getattr(args, "profile", None):
            return profiles.get(args.profile)
        return profiles.get(profiles.guess(fs.get_value("gpu.names")))
    except profiles.ProfileError as exc:
        raise CliError(str(exc)) from exc


# ------------------------------------------------------------------ check
def cmd_check(args: argparse.Namespace) -> int:
    from rich.console import Console

    from troubleshooter import checks, collect, report

    target = make_target(args)
    params = make_params(args, target)
    progress = None
    if not args.json and sys.stderr.isatty():
        def progress(kind: str, obj: Any) -> None:
            if kind in ("start", "done"):
                name = getattr(obj, "id", None) or getattr(obj, "source_id", "")
                print(f"  {'running' if kind == 'start' else 'done   '} {name}", file=sys.stderr)
    coll = collect.collect(target, params=params, measure=args.measure, on_event=progress)
    profile = pick_profile(args, coll.facts)
    status = {sid: ev.describe() for sid, ev in coll.evidence.items()}
    results = checks.run_checks(coll.facts, profile.thresholds, status, measure=args.measure)
    # sources skipped on purpose (no --pid, in-process on a remote target) ran nothing either way
    tried = [ev for ev in coll.evidence.values() if ev.status.value not in ("skipped", "not-captured")]
    nothing_ran = bool(tried) and all(ev.status.value in ("error", "timed-out", "not-installed") for ev in tried)
    ctx = report.context_lines(coll.facts, target.describe())
    # the target went away during the sweep (a Slurm job that ended): the results are incomplete, not "ok"
    gone = getattr(target, "gone", "")
    lost = [ev for ev in tried if ev.source_id in getattr(target, "lost", ())]
    if nothing_ran:
        ctx.append("could not run anything in this target: " + tried[0].describe())
    elif lost:
        ctx.append(f"the target went away during the check ({gone}): {len(lost)} source(s) could not finish, "
                   "results are incomplete")
    if args.json:
        print(report.check_json(results, ctx, target.describe(), profile.id, coll.evidence))
    else:
        report.print_check(Console(), results, ctx, profile.id, coll.wall_s)
    if nothing_ran or lost:
        _err(ctx[-1])
    if args.junit:
        Path(args.junit).write_bytes(report.junit_xml(results))
    return checks.exit_code(results, nothing_ran=nothing_ran or bool(lost))


# ------------------------------------------------------------------ capture
def cmd_capture(args: argparse.Namespace) -> int:
    from troubleshooter import bundle as bmod, collect
    from troubleshooter.targets import LocalTarget

    target = make_target(args)
    if target.kind == "bundle":
        raise CliError("capture runs probes live; --bundle replays one (use check --bundle)")
    params = make_params(args, target)
    sides = {}
    coll = collect.collect(target, params=params, measure=args.measure)
    sides["target"] = (target.describe(), coll.evidence.values())
    if args.host_too and target.kind != "local":
        host = LocalTarget()
        hc = collect.collect(host, params=params, measure=False)
        sides["host"] = (host.describe(), hc.evidence.values())
    manifest, files = bmod.build_manifest(sides, params={"pid": params.pid, **params.extra}, note=args.note or "")
    out = args.output or f"{manifest['host']}-{manifest['created_at'].replace(':', '')}.bundle.tar.gz"
    try:
        path = bmod.write(out, manifest, files)
    except (OSError, bmod.BundleError) as exc:
        raise CliError(f"cannot write bundle {out}: {exc}") from exc
    counts: dict[str, int] = {}
    for ev in coll.evidence.values():
        counts[ev.status.value] = counts.get(ev.status.value, 0) + 1
    if args.json:
        print(json.dumps({"bundle": str(path), "sources": len(coll.evidence), "status": counts}))
    else:
        print(str(path))
        _err(f"captured {len(coll.evidence)} sources in {coll.wall_s:.1f}s: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return EXIT_OK


# ------------------------------------------------------------------ parse
STREAM_THRESHOLD = 16 * 1024 * 1024  # `parse` streams files above this size when the kind can


def _read_input(path: str) -> tuple[str, str]:
    if path == "-":
        data = sys.stdin.buffer.read()
        name = "<stdin>"
    else:
        p = Path(path)
        try:
            if p.stat().st_size > 512 * 1024 * 1024:
                raise CliError(f"{path}: larger than 512 MB; cut the relevant part out first")
            data = p.read_bytes()
        except OSError as exc:
            raise CliError(f"{path}: {exc.strerror or exc}") from exc
        name = path
    return data.decode("utf-8", errors="replace"), name


def cmd_parse(args: argparse.Namespace) -> int:
    from troubleshooter import parsers
    from troubleshooter.facts import format_value, spec

    if args.list:
        for kind in parsers.kinds():
            p = parsers.get(kind)
            print(f"{kind:18} {p.summary}" + (f"   [{p.command}]" if p.command else ""))
        return EXIT_OK
    items = list(args.items)
    if not items:
        raise CliError("parse needs a FILE (or -), optionally preceded by a KIND; see --list")
    if len(items) == 1:
        kind, path = "auto", items[0]
    elif len(items) == 2:
        kind, path = items
    else:
        raise CliError("parse takes [KIND] FILE")
    known = parsers.kinds()
    if kind != "auto" and kind not in known:
        raise CliError(f"unknown kind {kind!r}; known kinds: {', '.join(known)}")
    try:
        big = path != "-" and Path(path).stat().st_size > STREAM_THRESHOLD
    except OSError:
        big = False
    try:
        if big:  # streamed when the kind can: any size, memory bounded (parsers.run_file)
            if kind == "auto":
                with open(path, "rb") as f:
                    kind = parsers.detect(f.read(262144).decode("utf-8", errors="replace"))
            if parsers.streams(kind):
                values, name = parsers.run_file(kind, path), path
            else:
                text, name = _read_input(path)
                values = parsers.run(kind, text)
        else:
            text, name = _read_input(path)
            if kind == "auto":
                kind = parsers.detect(text)
            values = parsers.run(kind, text)
    except parsers.ParseError as exc:
        raise CliError(f"{path if path != '-' else '<stdin>'}: {exc}") from exc
    if args.json:
        print(json.dumps({"kind": kind, "file": name, "facts": values}, indent=2, default=str))
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"{name}: {kind}", show_header=True, header_style="bold")
        table.add_column("fact")
        table.add_column("value", overflow="fold")
        for k in sorted(values):
            s = spec(k)
            table.add_row(k, format_value(values[k], s.unit if s else ""))
        Console().print(table)
    return EXIT_OK


# ------------------------------------------------------------------ small verbs
def cmd_locate(args: argparse.Namespace) -> int:
    from troubleshooter import locations

    paths = {k: str(v) for k, v in locations.all_paths().items()}
    if args.json:
        print(json.dumps(paths, indent=2))
    else:
        for k, v in paths.items():
            print(f"{k:16} {v}")
    return EXIT_OK


def cmd_sources(args: argparse.Namespace) -> int:
    from troubleshooter import sources

    rows = []
    for s in sorted(sources.load_all().values(), key=lambda s: (s.family, s.id)):
        rows.append({"id": s.id, "family": s.family, "parser": s.parser, "argv": list(s.argv) or ["(in-process)"],
                     "timeout_s": s.timeout_s, "root": s.root, "active": s.active, "needs": s.needs,
                     "summary": s.summary, "why": s.why})
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            flags = ",".join(f for f, on in (("root", r["root"]), ("active", r["active"])) if on)
            print(f"{r['id']:20} {r['family']:8} {r['summary']}" + (f" [{flags}]" if flags else ""))
    return EXIT_OK


def cmd_facts(args: argparse.Namespace) -> int:
    import fnmatch

    from troubleshooter import facts, sources

    sources.load_all()
    rows = [s for s in sorted(facts.REGISTRY.values(), key=lambda s: s.name)
            if not args.pattern or fnmatch.fnmatch(s.name, args.pattern)]
    if args.json:
        print(json.dumps([{"name": s.name, "type": s.type, "unit": s.unit, "doc": s.doc, "parser": s.parser} for s in rows], indent=2))
    else:
        for s in rows:
            print(f"{s.name:40} {s.type:7} {s.unit:6} {s.doc}")
    return EXIT_OK


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors that describe bad input (a malformed tree, a bad bundle): one line, exit 2, no traceback."""
    from troubleshooter.bundle import BundleError
    from troubleshooter.checks import CheckError
    from troubleshooter.profiles import ProfileError
    from troubleshooter.yamlio import YamlError

    errs: list[type[BaseException]] = [BundleError, CheckError, ProfileError, YamlError]
    try:
        from troubleshooter.engine import TreeError

        errs.append(TreeError)
    except ImportError:
        pass
    return tuple(errs)


# ------------------------------------------------------------------ main
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="troubleshooter",
        description="Find why a GPU training cluster trains slower than its reference. "
        "With no verb, starts the interactive app.",
        epilog="The app: troubleshooter [--job J [--node N] [--container-name C]] [--exec PREFIX] [--bundle PATH] "
        "[--pid PID] [--resume [ID]] [--symptom ID] [--demo CASE] [--learn] [--profile ID]. "
        "Every verb has --help.",
    )
    p.add_argument("--version", action="version", version=f"troubleshooter {__version__}")
    sub = p.add_subparsers(dest="verb", metavar="VERB")

    c = sub.add_parser("check", help="preflight sweep of this node in this context; exit 1 if a check fails",
                       description="Run the preflight checks (GPU health, Grace/VM readiness, CPU power and placement, "
                       "runtime topology, fabric) in the target's context. Exit 0 all ok, 1 a check failed, 2 could not run.")
    add_target_options(c)
    c.add_argument("--measure", action="store_true", help="also run active measurements (perf sample, ...)")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report for CI systems")
    c.set_defaults(func=cmd_check)

    c = sub.add_parser("capture", help="record every source's raw evidence into a bundle",
                       description="Run every source in the target and save the raw evidence as a bundle "
                       "(a .tar.gz, or a directory if the path does not end in .tar.gz) to replay anywhere with --bundle.")
    add_target_options(c, bundle=False)
    c.add_argument("-o", "--output", metavar="PATH", help="bundle path (default: HOST-TIME.bundle.tar.gz)")
    c.add_argument("--measure", action="store_true", help="also run active measurements")
    c.add_argument("--host-too", action="store_true", help="with --exec/--job: also capture the host side (for comparison)")
    c.add_argument("--note", help="a note stored in the bundle")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_capture)

    c = sub.add_parser("parse", help="read any tool's pasted output into facts",
                       description="Parse a tool's output (a file, or - for stdin) into facts. Without KIND the kind "
                       "is detected from the content.")
    c.add_argument("items", nargs="*", metavar="[KIND] FILE")
    c.add_argument("--list", action="store_true", help="list the known kinds")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_parse)

    c = sub.add_parser("locate", help="print where config, sessions, exports and trees live")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_locate)

    c = sub.add_parser("sources", help="list every source: what it runs and why")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_sources)

    c = sub.add_parser("facts", help="list the documented fact names")
    c.add_argument("pattern", nargs="?", help="glob, e.g. 'nccl.*'")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_facts)

    for extra in _EXTRA_VERBS:
        extra(sub)
    return p


# Verbs defined in other modules register here (diagnose, trees, demo, export, sessions, compare ...).
_EXTRA_VERBS: list = []


def _load_extra_verbs() -> None:
    import importlib

    for mod in ("troubleshooter.cli_diagnose", "troubleshooter.cli_session", "troubleshooter.cli_measure",
                "troubleshooter.cli_compare"):
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise
            continue
        if m.register not in _EXTRA_VERBS:  # main() may run more than once in a process (tests, the TUI)
            _EXTRA_VERBS.append(m.register)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:  # no verb, no option: the app, without building every verb's parser first (~12 ms of start-up)
        from troubleshooter.tui_entry import run_app

        return run_app(argv)
    _load_extra_verbs()
    parser = build_parser()
    verbs = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    if not any(a in verbs for a in argv) and not {"-h", "--help", "--version"} & set(argv):
        from troubleshooter.tui_entry import run_app

        return run_app(argv)
    args = parser.parse_args(argv)
    if not args.verb:
        parser.print_help()
        return EXIT_CANNOT
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        _err(str(exc))
        return EXIT_CANNOT
    except _user_errors() as exc:
        _err(str(exc))
        return EXIT_CANNOT
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug: one line for the user, the traceback on request
        import os
        import traceback

        if os.environ.get("TROUBLESHOOTER_DEBUG"):
            traceback.print_exc()
        _err(f"internal error: {type(exc).__name__}: {exc} (set TROUBLESHOOTER_DEBUG=1 for the traceback; "
             "please report it)")
        return EXIT_CANNOT
