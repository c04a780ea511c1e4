"""The preflight sweep: checks are data (``decision_trees/checks.yaml``) over facts, judged per profile.

Each check: ``fail``, ``warn``, ``na`` and ``pass`` blocks, each a condition (``when``) and a one-line
``reason`` template (``{fact.name}`` fills in a value, ``{profile:key}`` a threshold). The first block whose
condition is true gives the verdict; when none is, the verdict is ``unknown`` with the reason the facts
could not be established (a missing tool, no permission, no GPU ...). Unknown is never a pass.

``na`` (verdict ``n/a``) is for a check whose subject is absent here: no RDMA device means "a port is down or
slow" does not apply, which is not the same as "the ports are fine". It is judged after fail and warn and
before pass, and it is never counted as a pass.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from troubleshooter.diagnosis import conditions
from troubleshooter.diagnosis.caserefs import strip_case_refs
from troubleshooter.model import facts as factmod
from troubleshooter import locations, sources, yamlio
from troubleshooter.model.facts import FactSet, Unknown, format_value

VERDICTS = ("pass", "warn", "fail", "n/a", "unknown")
#: the YAML block that gives each verdict, in the order they are judged
_BLOCKS = (("fail", "fail"), ("warn", "warn"), ("na", "n/a"), ("pass", "pass"))


@dataclasses.dataclass
class Check:
    id: str
    area: str
    title: str
    sources: list[str]
    show: list[str]
    blocks: dict[str, dict[str, Any]]  # verdict -> {when, reason}
    why: str = ""
    measure: bool = False  # needs active measurements (--measure)
    line: int | None = None


@dataclasses.dataclass
class CheckResult:
    id: str
    area: str
    title: str
    verdict: str
    reason: str
    values: dict[str, Any]
    evidence: dict[str, str]  # source id -> status line

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "area": self.area, "title": self.title, "verdict": self.verdict,
            "reason": self.reason,
            "facts": {k: (None if isinstance(v, Unknown) else v) for k, v in self.values.items()},
            "unknown_facts": {k: v.reason for k, v in self.values.items() if isinstance(v, Unknown)},
            "evidence": self.evidence,
        }


class CheckError(ValueError):
    pass


def load(path=None) -> list[Check]:
    p = path or (locations.trees_dir() / "checks.yaml")
    data = yamlio.load(p, cached=path is None)
    if not isinstance(data, dict) or not isinstance(data.get("checks"), list):
        raise CheckError(f"{p}: needs a 'checks' list")
    out = []
    for i, c in enumerate(data["checks"]):
        where = f"{p}:{yamlio.line_of(c) or ''} checks[{i}]"
        if not isinstance(c, dict) or not {"id", "area", "title"} <= set(c):
            raise CheckError(f"{where}: a check needs id, area and title")
        blocks = {}
        for key, verdict in _BLOCKS:
            b = c.get(key)
            if b is None:
                continue
            if not isinstance(b, dict) or "when" not in b:
                raise CheckError(f"{where} ({c['id']}): '{key}' needs 'when' and 'reason'")
            errs = conditions.validate(b["when"], f"{where}.{key}.when")
            if errs:
                raise CheckError("; ".join(errs))
            # a preflight runs on a real node: no practice-case references in what it says
            blocks[verdict] = {"when": b["when"], "reason": strip_case_refs(str(b.get("reason", "")))}
        out.append(Check(str(c["id"]), str(c["area"]), str(c["title"]), list(c.get("sources", [])),
                         list(c.get("show", [])), blocks, strip_case_refs(str(c.get("why", ""))), bool(c.get("measure", False)),
                         yamlio.line_of(c)))
    return out


def lint(checks: list[Check]) -> list[str]:
    registry = sources.load_all()
    problems = []
    for c in checks:
        for s in c.sources:
            if s not in registry:
                problems.append(f"check {c.id}: unknown source {s!r}")
        names = list(c.show)
        for b in c.blocks.values():
            names += [f for f, _ in conditions.facts_named(b["when"])]
            names += re.findall(r"\{([a-z][\w.*-]*)\}", b["reason"])
        for n in names:
            if not factmod.is_known_name(n):
                problems.append(f"check {c.id} (line {c.line}): unknown fact {n!r}")
    return problems


_FIELD = re.compile(r"\{(profile:)?([A-Za-z_][\w.*-]*)\}")


def render(template: str, lookup, profile: dict[str, Any]) -> str:
    def sub(m: re.Match) -> str:
        if m.group(1):
            v = profile.get(m.group(2))
            return "?" if v is None else format_value(v)
        v = lookup(m.group(2))
        if isinstance(v, Unknown):
            return "?"
        spec = factmod.spec(m.group(2))
        return format_value(v, spec.unit if spec else "")

    return _FIELD.sub(sub, template)


def judge(check: Check, fs: FactSet, profile: dict[str, Any], evidence_status: dict[str, str]) -> CheckResult:
    def lookup(name: str, side: str = "target") -> Any:
        return fs.get_value(name, sources.producers_of(name))

    ev = conditions.Evaluator(lambda n, s: lookup(n, s), profile)
    values = {n: lookup(n) for n in check.show}
    for _, verdict in _BLOCKS:
        b = check.blocks.get(verdict)
        if b is None:
            continue
        res = ev.evaluate(b["when"])
        if res.value is True:
            reason = render(b["reason"], lookup, profile) or res.explain()
            return CheckResult(check.id, check.area, check.title, verdict, reason, values,
                               {s: evidence_status.get(s, "not run") for s in check.sources})
    # unknown: say why, from the facts that were needed
    needed = []
    for b in check.blocks.values():
        needed += [f for f, _ in conditions.facts_named(b["when"])]
    reasons = []
    for name in dict.fromkeys(needed):
        v = lookup(name)
        if isinstance(v, Unknown):
            reasons.append(f"{name}: {v.reason}")
    if reasons:
        # the first unknown fact's first cause, short: the JSON keeps every reason in unknown_facts
        reason = reasons[0].split(": ", 1)[-1].split("; ")[0]
        reason = reason if len(reason) <= 110 else reason[:109] + "…"
    else:
        reason = "the facts did not settle it"
    return CheckResult(check.id, check.area, check.title, "unknown", reason, values,
                       {s: evidence_status.get(s, "not run") for s in check.sources})


def run_checks(fs: FactSet, profile: dict[str, Any], evidence_status: dict[str, str], *, measure: bool = False) -> list[CheckResult]:
    return [judge(c, fs, profile, evidence_status) for c in load() if measure or not c.measure]


def exit_code(results: list[CheckResult], *, nothing_ran: bool = False) -> int:
    if nothing_ran:
        return 2
    return 1 if any(r.verdict == "fail" for r in results) else 0
