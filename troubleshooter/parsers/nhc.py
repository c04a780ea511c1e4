"""Node Health Check verdicts (LBNL NHC, and Azure's azurehpc-health-checks built on it).

Real sample (an ND H200 v5 VM whose NCCL all-reduce check failed; Azure/azurehpc-health-checks#142,
tests/data/nhc)::

    ERROR:  nhc:  Health check failed:  check_nccl_allreduce: NCCL allreduce, BUS BW (expected >=431.0 GB/s, but measured 15.1043 GB/s). FaultCode: NHC2010

Each ``Health check failed:`` line names the check, its message and (Azure) a fault code. The bandwidth checks
carry the measured and expected figures: ``check_nccl_allreduce`` runs ``all_reduce_perf`` at one large size
(16 GB by default), so its measured bus bandwidth is given as nccl-tests' ``busbw_at_max_size_gbps`` for the
trees to weigh against the platform's reference.

What it means: NHC says *that* a node is off, not why: a failed NCCL all-reduce on one VM can be a topology
file, a GPU, NVLink or the fabric. No cause is drawn from the verdict alone.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("nhc.failed_checks", "list", "", "NHC checks that failed (check_nccl_allreduce, check_ib_bw_gdr, check_fs_mount ...), in order"),
    ("nhc.messages", "list", "", "their messages, as printed"),
    ("nhc.fault_codes", "list", "", "Azure NHC fault codes (NHC2010 ...)"),
    ("nhc.expected_gbps", "number", "GB/s", "the bandwidth the failed NCCL check expected (its threshold)"),
    ("nccl_tests.collective", "string", "", "the collective of the last run (all_reduce, all_gather, reduce_scatter, alltoall, broadcast, ...), from the *_perf binary on the command line or the 'Collective test starting' line; absent when neither is printed"),
    ("nccl_tests.busbw_at_max_size_gbps", "number", "GB/s", "out-of-place busbw at the largest message size of the last run (in-place when out-of-place is missing)"),
]

_FAILED = re.compile(r"Health check failed:\s*(check_\w+):?\s*(.*?)\s*(?:FaultCode:\s*(\S+))?\s*$")
_NCCL = re.compile(r"NCCL (all ?reduce|all ?gather|reduce ?scatter|alltoall)\b.*?expected\s*>=?\s*([\d.]+)\s*GB/s,\s*but measured\s*([\d.]+)\s*GB/s",
                   re.IGNORECASE)


def _detect(text: str) -> float:
    n = len(re.findall(r"Health check failed:\s*check_\w+", text[:262144]))
    return 0.9 if n else 0.0


@parser(
    "nhc",
    detect=_detect,
    summary="Node Health Check (LBNL NHC, Azure HPC health checks) failures",
    facts=FACTS,
    command="sudo nhc -v   (Azure: sudo /opt/azurehpc/test/azurehpc-health-checks/run-health-checks.sh)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "NHC output")
    checks: list[str] = []
    messages: list[str] = []
    codes: list[str] = []
    facts: dict[str, Any] = {}
    for raw in text.split("\n"):
        m = _FAILED.search(raw.rstrip())
        if not m:
            continue
        check, msg, code = m.group(1), m.group(2).rstrip("."), m.group(3)
        if check not in checks:
            checks.append(check)
        if msg and msg not in messages:
            messages.append(msg)
        if code and code not in codes:
            codes.append(code.rstrip("."))
        n = _NCCL.search(msg)
        if n:
            facts["nccl_tests.collective"] = re.sub(r"\s", "", n.group(1).lower()).replace("allreduce", "all_reduce") \
                .replace("allgather", "all_gather").replace("reducescatter", "reduce_scatter")
            facts["nhc.expected_gbps"] = float(n.group(2))
            facts["nccl_tests.busbw_at_max_size_gbps"] = float(n.group(3))
    if not checks:
        raise ParseError("no 'Health check failed: check_...' line found")
    facts.update({"nhc.failed_checks": checks, "nhc.messages": messages, "nhc.fault_codes": codes})
    return facts
