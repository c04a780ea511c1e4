"""The verbs that collect and read evidence: check, capture, parse, and the listings (locate, sources, facts)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from troubleshooter.cli.common import (fit, EXIT_OK, CliError, _err, add_target_options, make_params, make_target, emitter)


# ------------------------------------------------------------------ check
def cmd_check(args: argparse.Namespace) -> int:
    from troubleshooter.diagnosis.profiles import ProfileError
    from troubleshooter.output import report
    from troubleshooter.service.check import run_check

    em = emitter(args)
    target = make_target(args)
    params = make_params(args, target)
    progress = None
    if not args.json and em.err.isatty():
        def progress(kind: str, obj: Any) -> None:
            if kind in ("start", "done"):
                name = getattr(obj, "id", None) or getattr(obj, "source_id", "")
                em.line(f"  {'running' if kind == 'start' else 'done   '} {name}", err=True)
    try:
        run = run_check(target, params, profile_id=args.profile, measure=args.measure, on_event=progress)
    except ProfileError as exc:
        raise CliError(str(exc)) from exc
    if args.json:
        em.json(report.check_doc(run.results, run.context, target.describe(), run.profile.id, run.evidence))
    else:
        report.print_check(em.console, em.clean(run.results), em.clean(run.context), run.profile.id, run.wall_s)
    if run.problem:
        _err(run.problem)
    if args.junit:
        from troubleshooter import locations

        try:  # private, written whole beside the target, never through a link
            locations.write_private(args.junit, report.junit_xml(em.clean(run.results)))
        except OSError as exc:
            raise CliError(str(exc)) from exc
    return run.exit_code


# ------------------------------------------------------------------ capture
def cmd_capture(args: argparse.Namespace) -> int:
    from troubleshooter import locations
    from troubleshooter.probe import bundle as bmod, collect
    from troubleshooter.probe.targets import LocalTarget

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
    except locations.PrivateFileError as exc:  # it names the path and why
        raise CliError(str(exc)) from exc
    except (OSError, bmod.BundleError) as exc:
        raise CliError(f"cannot write bundle {out}: {exc}") from exc
    counts: dict[str, int] = {}
    for ev in coll.evidence.values():
        counts[ev.status.value] = counts.get(ev.status.value, 0) + 1
    em = emitter(args)
    if args.json:
        em.json({"bundle": str(path), "sources": len(coll.evidence), "status": counts}, indent=None)
    else:
        em.line(str(path))
        _err(f"captured {len(coll.evidence)} sources in {coll.wall_s:.1f}s: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    return EXIT_OK


# ------------------------------------------------------------------ parse
STREAM_THRESHOLD = 16 * 1024 * 1024  # `parse` streams files above this size when the kind can


def _read_input(path: str) -> tuple[str, str]:
    """The text of FILE (or stdin), read with bounds: at most 512 MiB, no line over 8 MiB (refused while
    reading, so ``/dev/zero`` or a 1 GB single line never fills memory)."""
    from troubleshooter import parsers

    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            return parsers.read_text(sys.stdin.buffer), name
        return parsers.read_file(path), name
    except parsers.ParseError as exc:
        raise CliError(f"{name}: {exc}") from exc


def cmd_parse(args: argparse.Namespace) -> int:
    from troubleshooter import parsers
    from troubleshooter.model.facts import format_value, spec

    em = emitter(args)
    if args.list:
        for kind in parsers.kinds():
            p = parsers.get(kind)
            em.line(f"{kind:18} {p.summary}" + (f"   [{p.command}]" if p.command else ""))
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
    text: str | None = None
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
            kind, values = _parse_text(kind, text, em)
    except parsers.ParseError as exc:
        raise CliError(f"{path if path != '-' else '<stdin>'}: {exc}{_several_nodes(text)}") from exc
    if args.json:
        em.json({"kind": kind, "file": name, "facts": values})
    else:
        from rich.table import Table

        values = em.clean(values)
        table = Table(title=em.cell(f"{name}: {kind}"), show_header=True, header_style="bold")
        table.add_column("fact")
        table.add_column("value", overflow="fold")
        for k in sorted(values):
            s = spec(k)
            table.add_row(em.cell(k), em.cell(format_value(values[k], s.unit if s else "")))
        em.rich(table)
    return EXIT_OK


def _parse_text(kind: str, text: str, em) -> tuple[str, dict]:
    """The text as the tool printed it; failing that, as someone pasted it: what pasting adds to whole lines undone
    (Markdown fences, quote marks, colour, CR line ends, a launcher's rank prefix, a log collector's time), then a
    service's syslog prefix, as ``diagnose --evidence`` reads it. Lines a terminal or a mail client wrapped are joined
    where that reads more. Values are never rewritten; the first reading's error stands if none reads it."""
    from troubleshooter import parsers
    from troubleshooter.diagnosis import intake, unpaste, unwrap

    def read(again: str) -> tuple[str, dict] | None:
        try:
            got = parsers.detect(again) if kind == "auto" else kind
            return got, parsers.run(got, again)
        except parsers.ParseError:
            return None

    try:
        got = parsers.detect(text) if kind == "auto" else kind
        best, pasted = (got, parsers.run(got, text)), False
    except parsers.ParseError as exc:
        first, best, pasted = exc, None, True
    cleaned = text  # what read as it is needs no cleaning
    if best is None:
        cleaned = intake.clean(text)
        for again in dict.fromkeys((cleaned, unpaste.without_syslog(cleaned))):  # a service's syslog prefix, last
            if again != text and (best := read(again)) is not None:
                break
    for joined in unwrap.unwrapped(cleaned):
        got = read(intake.clean(joined.text))
        if got and (best is None or got[0] == best[0] and unwrap.reads_more(got[1], best[1], wrapped=joined.sure)):
            best, pasted = got, True
    if best is None:
        raise first
    if pasted:
        em.line("read as pasted: what pasting added to each line (a prefix, a time, quote marks, fences, a wrap at "
                "a terminal's or a mail's width) was left out first", err=True)
    return best


def _several_nodes(text: str | None) -> str:
    """What to do with a parallel shell's paste, which one parser cannot read (every node's lines in it)."""
    from troubleshooter.diagnosis import hostsplit, intake

    got = hostsplit.parts(intake.clean(text)) if text else []
    nodes = [p.node for p in got if p.node]
    if not nodes:
        return ""
    return (f" (it holds the outputs of {len(nodes)} node(s), {', '.join(nodes[:4])}{' ...' if len(nodes) > 4 else ''}, "
            "as a parallel shell or srun -l prints them: `troubleshooter diagnose --evidence FILE` reads each node's)")


# ------------------------------------------------------------------ small verbs
def cmd_locate(args: argparse.Namespace) -> int:
    from troubleshooter import locations

    em = emitter(args)
    paths = {k: str(v) for k, v in locations.all_paths().items()}
    if args.json:
        em.json(paths)
    else:
        for k, v in paths.items():
            em.line(f"{k:16} {v}")
    return EXIT_OK


def cmd_sources(args: argparse.Namespace) -> int:
    from troubleshooter import sources

    rows = []
    for s in sorted(sources.load_all().values(), key=lambda s: (s.family, s.id)):
        rows.append({"id": s.id, "family": s.family, "parser": s.parser, "argv": list(s.argv) or ["(in-process)"],
                     "timeout_s": s.timeout_s, "root": s.root, "active": s.active, "needs": s.needs,
                     "summary": s.summary, "why": s.why})
    em = emitter(args)
    if args.json:
        em.json(rows)
    else:
        for r in rows:
            flags = ",".join(f for f, on in (("root", r["root"]), ("active", r["active"])) if on)
            em.line(fit(f"{r['id']:20} {r['family']:8} {r['summary']}" + (f" [{flags}]" if flags else "")))
    return EXIT_OK


def cmd_facts(args: argparse.Namespace) -> int:
    import fnmatch

    from troubleshooter.model import facts
    from troubleshooter import sources

    sources.load_all()
    rows = [s for s in sorted(facts.REGISTRY.values(), key=lambda s: s.name)
            if not args.pattern or fnmatch.fnmatch(s.name, args.pattern)]
    em = emitter(args)
    if args.json:
        em.json([{"name": s.name, "type": s.type, "unit": s.unit, "doc": s.doc, "parser": s.parser} for s in rows])
    else:
        for s in rows:
            em.line(fit(f"{s.name:40} {s.type:7} {s.unit:6} {s.doc}"))
    return EXIT_OK




def register(sub: Any) -> None:
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

