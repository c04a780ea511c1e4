"""Where a job's threads run: the OpenMP runtimes' and launchers' oversubscription warnings, and per-thread placement
listings (OLCF's hello_mpi_omp / hello_jobstep: ``MPI 000 - OMP 001 - HWT 009 - Node frontier001``).

Real samples (OLCF's Frontier and Summit user guides; tests/data/thread-placement)::

    WARNING: Requested total thread count and/or thread affinity may result in
    oversubscription of available CPU resources!  Performance may be degraded.
    MPI 000 - OMP 000 - HWT 001 - Node frontier001
    MPI 000 - OMP 001 - HWT 001 - Node frontier001
    Warning: more than 1 task/rank assigned to a core

What it means here: a rank that starts more threads (OpenMP, BLAS, data-loader) than the CPUs its binding gives it
makes them take turns on the same cores (Slurm's default of one CPU per task under OMP_NUM_THREADS=2; jsrun -brs
giving two tasks one set of cores). Two threads of one rank on one hardware thread say so directly; the runtimes'
warnings say it before the job runs.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("threads.oversubscription_warnings", "list", "", "the runtimes' and launchers' warnings that threads or tasks "
     "outnumber the CPUs they were given (Cray's 'may result in oversubscription of available CPU resources', jsrun's "
     "'more than 1 task/rank assigned to a core', 'OMP_NUM_THREADS=N is greater than available PU's'), as printed"),
    ("threads.placed", "number", "count", "threads listed with the hardware thread they run on (MPI r - OMP t - HWT h)"),
    ("threads.sharing_hwt", "number", "count", "threads listed on a hardware thread that another thread of the same "
     "rank on the same node also runs on"),
]

_WARNINGS = re.compile(r"(may result in\s+oversubscription of available CPU resources|more than 1 task/rank assigned to "
                       r"a core|OMP_NUM_THREADS=\d+ is greater than available PU'?s)")
_PLACED = re.compile(r"^\s*MPI (\d+) - OMP (\d+) - HWT (\d+)(?: - Node (\S+))?")


def _detect(text: str) -> float:
    head = text[:131072]
    if _WARNINGS.search(" ".join(head.split())) or re.search(r"^[^\S\n]*MPI \d+ - OMP \d+ - HWT \d+", head, re.MULTILINE):
        return 0.85
    return 0.0


@parser(
    "thread-placement",
    detect=_detect,
    summary="threads against the CPUs they were given: OpenMP/launcher oversubscription warnings, hello_mpi_omp listings",
    facts=FACTS,
    command="OMP_DISPLAY_AFFINITY=true <your launch command> 2>&1 | head -50",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "oversubscription warnings or a per-thread placement listing")
    warnings: list[str] = []
    for m in _WARNINGS.finditer(" ".join(text.split())[: 1 << 22]):  # a warning wrapped over two lines
        add_clipped(warnings, m.group(1), 10)
    placed: dict[tuple[str, str, str], int] = {}
    threads = 0
    for ln in text.split("\n"):
        p = _PLACED.match(ln)
        if p:
            threads += 1
            key = (p.group(4) or "", p.group(1), p.group(3))
            placed[key] = placed.get(key, 0) + 1
    if not warnings and not threads:
        raise ParseError("no oversubscription warning and no 'MPI r - OMP t - HWT h' placement line")
    facts: dict[str, Any] = {"threads.oversubscription_warnings": warnings}
    if threads:
        facts["threads.placed"] = threads
        facts["threads.sharing_hwt"] = sum(n for n in placed.values() if n > 1)
    return facts
