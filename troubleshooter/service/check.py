"""The preflight sweep as one use case: run every source on a target, choose the reference profile, judge
every check, and say plainly when nothing could run or the target went away mid-sweep.

``troubleshooter check`` and the app's preflight screen both call :func:`run_check`, so they give the same
verdicts under the same profile on the same target.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from troubleshooter.diagnosis import checks, profiles
from troubleshooter.model.evidence import Evidence
from troubleshooter.model.facts import FactSet
from troubleshooter.output import report
from troubleshooter.probe import collect
from troubleshooter.probe.targets import Target
from troubleshooter.sources.base import Params


@dataclasses.dataclass(frozen=True)
class CheckRun:
    results: list[checks.CheckResult]
    profile: profiles.Profile
    context: list[str]            #: where it ran (and, last, what went wrong with the run itself)
    evidence: dict[str, Evidence]
    facts: FactSet
    wall_s: float
    nothing_ran: bool             #: every source that was tried failed to run at all
    lost: list[str]               #: sources that could not finish because the target went away
    problem: str                  #: one line saying what went wrong with the run itself, or ""

    @property
    def exit_code(self) -> int:
        return checks.exit_code(self.results, nothing_ran=self.nothing_ran or bool(self.lost))


def run_check(target: Target, params: Params, *, profile_id: str | None = None, measure: bool = False,
              on_event: Callable[[str, Any], None] | None = None) -> CheckRun:
    coll = collect.collect(target, params=params, measure=measure, on_event=on_event)
    profile = profiles.choose(profile_id, coll.facts.get_value("gpu.names"))
    status = {sid: ev.describe() for sid, ev in coll.evidence.items()}
    results = checks.run_checks(coll.facts, profile.thresholds, status, measure=measure)
    # sources skipped on purpose (no --pid, in-process on a remote target) ran nothing either way
    tried = [ev for ev in coll.evidence.values() if ev.status.value not in ("skipped", "not-captured")]
    nothing_ran = bool(tried) and all(ev.status.value in ("error", "timed-out", "not-installed") for ev in tried)
    ctx = report.context_lines(coll.facts, target.describe())
    # the target went away during the sweep (a Slurm job that ended): the results are incomplete, not "ok"
    gone = getattr(target, "gone", "")
    lost = [ev.source_id for ev in tried if ev.source_id in getattr(target, "lost", ())]
    problem = ""
    if nothing_ran:
        problem = "could not run anything in this target: " + tried[0].describe()
    elif lost:
        problem = (f"the target went away during the check ({gone}): {len(lost)} source(s) could not finish, "
                   "results are incomplete")
    if problem:
        ctx.append(problem)
    return CheckRun(results, profile, ctx, dict(coll.evidence), coll.facts, coll.wall_s, nothing_ran, lost, problem)
