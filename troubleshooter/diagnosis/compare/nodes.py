"""Node vs node: every node of a job at once, streamed one bundle at a time; numbers by a robust outlier rule
(median and MAD), values by majority, nodes that look alike grouped.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
import math
import re
import statistics
from array import array
from typing import Any, Mapping, Sequence

from troubleshooter.model.facts import format_value
from troubleshooter.diagnosis.compare.beforeafter import VOLATILE, _is_num, _matches

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
    "slurm.node", "host.nodename", "env.nccl", "env.ucx", "env.nvshmem", "env.cuda", "nccl_tests.rows", "nccl_tests.runs",
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


def never_compared(name: str) -> bool:
    """A fact the node comparison never weighs by default (NODE_IGNORE: a node's own name, counters that move
    between readings)."""
    return _matches(name, NODE_IGNORE)


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
        from troubleshooter.model import facts as factmod

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

def _natural(s: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


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
