"""The headline of a result, the same on every face (ticket, CLI, app): what was found, then how much could
not be checked and what would settle it. It never says "nothing wrong" while hypotheses went untested.

>>> headline(0, {"untested": 3, "ruled-out": 1})
'No root cause found in what could be checked: 3 of 4 hypotheses untested here'
>>> headline(0, {"ruled-out": 4})
'No root cause found: all 4 hypotheses were checked and ruled out'
>>> headline(2, {"ruled-in": 2, "untested": 5, "ruled-out": 2, "not-applicable": 1})
'2 root causes found; 5 of 7 other hypotheses untested here'
>>> headline(0, {"suspected": 1, "untested": 3})
'No root cause decided: the outputs point at 1 possible cause, not decided by them; 4 of 4 hypotheses untested here'

A suspected hypothesis (the outputs point at it without deciding it) is untested: it counts among the untested.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping


def counts(hypotheses: Iterable[Any]) -> dict[str, int]:
    """Hypothesis states -> how many (each hypothesis a dict or an object with ``state``)."""
    out: dict[str, int] = {}
    for h in hypotheses:
        state = h["state"] if isinstance(h, Mapping) else h.state
        out[state] = out.get(state, 0) + 1
    return out


def headline(found: int, states: Mapping[str, int]) -> str:
    suspected = states.get("suspected", 0)
    untested = states.get("untested", 0) + suspected
    ruled_out = states.get("ruled-out", 0)
    if not found and suspected:
        total = untested + ruled_out + states.get("ruled-in", 0)
        return (f"No root cause decided: the outputs point at {suspected} possible cause{'s' if suspected != 1 else ''}, "
                f"not decided by them; {untested} of {total} hypotheses untested here")
    if found:
        head = f"{found} root cause{'s' if found != 1 else ''} found"
        others = untested + ruled_out
        noun = "hypothesis" if others == 1 else "hypotheses"
        return head + (f"; {untested} of {others} other {noun} untested here" if untested else "")
    total = untested + ruled_out + states.get("ruled-in", 0)
    if untested:
        noun = "hypothesis" if total == 1 else "hypotheses"
        return f"No root cause found in what could be checked: {untested} of {total} {noun} untested here"
    if total:
        return f"No root cause found: all {total} hypotheses were checked and ruled out"
    return "No root cause found, and no hypothesis could be tested here"


def settle_lines(hypotheses: Iterable[Any], limit: int | None = None) -> list[str]:
    """One line per untested hypothesis: its title and the one command whose output would settle it; those the
    outputs point at (suspected) first, marked so."""
    first, rest = [], []
    for h in hypotheses:
        get = (lambda k, h=h: h.get(k, "")) if isinstance(h, Mapping) else (lambda k, h=h: getattr(h, k, ""))
        if get("state") == "suspected":
            why = str(get("evidence") or "").removeprefix("possible: ")
            first.append(f"{get('title')} (possible, the outputs point here{': ' + why if why else ''}): "
                         f"`{get('settle') or 'see the tree'}`")
        elif get("state") == "untested":
            rest.append(f"{get('title')}: `{get('settle') or 'see the tree'}`")
    out = first + rest
    return out if limit is None else out[:limit]


def noted_lines(facts: Any, limit: int = 6) -> list[str]:
    """What the outputs say that is no cluster fault, one line each: known-harmless messages (benign.messages), the
    program's own exceptions (py.exceptions) and a job that ran out of host memory (slurm.log.oom_killed_steps), from
    every side of ``facts`` (a fact source)."""
    sides = list(facts.all_evidence()) if hasattr(facts, "all_evidence") else ["target"]
    out: list[str] = []
    for side in sides or ["target"]:
        fs = facts.factset(side) if hasattr(facts, "factset") else None
        if fs is None:
            continue
        for msg in fs.get_value("benign.messages") or []:
            out.append(f"harmless, nothing to fix: {msg}")
        for exc in fs.get_value("py.exceptions") or []:
            out.append(f"the program's own error (an application fault, not the cluster's, unless a cause above reads it): {exc}")
        for step in fs.get_value("slurm.log.oom_killed_steps") or []:
            out.append(f"the job's host memory ran out (Slurm's out-of-memory killer, step {step}): ask for more "
                       "(--mem) or use less; not a GPU or fabric fault")
    return list(dict.fromkeys(out))[:limit]
