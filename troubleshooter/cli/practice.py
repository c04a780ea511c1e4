"""``troubleshooter practice CASE``: the practice quiz headless, answered on stdin (a terminal, or a script).

Each round prints the options numbered; a line with the number (or the option's id) answers it. The chosen
probe's captured output, the verdict and why the expert's probe discriminates follow; at the end, the debrief.
``--expert`` answers every round as the expert path does (a worked example). End of input stops the quiz.
"""

from __future__ import annotations

import argparse
import sys

from troubleshooter.cli.common import EXIT_OK, CliError, emitter


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("practice", help="practice quiz on a reference case: choose each probe, read its output, "
                       "see the expert's choice, a score and a debrief",
                       description="A practice case as a quiz read from stdin: for each step choose the probe "
                       "you would run (a number per line), read what it printed, then see the expert path's choice "
                       "and why; at the end name the root cause and read the debrief. Cases: `troubleshooter demo`.")
    c.add_argument("case", help="case id (case1..case4, healthy)")
    c.add_argument("--expert", action="store_true", help="answer every round as the expert path does")
    c.set_defaults(func=cmd_practice)


def cmd_practice(args: argparse.Namespace) -> int:
    from rich.markdown import Markdown

    from troubleshooter.service.practice import PracticeError
    from troubleshooter.service.quiz import Quiz

    em = emitter(args)
    try:
        quiz = Quiz(args.case, redactor=em.redactor)
    except PracticeError as exc:
        raise CliError(str(exc)) from exc
    em.line(em.safe(f"Practice: {quiz.title}"))
    em.line(em.safe(quiz.intro))
    while not quiz.done:
        r = quiz.current()
        assert r is not None
        em.line()
        for line in r.context:
            em.line(em.safe(f"  · {line}"))
        em.line(em.safe(f"Round {r.index} of {len(quiz.rounds)}: {r.prompt}"))
        for i, o in enumerate(r.options, 1):
            em.line(em.safe(f"  {i}. {o.title}" + (f"   $ {o.command}" if o.command else "")))
        choice = r.expert if args.expert else _read_choice(em, [o.id for o in r.options])
        if choice is None:
            em.line("(end of input: the quiz stops here)")
            break
        fb = quiz.choose(choice)
        em.line(em.safe(f"> {fb.chosen.title}"))
        if fb.output:
            em.line("  what it printed:")
            for ln in fb.output.splitlines():
                em.line("  | " + ln)
        if fb.shows:
            em.line(em.safe("  it shows: " + "; ".join(fb.shows)))
        em.line(em.safe(("✓ " if fb.correct else "✗ ") + fb.verdict))
        for w in fb.why:
            em.line(em.safe(f"  {w}"))
    got, most = quiz.score()
    em.line()
    if quiz.done:
        em.rich(Markdown(quiz.debrief_markdown()))
    else:
        em.line(f"score so far: {got} of {most}")
    return EXIT_OK


def _read_choice(em, ids: list[str]) -> str | None:
    while True:
        if sys.stdin.isatty():
            em.line(f"your choice (1-{len(ids)}):", err=True)
        raw = sys.stdin.readline()
        if not raw:
            return None
        raw = raw.strip()
        if raw.isdigit() and 1 <= int(raw) <= len(ids):
            return ids[int(raw) - 1]
        if raw in ids:
            return raw
        em.line(f"  one of 1-{len(ids)}", err=True)
