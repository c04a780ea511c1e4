"""Comparisons that find what no single probe shows (docs/comparisons.md).

Three comparisons, all pure functions over facts (no I/O except reading bundles):

- **host vs target** (:func:`host_vs_target`): the runtime-topology facts of the host and of the job's
  container or step, and which differences matter (case 4: ``NCCL_TOPO_FILE`` and the file not reaching
  the container);
- **before vs after / node vs reference** (:func:`before_after`, :func:`compare_bundles`): facts that moved,
  checks whose verdict changed, measured numbers with their ratio and the 95% rule; :func:`waterfall`
  draws where a gap went, fix by fix;
- **node vs node** (:class:`NodeComparator`, :func:`compare_node_bundles`): every node of a job at once,
  streamed one bundle at a time; numbers by a robust outlier rule (median and MAD), values by majority,
  nodes that look alike grouped.
"""

from __future__ import annotations

import collections
import dataclasses
import fnmatch
import hashlib
import json
import math
import os
import re
import statistics
from array import array
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from troubleshooter.facts import FactSet, Unknown, format_value

# ====================================================================== host vs target

#: The sources run on both sides by ``compare --host``.
HOST_SOURCES = ("env-self", "nccl-conf", "nccl-topo-file", "ib-sysfs", "nvml", "nvidia-smi-q",
                "proc-status-self", "limits", "container-markers")

#: Environment variables compared between host and target: these prefixes (and NVIDIA_VISIBLE_DEVICES).
ENV_PREFIXES = ("NCCL_", "UCX_", "NVSHMEM_", "CUDA_", "FI_")
ENV_EXTRA = ("NVIDIA_VISIBLE_DEVICES",)
#: Variables that always differ between two contexts and are never compared (``--all-env`` included).
ENV_IGNORE = ("PWD", "OLDPWD", "SHLVL", "_", "TERM", "SHELL", "PS1", "TMUX", "TMUX_PANE", "SSH_*",
              "XDG_*", "LS_COLORS", "MAIL", "SLURM_*", "SLURMD_*", "PMI_*", "PMIX_*", "OMPI_*")
#: HOSTNAME is ignored when both sides run on the same host (a container may rename itself).
ENV_IGNORE_SAME_HOST = ("HOSTNAME",)


@dataclasses.dataclass(frozen=True)
class Item:
    fact: str
    label: str
    category: str
    matters: bool


#: What ``compare --host`` compares, besides the environment and nccl.conf variables.
HOST_ITEMS = (
    Item("nccl.topo_file.path", "topology file NCCL would load", "topology-file", False),
    Item("nccl.topo_file.visible", "topology file present", "topology-file", True),
    Item("nccl.topo_file.readable", "topology file readable", "topology-file", True),
    Item("nccl.topo_file.sha256", "topology file sha256", "topology-file", True),
    Item("nccl.etc_topo.visible", "/etc/nccl/topo.xml present", "topology-file", True),
    Item("nccl.etc_topo.sha256", "/etc/nccl/topo.xml sha256", "topology-file", True),
    Item("nccl_conf.present", "nccl.conf present", "nccl-conf", True),
    Item("nccl_conf.files", "nccl.conf files", "nccl-conf", True),
    Item("ib.sysfs_present", "/sys/class/infiniband present", "rdma", True),
    Item("ib.dev_infiniband_visible", "/dev/infiniband visible", "rdma", True),
    Item("ib.uverbs_devices", "verbs devices (/dev/infiniband/uverbs*)", "rdma", True),
    Item("ib.device_names", "HCAs visible", "rdma", True),
    Item("gpu.count", "GPUs visible", "gpu", True),
    Item("limits.memlock", "locked memory limit (ulimit -l, KiB)", "limits", True),
    Item("limits.shm_kb", "/dev/shm size (KiB)", "limits", False),
    Item("limits.nofile", "open files limit", "limits", False),
    Item("proc.cpus_allowed_count", "CPUs allowed (affinity)", "cpu", False),
    Item("proc.mems_allowed_count", "NUMA memory nodes allowed", "cpu", False),
)
_ONLY_WHEN_BOTH = {"nccl.topo_file.sha256", "nccl.etc_topo.sha256"}  # absence is told by 'present'


@dataclasses.dataclass
class Diff:
    key: str  # what is compared, for people: "env NCCL_TOPO_FILE", "topology file present"
    fact: str  # the fact name compared
    category: str  # env, topology-file, nccl-conf, rdma, gpu, limits, cpu
    host: Any  # None: absent on that side
    target: Any
    status: str  # differs, host-only, target-only, unknown
    matters: bool
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class HostComparison:
    diffs: list[Diff]
    same: list[str]  # facts equal on both sides
    unknown: list[dict[str, str]]  # facts neither side could establish
    context: dict[str, dict[str, Any]]  # side -> container.inside/runtime, hostname

    @property
    def matters(self) -> list[Diff]:
        return [d for d in self.diffs if d.matters]

    def as_dict(self) -> dict[str, Any]:
        return {"differences": [d.as_dict() for d in self.diffs if d.status != "unknown"],
                "undetermined": [d.as_dict() for d in self.diffs if d.status == "unknown"],
                "same": self.same, "unknown": self.unknown, "context": self.context,
                "matters": len(self.matters)}


_ABSENT = object()


def _side_value(fs: FactSet | Mapping[str, Any], name: str) -> Any:
    """The value, ``_ABSENT`` (its source ran and it is not there), or :class:`Unknown` (no source ran)."""
    if isinstance(fs, FactSet):
        if name in fs:
            return fs[name].value
        from troubleshooter import sources

        producers = sources.producers_of(name)
        ran = {f.source for f in fs.values()}  # sources that gave facts ("" : canned facts, all given)
        if "" in ran or ran & set(producers):
            return _ABSENT
        return fs.get_value(name, producers)
    return fs[name] if name in fs else _ABSENT


def _env_names(fs: FactSet | Mapping[str, Any], *, all_env: bool, ignore: tuple[str, ...]) -> set[str]:
    names = {k[len("env.var."):] for k in fs if k.startswith("env.var.")}
    keep = set()
    for n in names:
        if any(fnmatch.fnmatchcase(n, pat) for pat in ignore):
            continue
        if all_env or n.startswith(ENV_PREFIXES) or n in ENV_EXTRA:
            keep.add(n)
    return keep


def _plain(v: Any) -> Any:
    return None if v is _ABSENT or isinstance(v, Unknown) else v


def _compare_one(key: str, fact: str, category: str, matters: bool, h: Any, t: Any,
                 diffs: list[Diff], same: list[str], unknown: list[dict[str, str]]) -> None:
    hu, tu = isinstance(h, Unknown), isinstance(t, Unknown)
    if hu and tu:
        unknown.append({"fact": fact, "host": h.reason, "target": t.reason})
        return
    if hu or tu:
        if (h if tu else t) is _ABSENT:
            return  # absent on one side, unknown on the other: nothing to tell
        side, why = ("host", h.reason) if hu else ("target", t.reason)
        diffs.append(Diff(key, fact, category, _plain(h), _plain(t), "unknown", False, f"cannot tell on the {side}: {why}"))
        return
    if h is _ABSENT and t is _ABSENT:
        return
    if fact in _ONLY_WHEN_BOTH and (h is _ABSENT or t is _ABSENT):
        return
    if _norm(h) == _norm(t):
        same.append(fact)
        return
    status = "host-only" if t is _ABSENT else "target-only" if h is _ABSENT else "differs"
    note = {"host-only": "set on the host only", "target-only": "set on the target only"}.get(status, "")
    diffs.append(Diff(key, fact, category, _plain(h), _plain(t), status, matters, note))


def _norm(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return json.dumps(list(v), sort_keys=True, default=str)
    if isinstance(v, dict):
        return json.dumps(v, sort_keys=True, default=str)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def host_vs_target(host: FactSet | Mapping[str, Any], target: FactSet | Mapping[str, Any], *,
                   all_env: bool = False, same_host: bool = True) -> HostComparison:
    """What differs between the host's and the target's runtime topology, and whether it matters.

    *Matters* (exit 1 of ``compare --host``): any ``NCCL_*`` variable (environment or nccl.conf), the
    topology file, RDMA visibility, the GPU count, the locked-memory limit.
    """
    ignore = ENV_IGNORE + (ENV_IGNORE_SAME_HOST if same_host else ())
    diffs: list[Diff] = []
    same: list[str] = []
    unknown: list[dict[str, str]] = []
    h_env_known = not isinstance(_side_value(host, "env.names"), Unknown)
    t_env_known = not isinstance(_side_value(target, "env.names"), Unknown)
    for name in sorted(_env_names(host, all_env=all_env, ignore=ignore) | _env_names(target, all_env=all_env, ignore=ignore)):
        fact = f"env.var.{name}"
        h = _side_value(host, fact) if h_env_known else Unknown(fact, "the environment could not be read")
        t = _side_value(target, fact) if t_env_known else Unknown(fact, "the environment could not be read")
        _compare_one(f"env {name}", fact, "env", name.startswith("NCCL_"), h, t, diffs, same, unknown)
    for item in HOST_ITEMS:
        _compare_one(item.label, item.fact, item.category, item.matters, _side_value(host, item.fact),
                     _side_value(target, item.fact), diffs, same, unknown)
        if item.fact == "nccl_conf.files":
            conf = sorted({k for fs in (host, target) for k in fs if k.startswith("nccl_conf.var.")})
            for fact in conf:
                name = fact[len("nccl_conf.var."):]
                _compare_one(f"nccl.conf {name}", fact, "nccl-conf", name.startswith("NCCL_"),
                             _side_value(host, fact), _side_value(target, fact), diffs, same, unknown)
    context = {}
    for side, fs in (("host", host), ("target", target)):
        context[side] = {k: _plain(_side_value(fs, f)) for k, f in (
            ("container", "container.inside"), ("runtime", "container.runtime"), ("slurm_job", "slurm.job_id"),
            ("node", "slurm.node"))}
    return HostComparison(diffs, same, unknown, context)


# ====================================================================== before vs after

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
    from troubleshooter import facts as factmod

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
    """The preflight checks (troubleshooter.checks) run over each side's facts; those whose verdict changed."""
    from troubleshooter import checks

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
    from troubleshooter import collect
    from troubleshooter.bundle import Bundle
    from troubleshooter.targets import BundleTarget

    b = Bundle.open(path)
    if side not in b.sides:
        side = b.sides[0] if b.sides else side
    coll = collect.collect(BundleTarget(b, side=side), side=side)
    return coll.facts, {sid: ev.describe() for sid, ev in coll.evidence.items()}


def compare_bundles(path_a: str | os.PathLike[str], path_b: str | os.PathLike[str], *, profile_id: str | None = None,
                    names: Sequence[str] | None = None, include_volatile: bool = False) -> BundleComparison:
    """``compare A.bundle B.bundle``: A is *before* (or the healthy reference), B *after* (or the node)."""
    from troubleshooter import profiles

    fa, sa = bundle_collection(path_a)
    fb, sb = bundle_collection(path_b)
    if profile_id is None:
        gn = fb.get_value("gpu.names")
        if isinstance(gn, Unknown):
            gn = fa.get_value("gpu.names")
        profile_id = profiles.guess(gn)
    prof = profiles.get(profile_id)
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

#: Robust outlier rule for numbers: |x - median| > Z * 1.4826 * MAD (Iglewicz-Hoaglin modified z-score)
#: AND |x - median| >= max(REL_FLOOR * |median|, ABS_FLOORS[unit]) so tiny noise is never flagged.
Z_THRESHOLD = 3.5
REL_FLOOR = 0.05
ABS_FLOORS = {"%": 1.0, "count": 1.0, "MHz": 50.0, "C": 5.0, "ms": 1.0, "GB/s": 1.0, "Gb/s": 1.0, "KiB": 1024.0,
              "kB": 1024.0, "MB": 64.0, "bytes": 1.0, "ratio": 0.02, "W": 10.0}
#: A value held by more than this share of the nodes is the majority; the others stand out.
MAJORITY = 0.5
#: Facts on which nodes are expected to differ (their identity, their task) or that change from one
#: reading to the next: never compared node to node.
NODE_IGNORE = tuple(p for p in VOLATILE if p != "evidence.*") + (
    "env.var.SLURMD_NODENAME", "env.var.SLURM_NODEID", "env.var.SLURM_TOPOLOGY_ADDR", "env.var.HOSTNAME",
    "env.var.SLURM_STEP_*", "env.var.SLURM_STEPID", "env.var.SLURM_STEP_LAUNCHER_PORT", "env.var.TMPDIR",
    "slurm.node", "env.nccl", "env.ucx", "env.nvshmem", "env.cuda", "nccl_tests.rows", "nccl_tests.runs",
    "cpu.cstate_pct", "cpu.avg_mhz", "cpu.busy_pct", "cpu.busy_cores", "cpu.pkg_watt", "cpu.c1_pct",
    "cpu.hw_c1_pct", "cpu.freq.cur_mhz_median",
)
MAX_SPLIT_VALUES = 8  # a fact with no majority and more distinct values than this is per-node identity
_HASH_OVER = 200  # canonical values longer than this are kept as a digest plus a preview


def canonical(value: Any) -> Any:
    """A hashable, comparable form of a fact value: numbers and strings as they are, the rest as JSON."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return value if len(value) <= _HASH_OVER else _digest(value)
    s = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return "json:" + s if len(s) <= _HASH_OVER else _digest(s)


def _digest(s: str) -> str:
    return f"sha1:{hashlib.sha1(s.encode('utf-8', 'replace')).hexdigest()[:16]} {s[:60]}…"


def display(key: Any) -> str:
    if isinstance(key, str) and key.startswith("json:"):
        return key[5:]
    if key is _MISSING:
        return "(absent)"
    return format_value(key)


class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


_MISSING = _Missing()


@dataclasses.dataclass
class NodeOutlier:
    node: str
    value: Any
    score: float
    direction: str = ""  # numbers: low or high

    def as_dict(self) -> dict[str, Any]:
        return {"node": self.node, "value": None if self.value is _MISSING else self.value, "score": round(self.score, 2),
                **({"direction": self.direction} if self.direction else {}), **({"absent": True} if self.value is _MISSING else {})}


@dataclasses.dataclass
class FactOutliers:
    fact: str
    kind: str  # number or value
    unit: str
    typical: Any  # the median (numbers) or the majority value
    typical_nodes: int
    spread: float | None  # numbers: MAD
    outliers: list[NodeOutlier]

    @property
    def score(self) -> float:
        return max((o.score for o in self.outliers), default=0.0)

    def as_dict(self) -> dict[str, Any]:
        typical = None if self.typical is _MISSING else (self.typical[5:] if isinstance(self.typical, str) and self.typical.startswith("json:") else self.typical)
        return {"fact": self.fact, "kind": self.kind, "unit": self.unit,
                ("median" if self.kind == "number" else "majority"): typical,
                **({"majority_absent": True} if self.typical is _MISSING else {}),
                "typical_nodes": self.typical_nodes, **({"mad": self.spread} if self.kind == "number" else {}),
                "nodes": [o.as_dict() for o in self.outliers]}


@dataclasses.dataclass
class NodeGroup:
    nodes: list[str]
    differs: dict[str, str]  # fact -> this group's value (empty: like the majority on everything)

    def as_dict(self) -> dict[str, Any]:
        return {"size": len(self.nodes), "nodes": hostlist(self.nodes), "differs": self.differs}


@dataclasses.dataclass
class NodeReport:
    nodes: list[str]
    outliers: list[FactOutliers]
    splits: list[dict[str, Any]]  # facts with no majority: value -> nodes
    groups: list[NodeGroup]
    compared: int
    uniform: int
    identity: list[str]  # facts that differ on (nearly) every node: identity, not compared
    failed: list[dict[str, str]] = dataclasses.field(default_factory=list)

    def suspects(self) -> list[dict[str, Any]]:
        per: dict[str, list[tuple[str, float]]] = collections.defaultdict(list)
        for fo in self.outliers:
            for o in fo.outliers:
                per[o.node].append((fo.fact, o.score))
        ranked = sorted(per.items(), key=lambda kv: (-len(kv[1]), -sum(s for _, s in kv[1]), kv[0]))
        return [{"node": n, "facts": [f for f, _ in sorted(fs, key=lambda x: -x[1])], "score": round(sum(s for _, s in fs), 2)}
                for n, fs in ranked]

    def as_dict(self) -> dict[str, Any]:
        return {"kind": "nodes", "nodes": len(self.nodes), "node_names": hostlist(self.nodes),
                "failed": self.failed, "compared_facts": self.compared, "uniform_facts": self.uniform,
                "identity_facts": self.identity,
                "rule": {"z": Z_THRESHOLD, "rel_floor": REL_FLOOR, "abs_floors": ABS_FLOORS, "majority": MAJORITY},
                "outliers": [f.as_dict() for f in self.outliers], "splits": self.splits,
                "suspects": self.suspects(), "groups": [g.as_dict() for g in self.groups]}


class NodeComparator:
    """Streams nodes' facts in (``add``), keeps only an inverted index per fact (value -> node indices),
    and compares at the end (``report``). Memory: one small array per distinct value per fact."""

    def __init__(self, ignore: Sequence[str] = NODE_IGNORE) -> None:
        self.nodes: list[str] = []
        self.index: dict[str, dict[Any, array]] = {}
        self.units: dict[str, str] = {}
        self.ignore = tuple(ignore)
        self._ignored: dict[str, bool] = {}
        self.failed: list[dict[str, str]] = []

    def _skip(self, name: str) -> bool:
        got = self._ignored.get(name)
        if got is None:
            got = self._ignored[name] = _matches(name, self.ignore)
        return got

    def add(self, node: str, facts: Mapping[str, Any], *, canonicalized: bool = False) -> None:
        i = len(self.nodes)
        self.nodes.append(node)
        for name, value in facts.items():
            if self._skip(name):
                continue
            key = value if canonicalized else canonical(value)
            per = self.index.get(name)
            if per is None:
                per = self.index[name] = {}
            arr = per.get(key)
            if arr is None:
                arr = per[key] = array("I")
            arr.append(i)

    def add_failed(self, node: str, reason: str) -> None:
        self.failed.append({"node": node, "reason": reason})

    def report(self) -> NodeReport:
        from troubleshooter import facts as factmod

        n = len(self.nodes)
        outliers: list[FactOutliers] = []
        splits: list[dict[str, Any]] = []
        identity: list[str] = []
        uniform = 0
        # node -> fact -> class, for grouping
        sig: list[dict[str, str]] = [dict() for _ in range(n)]
        for name in sorted(self.index):
            per = self.index[name]
            present = sum(len(a) for a in per.values())
            if len(per) == 1 and present == n:
                uniform += 1
                continue
            groups: dict[Any, list[int]] = {k: list(a) for k, a in per.items()}
            if present < n:
                seen = set().union(*[set(a) for a in per.values()])
                groups[_MISSING] = [j for j in range(n) if j not in seen]
            spec = factmod.spec(name)
            unit = spec.unit if spec else ""
            nums = {k: v for k, v in groups.items() if _is_num(k)}
            if nums and len(nums) == len([k for k in groups if k is not _MISSING]):
                fo = self._numbers(name, unit, nums, groups.get(_MISSING, []))
            else:
                fo = self._values(name, unit, groups, n, splits, identity, sig)
            if fo is not None and fo.outliers:
                outliers.append(fo)
                for o in fo.outliers:
                    sig[self._pos(o.node)][name] = o.direction or display(o.value)
        outliers.sort(key=lambda f: (-f.score, f.fact))
        by_sig: dict[tuple, list[str]] = collections.defaultdict(list)
        for j, s in enumerate(sig):
            by_sig[tuple(sorted(s.items()))].append(self.nodes[j])
        groups_out = [NodeGroup(sorted(v), dict(k)) for k, v in by_sig.items()]
        groups_out.sort(key=lambda g: (-len(g.nodes), g.nodes[0]))
        return NodeReport(list(self.nodes), outliers, splits, groups_out, len(self.index), uniform, identity,
                          list(self.failed))

    def _pos(self, node: str) -> int:
        if not hasattr(self, "_posmap") or len(self._posmap) != len(self.nodes):
            self._posmap = {nm: j for j, nm in enumerate(self.nodes)}
        return self._posmap[node]

    def _numbers(self, name: str, unit: str, nums: dict[Any, list[int]], missing: list[int]) -> FactOutliers:
        vals = sorted(float(k) for k, idx in nums.items() for _ in idx)
        med = statistics.median(vals)
        mad = statistics.median(abs(v - med) for v in vals)
        floor = max(REL_FLOOR * abs(med), ABS_FLOORS.get(unit, 0.0))
        scale = max(1.4826 * mad, floor, 1e-12)
        out = []
        for k, idx in nums.items():
            d = float(k) - med
            if abs(d) >= floor and abs(d) > Z_THRESHOLD * 1.4826 * mad and abs(d) > 0:
                for j in idx:
                    out.append(NodeOutlier(self.nodes[j], k, abs(d) / scale, "high" if d > 0 else "low"))
        present = len(vals)
        if missing and len(missing) < present:  # absent on a minority of the nodes
            for j in missing:
                out.append(NodeOutlier(self.nodes[j], _MISSING, present / len(missing)))
        out.sort(key=lambda o: (-o.score, o.node))
        typical = int(med) if float(med).is_integer() else round(med, 4)
        return FactOutliers(name, "number", unit, typical, present - sum(1 for o in out if o.value is not _MISSING),
                            round(mad, 4), out)

    def _values(self, name: str, unit: str, groups: dict[Any, list[int]], n: int, splits: list, identity: list,
                sig: list[dict[str, str]]) -> FactOutliers | None:
        ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), str(kv[0])))
        top_key, top_nodes = ranked[0]
        if len(top_nodes) > MAJORITY * n:
            out = []
            for k, idx in ranked[1:]:
                for j in idx:
                    out.append(NodeOutlier(self.nodes[j], k, len(top_nodes) / len(idx)))
            out.sort(key=lambda o: (-o.score, o.node))
            return FactOutliers(name, "value", unit, top_key, len(top_nodes), None, out)
        if len(groups) > MAX_SPLIT_VALUES or (n >= 3 and len(groups) == n):
            identity.append(name)
            return None
        splits.append({"fact": name, "values": [
            {"value": None if k is _MISSING else (k[5:] if isinstance(k, str) and k.startswith("json:") else k),
             "count": len(idx), "nodes": hostlist([self.nodes[j] for j in idx])} for k, idx in ranked]})
        for k, idx in ranked:
            for j in idx:
                sig[j][name] = display(k)
        return None


# ---------------------------------------------------------------------- node facts from bundles

FACTS_SIDECAR_FORMAT = "troubleshooter-node-facts"


def node_name(path: str | os.PathLike[str]) -> str:
    name = Path(path).name
    for suffix in (".bundle.tar.gz", ".bundle.tgz", ".bundle", ".tar.gz", ".tgz", ".facts.json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def sidecar_path(bundle_path: str | os.PathLike[str]) -> Path:
    p = Path(bundle_path)
    return p.with_name(node_name(p) + ".facts.json")


class _ParseCache:
    """Parsed values by (parser, sha1 of the output): identical outputs (lscpu, nccl.conf, the topology
    file ... on a homogeneous fleet) are parsed once. Bounded (LRU)."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self.data: collections.OrderedDict[tuple[str, str], dict[str, Any] | Exception] = collections.OrderedDict()

    def parse(self, kind: str, stdout: bytes, text_fn) -> dict[str, Any]:
        from troubleshooter import parsers

        key = (kind, hashlib.sha1(stdout).hexdigest())
        got = self.data.get(key)
        if got is None:
            try:
                got = parsers.run(kind, text_fn())
            except parsers.ParseError as exc:
                got = exc
            self.data[key] = got
            if len(self.data) > self.size:
                self.data.popitem(last=False)
        else:
            self.data.move_to_end(key)
        if isinstance(got, Exception):
            raise got
        return got


_CACHE = _ParseCache()


def bundle_facts(path: str | os.PathLike[str], side: str = "target") -> tuple[dict[str, Any], dict[str, str]]:
    """A bundle's facts as plain values, and each source's status (``ok``, ``not-installed`` ...).

    The same parsers and derived facts as ``check --bundle``, minus the provenance, with a parse cache.
    Sources that did not give evidence appear as ``evidence.<source>`` = status, so a node where a tool
    fails stands out from the nodes where it runs.
    """
    from troubleshooter import derived, parsers, sources
    from troubleshooter.bundle import Bundle
    from troubleshooter.facts import Fact

    registry = sources.load_all()
    b = Bundle.open(path)
    if side not in b.sides and b.sides:
        side = b.sides[0]
    fs = FactSet(side)
    status: dict[str, str] = {}
    for sid in b.source_ids(side):
        src = registry.get(sid)
        ev = b.evidence(sid, side)
        if src is None or ev is None:
            continue
        status[sid] = ev.status.value
        if not ev.ok:
            continue
        try:
            values = _CACHE.parse(src.parser, ev.stdout, lambda: ev.text)
        except parsers.ParseError:
            status[sid] = "parse-error"
            continue
        for k, v in values.items():
            fs.add(Fact(k, v, "", sid))
    derived.apply(fs)
    out = fs.as_dict()
    for sid, st in status.items():
        if st != "ok":
            out[f"evidence.{sid}"] = st
    return out, status


def write_sidecar(bundle_path: str | os.PathLike[str]) -> Path:
    """Parse a bundle and write ``<node>.facts.json`` next to it (fanout does this on each node, so the
    comparison reads small JSON files instead of parsing every bundle again)."""
    from troubleshooter import __version__

    p = Path(bundle_path)
    facts, status = bundle_facts(p)
    doc = {"format": FACTS_SIDECAR_FORMAT, "version": 1, "tool": f"troubleshooter {__version__}",
           "bundle": p.name, "bundle_sha256": _file_sha256(p), "status": status, "facts": facts}
    out = sidecar_path(p)
    tmp = out.with_name(out.name + ".partial")
    tmp.write_text(json.dumps(doc, default=str, separators=(",", ":")))
    os.replace(tmp, out)
    return out


def _file_sha256(p: Path) -> str:
    if p.is_dir():
        m = p / "manifest.json"
        return hashlib.sha256(m.read_bytes()).hexdigest() if m.exists() else ""
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _read_sidecar(bundle_path: Path) -> dict[str, Any] | None:
    from troubleshooter import __version__

    sc = sidecar_path(bundle_path)
    try:
        doc = json.loads(sc.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != FACTS_SIDECAR_FORMAT or doc.get("tool") != f"troubleshooter {__version__}":
        return None
    if doc.get("bundle_sha256") != _file_sha256(bundle_path) or not isinstance(doc.get("facts"), dict):
        return None
    return doc


def _load_node(path_str: str, use_sidecar: bool = True) -> tuple[str, dict[str, Any] | None, str]:
    """Worker: (node, canonical facts or None, error). Runs in a subprocess for large fan-outs."""
    from troubleshooter.bundle import BundleError

    p = Path(path_str)
    node = node_name(p)
    try:
        doc = _read_sidecar(p) if use_sidecar else None
        facts = doc["facts"] if doc else bundle_facts(p)[0]
    except (BundleError, OSError, ValueError) as exc:
        return node, None, str(exc)
    return node, {k: canonical(v) for k, v in facts.items()}, ""


def find_bundles(directory: str | os.PathLike[str]) -> list[Path]:
    d = Path(directory)
    if not d.is_dir():
        raise FileNotFoundError(f"{d}: not a directory of bundles")
    out = [p for p in d.iterdir() if p.name.endswith((".bundle.tar.gz", ".bundle.tgz"))
           or (p.is_dir() and (p / "manifest.json").exists())]
    return sorted(out, key=lambda p: _natural(node_name(p)))


def _natural(s: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def iter_node_facts(paths: Sequence[Path], *, workers: int | None = None, use_sidecar: bool = True
                    ) -> Iterator[tuple[str, dict[str, Any] | None, str]]:
    """(node, canonical facts, error) per bundle, streamed; parsed in ``workers`` processes when many."""
    if workers is None:
        # reading the facts sidecars is cheaper than shipping results between processes: one process then
        with_sidecar = use_sidecar and paths and sidecar_path(paths[len(paths) // 2]).exists()
        workers = min(4, os.cpu_count() or 1) if len(paths) >= 64 and not with_sidecar else 1
    if workers <= 1:
        for p in paths:
            yield _load_node(str(p), use_sidecar)
        return
    import concurrent.futures as cf
    import functools
    import multiprocessing

    ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        yield from pool.map(functools.partial(_load_node, use_sidecar=use_sidecar), [str(p) for p in paths],
                            chunksize=max(1, min(32, len(paths) // (workers * 4) or 1)))


def compare_node_bundles(paths: Sequence[Path], *, workers: int | None = None, use_sidecar: bool = True,
                         failed: Sequence[dict[str, str]] = ()) -> NodeReport:
    """Node-vs-node comparison of bundles, one per node, streamed (only facts are kept)."""
    comp = NodeComparator()
    for node, facts, err in iter_node_facts(paths, workers=workers, use_sidecar=use_sidecar):
        if facts is None:
            comp.add_failed(node, err)
        else:
            comp.add(node, facts, canonicalized=True)
    for f in failed:
        comp.add_failed(f["node"], f["reason"])
    return comp.report()


# ---------------------------------------------------------------------- host lists

def hostlist(names: Sequence[str]) -> str:
    """Compress node names the way Slurm writes them: gpu001,gpu002,gpu003,gpu007 -> gpu[001-003,007]."""
    by_prefix: dict[tuple[str, str], list[str]] = collections.OrderedDict()
    singles: list[str] = []
    for name in sorted(names, key=_natural):
        m = re.match(r"^(.*?)(\d+)([^\d]*)$", name)
        if not m:
            singles.append(name)
            continue
        by_prefix.setdefault((m.group(1), m.group(3)), []).append(m.group(2))
    parts = list(singles)
    for (prefix, suffix), nums in by_prefix.items():
        if len(nums) == 1:
            parts.append(f"{prefix}{nums[0]}{suffix}")
            continue
        ranges, start, prev = [], nums[0], nums[0]
        for x in nums[1:] + [None]:
            if x is not None and int(x) == int(prev) + 1 and (len(x) == len(prev) or not prev.startswith("0")):
                prev = x
                continue
            ranges.append(start if start == prev else f"{start}-{prev}")
            if x is not None:
                start = prev = x
        parts.append(f"{prefix}[{','.join(ranges)}]{suffix}")
    return ",".join(parts)
