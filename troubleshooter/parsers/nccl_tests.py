"""nccl-tests (and rccl-tests) performance tables: ``all_gather_perf``, ``all_reduce_perf``, ...

Real sample (2x DGX Spark GB10 over RoCE, nccl-tests 2.18.3, from ../shared/corpus/nccl-tests)::

    # nccl-tests version 2.18.3 nccl-headers=22809 nccl-library=22809
    # Collective test starting: all_gather_perf
    # nThread 1 nGpus 1 minBytes 1073741824 maxBytes 4294967296 step: 2(factor) warmup iters: 10 iters: 50 ...
    # Using devices
    #  Rank  0 Group  0 Pid 548419 on spark-fb97 device  0 [000f:01:00] NVIDIA GB10
    #  Rank  1 Group  0 Pid 546336 on spark-4440 device  0 [000f:01:00] NVIDIA GB10
    #                                                  out-of-place                       in-place
    #       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
    #        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
      1073741824     134217728     float    none      -1  27211.0   39.46   19.73       0  25806.7   41.61   20.80       0
      4294967296     536870912     float    none      -1  96986.7   44.28   22.14       0  95610.9   44.92   22.46       0
    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 21.4033

What it means: ``busbw`` is the figure to compare with the hardware's peak (and with a reference cluster).
Case 3 of the domain notes: AllGather busbw ~28 GB/s with ``NCCL_IB_QPS_PER_CONNECTION=1`` vs ~61 GB/s at 4
on the same fabric. ``#wrong`` > 0 or ``Out of bounds values : N FAILED`` means the collective returned wrong
data: the numbers of that run must not be trusted.

Formats read: the old column set (no ``root`` column, an ``error`` column holding the maximum numerical error,
not a count), the newer one (``root``, ``#wrong`` counts, possibly ``N/A`` for in-place alltoall, counts in
scientific notation), header lines whose leading ``#`` was lost in a markdown paste, NCCL INFO/WARN lines
interleaved anywhere, rows with irregular whitespace, author-truncated tables, rccl-tests (``nThread: 1``), and
rows pasted alone without the lines above them (read by their shape: a ``root`` column means the newer column set,
none the old one with its ``error`` column; facts only a header or summary line gives stay absent).

Several runs in one text (a bare-metal run followed by a VM run, a sweep pasted together): a new run starts
at a command line naming a ``*_perf`` binary, a ``nccl-tests version`` / ``Collective test starting`` /
``nThread`` / ``NCCL version`` line, or a table header, whenever the current run already has rows or its
summary lines. ``nccl_tests.runs`` lists one summary per run (in order) and every other fact describes the
LAST run only: a header fact (collective, ranks, hosts, GPUs) the last run does not print itself is absent,
never borrowed from an earlier run.

Row fields: ``oop_wrong``/``ip_wrong`` are counts of wrong elements (``#wrong`` column) and ``None`` where
the tool printed ``N/A`` or where the old ``error`` column is used; that column's value (a relative error,
e.g. ``2e-07``) is in ``oop_error``/``ip_error``.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any, Iterable

from troubleshooter.parsers.base import STREAMS, ParseError, parser, require_text, to_number

FACTS = [
    ("nccl_tests.collective", "string", "", "the collective of the last run (all_reduce, all_gather, reduce_scatter, alltoall, broadcast, ...), from the *_perf binary on the command line or the 'Collective test starting' line; absent when neither is printed"),
    ("nccl_tests.rows", "list", "", "table rows of the last run: {size_bytes, count, type, redop, root, oop_time_us, oop_algbw_gbps, oop_busbw_gbps, oop_wrong, oop_error, ip_time_us, ip_algbw_gbps, ip_busbw_gbps, ip_wrong, ip_error}"),
    ("nccl_tests.avg_busbw_gbps", "number", "GB/s", "'# Avg bus bandwidth' of the last run (average over all sizes, small ones included)"),
    ("nccl_tests.max_busbw_gbps", "number", "GB/s", "highest busbw of any row of the last run (out-of-place or in-place)"),
    ("nccl_tests.busbw_at_max_size_gbps", "number", "GB/s", "out-of-place busbw at the largest message size of the last run (in-place when out-of-place is missing)"),
    ("nccl_tests.max_size_bytes", "number", "B", "largest message size measured in the last run"),
    ("nccl_tests.wrong_total", "number", "count", "sum of #wrong counts (out-of-place and in-place) over the last run's rows; absent with the old 'error' column"),
    ("nccl_tests.out_of_bounds", "number", "count", "'Out of bounds values : N' of the last run"),
    ("nccl_tests.ranks", "number", "count", "ranks of the last run (highest rank number listed + 1)"),
    ("nccl_tests.nodes", "number", "count", "distinct hosts in the last run's 'Rank N ... on HOST' lines; absent when the rank list is elided"),
    ("nccl_tests.gpus", "list", "", "distinct GPU names in the last run's rank lines, in order of appearance"),
    ("nccl_tests.failed", "bool", "", "the last run reported wrong results (Out of bounds ... FAILED, #wrong > 0, 'Test failure')"),
    ("nccl_tests.nccl_error", "string", "", "the NCCL or CUDA error the last run stopped on (\"NCCL failure common.cu:874 'unhandled system error'\" -> 'unhandled system error'); its cause is in NCCL's own log"),
    ("nccl_tests.version", "string", "", "nccl-tests version (the 'nccl-tests version X' line, newer builds only)"),
    ("nccl_tests.nccl_version", "string", "", "NCCL library version printed by the test ('NCCL version 2.27.3+cuda12.8')"),
    ("nccl_tests.nccl_built_with", "string", "", "NCCL major.minor an old nccl-tests says it was compiled with "
     "('# NCCL Tests compiled with NCCL 1.0' -> 1.0; builds of 2017-2019, which print no runtime version)"),
    ("nccl_tests.no_result", "bool", "", "the last run listed its ranks and then printed no result row, no error and no summary: it stopped there (a hang at its first collective) or the paste ends there"),
    ("nccl_tests.runs", "list", "", "one summary per run in the text, in order: {collective, ranks, nodes, rows, max_size_bytes, avg_busbw_gbps, max_busbw_gbps, busbw_at_max_size_gbps, wrong_total, out_of_bounds, failed}"),
    ("nccl_tests.run_count", "number", "count", "how many runs the text holds"),
    ("nccl_tests.banners_at_start", "number", "count", "the test's 'nThread ... minBytes' banner printed several times before "
     "any rank line or result: several processes each printing it as rank 0 of its own world (launched together, not "
     "joined by MPI); absent when once"),
]

MAX_ROWS = 2000  # table rows kept per run (a real table has ~30); the summary figures cover every row
MAX_RUNS = 1000  # run summaries kept in nccl_tests.runs (the last ones); run_count counts them all

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "gather",
               "scatter", "sendrecv", "hypercube", "alltoallv", "bisection")
_BIN = re.compile(r"\b(" + "|".join(sorted(COLLECTIVES, key=len, reverse=True)) + r")_perf(?:_mpi)?\b")
_STARTING = re.compile(r"Collective test starting:\s*(\w+?)_perf")
_VERSION = re.compile(r"nccl-tests version\s+(\S+)")
_NCCL_VERSION = re.compile(r"^\s*[#>]?\s*NCCL version\s+(\S+)")
# nccl-tests of 2017-2019 print the NCCL major.minor they were compiled against, no runtime version:
# "# NCCL Tests compiled with NCCL 1.0" (rank lines of that time carry no Pid either)
_NCCL_BUILT = re.compile(r"NCCL Tests compiled with NCCL\s+(\d+\.\d+)")
_NTHREAD = re.compile(r"nThread:?\s+(\d+)\s+nGpus:?\s+(\d+)\s+minBytes:?\s+(\d+)\s+maxBytes:?\s+(\d+)")
_RANK = re.compile(r"Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?(?:Pid\s+\d+\s+)?on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.*\S|)\s*$")
_HEADER = re.compile(r"\bsize\s+count\s+type\b.*\bbusbw\b")
_OOB = re.compile(r"Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?", re.IGNORECASE)
_AVG = re.compile(r"Avg bus bandwidth\s*:\s*([-+0-9.eE]+|nan|-nan)")
_FAILURE = re.compile(r"\bTest (?:NCCL |CUDA )?failure\b|\bTest FAILED\b", re.IGNORECASE)
# the test's own abort: "NCCL failure common.cu:874 'unhandled system error'" (old), "Test NCCL failure
# common.cu:1005 'remote process exited or there was a network error'" (new), "Cuda failure common.cu:..."
_ABORT = re.compile(r"\b(NCCL|CUDA|Cuda) failure\s+(\S+:\d+)\s+'([^']*)'")
_NCCL_LOG = re.compile(r"\bNCCL (?:INFO|WARN|TRACE)\b")
_INT = re.compile(r"^\d+$")
_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


_NCCL1 = re.compile(r"\bbytes\s+N\s+type\s+(?:op\s+)?(?:root\s+)?time\s+algbw\b|\bRank\s+\d+\s+uses device\b")


def _detect(text: str) -> float:
    if re.search(r"^#@ sweep [A-Z][A-Z0-9_]*=", text, re.MULTILINE):
        return 0.6  # several runs under a swept variable: the nccl-sweep kind
    if _NCCL1.search(text[:131072]) and not _HEADER.search(text) and not _NTHREAD.search(text):
        return 0.2  # NCCL 1.x's own tests (all_reduce_test ...): the nccl1-tests kind; their rows are not these
    if re.search(r"Avg bus bandwidth\s*:", text) or _HEADER.search(text):
        return 0.95
    if _NTHREAD.search(text) or _STARTING.search(text):
        return 0.9
    rows = sum(1 for m in _ROW_SHAPE.finditer(text) if _headerless_row(m.group(0).split()) is not None)
    if rows:  # table rows without their header: the rows alone, or most of the text
        lines = sum(1 for line in text.splitlines() if line.strip())
        return 0.85 if rows * 2 >= lines else 0.6 if rows >= 2 else 0.0
    return 0.0


ROW_KEYS = ("size_bytes", "count", "type", "redop", "root", "oop_time_us", "oop_algbw_gbps", "oop_busbw_gbps",
            "oop_wrong", "oop_error", "ip_time_us", "ip_algbw_gbps", "ip_busbw_gbps", "ip_wrong", "ip_error")
# positions in a row tuple (a row becomes a dict only when it is reported: the last run's first MAX_ROWS rows)
_SIZE, _OOP_BUSBW, _OOP_WRONG, _IP_BUSBW, _IP_WRONG = 0, 7, 8, 12, 13
# the data types and reduction ops nccl-tests / rccl-tests print; a row naming others takes the general path
_TYPES = frozenset(("int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16",
                    "f8e4m3", "f8e5m2", "fp8_e4m3", "fp8_e5m2"))
_REDOPS = frozenset(("sum", "prod", "max", "min", "avg", "mulsum", "premulsum", "none"))
# a line shaped like a table row (size, count, a data type), checked in full by _headerless_row
_ROW_SHAPE = re.compile(r"^[ \t>]*\d+[ \t]+\d+[ \t]+(?:" + "|".join(sorted(_TYPES, key=len, reverse=True))
                        + r")[ \t][^\n]*", re.MULTILINE)
_QUOTE = re.compile(r"^(?:>\s?)+")
_ERROR_WORD = re.compile(r"\berror\b")
_ROOT = re.compile(r"^-?\d+$")


def _num(tok: str) -> float | None:
    v = to_number(tok)
    return None if v is None else float(v)


def _wrong(tok: str) -> int | None:
    v = to_number(tok)
    if v is None:
        return None
    return int(round(v))


def _fast_row(toks: list[str], error_col: bool) -> tuple | None:
    """The row of a well-formed table line (known type and reduction, finite numbers, integer ``#wrong``) without
    :func:`to_number`; ``None`` sends the line down the general path (which gives the same row when there is one).
    A line accepted here cannot match any of the general path's earlier tests: it holds only numbers and the
    words of :data:`_TYPES` and :data:`_REDOPS`."""
    n = len(toks)
    if n < 7 or toks[2] not in _TYPES or not toks[0].isdecimal() or not toks[1].isdecimal():
        return None
    i = 3
    redop = None
    t3 = toks[3]
    if t3 in _REDOPS:
        redop, i = t3, 4
    elif t3[0].isalpha() or t3[0] == "_":
        return None
    root = None
    if n - i in (5, 9):
        r = toks[i]
        if not (r.isdecimal() or (r[0] == "-" and r[1:].isdecimal())):
            return None
        root, i = int(r), i + 1
    try:
        if n - i == 8:
            t, a, b, w, t2, a2, b2, w2 = toks[i:]
            ft, fa, fb, ft2, fa2, fb2 = float(t), float(a), float(b), float(t2), float(a2), float(b2)
            if error_col:
                ew, ew2 = float(w.rstrip("*")), float(w2.rstrip("*"))
                x = ft + fa + fb + ft2 + fa2 + fb2 + ew + ew2
                if x - x != 0:  # nan or inf somewhere: to_number makes those None
                    return None
                return (int(toks[0]), int(toks[1]), toks[2], redop, root, ft, fa, fb, None, ew, ft2, fa2, fb2, None, ew2)
            x = ft + fa + fb + ft2 + fa2 + fb2
            if x - x != 0:
                return None
            return (int(toks[0]), int(toks[1]), toks[2], redop, root, ft, fa, fb, int(w), None, ft2, fa2, fb2, int(w2), None)
        if n - i == 4:
            t, a, b, w = toks[i:]
            ft, fa, fb = float(t), float(a), float(b)
            if error_col:
                ew = float(w.rstrip("*"))
                x = ft + fa + fb + ew
                if x - x != 0:
                    return None
                return (int(toks[0]), int(toks[1]), toks[2], redop, root, ft, fa, fb, None, ew, None, None, None, None, None)
            x = ft + fa + fb
            if x - x != 0:
                return None
            return (int(toks[0]), int(toks[1]), toks[2], redop, root, ft, fa, fb, int(w), None, None, None, None, None, None)
    except ValueError:
        return None
    return None


def _headerless_row(toks: list[str]) -> tuple[tuple, bool] | None:
    """A table row met before any header (the rows alone, pasted without the lines above them), and which column
    set it belongs to. Only a well-formed row is taken: a known data type in the third column and finite numbers.
    The two column sets nccl-tests has printed tell themselves apart by the ``root`` column: with it the last
    column of each half is ``#wrong`` (a count), without it (builds before ~2019) it is ``error`` (a relative error
    such as ``2e-07``), so the row is read as its header would have said."""
    n = len(toks)
    if n < 7 or toks[2] not in _TYPES:
        return None
    i = 4 if toks[3] in _REDOPS else 3
    r = toks[i]
    has_root = n - i in (5, 9) and (r.isdecimal() or (r[:1] == "-" and r[1:].isdecimal()))
    row = _fast_row(toks, not has_root)
    return None if row is None else (row, not has_root)


def _parse_row(line: str, error_col: bool) -> tuple | None:
    toks = line.split()
    if len(toks) < 7 or not _INT.match(toks[0]) or not _INT.match(toks[1]) or not _WORD.match(toks[2]):
        return None
    row: dict[str, Any] = {"size_bytes": int(toks[0]), "count": int(toks[1]), "type": toks[2], "redop": None, "root": None}
    rest = toks[3:]
    if rest and _WORD.match(rest[0]):
        row["redop"] = rest[0]
        rest = rest[1:]
    if len(rest) in (5, 9) and _ROOT.match(rest[0]):
        row["root"] = int(rest[0])
        rest = rest[1:]
    if len(rest) not in (4, 8):
        return None
    for prefix, part in (("oop", rest[:4]), ("ip", rest[4:8])):
        if not part:
            row.update({f"{prefix}_time_us": None, f"{prefix}_algbw_gbps": None, f"{prefix}_busbw_gbps": None,
                        f"{prefix}_wrong": None, f"{prefix}_error": None})
            continue
        t, a, b, w = part
        if _num(t) is None and t.upper() != "N/A":
            return None
        row[f"{prefix}_time_us"] = _num(t)
        row[f"{prefix}_algbw_gbps"] = _num(a)
        row[f"{prefix}_busbw_gbps"] = _num(b)
        if error_col:
            row[f"{prefix}_wrong"] = None
            row[f"{prefix}_error"] = _num(w.rstrip("*"))
        else:
            row[f"{prefix}_wrong"] = _wrong(w)
            row[f"{prefix}_error"] = None
    if row["oop_busbw_gbps"] is None and row["ip_busbw_gbps"] is None:
        return None
    return tuple(row[k] for k in ROW_KEYS)


class _Run:
    def __init__(self) -> None:
        self.collective: str | None = None
        self.version: str | None = None
        self.nccl_version: str | None = None
        self.nccl_built_with: str | None = None
        self.ranks: dict[int, tuple[str, str]] = {}
        self.rows: list[tuple] = []  # the first MAX_ROWS rows (tuples in ROW_KEYS order)
        self.n_rows = 0
        self.big: tuple | None = None  # first row of the largest size
        self.max_bw: float | None = None
        self.wrong_total: int | None = None
        self.avg: float | None = None
        self.avg_seen = False
        self.oob: int | None = None
        self.oob_failed: bool | None = None
        self.failure_line = False
        self.abort: str | None = None
        self.error_col = False
        self.header_seen = False
        self.elided = False

    def add_row(self, row: tuple) -> None:
        self.n_rows += 1
        if len(self.rows) < MAX_ROWS:
            self.rows.append(row)
        if self.big is None or row[_SIZE] > self.big[_SIZE]:
            self.big = row
        b = row[_OOP_BUSBW]
        if b is not None and (self.max_bw is None or b > self.max_bw):
            self.max_bw = b
        b = row[_IP_BUSBW]
        if b is not None and (self.max_bw is None or b > self.max_bw):
            self.max_bw = b
        w = row[_OOP_WRONG]
        if w is not None:
            self.wrong_total = (self.wrong_total or 0) + w
        w = row[_IP_WRONG]
        if w is not None:
            self.wrong_total = (self.wrong_total or 0) + w

    @property
    def closed(self) -> bool:
        return bool(self.n_rows) or self.avg_seen or self.oob is not None

    @property
    def empty(self) -> bool:
        return not (self.n_rows or self.avg_seen or self.ranks or self.header_seen or self.oob is not None
                    or self.abort)

    def summary(self) -> dict[str, Any]:
        s: dict[str, Any] = {}
        if self.collective:
            s["collective"] = self.collective
        if self.ranks:
            s["ranks"] = max(self.ranks) + 1
            if not self.elided and len(self.ranks) == max(self.ranks) + 1:
                s["nodes"] = len({h for h, _ in self.ranks.values()})
            gpus: list[str] = []
            for _, name in self.ranks.values():
                if name and name not in gpus:
                    gpus.append(name)
            s["gpus"] = gpus
        if self.n_rows or self.header_seen:
            s["rows"] = self.rows
            s["n_rows"] = self.n_rows
        if self.big is not None:
            big = self.big
            s["max_size_bytes"] = big[_SIZE]
            if self.max_bw is not None:
                s["max_busbw_gbps"] = self.max_bw
            at = big[_OOP_BUSBW] if big[_OOP_BUSBW] is not None else big[_IP_BUSBW]
            if at is not None:
                s["busbw_at_max_size_gbps"] = at
            if not self.error_col and self.wrong_total is not None:
                s["wrong_total"] = self.wrong_total
        if self.avg is not None:
            s["avg_busbw_gbps"] = self.avg
        if self.oob is not None:
            s["out_of_bounds"] = self.oob
        failed = None
        if self.failure_line or self.oob_failed or s.get("wrong_total", 0) > 0:
            failed = True
        elif self.oob_failed is False:
            failed = False
        if failed is not None:
            s["failed"] = failed
        return s


@parser(
    "nccl-tests",
    detect=_detect,
    summary="nccl-tests / rccl-tests performance table (all_gather_perf, all_reduce_perf, ...)",
    facts=FACTS,
    command="all_gather_perf -b 1M -e 1G -f 2 -g 1",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "nccl-tests output (e.g. all_gather_perf -b 1M -e 1G -f 2)")
    return parse_stream(text.split("\n"))


def parse_stream(lines: Iterable[str]) -> dict[str, Any]:
    """:func:`parse` over an iterable of lines (a file of any size), in bounded memory: the same facts.

    Only the run being read is kept whole; a finished run is reduced to its summary at once, and
    ``nccl_tests.runs`` keeps the last :data:`MAX_RUNS` summaries (``nccl_tests.run_count`` counts every
    run). ``nccl_tests.rows`` holds the first :data:`MAX_ROWS` rows of the last run; the figures computed
    from rows (max size, max busbw, busbw at max size, wrong total) cover all of them.
    """
    runs: list[_Run] = [_Run()]  # the run being read only
    done: deque[tuple[dict[str, Any], _Run]] = deque(maxlen=MAX_RUNS)  # (summary, run without rows)
    count = 0
    structure = False
    blank = True
    banners_at_start = 0  # 'nThread' banners before any rank line or row: one per process that is its own world
    ranks_or_rows_seen = False

    def finish(run: _Run) -> None:
        nonlocal count
        if not run.empty:
            count += 1
            if done:  # only the last run's rows become a fact
                done[-1][0].pop("rows", None)
            done.append((run.summary(), run))
            run.rows = []

    def new_run_if_closed() -> _Run:
        if runs[-1].closed:
            finish(runs[-1])
            runs[-1] = _Run()
        return runs[-1]

    for raw in lines:
        if raw[:1] == ">":
            raw = _QUOTE.sub("", raw)  # mail quoting
        s = raw.strip()
        if not s:
            continue
        blank = False
        if not structure and s[0] in "0123456789" and "NCCL " not in s:
            found = _headerless_row(s.split())
            if found is not None:  # the rows alone: their header, banner and summary were not pasted
                run = runs[-1]
                run.add_row(found[0])
                run.error_col = found[1]
                structure = ranks_or_rows_seen = True
                continue
        # most lines are table rows: a well-formed one is taken at once (see _fast_row)
        if structure and s[0] in "0123456789" and "NCCL " not in s:
            row = _fast_row(s.split(), runs[-1].error_col)
            if row is not None:
                runs[-1].add_row(row)
                ranks_or_rows_seen = True
                continue
        # cheap substring tests gate the regular expressions
        if "NCCL " in s and _NCCL_LOG.search(s):
            continue  # NCCL INFO/WARN lines interleaved with the table
        body = s.lstrip("#").strip()
        if not body:
            continue
        m = _VERSION.search(body) if "nccl-tests version" in body else None
        if m:
            run = new_run_if_closed()
            run.version = m.group(1)
            continue
        m = _STARTING.search(body) if "Collective test starting" in body else None
        if m:
            run = new_run_if_closed()
            run.collective = m.group(1)
            structure = True
            continue
        if "Collective test concluded" in body:
            continue
        m = _NCCL_BUILT.search(body) if "compiled with NCCL" in body else None
        if m:
            new_run_if_closed().nccl_built_with = m.group(1)
            continue
        m = _NCCL_VERSION.match(s) if "NCCL version" in s else None
        if m:
            new_run_if_closed().nccl_version = m.group(1)
            continue
        m = _NTHREAD.search(body) if "nThread" in body else None
        if m:
            new_run_if_closed()
            structure = True
            if not ranks_or_rows_seen:
                banners_at_start += 1
            continue
        m = _RANK.search(body) if "Rank" in body else None
        if m and not s[0].isdigit():
            ranks_or_rows_seen = True
            run = runs[-1] if not runs[-1].closed else new_run_if_closed()
            run.ranks[int(m.group(1))] = (m.group(2), m.group(3).strip())
            continue
        if "size" in body and _HEADER.search(body):
            run = new_run_if_closed()
            run.header_seen = True
            run.error_col = bool(_ERROR_WORD.search(body)) and "#wrong" not in body
            structure = True
            continue
        low = body.lower()  # here: the lines taken above (versions, nThread, ranks, headers) never need it
        m = _OOB.search(body) if "out of bounds" in low else None
        if m:
            run = runs[-1]
            run.oob = int(m.group(1))
            if m.group(2):
                run.oob_failed = m.group(2).upper() == "FAILED"
            structure = True
            continue
        m = _AVG.search(body) if "Avg bus bandwidth" in body else None
        if m:
            run = runs[-1]
            run.avg_seen = True
            v = to_number(m.group(1))
            run.avg = float(v) if v is not None else None
            structure = True
            continue
        ma = _ABORT.search(body) if "failure" in low else None
        if ma:
            if runs[-1].abort is None:
                runs[-1].abort = ma.group(3)
            if _FAILURE.search(body):
                runs[-1].failure_line = True
            continue
        if ("failure" in low or "failed" in low) and _FAILURE.search(body):
            runs[-1].failure_line = True
            continue
        if body in ("...", "…"):
            runs[-1].elided = True
            continue
        if not s.startswith("#") and structure:
            row = _parse_row(s, runs[-1].error_col)
            if row is not None:
                runs[-1].add_row(row)
                ranks_or_rows_seen = True
                continue
        mb = _BIN.search(s) if "_perf" in s else None
        if mb and not s.startswith("#"):
            run = new_run_if_closed()
            run.collective = mb.group(1)
            continue

    if blank:
        raise ParseError("empty input: expected nccl-tests output (e.g. all_gather_perf -b 1M -e 1G -f 2)")
    if not structure:
        raise ParseError("no nccl-tests table found (expected the 'size count type ... busbw' header, "
                         "the 'nThread ... minBytes' line, '# Avg bus bandwidth' or table rows)")
    finish(runs[-1])
    if not done:
        raise ParseError("nccl-tests header found but no run in it")
    summaries = [summ for summ, _ in done]
    s, last = done[-1]
    facts: dict[str, Any] = {}
    if "rows" in s:
        s["rows"] = [dict(zip(ROW_KEYS, row)) for row in s["rows"]]
    for key in ("collective", "rows", "avg_busbw_gbps", "max_busbw_gbps", "busbw_at_max_size_gbps",
                "max_size_bytes", "wrong_total", "out_of_bounds", "ranks", "nodes", "gpus", "failed"):
        if key in s:
            facts[f"nccl_tests.{key}"] = s[key]
    if last.abort:
        facts["nccl_tests.nccl_error"] = last.abort
    if s.get("ranks"):
        facts["nccl_tests.no_result"] = not (s.get("n_rows") or "avg_busbw_gbps" in s or s.get("failed") or last.abort
                                             or last.elided or last.failure_line)
    if last.version:
        facts["nccl_tests.version"] = last.version
    if last.nccl_version:
        facts["nccl_tests.nccl_version"] = last.nccl_version
    if last.nccl_built_with:
        facts["nccl_tests.nccl_built_with"] = last.nccl_built_with
    facts["nccl_tests.runs"] = [{k: v for k, v in summ.items() if k not in ("rows", "n_rows", "gpus")} | {"rows": summ.get("n_rows", 0)}
                                for summ in summaries]
    facts["nccl_tests.run_count"] = count
    if banners_at_start >= 2:
        facts["nccl_tests.banners_at_start"] = banners_at_start
    return facts


STREAMS["nccl-tests"] = parse_stream
