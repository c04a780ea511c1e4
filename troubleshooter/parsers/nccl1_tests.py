"""NCCL 1.x's own test programs (the NCCL 1 repository's test/single/*_test, 2015-2017): all_reduce_test,
all_gather_test, broadcast_test, reduce_test, reduce_scatter_test.

Real samples (NVIDIA/nccl#85, #104, #117, #36, #120; NVIDIA/nccl's README; a Windows port's README;
tests/data/nccl1-tests)::

    # Using devices
    #   Rank  0 uses device  0 [0x02] Tesla P100-PCIE-16GB
    #   Rank  1 uses device  1 [0x03] Tesla P100-PCIE-16GB

    #                                                 out-of-place                    in-place
    #      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res
        10000000      10000000    char     sum    1.628   6.14   9.21    0e+00    1.932   5.18   7.77    0e+00

     Out of bounds values : 0 OK
     Avg bus bandwidth    : 5.77463

They are not the later nccl-tests (``all_reduce_perf``, its own repository since 2017): one process drives every GPU
of one machine, one message size is timed once (milliseconds), the rank lines say ``Rank N uses device D [0xBB]
NAME`` with no host (NVIDIA's README shows ``Device N -> D [0xBB] NAME``, which no released test printed), and the
summary (1.3.0 and later: ``Min bus bandwidth``, from 1.3.4 ``Avg bus bandwidth``) starts with a blank, not '#'. The
header names the test: ``op`` and ``root`` (reduce_test), ``op`` with ``delta`` (reduce_scatter_test), ``op`` with
``res`` (all_reduce_test), ``root`` alone (broadcast_test), neither (all_gather_test).

What it means here: a run that listed its GPUs and printed its header but no row stopped at its first collective
(NVIDIA/nccl#85, #104, #117: PCIe GPUs across switches or sockets with ACS or the IOMMU in the way), or the paste ends
there; a row's busbw is the test's bus bandwidth for that one size. Pastes lose the leading '#' to Markdown
(``> Using devices``, or nothing), and busbw of 100 GB/s or more widens its column; both are read. The library
was NCCL 1.x, whatever the machine has now.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text, to_number

FACTS = [
    ("nccl_tests.nccl1_test", "bool", "", "the output is NCCL 1.x's own test program's (all_reduce_test and its "
     "siblings, 2015-2017): the library it ran was NCCL 1.x"),
    ("nccl_tests.collective", "string", "", "the collective of the last run"),
    ("nccl_tests.ranks", "number", "count", "ranks of the last run (highest rank number listed + 1)"),
    ("nccl_tests.nodes", "number", "count", "distinct hosts of the last run (NCCL 1's tests run one process on one "
     "machine: 1 when the rank list is printed)"),
    ("nccl_tests.gpus", "list", "", "distinct GPU names in the last run's rank lines, in order of appearance"),
    ("nccl_tests.no_result", "bool", "", "the last run listed its ranks and then printed no result row, no error "
     "and no summary: it stopped there (a hang at its first collective) or the paste ends there"),
    ("nccl_tests.max_size_bytes", "number", "B", "largest message size measured in the last run"),
    ("nccl_tests.max_busbw_gbps", "number", "GB/s", "highest busbw of any row of the last run (out-of-place or in-place)"),
    ("nccl_tests.busbw_at_max_size_gbps", "number", "GB/s", "out-of-place busbw at the largest message size of the "
     "last run (in-place when out-of-place is missing)"),
    ("nccl_tests.avg_busbw_gbps", "number", "GB/s", "'Avg bus bandwidth' (NCCL 1.3.4) or 'Min bus bandwidth' "
     "(1.3.0) of the last run"),
    ("nccl_tests.out_of_bounds", "number", "count", "'Out of bounds values : N' of the last run"),
    ("nccl_tests.failed", "bool", "", "the last run reported wrong results (Out of bounds ... FAILED)"),
    ("nccl_tests.nccl_error", "string", "", "the NCCL or CUDA error the test stopped on (\"NCCL failure "
     "all_reduce_test.cu:NN 'unhandled cuda error'\" -> 'unhandled cuda error')"),
    ("nccl_tests.run_count", "number", "count", "how many runs the text holds"),
]

_TEST = re.compile(r"\b(all_reduce|all_gather|broadcast|reduce_scatter|reduce)_test\b")
# a line of the test's own, with what a paste put before it: Markdown's quote ('> '), the '#' Markdown ate or kept
_LEAD = re.compile(r"^[\s>]*#?\s*")
_RANK = re.compile(r"^Rank\s+(\d+)\s+uses device\s+(\d+)\s+\[0x[0-9a-fA-F]+\]\s+(.*\S|)\s*$")
_README_RANK = re.compile(r"^Device\s+(\d+)\s+->\s+(\d+)\s+\[0x[0-9a-fA-F]+\]\s+(.*\S|)\s*$")
_HEADER = re.compile(r"^bytes\s+N\s+type\s+(op\s+)?(root\s+)?time\s+algbw\s+busbw\s+(res|delta)\b")
_TYPES = r"(?:char|int|half|float|double|int64|uint64)"
_ROW = re.compile(r"^(\d+)\s+(\d+)\s+(" + _TYPES + r")\s+(?:(sum|prod|max|min)\s+)?(?:(\d+)\s+)?"
                  r"([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)(?:\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\b)?")
_OOB = re.compile(r"^Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?")
_BW = re.compile(r"^(?:Avg|Min) bus bandwidth\s*:\s*([-+0-9.eE]+)")
_ABORT = re.compile(r"\b(NCCL|Cuda) failure\s+\S+:\d+\s+'([^']*)'")
_NEWER = re.compile(r"nThread\s+\d+\s+nGpus|NCCL Tests compiled with|\bsize\s+count\s+type\b|_perf\b")


def _detect(text: str) -> float:
    head = text[:131072]
    if _NEWER.search(head):
        return 0.0  # the later nccl-tests (its early builds printed a header of this shape too)
    lines = [_LEAD.sub("", ln, count=1) for ln in head.split("\n")[:4000]]
    if any(_HEADER.match(ln) for ln in lines):
        return 0.9
    return 0.8 if "Using devices" in head and any(_RANK.match(ln) or _README_RANK.match(ln) for ln in lines) else 0.0


def _collective(op: bool, root: bool, last: str) -> str:
    if op and root:
        return "reduce"
    if op:
        return "reduce_scatter" if last == "delta" else "all_reduce"
    return "broadcast" if root else "all_gather"


@parser(
    "nccl1-tests",
    detect=_detect,
    summary="NCCL 1.x's own tests (all_reduce_test and its siblings, 2015-2017): ranks, GPUs, a run that stopped at "
            "its first collective, busbw",
    facts=FACTS,
    command="./build/test/single/all_reduce_test 10000000",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "NCCL 1.x test output ('# Using devices', '#   Rank  0 uses device  0 [0x..] NAME')")
    if _NEWER.search(text[:131072]):
        raise ParseError("this is the later nccl-tests' output (its nThread banner or size/count header): read it as "
                         "nccl-tests")
    runs: list[dict[str, Any]] = []
    run: dict[str, Any] | None = None
    named = None  # the test named on the command line before the output

    def new() -> dict[str, Any]:
        r: dict[str, Any] = {"ranks": {}, "rows": [], "collective": named}
        runs.append(r)
        return r

    for raw in text.split("\n"):
        m = _TEST.search(raw)
        if m and not raw.lstrip().startswith(("#", ">")) and "Usage" not in raw:
            named = m.group(1)  # a command line: the next run is this test's
            run = None
        line = _LEAD.sub("", raw, count=1).rstrip()
        if line.startswith("Using devices"):
            run = new()
            continue
        m = _RANK.match(line) or _README_RANK.match(line)
        if m:
            if run is None or run["rows"] or "header" in run:
                run = new()
            run["ranks"][int(m.group(1))] = m.group(3)
            continue
        m = _HEADER.match(line)
        if m:
            if run is None or run["rows"] or "header" in run:
                run = new()
            run["header"] = True
            if run["collective"] is None:
                run["collective"] = _collective(bool(m.group(1)), bool(m.group(2)), m.group(3))
            continue
        if run is None:
            continue
        m = _ROW.match(line)
        if m and "header" in run:
            oop = to_number(m.group(8))
            ip = to_number(m.group(12)) if m.group(12) else None
            run["rows"].append((int(m.group(1)), oop, ip))
            continue
        m = _OOB.match(line)
        if m:
            run["oob"] = int(m.group(1))
            run["oob_failed"] = m.group(2) == "FAILED" or int(m.group(1)) > 0
            continue
        m = _BW.match(line)
        if m:
            run["avg"] = to_number(m.group(1))
            continue
        m = _ABORT.search(line)
        if m:
            run["error"] = m.group(2)
    runs = [r for r in runs if r["ranks"] or "header" in r]
    if not runs:
        raise ParseError("no NCCL 1 test output ('# Using devices' with 'Rank N uses device' lines, or its "
                         "'bytes N type op time algbw busbw res' header)")
    last = runs[-1]
    facts: dict[str, Any] = {"nccl_tests.nccl1_test": True, "nccl_tests.run_count": len(runs)}
    if last["collective"]:
        facts["nccl_tests.collective"] = last["collective"]
    if last["ranks"]:
        facts["nccl_tests.ranks"] = max(last["ranks"]) + 1
        facts["nccl_tests.nodes"] = 1
        facts["nccl_tests.gpus"] = list(dict.fromkeys(last["ranks"].values()))
    rows = last["rows"]
    ended = rows or "oob" in last or "avg" in last or "error" in last
    if last["ranks"] and "header" in last and not ended:
        facts["nccl_tests.no_result"] = True
    elif ended:
        facts["nccl_tests.no_result"] = False
    if rows:
        facts["nccl_tests.max_size_bytes"] = max(r[0] for r in rows)
        busbw = [b for r in rows for b in r[1:] if b is not None]
        # one GPU's all-reduce moves nothing over a bus (busbw = algbw x 2(n-1)/n = 0), and a size under 1 MiB
        # measures latency (nccl#36's 100 bytes: 0.00): no bandwidth to speak of
        if busbw and facts["nccl_tests.max_size_bytes"] >= 1 << 20 and (
                max(busbw) > 0 or facts.get("nccl_tests.ranks", 0) >= 2):
            facts["nccl_tests.max_busbw_gbps"] = max(busbw)
            at_max = [r for r in rows if r[0] == facts["nccl_tests.max_size_bytes"]]
            first = at_max[0][1] if at_max[0][1] is not None else at_max[0][2]
            if first is not None:
                facts["nccl_tests.busbw_at_max_size_gbps"] = first
    if last.get("avg") is not None:
        facts["nccl_tests.avg_busbw_gbps"] = last["avg"]
    if "oob" in last:
        facts["nccl_tests.out_of_bounds"] = last["oob"]
        facts["nccl_tests.failed"] = last["oob_failed"]
    if "error" in last:
        facts["nccl_tests.nccl_error"] = last["error"]
    return facts
