"""NVIDIA's ``nvbandwidth``: copy bandwidth between the host and each GPU and between every pair of GPUs, by copy
engine (CE, ``cuMemcpyAsync``) or by kernel (SM), one titled matrix per measurement with a SUM line after it.

Real sample (NVIDIA/nvbandwidth#50: v0.8, 6x RTX A6000 over PCIe; the poster elided the device list)::

    nvbandwidth Version: v0.8
    CUDA Runtime Version: 13000
    Driver Version: 580.95.05

    memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)
               0         1         2         3         4         5
     0       N/A     26.34     26.35     21.95     22.64     21.80
     1     26.34       N/A     26.34     21.86     22.62     22.63
     ...
    SUM device_to_device_memcpy_read_ce 715.53

What it means: each testcase prints ``Running <testcase>.`` then its matrix (three for the bidirectional GPU-to-GPU
ones: each direction and their Total), each ended by ``SUM <key> <total of the cells>``. Host<->GPU testcases have
one row (the CPU) and a column per GPU; GPU<->GPU ones are square with an N/A diagonal. An off-diagonal N/A is a
pair whose peer access could not be enabled (the test skips it); a GPU<->GPU testcase with no such pair at all is
waived (``Waiving <testcase>.`` before v0.5, an anonymous ``Waived:`` line since). Over NVLink a pair copies at
hundreds of GB/s (~172 on H800, ~770 on B300), over PCIe Gen4 ~20-26 (two PCIe switches show as two groups of
pairs); one pair far below the others of its matrix is a degraded link or a copy routed through the CPU.
``device_to_device_memcpy_write_ce`` is what p2pBandwidthLatencyTest calls P2P=Enabled (P2P Writes), and the Total
of ``device_to_device_bidirectional_memcpy_write_ce`` its bidirectional P2P=Enabled: they give the same p2p.* facts.
Pairs are named ``'r->c'``: the cell at row r, column c (the title says which way the copy ran).

>>> f = parse("memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\\n           0         1\\n"
...           " 0       N/A     20.00\\n 1     10.00       N/A\\n\\nSUM device_to_device_memcpy_write_ce 30.00\\n")
>>> f["nvbandwidth.min_pairs.device_to_device_memcpy_write_ce"], f["p2p.uni_enabled_min_gbs"]
(['1->0'], 10.0)
"""

from __future__ import annotations

import re
import statistics
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text, to_number
from troubleshooter.parsers.p2p_bandwidth import off_diagonal

FACTS = [
    ("nvbandwidth.version", "string", "", "nvbandwidth's version, as printed (v0.8)"),
    ("nvbandwidth.cuda_runtime_version", "string", "", "the CUDA runtime version line, as printed (13000, or '13.2 (13020)' since v0.10)"),
    ("gpu.driver_version", "string", "", "NVIDIA driver version"),
    ("nvbandwidth.devices", "list", "", "the 'Device N:' list: {index, name, pci (domain:bus:device as printed, since v0.5; '' before)}"),
    ("nvbandwidth.testcases", "list", "", "the testcases run ('Running <testcase>.'), in order"),
    ("nvbandwidth.waived", "list", "", "testcases waived by name ('Waiving <testcase>.', before v0.5): a GPU<->GPU one is waived when no GPU pair can enable peer access"),
    ("nvbandwidth.waived_count", "number", "count", "testcases waived ('Waiving ...' or, since v0.5, an anonymous 'Waived:' line)"),
    ("nvbandwidth.testcase_errors", "list", "", "'<testcase>: <message>' for each testcase that stopped with an error ('ERROR:'/'Error:' or an ASSERT line), as printed"),
    ("nvbandwidth.matrices", "dict", "", "matrix key (its SUM line's, else its testcase's) -> {title, unit (GB/s or ns), rows: values as printed, N/A as null}"),
    ("nvbandwidth.sum.*", "number", "GB/s", "the SUM line of one bandwidth matrix, by its key (device_to_device_memcpy_read_ce ...): the total of its cells"),
    ("nvbandwidth.variation.*", "number", "ratio", "the COEFFICIENT_OF_VARIATION line of one testcase (v0.10): how much its samples varied"),
    ("nvbandwidth.min_gbs.*", "number", "GB/s", "slowest off-diagonal GPU pair of one GPU<->GPU bandwidth matrix, by its key"),
    ("nvbandwidth.max_gbs.*", "number", "GB/s", "fastest off-diagonal GPU pair of one GPU<->GPU bandwidth matrix, by its key"),
    ("nvbandwidth.median_gbs.*", "number", "GB/s", "median off-diagonal GPU pair of one GPU<->GPU bandwidth matrix, by its key"),
    ("nvbandwidth.min_pairs.*", "list", "", "the 'r->c' pairs at that matrix's minimum (row r, column c; at most 16)"),
    ("nvbandwidth.max_pairs.*", "list", "", "the 'r->c' pairs at that matrix's maximum (row r, column c; at most 16)"),
    ("p2p.gpu_count", "number", "count", "GPUs in the test (Device: lines, else the matrices' size)"),
    ("p2p.no_access_pairs", "list", "", "'i->j' pairs that cannot use P2P (fall back to memcpy through the host)"),
    ("p2p.all_access", "bool", "", "every pair can access its peer"),
    ("p2p.uni_enabled_min_gbs", "number", "GB/s", "slowest off-diagonal pair, unidirectional, P2P enabled (writes)"),
    ("p2p.uni_enabled_median_gbs", "number", "GB/s", "median off-diagonal pair, unidirectional, P2P enabled (writes)"),
    ("p2p.bi_enabled_min_gbs", "number", "GB/s", "slowest off-diagonal pair, bidirectional, P2P enabled"),
    ("p2p.bi_enabled_median_gbs", "number", "GB/s", "median off-diagonal pair, bidirectional, P2P enabled"),
]

_VERSION = re.compile(r"^nvbandwidth Version:\s*(\S+)")
_RUNTIME = re.compile(r"^CUDA Runtime Version:\s*(.(?:.*\S)?)\s*$")
_DRIVER = re.compile(r"^Driver Version:\s*(\S+)")
_DEVICE = re.compile(r"^Device (\d+): (.+?)(?: \(([0-9a-fA-F]+:[0-9a-fA-F]+:[0-9a-fA-F]+)\))?\s*$")
_RUNNING = re.compile(r"^Running (\w+)\.\s*$")
_WAIVING = re.compile(r"^Waiving (\w+)\.\s*$")
_WAIVED = re.compile(r"^Waived:")
_ERROR = re.compile(r"^(?:ERROR|Error): ?(.*)$|^(ASSERT in expression .*)$")
# the matrix titles of testcases_ce.cpp / testcases_sm.cpp / multinode_testcases.cpp, ending in their unit
_TITLE = re.compile(r"^((?:memcpy|memory latency|Device to Device Latency|multicast)\b.*\((GB/s|ns)\))\s*$")
_HEADER = re.compile(r"^\s*0(?:\s+\d+)*\s*$")
_ROW = re.compile(r"^\s*(\d+)((?:\s+(?:N/A|-?\d+\.\d+))+)\s*$")
_SUM = re.compile(r"^(?:SUM|&&&& PERF) (\w+) (-?\d+(?:\.\d+)?)")  # (with --perfFormatter: '&&&& PERF key 715.53GB/s')
_VARIATION = re.compile(r"^COEFFICIENT_OF_VARIATION (\w+) (-?\d+(?:\.\d+)?)")
_KEY = r"(?:host|device|all|one|multinode)_\w+"
# testcases whose matrices are GPU pairs: waived when no pair can enable peer access
# (Testcase::filterHasAccessiblePeerPairs)
_PAIR_TESTCASE = re.compile(r"^(?:device_to_device|all_to_one|one_to_all)_")
MAX_LINE = 4000
MAX_MATRICES = 64
MAX_DIM = 128
MAX_NAMES = 100
MAX_PAIRS = 16


def _detect(text: str) -> float:
    head = text[:262144]
    if re.search(r"^nvbandwidth Version: ", head, re.MULTILINE):
        return 0.95
    titles = re.search(r"^memcpy (?:CE|SM) (?:CPU|GPU|All Gpus)\S* .*\(GB/s\)\s*$", head, re.MULTILINE | re.IGNORECASE)
    sums = re.search(rf"^SUM {_KEY} -?\d", head, re.MULTILINE)
    running = re.search(rf"^(?:Running|Waiving) {_KEY}\.\s*$", head, re.MULTILINE)
    if titles and (sums or running):
        return 0.95
    if titles or sums:
        return 0.8  # a matrix without its testcase, or `nvbandwidth | grep SUM`
    return 0.6 if running else 0.0


def _pair(i: int, j: int) -> str:
    return f"{i}->{j}"


class _Reader:
    """The state of one pass over the output: the matrix being read and what has been read so far."""

    def __init__(self) -> None:
        self.matrices: dict[str, dict[str, Any]] = {}
        self.sums: dict[str, float] = {}
        self.variation: dict[str, float] = {}
        self.cur: dict[str, Any] | None = None  # {title, unit, cols, rows, key, bad}
        self.testcase: str | None = None
        self.testcases: list[str] = []
        self.waived: list[str] = []
        self.waived_count = 0
        self.errors: list[str] = []

    def finish(self, key: str | None = None) -> None:
        m, self.cur = self.cur, None
        if m is None or m["bad"] or not m["rows"] or len(self.matrices) >= MAX_MATRICES:
            return
        key = key or (self.testcase if self.testcase not in self.matrices else None)
        if key is not None:
            self.matrices[key] = {"title": m["title"], "unit": m["unit"], "rows": m["rows"]}

    def matrix_line(self, line: str) -> bool:
        """A title, column header or row of a matrix: read into the matrix; False for any other line."""
        t = _TITLE.match(line)
        if t:
            self.finish()
            self.cur = {"title": t.group(1), "unit": t.group(2), "cols": None, "rows": [], "bad": False}
            return True
        m = self.cur
        if m is None:
            return False
        if m["cols"] is None and not m["rows"] and _HEADER.match(line):
            cols = [int(c) for c in line.split()]
            m["cols"] = len(cols)
            m["bad"] = cols != list(range(len(cols))) or len(cols) > MAX_DIM
            return True
        r = _ROW.match(line)
        if r and m["cols"] is not None:
            values = [None if v == "N/A" else to_number(v) for v in r.group(2).split()]
            if int(r.group(1)) != len(m["rows"]) or len(values) != m["cols"] or len(m["rows"]) >= MAX_DIM:
                m["bad"] = True  # rows out of order, cut or garbled: the matrix is not read rather than misread
            else:
                m["rows"].append([float(v) if v is not None else None for v in values])
            return True
        return False

    def line(self, line: str) -> None:
        if self.matrix_line(line):
            return
        m = _SUM.match(line)
        if m:
            self.finish(m.group(1))
            self.sums[m.group(1)] = float(m.group(2))
            return
        m = _VARIATION.match(line)
        if m:
            self.variation[m.group(1)] = float(m.group(2))
            return
        m = _RUNNING.match(line)
        if m:
            self.finish()
            self.testcase = m.group(1)
            if len(self.testcases) < MAX_NAMES:
                self.testcases.append(self.testcase)
            return
        m = _WAIVING.match(line)
        if m or _WAIVED.match(line):
            self.finish()
            self.waived_count += 1
            if m and len(self.waived) < MAX_NAMES:
                self.waived.append(m.group(1))
            return
        m = _ERROR.match(line)
        if m:
            add_clipped(self.errors, f"{self.testcase or '?'}: {m.group(1) if m.group(1) is not None else m.group(2)}")


def _pairs_stats(rows: list[list[float | None]]) -> tuple[list[tuple[int, int, float]], list[tuple[int, int]]]:
    """Off-diagonal cells of a square matrix: the measured ones, and the N/A ones (no peer access)."""
    cells = off_diagonal(rows)
    return [c for c in cells if c[2] is not None], [(i, j) for i, j, v in cells if v is None]


def _is_pair_matrix(m: dict[str, Any]) -> bool:
    rows = m["rows"]
    return ("GPU(row)" in m["title"] and "GPU(column)" in m["title"] and len(rows) >= 2
            and all(len(r) == len(rows) for r in rows))


@parser(
    "nvbandwidth",
    detect=_detect,
    summary="nvbandwidth (NVIDIA): host<->GPU and GPU<->GPU copy bandwidth matrices (copy engine or kernel), SUMs",
    facts=FACTS,
    command="./nvbandwidth (all testcases), or ./nvbandwidth -t device_to_device_memcpy_read_ce "
            "(github.com/NVIDIA/nvbandwidth)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "nvbandwidth output ('nvbandwidth Version:', 'Running <testcase>.', matrices, SUM lines)")
    rd = _Reader()
    facts: dict[str, Any] = {}
    devices: list[dict[str, Any]] = []
    for raw in text.split("\n"):
        if len(raw) > MAX_LINE:
            continue
        line = raw.rstrip()
        if rd.cur is None:  # the header lines come before any matrix
            m = _VERSION.match(line)
            if m:
                facts.setdefault("nvbandwidth.version", m.group(1))
                continue
            m = _RUNTIME.match(line)
            if m:
                facts.setdefault("nvbandwidth.cuda_runtime_version", m.group(1))
                continue
            m = _DRIVER.match(line)
            if m:
                facts.setdefault("gpu.driver_version", m.group(1))
                continue
            m = _DEVICE.match(line)
            if m and len(devices) < MAX_DIM:
                devices.append({"index": int(m.group(1)), "name": m.group(2), "pci": m.group(3) or ""})
                continue
        rd.line(line)
    rd.finish()
    if not (facts or rd.matrices or rd.sums or rd.testcases or rd.waived_count):
        raise ParseError("no 'nvbandwidth Version:' line, bandwidth matrix, SUM line or 'Running <testcase>.': "
                         "this is not nvbandwidth output")
    if devices:
        facts["nvbandwidth.devices"] = devices
    facts["nvbandwidth.testcases"] = rd.testcases
    facts["nvbandwidth.waived"] = rd.waived
    facts["nvbandwidth.waived_count"] = rd.waived_count
    facts["nvbandwidth.testcase_errors"] = rd.errors
    facts["nvbandwidth.matrices"] = rd.matrices
    latency = {k for k, m in rd.matrices.items() if m["unit"] == "ns"}
    for key, total in rd.sums.items():
        if key not in latency and "latency" not in key:
            facts[f"nvbandwidth.sum.{key}"] = total
    for key, cv in rd.variation.items():
        facts[f"nvbandwidth.variation.{key}"] = cv
    no_access: set[tuple[int, int]] = set()
    pair_matrices = 0
    for key, m in rd.matrices.items():
        if not _is_pair_matrix(m):
            continue
        pair_matrices += 1
        measured, missing = _pairs_stats(m["rows"])
        no_access.update(missing)
        if m["unit"] != "GB/s" or not measured:
            continue
        values = [v for _, _, v in measured]
        lo, hi, med = min(values), max(values), round(statistics.median(values), 2)
        facts[f"nvbandwidth.min_gbs.{key}"] = lo
        facts[f"nvbandwidth.max_gbs.{key}"] = hi
        facts[f"nvbandwidth.median_gbs.{key}"] = med
        facts[f"nvbandwidth.min_pairs.{key}"] = [_pair(i, j) for i, j, v in measured if v == lo][:MAX_PAIRS]
        facts[f"nvbandwidth.max_pairs.{key}"] = [_pair(i, j) for i, j, v in measured if v == hi][:MAX_PAIRS]
        if key == "device_to_device_memcpy_write_ce":  # P2P writes, one pair at a time
            facts["p2p.uni_enabled_min_gbs"], facts["p2p.uni_enabled_median_gbs"] = lo, med
        elif key == "device_to_device_bidirectional_memcpy_write_ce_total":  # both directions at once, summed
            facts["p2p.bi_enabled_min_gbs"], facts["p2p.bi_enabled_median_gbs"] = lo, med
    count = len(devices) or max((len(m["rows"][0]) for m in rd.matrices.values()), default=0)
    if count:
        facts["p2p.gpu_count"] = count
    if pair_matrices:
        facts["p2p.no_access_pairs"] = [_pair(i, j) for i, j in sorted(no_access)]
        facts["p2p.all_access"] = not no_access
    elif count >= 2 and any(_PAIR_TESTCASE.match(w) for w in rd.waived):
        # a GPU-pair testcase waived by name: no pair could enable peer access
        facts["p2p.no_access_pairs"] = [_pair(i, j) for i in range(count) for j in range(count) if i != j]
        facts["p2p.all_access"] = False
    return facts
