"""Node Health Check (LBNL NHC, and Azure's AzNHC built on it): the verdict line of each check.

Real samples (Azure/azurehpc-health-checks#152; AzNHC notes)::

    SUCCESS:  nhc:  Health check passed:  check_ib_bw_gdr: IB write bandwidth test IB_WRITE_BW passed for IB=mlx5_ib3, IB BW=399.71 Gbps
    ERROR:  nhc:  Health check failed:  check_ecc: GPU id 3: SRAM Uncorrectable ECC
    error count detected, (0,1). FaultCode: NHC2019

What it means here: NHC runs a node's checks (GPU count, ECC, NVLink, IB bandwidth, NCCL all-reduce) against
thresholds written per VM size and says pass or fail. A failure names the check and what it measured; it is
a pointer to the evidence, not the evidence (a threshold written for another SKU fails a healthy node: on
H100 PCIe only 12 of 18 NVLinks exist by design, and check_nvlink_status lists the other six as inactive).
Lines a ticket re-wrapped are joined back to their check (up to the FaultCode, a blank line or the next
verdict). ``Health checks completed with exit code: N`` gives the run's result.

>>> f = parse("ERROR:  nhc:  Health check failed:  check_gpu_count: Expected 8 and found 7. FaultCode: NHC2009\\n")
>>> f["nhc.failed_checks"], f["nhc.fault_codes"]
(['check_gpu_count'], ['NHC2009'])
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import OTHER_PROGRAM, ParseError, parser, require_text

FACTS = [
    ("nhc.results", "list", "", "each verdict: {check, passed, message, fault_code (when printed)}, in order"),
    ("nhc.failures", "list", "", "each failure as 'check: message' (what the rules read)"),
    ("nhc.failed_checks", "list", "", "sorted distinct names of the checks that failed (check_ecc, check_nccl_allreduce ...)"),
    ("nhc.passed_checks", "list", "", "sorted distinct names of the checks that passed"),
    ("nhc.fault_codes", "list", "", "sorted distinct AzNHC fault codes of the failures (NHC2019 ...)"),
    ("nhc.exit_code", "number", "", "the run's exit code (Health checks completed with exit code: N)"),
    ("nhc.messages", "list", "", "the failures' messages, as printed"),
    ("nhc.expected_gbps", "number", "GB/s", "the bandwidth the failed NCCL check expected (its threshold)"),
    ("nhc.nccl_pct_of_expected", "number", "%", "what the failed NCCL check measured, as a share of what it expected "
     "(a few percent is a collapse, not a slow node: a wrong topology or transport, not a weak GPU)"),
    # a failed NCCL check runs all_reduce_perf at one large size: its figure is nccl-tests' for the trees to weigh
    ("nccl_tests.collective", "string", "", "the collective of the last run (all_reduce, all_gather, reduce_scatter, alltoall, broadcast, ...), from the *_perf binary on the command line or the 'Collective test starting' line; absent when neither is printed"),
    ("nccl_tests.busbw_at_max_size_gbps", "number", "GB/s", "out-of-place busbw at the largest message size of the last run (in-place when out-of-place is missing)"),
]

# NHC's own line forms (mej/nhc, the nhc script): log() prints "ERROR:  nhc:  Health check failed:  MSG", with
# "[$SECONDS] - " before it when timestamps are on (TS; AzNHC's --verbose runs show it); syslog() sends "Health check
# failed:  MSG" tagged nhc[PID]. MSG starts with the check's name and a colon by the checks' convention
# ("check_ecc: GPU id 3: ..."), but NHC's own failures have none ("Script timed out.", "Terminated by signal SIGTERM.").
_TS = r"(?:\[\d+\] - )?"
_VERDICT = re.compile(r"^\s*+" + _TS + r"(?:(SUCCESS|ERROR|WARNING|INFO):\s+nhc:|.*?\bnhc\[\d+\]:)\s+Health check "
                      r"(passed|failed):\s+(.*)$")
_CHECK = re.compile(r"([A-Za-z_][\w-]*)\s*:\s*(.*)$")
# a line of NHC's own (a level word, with or without the timestamp) or a Markdown fence: never the continuation of
# a wrapped message
_OWN_LINE = re.compile(r"^\s*(?:" + _TS + r"(?:DEBUG|INFO|WARNING|ERROR|SUCCESS|NOTICE)\b:?|```|~~~)")
# a diagnostic a shell, sudo or a launcher printed between NHC's lines ("sudo: unable to resolve host 750a289a40c3: Name
# or service not known" before each check in AzNHC's runs) is never a wrapped message's continuation: OTHER_PROGRAM
_FAULT = re.compile(r"\bFaultCode:\s*(\w+)")
_NCCL = re.compile(r"NCCL (all ?reduce|all ?gather|reduce ?scatter|alltoall)\b.*?expected\s*>=?\s*([\d.]+)\s*GB/s,\s*"
                   r"but measured\s*([\d.]+)\s*GB/s", re.IGNORECASE)
_EXIT = re.compile(r"^\s*Health checks completed with exit code:\s*(\d+)")


def _detect(text: str) -> float:
    head = text[:65536]
    if re.search(r"^[^\S\n]*+" + _TS + r"(?:(?:SUCCESS|ERROR):\s+nhc:|.*?\bnhc\[\d+\]:)\s+Health check (?:passed|failed):",
                 head, re.MULTILINE):
        return 0.95
    return 0.0


@parser(
    "nhc",
    detect=_detect,
    summary="NHC / AzNHC health check verdicts (passed, failed, fault codes)",
    facts=FACTS,
    command="sudo nhc  (AzNHC: sudo /opt/azurehpc/test/azurehpc-health-checks/run-health-checks.sh)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "NHC output (SUCCESS/ERROR:  nhc:  Health check passed/failed: lines)")
    results: list[dict[str, Any]] = []
    exit_code: int | None = None
    open_result: dict[str, Any] | None = None
    parts: list[str] = []  # the open result's message, line by line: joined once, not once per line
    joined: list[tuple[dict[str, Any], list[str]]] = []
    for line in text.split("\n"):
        m = _VERDICT.match(line)
        if m:
            c = _CHECK.match(m.group(3))
            check, message = (c.group(1), c.group(2)) if c else ("nhc", m.group(3))  # NHC's own: a timeout, a signal
            open_result = {"check": check, "passed": m.group(2) == "passed", "message": message.strip()}
            results.append(open_result)
            parts = [open_result["message"]]
            joined.append((open_result, parts))
            window, before, size, tail, start = parts[0], 0, len(parts[0]), parts[0][-11:], 0
        elif (e := _EXIT.match(line)) is not None:
            exit_code, open_result = int(e.group(1)), None
            continue
        elif open_result is not None and line.strip() and "fault_code" not in open_result and not _OWN_LINE.match(line) \
                and not OTHER_PROGRAM.match(line):
            # re-wrapped by a ticket. The fault code was not in the message so far: a new one ends in this line
            # and starts at most len("FaultCode:") before it, so only that much of the message is searched again,
            # with the character before it for \b (the whole message once per line was quadratic in such lines)
            more = line.strip()
            before, window, start = size - len(tail), f"{tail} {more}", 1 if len(tail) == 11 else 0
            parts.append(more)
            size, tail = size + 1 + len(more), window[-11:]
        else:
            open_result = None
            continue
        f = _FAULT.search(window, start)
        if f:
            message = " ".join(parts)
            open_result["fault_code"] = f.group(1)
            open_result["message"] = message[: before + f.start()].rstrip(" .")
    for result, words in joined:
        if "fault_code" not in result:  # (one with a fault code has its message, cut before it, already)
            result["message"] = " ".join(words)
    if not results and exit_code is None:
        raise ParseError("no 'nhc:  Health check passed/failed:' line: this is not NHC output")
    facts: dict[str, Any] = {
        "nhc.results": results,
        "nhc.failures": [f"{r['check']}: {r['message']}" for r in results if not r["passed"]],
        "nhc.failed_checks": sorted({r["check"] for r in results if not r["passed"]}),
        "nhc.passed_checks": sorted({r["check"] for r in results if r["passed"]}),
        "nhc.fault_codes": sorted({r["fault_code"] for r in results if not r["passed"] and r.get("fault_code")}),
    }
    facts["nhc.messages"] = [r["message"] for r in results if not r["passed"]]
    for r in results:
        n = _NCCL.search(r["message"]) if not r["passed"] else None
        if n:
            facts["nccl_tests.collective"] = {"allreduce": "all_reduce", "allgather": "all_gather",
                                              "reducescatter": "reduce_scatter"}.get(
                re.sub(r"\s", "", n.group(1).lower()), re.sub(r"\s", "", n.group(1).lower()))
            facts["nhc.expected_gbps"] = float(n.group(2))
            facts["nccl_tests.busbw_at_max_size_gbps"] = float(n.group(3))
            if float(n.group(2)) > 0:
                facts["nhc.nccl_pct_of_expected"] = round(100 * float(n.group(3)) / float(n.group(2)), 1)
    if exit_code is not None:
        facts["nhc.exit_code"] = exit_code
    return facts
