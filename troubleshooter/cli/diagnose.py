"""Verbs over the trees: diagnose, trees (list, lint, graph, test), demo."""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from troubleshooter import locations

from troubleshooter.service.practice import PracticeError, case_intro, load_cases, practice_bundle_path
from troubleshooter.service.practice import practice_case as _practice_case
from troubleshooter.cli.common import EXIT_FAIL, EXIT_OK, CliError, add_target_options, emitter, make_params, make_target


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("diagnose", help="walk a symptom's tree headless; prints the path, hypotheses and fixes",
                       description="Walk the decision tree for a symptom, running its probes in the target "
                       "(or replaying a bundle, or reading pasted tool outputs with --evidence). "
                       "Exit 1 when a root cause is found, 0 when none is, 2 when it cannot run.")
    c.add_argument("--symptom", metavar="ID", help="the symptom (see `troubleshooter trees list`); asked or inferred with --evidence")
    add_target_options(c)
    c.add_argument("--evidence", nargs="+", action="extend", metavar="[SIDE:][KIND=]FILE",
                   help="diagnose from tool outputs someone pasted (kinds detected; SIDE is host, container or a node "
                   "name); - reads standard input (pdsh -w 'gpu[01-64]' ibstat | troubleshooter diagnose --evidence -)")
    c.add_argument("--answer", action="append", default=[], metavar="NODE=CHOICE", help="answer a question in advance (repeatable)")
    c.add_argument("--measure", action="store_true", help="allow active measurements (perf sample, ...)")
    fmt = c.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="the diagnosis as JSON")
    fmt.add_argument("--md", action="store_true", help="the ticket text (Markdown)")
    c.add_argument("--no-redact", action="store_true", help="keep secrets in the output (they are redacted by default)")
    c.set_defaults(func=cmd_diagnose)

    t = sub.add_parser("trees", help="tree tooling: list, lint, graph, test")
    tsub = t.add_subparsers(dest="trees_verb", metavar="ACTION", required=True)
    x = tsub.add_parser("list", help="the symptoms and subtrees")
    x.add_argument("--json", action="store_true")
    x.set_defaults(func=cmd_trees_list)
    x = tsub.add_parser("lint", help="schema, facts, sources, reachability, cycles, verify steps, templates")
    x.add_argument("--json", action="store_true")
    x.set_defaults(func=cmd_trees_lint)
    x = tsub.add_parser("graph", help="a tree as Mermaid (default) or DOT")
    x.add_argument("tree")
    x.add_argument("--dot", action="store_true")
    x.set_defaults(func=cmd_trees_graph)
    x = tsub.add_parser("test", help="run the tree test cases in decision_trees/tests")
    x.add_argument("--json", action="store_true")
    x.set_defaults(func=cmd_trees_test)

    d = sub.add_parser("demo", help="practise on a reference case (case1..case4, healthy)",
                       description="Walk a practice case (a bundle built from the seed's figures) with every step explained.")
    d.add_argument("case", nargs="?", help="case id; omit to list them")
    d.add_argument("--json", action="store_true")
    d.add_argument("--md", action="store_true")
    d.set_defaults(func=cmd_demo)


def _parse_answers(items: list[str]) -> dict[str, str]:
    out = {}
    for a in items:
        node, sep, choice = a.partition("=")
        if not sep or not node or not choice:
            raise CliError(f"--answer takes NODE=CHOICE, got {a!r}")
        out[node.strip()] = choice.strip()
    return out


def _ask_tty(q) -> str | None:
    """Ask a :class:`~troubleshooter.diagnosis.engine.Question` on the terminal (None when there is none)."""
    if not sys.stdin.isatty():
        return None
    em = emitter()
    em.line(f"\n? {q.text}", err=True)
    if q.why:
        em.line(f"  ({q.why})", err=True)
    for i, c in enumerate(q.choices, 1):
        em.line(f"  {i}. {c.label}" + (f" - {c.explain}" if c.explain else ""), err=True)
    ids = [c.id for c in q.choices]
    while True:
        try:
            raw = input("choice> ").strip()
        except EOFError:
            return None
        if raw.isdigit() and 1 <= int(raw) <= len(ids):
            return ids[int(raw) - 1]
        if raw in ids:
            return raw
        em.line(f"  one of 1-{len(ids)} or {', '.join(ids)}", err=True)


def run_diagnosis(symptom: str | None, facts, *, answers: dict[str, str], profile_id: str | None,
                  target_desc: dict[str, Any], context: list[str] | None = None, interactive: bool = True,
                  extra: dict[str, Any] | None = None, redact: bool = True, practice: bool = False):
    """The diagnose use case (:func:`troubleshooter.service.diagnose.diagnose`), asking on the terminal."""
    from troubleshooter.service.diagnose import DiagnoseError, diagnose

    try:
        return diagnose(symptom, facts, answers=answers, profile_id=profile_id, target_desc=target_desc,
                        context=context, ask=_ask_tty if interactive else None, extra=extra, redact=redact,
                        practice=practice)
    except DiagnoseError as exc:
        raise CliError(str(exc)) from exc


_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```[ \t]*$\n?", re.M | re.S)


def print_human(doc: dict[str, Any], em=None) -> None:
    """The ticket for a terminal, through the verb's emitter (redacted, escaped): prose through Rich's Markdown,
    fenced code printed as it is.

    Commands are never wrapped, padded or indented: each line is printed byte for byte as in ``--json``, so
    a pasted command is the command (wrapping ``printf ... | sudo tee FILE`` at 80 columns made two commands,
    the first writing an empty file). A line wider than the terminal runs past its edge (the terminal shows it
    soft-wrapped, and copies it as one line)."""
    from rich.markdown import Markdown
    from rich.text import Text

    from troubleshooter.output import export

    em = em or emitter()
    con = em.console
    md = em.safe(export.to_markdown(em.clean(doc)))
    md = md.replace("<details><summary>", "**").replace("</summary>", "**").replace("</details>", "")
    pos = 0
    for m in _FENCE.finditer(md):
        prose = md[pos:m.start()]
        if prose.strip():
            con.print(Markdown(prose))
        con.print()
        for line in m.group(1).rstrip("\n").split("\n"):
            con.print(Text(line, style="bold cyan", no_wrap=True, overflow="ignore"), soft_wrap=True, crop=False,
                      markup=False, highlight=False)
        con.print()
        pos = m.end()
    if md[pos:].strip():
        con.print(Markdown(md[pos:]))


def emit(doc: dict[str, Any], args: argparse.Namespace) -> None:
    """The diagnosis, in the format asked, through the verb's emitter (redacted, escaped)."""
    from troubleshooter.output import export

    em = emitter(args)
    if getattr(args, "json", False):
        em.json(doc)
    elif getattr(args, "md", False):
        em.text(export.to_markdown(em.clean(doc)))
    else:
        print_human(doc, em)


@contextlib.contextmanager
def _stdin_spooled(specs: list[str]):
    """The specs, with ``-`` (``host:-``, ``gpu07:ibstat=-``) naming standard input read once, bounded as a file
    is: kept in a private temporary file called ``stdin`` (what the outputs say they read) while the
    outputs are read, and removed after."""
    from troubleshooter.diagnosis.pasted import SPEC

    hits = [i for i, sp in enumerate(specs) if (m := SPEC.match(sp)) and m.group("path") == "-"]
    if not hits:
        yield specs
        return
    if len(hits) > 1:
        raise CliError("standard input (-) can be read once: name it in one --evidence spec")
    from troubleshooter import parsers
    from troubleshooter.diagnosis.pasted import MAX_FILE_BYTES, PastedError

    if sys.stdin.isatty():  # typed or pasted at the terminal, not piped: say how it ends
        emitter().line("reading the outputs from standard input: paste them, then Ctrl-D on a line of its own",
                       err=True)
    try:
        text = parsers.read_text(sys.stdin.buffer, max_bytes=MAX_FILE_BYTES)
    except parsers.ParseError as exc:
        raise CliError(f"<stdin>: {exc}") from exc
    with tempfile.TemporaryDirectory(prefix="troubleshooter-") as tmp:  # 0700; the file 0600
        path = Path(tmp) / "stdin"
        locations.write_private(path, text.encode("utf-8", errors="surrogateescape"))
        i = hits[0]
        try:
            yield [*specs[:i], specs[i][:-1] + str(path), *specs[i + 1:]]  # SIDE:KIND= kept, '-' the copy
        except PastedError as exc:  # said of <stdin>, not of the temporary copy that is gone by then
            raise PastedError(str(exc).replace(str(path), "<stdin>")) from exc


def _diagnose_nodes(args: argparse.Namespace, facts, answers: dict[str, str]):
    """The nodes use case (:func:`troubleshooter.service.diagnose.diagnose_nodes`): None for one machine."""
    from troubleshooter.diagnosis.engine import MissingAnswer, TreeError
    from troubleshooter.service.diagnose import DiagnoseError, diagnose_nodes

    try:
        return diagnose_nodes(args.symptom, facts, answers=answers, profile_id=args.profile,
                              target_desc={"kind": "evidence"}, ask=_ask_tty,
                              extra=None if args.symptom else {"symptom_inferred": True}, redact=not args.no_redact)
    except (MissingAnswer, TreeError, DiagnoseError) as exc:
        raise CliError(str(exc)) from exc


def _emit_nodes(many, args: argparse.Namespace) -> None:
    em = emitter(args)
    if getattr(args, "json", False):
        em.json(many.doc())
        return
    if getattr(args, "md", False):
        em.text(many.markdown(em.clean))
        return
    each, differ = many.overview()
    from rich.rule import Rule

    em.line(many.heading())
    for line in each + differ:
        em.line(line)
    for n, _, d in many.runs:
        em.rich(Rule(em.m(f"{'nodes' if d.get('alike') else 'node'} {n}")))
        print_human(d, em)


def cmd_diagnose(args: argparse.Namespace) -> int:
    from troubleshooter.output import report
    from troubleshooter.diagnosis.engine import MissingAnswer, TreeError
    from troubleshooter.diagnosis.workbench import LiveFacts

    answers = _parse_answers(args.answer)
    if args.evidence:
        from troubleshooter.diagnosis.pasted import EvidenceFacts, PastedError, infer_symptom

        if args.bundle or args.job or args.exec_prefix:
            raise CliError("--evidence reads pasted files; it does not combine with --bundle/--job/--exec")
        try:
            with _stdin_spooled(args.evidence) as specs:
                facts = EvidenceFacts.from_specs(specs)
        except PastedError as exc:
            raise CliError(str(exc)) from exc
        for line in facts.report_lines():
            emitter(args).line(line, err=True)
        many = _diagnose_nodes(args, facts, answers)
        if many is not None:  # outputs of several nodes: each diagnosed on its own, and compared
            _emit_nodes(many, args)
            return EXIT_FAIL if many.found else EXIT_OK
        symptom = args.symptom or infer_symptom(facts)
        if symptom is None:
            raise CliError("cannot tell the symptom from these files; pass --symptom (see `troubleshooter trees list`)")
        target_desc = {"kind": "evidence", "label": "pasted outputs: " + ", ".join(dict.fromkeys(f.display for f in facts.files))}
        context: list[str] = []
        extra = None if args.symptom else {"symptom_inferred": True}
    else:
        target = make_target(args)
        params = make_params(args, target)
        facts = LiveFacts.for_target(target, params, measure=args.measure)
        symptom = args.symptom
        target_desc = target.describe()
        context = []
        extra = None
    try:
        walk, doc = run_diagnosis(symptom, facts, answers=answers, profile_id=args.profile, target_desc=target_desc,
                                  context=context, extra=extra, redact=not args.no_redact)
    except MissingAnswer as exc:
        raise CliError(str(exc)) from exc
    except TreeError as exc:
        raise CliError(str(exc)) from exc
    if args.evidence:
        doc["evidence"] = facts.evidence_table()
    elif hasattr(facts, "factsets"):
        doc["context"] = report.context_lines(facts.factsets["target"], target_desc)
    emit(doc, args)
    return EXIT_FAIL if walk.conclusions else EXIT_OK


def cmd_trees_list(args: argparse.Namespace) -> int:
    from troubleshooter.diagnosis.engine import Engine

    e = Engine()
    rows = [{"id": t.id, "kind": t.kind, "title": t.title, "summary": t.summary, "version": t.version,
             "file": str(t.path)} for t in sorted(e.trees.values(), key=lambda t: (t.kind != "entry", t.order, t.id))]
    em = emitter(args)
    if args.json:
        em.json(rows)
    else:
        for r in rows:
            em.line(f"{r['id']:28} {r['kind']:8} {r['title']}")
    return EXIT_OK


def cmd_trees_lint(args: argparse.Namespace) -> int:
    from troubleshooter.diagnosis import checks, treetools

    problems = treetools.lint()
    try:
        problems += checks.lint(checks.load())
    except checks.CheckError as exc:
        problems.append(str(exc))
    em = emitter(args)
    if not problems:  # the rules load: every signal fact a parser extracts must be read by one of them
        problems += treetools.unread_signals()
    if args.json:
        em.json({"problems": problems})
    else:
        for p in problems:
            em.line(p)
        em.line(f"{len(problems)} problem(s)" if problems else "trees ok", err=True)
    return EXIT_FAIL if problems else EXIT_OK


def cmd_trees_graph(args: argparse.Namespace) -> int:
    from troubleshooter.diagnosis import treetools
    from troubleshooter.diagnosis.engine import Engine

    t = Engine().tree(args.tree)
    emitter(args).text(treetools.dot(t) if args.dot else treetools.mermaid(t))
    return EXIT_OK


def cmd_trees_test(args: argparse.Namespace) -> int:
    from troubleshooter.diagnosis import treetools

    results = treetools.run_all()
    em = emitter(args)
    if args.json:
        em.json([r.__dict__ for r in results])
    else:
        for r in results:
            em.line(f"{'ok  ' if r.ok else 'FAIL'} {r.tree}: {r.name}" + ("" if r.ok else "\n      " + "\n      ".join(r.problems)))
        em.line(f"{sum(r.ok for r in results)} passed, {sum(not r.ok for r in results)} failed")
    return EXIT_OK if all(r.ok for r in results) else EXIT_FAIL


# ------------------------------------------------------------------ practice cases
def practice_case(case_id: str) -> dict[str, Any]:
    try:
        return _practice_case(case_id)
    except PracticeError as exc:
        raise CliError(str(exc)) from exc


def cmd_demo(args: argparse.Namespace) -> int:
    from troubleshooter.probe.bundle import Bundle
    from troubleshooter.probe.targets import BundleTarget
    from troubleshooter.diagnosis.workbench import LiveFacts

    em = emitter(args)
    if not args.case:
        for c in load_cases():
            em.line(f"{c['id']:10} {c['title']}\n           symptom: {c['symptom']}")
        return EXIT_OK
    case = practice_case(args.case)
    target = BundleTarget(Bundle.open(practice_bundle_path(case)))
    facts = LiveFacts.for_target(target)
    if not (args.json or args.md):
        from rich.panel import Panel

        em.rich(Panel(em.cell(case_intro(case)), title=em.cell(f"practice: {case['title']}"), expand=False))
        learn = True
    else:
        learn = False
    walk, doc = run_diagnosis(case["symptom"], facts, answers=dict(case.get("answers", {})),
                              profile_id=case.get("profile"), target_desc=target.describe(), interactive=False,
                              practice=True)
    if learn:
        con = em.console
        for i, s in enumerate(em.clean(walk.steps), 1):
            con.print(f"[bold]{i}. {em.m(s.title)}[/]  [dim]({em.m(s.kind)})[/]")
            if s.why:
                con.print(f"   [italic]why:[/] {em.m(s.why)}")
            for k, v in s.facts.items():
                con.print(f"   {em.m(k)} = {em.m(v)}")
            if s.because or s.explain:
                con.print(f"   [cyan]→ {em.m(s.because or s.explain)}[/]")
        con.print()
        em.rich(Panel(em.cell(case.get("story", "").strip()), title=em.cell("the whole case"), expand=False))
    emit(doc, args)
    return EXIT_FAIL if walk.conclusions else EXIT_OK
