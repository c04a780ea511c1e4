"""``numactl --hardware`` (NUMA nodes, their CPUs, memory and distances) and ``numactl --show`` (the policy
and binding of the process that runs it).

Real sample (GH200, from ../shared/corpus/numastat; the Hopper HBM is CPU-less node 1, nodes 2-8 are empty
MIG placeholders, 255 means unreachable; numactl wrapped the CPU list of node 0 across lines)::

    available: 9 nodes (0-8)
    node 0 cpus: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20
    21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42
    ...
    node 0 size: 490037 MB
    node 0 free: 484432 MB
    node 1 cpus:
    node 1 size: 97280 MB
    node 1 free: 97279 MB
    ...
    node distances:
    node   0   1   2   3   4   5   6   7   8
      0:  10  80  80  80  80  80  80  80  80
      1:  80  10  255  255  255  255  255  255  255

``numactl --show`` (this machine)::

    policy: default
    preferred node: current
    physcpubind: 0 1
    cpubind: 0
    nodebind: 0
    membind: 0

What it means for training speed: a process whose memory sits on another node than its CPUs pays the remote
distance on every access (case 2: ~18% remote accesses, no NUMA binding); CPU nodes without memory
(``size: 0 MB``) make *all* of their accesses remote; a node nearly out of free memory pushes new allocations
to a remote node. Node ids are JSON object keys, so they are strings (``"0"``) in ``numa.nodes`` and
``numa.distances``; lists of nodes hold integers.

>>> f = parse("available: 1 nodes (0)\\nnode 0 cpus: 0 1\\nnode 0 size: 4570 MB\\nnode 0 free: 4391 MB\\n")
>>> f["numa.node_count"], f["numa.nodes"]["0"]["cpus"], f["numa.min_free_pct"]
(1, '0-1', 96.08)
"""

from __future__ import annotations

import re

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("numa.available", "bool", "", "numactl sees NUMA (false when it prints 'No NUMA available on this system')"),
    ("numa.node_count", "number", "count", "NUMA nodes the kernel exposes (numactl --hardware 'available: N nodes')"),
    ("numa.nodes", "dict", "", "per node id (string key): cpus (list as '0-15,32-47'), cpu_count, size_mb, free_mb"),
    ("numa.cpuless_nodes", "list", "", "ids of nodes with no CPUs (GPU HBM on Grace Hopper, CXL memory, placeholders)"),
    ("numa.memoryless_nodes", "list", "", "ids of nodes with 0 MB of memory (their CPUs' accesses are all remote)"),
    ("numa.cpu_memoryless_nodes", "list", "", "ids of nodes that have CPUs but no memory"),
    ("numa.distances", "dict", "", "SLIT distance matrix: distances[from][to] (string node ids); 10 = local, 255 = unreachable"),
    ("numa.max_distance", "number", "", "largest distance in the matrix (255 means some pair is unreachable)"),
    ("numa.max_reachable_distance", "number", "", "largest distance below 255 (the farthest reachable node)"),
    ("numa.total_mb", "number", "MB", "memory of all nodes together"),
    ("numa.free_mb", "number", "MB", "free memory of all nodes together"),
    ("numa.min_free_pct", "number", "%", "lowest free/size among nodes that have memory (a full node spills allocations to remote nodes)"),
    ("numa.policy", "string", "", "numactl --show: memory policy of the process (default, bind, interleave, preferred)"),
    ("numa.preferred_node", "string", "", "numactl --show: preferred node ('current' when none)"),
    ("numa.physcpubind", "string", "", "numactl --show: CPUs the process may run on, as a list '0-15,32-47'"),
    ("numa.physcpubind_count", "number", "count", "numactl --show: how many CPUs the process may run on"),
    ("numa.cpubind", "list", "", "numactl --show: nodes whose CPUs the process may run on"),
    ("numa.nodebind", "list", "", "numactl --show: nodes the process is bound to"),
    ("numa.membind", "list", "", "numactl --show: nodes the process may allocate memory from"),
]

# Mail quoting ("> ", ">  "), diff-of-a-quote ("+> ") and indentation are not the tool's: drop them.
_QUOTE = re.compile(r"^\s*+[+\-]?(?:\s*>)+ ?")
_AVAILABLE = re.compile(r"^available:\s*(\d+)\s+nodes?\b", re.IGNORECASE)
_NODE_CPUS = re.compile(r"^node\s+(\d+)\s+cpus:\s*(.*)$")
_NODE_MEM = re.compile(r"^node\s+(\d+)\s+(size|free):\s*(\d+)\s*([KMG]B)\s*$")
_DIST_HEAD = re.compile(r"^node(\s+\d+)+\s*$")
_DIST_ROW = re.compile(r"^(\d+):((?:\s+\d+)+)\s*$")
_ONLY_INTS = re.compile(r"^\d+(\s+\d+)*$")
_SHOW_KEYS = re.compile(r"\b(policy|preferred node|physcpubind|cpubind|nodebind|membind|preferred)\s*:")
_NO_NUMA = re.compile(r"No NUMA available on this system")

# Markers of other tools often pasted with numactl (numastat, lscpu, nvidia-smi topo -m), to tell which
# output comes first in a mixed paste: the first tool's parser should win detection.
_OTHER_MARK = re.compile(r"^[^\w\n]*(numa_hit\s+\d|Per-node (process|system) memory usage|Architecture:\s|CPU\(s\):\s|"
                         r"GPU0\s.*CPU Affinity)", re.MULTILINE)
_HW_MARK = re.compile(r"^(?:[^\S\n]|[>+\-])*available:\s*\d+\s+nodes?\s*\(", re.MULTILINE)
_SHOW_MARK = re.compile(r"^(?:[^\S\n]|[>+\-])*(physcpubind|policy):", re.MULTILINE)


def clean_line(raw: str) -> str:
    return _QUOTE.sub("", raw).strip()


def cpu_list(ids: list[int]) -> str:
    """[0, 1, 2, 3, 8, 10, 11] -> '0-3,8,10-11' (the kernel's cpulist format)."""
    out = []
    ids = sorted(set(ids))
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(out)


_CPU_LIST_SEP = re.compile(r"[,\s]+")
_CPU_LIST_PART = re.compile(r"(\d+)(?:-(\d+))?(?::(\d+)/\d+)?")  # compiled once: a part per CPU of a listing


def expand_cpu_list(text: str, limit: int = 1 << 16) -> list[int] | None:
    """'0-3,8,10-11' (or '0 1 2') -> the ids; None when it is not a cpulist. Ranges are capped at ``limit``."""
    text = text.strip()
    if not text:
        return []
    ids: list[int] = []
    for part in _CPU_LIST_SEP.split(text):
        if not part:
            continue
        m = _CPU_LIST_PART.fullmatch(part)
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if hi < lo or hi - lo > limit or len(ids) > limit:
            return None
        ids.extend(range(lo, hi + 1))
    return ids


def _mb(value: str, unit: str) -> int:
    n = int(value)
    return {"KB": n // 1024, "MB": n, "GB": n * 1024}[unit.upper()]


def _detect(text: str) -> float:
    hw = _HW_MARK.search(text)
    show = _SHOW_MARK.search(text)
    other = _OTHER_MARK.search(text)
    score, pos = 0.0, None
    if hw and re.search(r"^(?:[^\S\n]|[>+\-])*node\s+\d+\s+(cpus|size):", text, re.MULTILINE):
        score, pos = 0.95, hw.start()
    elif show and re.search(r"^(?:[^\S\n]|[>+\-])*(physcpubind|nodebind|membind):", text, re.MULTILINE) and \
            re.search(r"(cpubind|membind):", text):
        score, pos = 0.9, show.start()
    elif _NO_NUMA.search(text):
        return 0.8
    if score and other and other.start() < pos:
        score = 0.7  # another tool printed first: the paste is mainly that tool's
    return score


@parser(
    "numactl",
    detect=_detect,
    summary="NUMA nodes, CPUs, memory and distances (numactl --hardware); binding (numactl --show)",
    facts=FACTS,
    command="numactl --hardware; numactl --show",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "numactl --hardware or numactl --show output")
    lines = [clean_line(raw) for raw in text.split("\n")]
    facts: dict[str, object] = {}
    facts.update(_parse_hardware(lines))
    facts.update(_parse_show(lines))
    if not facts:
        if any(_NO_NUMA.search(ln) for ln in lines):
            return {"numa.available": False}
        raise ParseError("no numactl output found (expected 'available: N nodes' and 'node N cpus:' lines, "
                         "or 'policy:'/'physcpubind:' lines)")
    return facts


def _parse_hardware(lines: list[str]) -> dict[str, object]:
    available = None
    nodes: dict[int, dict[str, object]] = {}
    cpus: dict[int, list[int]] = {}
    dist_ids: list[int] | None = None
    dist: dict[int, list[int]] = {}
    started = False
    last_cpus_node: int | None = None
    for n, line in enumerate(lines, 1):
        m = _AVAILABLE.match(line)
        if m:
            if started:
                break  # a second numactl --hardware in the same paste: keep the first
            started = True
            available = int(m.group(1))
            last_cpus_node = None
            continue
        m = _NODE_CPUS.match(line)
        if m:
            started = True
            node = int(m.group(1))
            ids = expand_cpu_list(m.group(2))
            if ids is None:
                raise ParseError(f"node {node}: cannot read the CPU list {m.group(2)!r}", line=n)
            cpus.setdefault(node, []).extend(ids)
            nodes.setdefault(node, {})
            last_cpus_node = node
            continue
        if last_cpus_node is not None and _ONLY_INTS.match(line):
            cpus[last_cpus_node].extend(int(t) for t in line.split())  # numactl wraps long CPU lists
            continue
        last_cpus_node = None
        m = _NODE_MEM.match(line)
        if m:
            started = True
            nodes.setdefault(int(m.group(1)), {})[f"{m.group(2)}_mb"] = _mb(m.group(3), m.group(4))
            continue
        if not started:
            continue
        if _DIST_HEAD.match(line):
            dist_ids = [int(t) for t in line.split()[1:]]
            dist = {}
            continue
        m = _DIST_ROW.match(line)
        if m and dist_ids is not None:
            row = [int(t) for t in m.group(2).split()]
            if len(row) != len(dist_ids):
                raise ParseError(f"distance row {m.group(1)} has {len(row)} values for {len(dist_ids)} nodes", line=n)
            dist[int(m.group(1))] = row
    if not nodes:
        return {}
    facts: dict[str, object] = {"numa.available": True}
    facts["numa.node_count"] = available if available is not None else len(nodes)
    out_nodes: dict[str, dict[str, object]] = {}
    for node in sorted(nodes):
        ids = cpus.get(node, [])
        entry: dict[str, object] = {"cpus": cpu_list(ids), "cpu_count": len(set(ids))}
        entry.update(nodes[node])
        out_nodes[str(node)] = entry
    facts["numa.nodes"] = out_nodes
    facts["numa.cpuless_nodes"] = [nd for nd in sorted(nodes) if node_has(cpus, nd) is False]
    sized = [nd for nd in sorted(nodes) if "size_mb" in nodes[nd]]
    facts["numa.memoryless_nodes"] = [nd for nd in sized if nodes[nd]["size_mb"] == 0]
    facts["numa.cpu_memoryless_nodes"] = [nd for nd in facts["numa.memoryless_nodes"] if node_has(cpus, nd)]
    if sized:
        facts["numa.total_mb"] = sum(int(nodes[nd]["size_mb"]) for nd in sized)
    if sized and all("free_mb" in nodes[nd] for nd in sized):
        facts["numa.free_mb"] = sum(int(nodes[nd]["free_mb"]) for nd in sized)
    pcts = [100.0 * int(nodes[nd]["free_mb"]) / int(nodes[nd]["size_mb"])
            for nd in sized if int(nodes[nd]["size_mb"]) > 0 and "free_mb" in nodes[nd]]
    if pcts:
        facts["numa.min_free_pct"] = round(min(pcts), 2)
    if dist_ids and dist:
        matrix = {str(i): {str(j): row[k] for k, j in enumerate(dist_ids)} for i, row in sorted(dist.items())}
        facts["numa.distances"] = matrix
        values = [v for row in dist.values() for v in row]
        facts["numa.max_distance"] = max(values)
        reachable = [v for v in values if v < 255]
        if reachable:
            facts["numa.max_reachable_distance"] = max(reachable)
    return facts


def node_has(cpus: dict[int, list[int]], node: int) -> bool:
    return bool(cpus.get(node))


def _parse_show(lines: list[str]) -> dict[str, object]:
    values: dict[str, str] = {}
    for line in lines:
        found = list(_SHOW_KEYS.finditer(line))
        if not found or found[0].start() != 0:
            continue
        # PDF extraction fuses several 'key: value' pairs on one line: split on the known keys.
        for i, m in enumerate(found):
            end = found[i + 1].start() if i + 1 < len(found) else len(line)
            values.setdefault(m.group(1), line[m.end():end].strip())
    if "physcpubind" not in values and "membind" not in values:
        return {}
    facts: dict[str, object] = {}
    if "policy" in values and values["policy"]:
        facts["numa.policy"] = values["policy"].split()[0]
    if values.get("preferred node"):
        facts["numa.preferred_node"] = values["preferred node"]
    if "physcpubind" in values:
        ids = expand_cpu_list(values["physcpubind"])
        if ids is not None:
            facts["numa.physcpubind"] = cpu_list(ids)
            facts["numa.physcpubind_count"] = len(set(ids))
    for key in ("cpubind", "nodebind", "membind"):
        if key in values:
            ids = expand_cpu_list(values[key])
            if ids is not None:
                facts[f"numa.{key}"] = sorted(set(ids))
    return facts
