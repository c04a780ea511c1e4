"""Before vs after, node vs reference: facts that moved, checks whose verdict changed, measured numbers with
their ratio and the 95% rule; :func:`waterfall` draws where a gap went, fix by fix.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
import os
from typing import Any, Iterable, Mapping, Sequence

from troubleshooter.model.facts import FactSet, Unknown, format_value
from troubleshooter.diagnosis.compare.host import _ABSENT, _norm, _plain


#: Measured numbers compared with their ratio and the 95% rule: fact -> +1 higher is better, -1 lower is.
MEASURED = {
    "nccl_tests.busbw_at_max_size_gbps": 1, "nccl_tests.avg_busbw_gbps": 1, "nccl_tests.max_busbw_gbps": 1,
    "sweep.best_busbw_gbps": 1, "sweep.baseline_busbw_gbps": 1,
    "steps.median_ms": -1, "steps.mean_ms": -1, "steps.p90_ms": -1, "steps.p99_ms": -1,
    "cpu.busy_mhz": 1, "cpu.busy_cores_mhz": 1,
}

#: Facts that change from one reading to the next on the same node (counters, free memory, ids): left out
#: of before/after unless asked (``include_volatile``), and never compared node to node.
VOLATILE = (
    "proc.pid", "proc.ppid", "proc.state", "proc.threads", "proc.vm_rss_kb", "proc.*ctxt*", "proc.cgroup",
    "proc.cpuset", "numa.proc.pid", "numa.free_mb", "numa.nodes", "numa.min_free_pct", "numa.meminfo*",
    "numa.per_node", "mem.available_kb", "mem.hugepages_free", "mem.anon_hugepages_kb", "cpu.cstates.usage",
    "cpu.cstates.time_pct", "cpu.idle_since_boot_pct", "cpu.iowait_pct", "cpu.steal_pct", "dmesg.lines",
    "container.mnt_ns", "container.pid_ns", "slurm.step_id", "slurm.procid", "slurm.localid",
    "env.var.SLURM_STEP*", "env.var.SLURM_TASK_PID", "env.var.SLURM_PROCID", "env.var.SLURM_LOCALID",
    "env.var.SLURM_SRUN_COMM_*", "env.var.SLURM_LAUNCH_NODE_IPADDR", "env.var.SLURM_GTIDS",
    "env.var.PWD", "env.var.OLDPWD", "env.var.SHLVL", "env.var._", "env.slurm", "env.names", "env.count",
    "gpu.temp_max_c", "gpu.power_ratio_max", "gpu.sm_clock_ratio_min", "gpu.devices", "numa.proc.*",
    "evidence.*",
    # aggregates that repeat env.var.* (each variable is compared on its own)
    "env.nccl", "env.ucx", "env.nvshmem", "env.cuda",
)


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(name == p or ("*" in p and fnmatch.fnmatchcase(name, p)) for p in patterns)


@dataclasses.dataclass
class Change:
    """One fact that differs between capture A (before, or the reference) and capture B (after, the node)."""

    name: str
    kind: str  # number, string, bool, set, list, dict, added (only in B), removed (only in A)
    before: Any
    after: Any
    unit: str = ""
    ratio: float | None = None  # numbers: after / before
    added: list[Any] | None = None  # sets and dicts: what B has that A has not
    removed: list[Any] | None = None
    measured: bool = False  # a measured performance number (busbw, step time, busy clock)
    perf_ratio: float | None = None  # measured: B's performance relative to A (>1 better, whatever the direction)
    verdict: str = ""  # measured: "ok" (perf_ratio >= reference_ratio_min) or "below-reference"

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None and v != ""}

    def describe(self) -> str:
        if self.kind == "number" and self.before is not None and self.after is not None:
            r = f" (x{self.ratio:.3f})" if self.ratio is not None else ""
            return f"{format_value(self.before, self.unit)} -> {format_value(self.after, self.unit)}{r}"
        if self.kind in ("set", "dict"):
            bits = []
            if self.added:
                bits.append("+" + ", +".join(map(str, self.added[:6])) + (" ..." if len(self.added) > 6 else ""))
            if self.removed:
                bits.append("-" + ", -".join(map(str, self.removed[:6])) + (" ..." if len(self.removed) > 6 else ""))
            return "; ".join(bits) or "changed"
        if self.kind == "added":
            return f"(absent) -> {_short(self.after)}"
        if self.kind == "removed":
            return f"{_short(self.before)} -> (absent)"
        return f"{_short(self.before)} -> {_short(self.after)}"


def _short(v: Any, n: int = 60) -> str:
    s = format_value(v)
    return s if len(s) <= n else s[: n - 1] + "…"


def _values(facts: FactSet | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(facts, FactSet):
        return facts.as_dict()
    return dict(facts)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def before_after(facts_a: FactSet | Mapping[str, Any], facts_b: FactSet | Mapping[str, Any],
                 names: Sequence[str] | None = None, *, reference_ratio_min: float = 0.95,
                 include_volatile: bool = False) -> list[Change]:
    """Facts that differ between A and B, measured numbers first (always listed when both sides have them).

    ``names`` restricts to these fact names or globs (``"nccl_tests.*"``). Numbers get ``ratio = B/A``;
    measured numbers (:data:`MEASURED`) also ``perf_ratio`` (B's performance relative to A: B/A when higher
    is better, A/B when lower is) and ``verdict`` by the 95% rule (``reference_ratio_min``).
    """
    from troubleshooter.model import facts as factmod

    a, b = _values(facts_a), _values(facts_b)
    keys = sorted(set(a) | set(b))
    if names is not None:
        keys = [k for k in keys if _matches(k, names)]
    elif not include_volatile:
        keys = [k for k in keys if not _matches(k, VOLATILE) or k in MEASURED]
    out: list[Change] = []
    for k in keys:
        spec = factmod.spec(k)
        unit = spec.unit if spec else ""
        va, vb = a.get(k, _ABSENT), b.get(k, _ABSENT)
        measured = k in MEASURED
        if va is _ABSENT or vb is _ABSENT:
            out.append(Change(k, "added" if va is _ABSENT else "removed", _plain(va), _plain(vb), unit, measured=measured))
            continue
        if _is_num(va) and _is_num(vb):
            ratio = (vb / va) if va else None
            if va == vb and not measured:
                continue
            ch = Change(k, "number", va, vb, unit, ratio=ratio, measured=measured)
            if measured and va and vb:
                ch.perf_ratio = (vb / va) if MEASURED[k] > 0 else (va / vb)
                ch.verdict = "ok" if ch.perf_ratio >= reference_ratio_min else "below-reference"
            out.append(ch)
            continue
        if _norm(va) == _norm(vb):
            continue
        if isinstance(va, bool) or isinstance(vb, bool):
            out.append(Change(k, "bool", va, vb, unit))
        elif isinstance(va, (list, tuple)) and isinstance(vb, (list, tuple)) and all(
                isinstance(x, (str, int, float)) for x in [*va, *vb]):
            sa, sb = set(va), set(vb)
            kind = "set" if sa != sb else "list"  # same items, another order or multiplicity
            out.append(Change(k, kind, va, vb, unit, added=sorted(sb - sa, key=str) or None,
                              removed=sorted(sa - sb, key=str) or None))
        elif isinstance(va, dict) and isinstance(vb, dict):
            added = [f"{x}={_short(vb[x], 30)}" for x in sorted(vb, key=str) if x not in va]
            removed = [f"{x}={_short(va[x], 30)}" for x in sorted(va, key=str) if x not in vb]
            changed = [f"{x}: {_short(va[x], 20)} -> {_short(vb[x], 20)}" for x in sorted(va, key=str)
                       if x in vb and _norm(va[x]) != _norm(vb[x])]
            out.append(Change(k, "dict", va, vb, unit, added=(added + changed) or None, removed=removed or None))
        else:
            out.append(Change(k, "string" if isinstance(va, str) else "list", va, vb, unit))
    out.sort(key=lambda c: (not c.measured, c.name))
    return out


@dataclasses.dataclass
class VerdictChange:
    id: str
    title: str
    before: str
    after: str
    reason_after: str

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def check_changes(facts_a: FactSet, facts_b: FactSet, status_a: Mapping[str, str], status_b: Mapping[str, str],
                  thresholds: Mapping[str, Any]) -> list[VerdictChange]:
    """The preflight checks (troubleshooter.diagnosis.checks) run over each side's facts; those whose verdict changed."""
    from troubleshooter.diagnosis import checks

    ra = {r.id: r for r in checks.run_checks(facts_a, dict(thresholds), dict(status_a))}
    rb = {r.id: r for r in checks.run_checks(facts_b, dict(thresholds), dict(status_b))}
    out = []
    for cid, r in rb.items():
        before = ra[cid].verdict if cid in ra else "absent"
        if before != r.verdict:
            out.append(VerdictChange(cid, r.title, before, r.verdict, r.reason))
    return out


@dataclasses.dataclass
class BundleComparison:
    a: str
    b: str
    profile: str
    reference_ratio_min: float
    changes: list[Change]
    checks: list[VerdictChange]

    @property
    def measured(self) -> list[Change]:
        return [c for c in self.changes if c.measured]

    @property
    def below_reference(self) -> list[Change]:
        return [c for c in self.measured if c.verdict == "below-reference"]

    def as_dict(self) -> dict[str, Any]:
        return {"kind": "before-after", "a": self.a, "b": self.b, "profile": self.profile,
                "reference_ratio_min": self.reference_ratio_min,
                "measured": [c.as_dict() for c in self.measured],
                "changes": [c.as_dict() for c in self.changes if not c.measured],
                "checks": [c.as_dict() for c in self.checks],
                "below_reference": [c.name for c in self.below_reference]}


def bundle_collection(path: str | os.PathLike[str], side: str = "target"):
    """Replay a bundle: (facts, {source: status line})."""
    from troubleshooter.probe import collect
    from troubleshooter.probe.bundle import Bundle
    from troubleshooter.probe.targets import BundleTarget

    b = Bundle.open(path)
    if side not in b.sides:
        side = b.sides[0] if b.sides else side
    coll = collect.collect(BundleTarget(b, side=side), side=side)
    return coll.facts, {sid: ev.describe() for sid, ev in coll.evidence.items()}


def compare_bundles(path_a: str | os.PathLike[str], path_b: str | os.PathLike[str], *, profile_id: str | None = None,
                    names: Sequence[str] | None = None, include_volatile: bool = False) -> BundleComparison:
    """``compare A.bundle B.bundle``: A is *before* (or the healthy reference), B *after* (or the node)."""
    from troubleshooter.diagnosis import profiles

    fa, sa = bundle_collection(path_a)
    fb, sb = bundle_collection(path_b)
    if profile_id is None:
        gn = fb.get_value("gpu.names")
        if isinstance(gn, Unknown):
            gn = fa.get_value("gpu.names")
    else:
        gn = None
    prof = profiles.choose(profile_id, gn)
    rmin = float(prof.thresholds.get("reference_ratio_min", 0.95))
    changes = before_after(fa, fb, names, reference_ratio_min=rmin, include_volatile=include_volatile)
    return BundleComparison(str(path_a), str(path_b), prof.id, rmin, changes,
                            check_changes(fa, fb, sa, sb, prof.thresholds))


# ====================================================================== waterfall

def waterfall(points: list[tuple[str, float]], baseline: float, reference: float | None = None, *,
              width: int = 40, unit: str = "", ascii: bool = False, title: str = "") -> str:
    """A small monospace waterfall of where a gap went, fix by fix.

    ``baseline`` is the measured value before any fix, ``points`` the value measured after each fix in the
    order they were applied (cumulative, not deltas), ``reference`` the value to reach (None: no target).
    Higher or lower may be better: the direction is from the baseline towards the reference (or, without
    a reference, towards the last point). Each bar starts where the previous one ended; the last row is
    what is left of the gap. Plain text: paste it in a Markdown code block or print it in a terminal.

    >>> print(waterfall([("C-states", 92.0), ("NUMA/cpuset", 97.0)], 88.0, 100.0, width=24, ascii=True))
    where the gap went: 88 -> 100 (gap 12)
    baseline       88.0  |                        |
    C-states       +4.0  |########                |  33% of the gap
    NUMA/cpuset    +5.0  |        ##########      |  42% of the gap
    left            3.0  |                  ......|  25% of the gap
    """
    full, gap_ch, loss_ch = ("#", ".", "x") if ascii else ("█", "░", "▒")
    values = [baseline] + [v for _, v in points]
    end = reference if reference is not None else (values[-1] if len(values) > 1 else baseline)
    lo, hi = min(values + [end]), max(values + [end])
    span = hi - lo
    u = f" {unit}" if unit else ""

    def col(v: float) -> int:
        return 0 if span == 0 else round((v - lo) / span * width)

    gap = end - baseline
    head = title or (f"where the gap went: {baseline:g} -> {end:g}{u} (gap {abs(gap):g}{u})" if reference is not None
                     else f"change from {baseline:g}{u}")
    labels = ["baseline"] + [str(n) for n, _ in points] + (["left"] if reference is not None else [])
    lw = max(len(x) for x in labels) + 2
    rows = [head, f"{'baseline':<{lw}}{baseline:>6.1f}  |{' ' * width}|"]
    prev = baseline
    for name, v in points:
        a, b = sorted((col(prev), col(v)))
        toward = (v - prev) * (1 if gap >= 0 else -1) >= 0
        ch = full if toward else loss_ch
        bar = " " * a + ch * (b - a) + " " * (width - b)
        share = f"  {100 * (v - prev) / gap:.0f}% of the gap" if reference is not None and gap else ""
        rows.append(f"{name:<{lw}}{v - prev:>+6.1f}  |{bar}|{share}")
        prev = v
    if reference is not None:
        a, b = sorted((col(prev), col(end)))
        bar = " " * a + gap_ch * (b - a) + " " * (width - b)
        share = f"  {100 * (end - prev) / gap:.0f}% of the gap" if gap else ""
        rows.append(f"{'left':<{lw}}{end - prev:>6.1f}  |{bar}|{share}")
    return "\n".join(r.rstrip() for r in rows)


# ====================================================================== node vs node

