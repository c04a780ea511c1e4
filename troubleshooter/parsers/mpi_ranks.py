"""What an MPI program says about its own place in the job: the rank and world size its processes print ("Hello,
I am rank 0/8", "Hello world from processor n01, rank 3 out of 8 processors", "Process 2 on host and world size is
4"), and MPICH's refusal of a rank outside a world of one.

Real samples (StarCluster's Open MPI mpirun over an MPICH2 build, jtriley/StarCluster#533; MPICH's mpiexec through
sudo, pmodels/mpich#712; Apptainer's hybrid-model example; tests/data/mpi-ranks)::

    mpirun -np 2 b
    Hello world from master running process 0 of 1
    Hello world from master running process 0 of 1

    Invalid rank has value 1 but must be nonnegative and less than 1

What it means here: processes started together by one launcher (mpirun -np N, srun -n N) that each report a world
of one did not join into one job: the program's MPI library did not get or understand the launcher's process
management (another MPI's mpirun, a container's MPI under the host's launcher, a PMI the library was not built for,
a wrapper such as sudo that drops the launcher's environment). Each runs alone, on the same GPU, repeating all the
work. One process printing a world of one many times (a single-GPU log) says nothing, which is why a cause reads
this beside the launch line's rank count.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("mpi.ranks.reported", "number", "count", "lines in which the program's processes print their rank and world size"),
    ("mpi.ranks.world_sizes", "list", "", "the distinct world sizes they print, sorted ([1]: every process alone)"),
    ("mpi.ranks.alone", "number", "count", "of those lines, the ones that print a world of one; with MPICH's 'Invalid "
     "rank has value N but must be nonnegative and less than 1' (a rank asked for in a world of one) counted too"),
]

_N = r"(\d{1,7})"
# "rank 0/8", "rank 3 out of 8", "process 0 of 1", "Hello from proc 0 of 4", "processor n01, rank 0 out of 1 processors", "Rank 0 of 4"
_RANK = re.compile(rf"\b(?:rank|process|proc|task)\s*[:=#]?\s*{_N}\s*(?:/|of|out of)\s*{_N}\b", re.IGNORECASE)
# "Process 0 on myhost and world size is 4", "rank 1, world size 4", "rank=0 size=8"
_SIZE = re.compile(rf"\b(?:rank|process)\s*[:=#]?\s*{_N}\b[^\n]{{0,80}}?\b(?:world[ _]size|size)\s*(?:is|=|:)?\s*{_N}\b",
                   re.IGNORECASE)
_INVALID = re.compile(r"Invalid rank has value \d+ but must be nonnegative and less than 1\b")
MAX_LINE = 2000


def _line(line: str) -> tuple[int, int] | None:
    if len(line) > MAX_LINE:
        return None
    m = _RANK.search(line) or _SIZE.search(line)
    if not m:
        return None
    rank, size = int(m.group(1)), int(m.group(2))
    return (rank, size) if size >= 1 and rank < size else None


def _detect(text: str) -> float:
    head = text[:131072]
    if _INVALID.search(head):
        return 0.7
    hits = sum(1 for ln in head.split("\n")[:4000] if ("ank" in ln or "roc" in ln or "ask" in ln) and _line(ln))
    return 0.6 if hits >= 2 else 0.0


@parser(
    "mpi-ranks",
    detect=_detect,
    summary="an MPI program's own rank and world-size lines ('Hello, I am rank 0/8'): did the processes join one job",
    facts=FACTS,
    command="mpirun -np 2 python -c 'from mpi4py import MPI; c = MPI.COMM_WORLD; print(\"rank\", c.rank, \"of\", c.size)'",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "an MPI program's rank lines ('rank 0 of 8')")
    sizes: set[int] = set()
    reported = alone = 0
    for ln in text.split("\n"):
        if _INVALID.search(ln):
            alone += 1
            sizes.add(1)
            continue
        got = _line(ln)
        if got is None:
            continue
        reported += 1
        sizes.add(got[1])
        alone += got[1] == 1
    if not reported and not alone:
        raise ParseError("no line where the program prints its rank and world size ('rank 0 of 8', 'process 1/4')")
    return {"mpi.ranks.reported": reported, "mpi.ranks.world_sizes": sorted(sizes), "mpi.ranks.alone": alone}
