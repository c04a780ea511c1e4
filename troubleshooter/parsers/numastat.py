"""``numastat``: system-wide NUMA allocation counters, a process's memory per node (``numastat -p PID``,
``numastat -c``), and per-node meminfo (``numastat -m``).

Real samples (from ../shared/corpus/numastat). System-wide counters (a box with a CPU-less memory node 2)::

                               node0           node1           node2
    numa_hit                 2523058         9225528               0
    numa_miss                 150213           10226        21495942
    numa_foreign            17144215         4501270               0
    interleave_hit                91              94               0
    local_node               2493918         9208226               0
    other_node                179351           27528        21495942

One process (``numastat -c test1``; ``-p`` prints the same table with two decimals)::

    Per-node process memory usage (in MBs) for PID 305 (test1)
             Node 0 Node 1 Total
             ------ ------ -----
    Huge          0      0     0
    Heap          5      3     9
    Stack         0      0     0
    Private      42     58   100
    -------  ------ ------ -----
    Total        42     58   100

What it means: ``numa_miss`` counts pages allocated on a node other than the one asked for (the wanted node
was full); ``other_node`` counts pages allocated while the task ran on another node (remote accesses to
come). ``numa.miss_pct`` = sum(numa_miss) / (sum(numa_hit) + sum(numa_miss)) * 100 and
``numa.other_node_pct`` = sum(other_node) / (sum(local_node) + sum(other_node)) * 100, over all nodes.

``numa.proc.off_main_pct`` is the share of the process's memory that is *not* on the node holding most of it:
(total - largest node) / total * 100: a placement measure (where the pages are), not a count of accesses.
Whether those pages are *remote* depends on where the process's threads run, which numastat does not say:
``numa.proc.remote_pct`` is derived from it together with the CPU binding (``numactl --show``,
``taskset -p``, ``/proc/PID/status``) by :mod:`troubleshooter.model.combine`, and stays unknown without it.

When a paste holds several tables of one form (a before/after comparison), the last complete one is used.

>>> f = parse("Per-node process memory usage (in MBs) for PID 305 (test1)\\n  Node 0 Node 1 Total\\n"
...           "Total 42 58 100\\n")
>>> f["numa.proc.node_mb"], f["numa.proc.off_main_pct"]
({'0': 42, '1': 58}, 42.0)
"""

from __future__ import annotations

import re

from troubleshooter.parsers.base import ParseError, parser, require_text, to_number
from troubleshooter.parsers.numactl import clean_line

FACTS = [
    ("numa.miss_pct", "number", "%", "sum numa_miss / (numa_hit + numa_miss) over all nodes: allocations that fell back to another node"),
    ("numa.other_node_pct", "number", "%", "sum other_node / (local_node + other_node): pages allocated for a task running on another node"),
    ("numa.per_node", "dict", "", "system counters per node id (string key): numa_hit, numa_miss, numa_foreign, interleave_hit, local_node, other_node"),
    ("numa.stat_unit", "string", "", "unit of numa.per_node: 'pages' (plain numastat) or 'MB' (numastat -n)"),
    ("numa.proc.pid", "number", "", "the process numastat -p reported on"),
    ("numa.proc.name", "string", "", "its command name"),
    ("numa.proc.node_mb", "dict", "", "the process's memory per node id (string key), MB (the table's Total row)"),
    ("numa.proc.total_mb", "number", "MB", "the process's memory on all nodes"),
    ("numa.proc.off_main_pct", "number", "%", "share of the process's memory not on the node that holds most of it: (total - max node) / total * 100 (remote only if the threads run on that node: see numa.proc.remote_pct)"),
    ("numa.proc.main_node", "number", "", "the node that holds most of the process's memory"),
    ("numa.proc.count", "number", "count", "processes in the numastat -p table (more than 1 when a name pattern matched several)"),
    ("numa.meminfo", "dict", "", "numastat -m: meminfo field -> {node id: MB, 'total': MB}"),
    ("numa.meminfo_min_free_pct", "number", "%", "numastat -m: lowest MemFree/MemTotal among nodes with memory"),
]

_PROC_HEAD = re.compile(r"^Per-node process memory usage \(in MBs?\)(?: for PID (\d+) \((.*)\))?", re.IGNORECASE)
_MEM_HEAD = re.compile(r"^Per-node system memory usage \(in MBs?\)", re.IGNORECASE)
_NSTAT_HEAD = re.compile(r"^Per-node numastat info \(in MBs?\)", re.IGNORECASE)
# column header; numastat titles the label column 'PID' when a name pattern matched several processes
_COLS = re.compile(r"^(?:PID\s+)?((?:node\s*\d+\s+)*node\s*\d+)(\s+total)?\s*$", re.IGNORECASE)
_DASHES = re.compile(r"^[-\s]+$")
_TOKEN_WARN = re.compile(r"^Token \S+ not in hash table\.?$")
_STAT_ROWS = ("numa_hit", "numa_miss", "numa_foreign", "interleave_hit", "local_node", "other_node")

_STAT_MARK = re.compile(r"^[^\w\n]*numa_hit\s+\d", re.MULTILINE | re.IGNORECASE)
_PER_NODE_MARK = re.compile(r"^[^\w\n]*Per-node (process|system) memory usage|^[^\w\n]*Per-node numastat info", re.MULTILINE)
_COLS_MARK = re.compile(r"^(?:[^\S\n]|[>+\-])*(PID\s+)?(Node\s*\d+\s+)+Total\s*$", re.MULTILINE | re.IGNORECASE)
_NUMACTL_MARK = re.compile(r"^(?:[^\S\n]|[>+\-])*(available:\s*\d+\s+nodes?\s*\(|physcpubind:|policy:)", re.MULTILINE)


def _detect(text: str) -> float:
    stat = _STAT_MARK.search(text)
    per = _PER_NODE_MARK.search(text)
    if stat:
        score, pos = 0.9, stat.start()
    elif per and _COLS_MARK.search(text):
        score, pos = 0.9, per.start()
    elif per:
        return 0.4  # the header without a table (scrambled, or no such process)
    else:
        return 0.0
    other = _NUMACTL_MARK.search(text)
    if other and other.start() < pos:
        score = 0.7  # numactl printed first: the paste is mainly numactl's
    return score


class _Table:
    def __init__(self, kind: str, cols: list[str], line: int, head: re.Match | None) -> None:
        self.kind = kind  # stat | proc | meminfo | nstat
        self.cols = cols  # node ids as strings, and 'total'
        self.rows: dict[str, list[float | int]] = {}
        self.line = line
        self.head = head


def _columns(line: str) -> list[str] | None:
    m = _COLS.match(line)
    if not m:
        return None
    cols = re.findall(r"node\s*(\d+)", m.group(1), re.IGNORECASE)
    if m.group(2):
        cols.append("total")
    return cols


def _tables(lines: list[str]) -> list[_Table]:
    tables: list[_Table] = []
    context: tuple[str, re.Match | None] = ("stat", None)
    cur: _Table | None = None
    for n, line in enumerate(lines, 1):
        if not line:
            cur = None
            continue
        m = _PROC_HEAD.match(line)
        if m:
            context, cur = ("proc", m), None
            continue
        if _MEM_HEAD.match(line):
            context, cur = ("meminfo", None), None
            continue
        if _NSTAT_HEAD.match(line):
            context, cur = ("nstat", None), None
            continue
        if _TOKEN_WARN.match(line):
            continue  # old numastat -m complaining about new meminfo fields
        cols = _columns(line)
        if cols:
            cur = _Table(context[0], cols, n, context[1])
            tables.append(cur)
            continue
        if cur is None:
            continue
        if _DASHES.match(line):
            continue
        tokens = line.split()
        k = len(cur.cols)
        if len(tokens) <= k:
            cur = None
            continue
        values = [to_number(t) for t in tokens[-k:]]
        if any(v is None for v in values):
            cur = None
            continue
        label = " ".join(tokens[:-k])
        cur.rows[label] = values  # type: ignore[assignment]
    return [t for t in tables if t.rows]


@parser(
    "numastat",
    detect=_detect,
    summary="NUMA allocation counters (numastat), a process's memory per node (numastat -p PID), per-node meminfo (-m)",
    facts=FACTS,
    command="numastat; numastat -p PID",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "numastat output")
    lines = [clean_line(raw) for raw in text.split("\n")]
    tables = _tables(lines)
    facts: dict[str, object] = {}
    last: dict[str, _Table] = {}
    for t in tables:
        if t.kind == "stat" and not any(r.lower() in _STAT_ROWS for r in t.rows):
            continue
        if t.kind == "proc" and "Total" not in t.rows:
            continue
        last[t.kind] = t
    if "stat" in last:
        facts.update(_stat(last["stat"], "pages"))
    elif "nstat" in last:
        facts.update(_stat(last["nstat"], "MB"))
    if "proc" in last:
        facts.update(_proc(last["proc"]))
    if "meminfo" in last:
        facts.update(_meminfo(last["meminfo"]))
    if facts:
        return facts
    # Nothing complete. The PDF-extracted corpus file lands here: its labels and numbers are scrambled
    # across lines, so any value we attached to a label or a node would be a guess; a clear error is better
    # than a PID with no placement figures.
    for n, line in enumerate(lines, 1):
        m = _PROC_HEAD.match(line)
        if m:
            who = f" for PID {m.group(1)} ({m.group(2)})" if m.group(1) else ""
            raise ParseError(
                f"numastat printed no per-node table{who}: the process does not exist, its numa_maps cannot be "
                "read, or the table is scrambled (labels and values not on the same lines)", line=n)
        if re.match(r"^numa_hit\b", line, re.IGNORECASE):
            raise ParseError("numastat counters found but not as a table (label followed by one number per node "
                             "column): the columns look scrambled", line=n)
    raise ParseError("no numastat table found (expected a 'node0 node1' header and rows like 'numa_hit  123  456', "
                     "or 'Per-node process memory usage' with 'Node 0 ... Total' columns)")


def _per_node(t: _Table) -> dict[str, dict[str, float | int]]:
    out: dict[str, dict[str, float | int]] = {}
    for label, values in t.rows.items():
        for col, v in zip(t.cols, values):
            if col != "total":
                out.setdefault(col, {})[label.lower()] = v
    return out


def _stat(t: _Table, unit: str) -> dict[str, object]:
    per = _per_node(t)
    facts: dict[str, object] = {"numa.per_node": per, "numa.stat_unit": unit}

    def total(row: str) -> float | None:
        vals = [node[row] for node in per.values() if row in node]
        return sum(vals) if len(vals) == len(per) and vals else None

    hit, miss = total("numa_hit"), total("numa_miss")
    if hit is not None and miss is not None and hit + miss > 0:
        facts["numa.miss_pct"] = round(100.0 * miss / (hit + miss), 2)
    local, other = total("local_node"), total("other_node")
    if local is not None and other is not None and local + other > 0:
        facts["numa.other_node_pct"] = round(100.0 * other / (local + other), 2)
    return facts


def _proc(t: _Table) -> dict[str, object]:
    row = t.rows["Total"]
    node_mb = {col: v for col, v in zip(t.cols, row) if col != "total"}
    facts: dict[str, object] = {"numa.proc.node_mb": node_mb}
    total = row[t.cols.index("total")] if "total" in t.cols else sum(node_mb.values())
    facts["numa.proc.total_mb"] = total
    if node_mb:
        main = max(node_mb, key=lambda c: node_mb[c])
        facts["numa.proc.main_node"] = int(main)
        if total and total > 0:
            facts["numa.proc.off_main_pct"] = round(100.0 * (total - node_mb[main]) / total, 2)
    if t.head is not None and t.head.group(1):
        facts["numa.proc.pid"] = int(t.head.group(1))
        facts["numa.proc.name"] = t.head.group(2)
        facts["numa.proc.count"] = 1
    else:
        facts["numa.proc.count"] = len([r for r in t.rows if r != "Total"])
    return facts


def _meminfo(t: _Table) -> dict[str, object]:
    info: dict[str, dict[str, float | int]] = {}
    for label, values in t.rows.items():
        info[label] = {col: v for col, v in zip(t.cols, values)}
    facts: dict[str, object] = {"numa.meminfo": info}
    tot, free = info.get("MemTotal"), info.get("MemFree")
    if tot and free:
        pcts = [100.0 * free[c] / tot[c] for c in tot if c != "total" and c in free and tot[c] > 0]
        if pcts:
            facts["numa.meminfo_min_free_pct"] = round(min(pcts), 2)
    return facts
