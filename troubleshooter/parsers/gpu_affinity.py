"""Which GPUs each rank of a job can see, as the HPC centres' affinity checkers print it: bcumming/affinity's
``affinity.cuda`` (CSCS) and ALCF's ``hello_affinity``.

Real samples (CSCS's Slurm guide, "Testing GPU affinity"; ALCF's GettingStarted, Polaris affinity_gpu;
tests/data/gpu-affinity)::

    GPU affinity test for 4 MPI ranks
    rank      0 @ nid005555
     cores   : [0:7]
     gpu   0 : GPU-2ae325c4-b542-26c2-d10f-c4d84847f461

    To affinity and beyond!! nname= x3212c0s25b1n0  rnk= 1  list_cores= (8-15)  num_devices= 4
        [1,0] Platform[ Nvidia ] Type[ GPU ] Device[ NVIDIA A100-SXM4-40GB ]  uuid= GPU-87969d3e-...

Read: each rank's host and the GPUs (by UUID, else by index) it lists. What it means: ranks of one node that each see
the same two or more GPUs were not bound to a GPU each (no --gpus-per-task, no per-rank CUDA_VISIBLE_DEVICES): a
program that does not pick its device by local rank puts them all on its first GPU, which then does every rank's
work while the others idle. A run whose ranks each see their own GPU is bound.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

MAX_RANKS = 4096

FACTS = [
    ("job.rank_gpu_ranks", "number", "count", "ranks an affinity checker listed with the GPUs each can see"),
    ("job.rank_gpu_max_visible", "number", "count", "the most GPUs one listed rank can see"),
    ("job.ranks_sharing_gpu_set", "number", "count", "listed ranks that see the very same two or more GPUs as another "
     "rank of the same node and run: ranks not bound to a GPU each"),
    ("job.rank_gpu_nodes_unbound", "list", "", "nodes (as the checker names them) where ranks share one set of GPUs"),
]

# bcumming/affinity (affinity.cuda / affinity.mpi): a header per run, then "rank N @ host", "cores : ...", "gpu i : UUID"
_RUN_HEAD = re.compile(r"^\s*GPU affinity test for \d+ MPI ranks?\s*$")
_RANK_AT = re.compile(r"^\s*rank\s+(\d+)\s+@\s+(\S+)\s*$")
_GPU_LINE = re.compile(r"^\s*gpu\s+(\d+)\s*:\s*(GPU-[0-9a-fA-F-]+|\S+)\s*$")
# ALCF hello_affinity: "To affinity and beyond!! nname= HOST  rnk= N  list_cores= (a-b)  num_devices= K", then
# "[N,i] Platform[ Nvidia ] Type[ GPU ] Device[ NAME ]  uuid= GPU-..."
_ALCF_RANK = re.compile(r"To affinity and beyond!!\s+nname=\s*(\S+)\s+rnk=\s*(\d+)\b")
_ALCF_GPU = re.compile(r"^\s*\[(\d+),(\d+)\]\s+Platform\[[^\]]*\]\s+Type\[\s*GPU\s*\].*?(?:uuid=\s*(GPU-[0-9a-fA-F-]+))?\s*$")


def _detect(text: str) -> float:
    head = text[:131072]
    if _ALCF_RANK.search(head):
        return 0.9
    if re.search(r"^[^\S\n]*GPU affinity test for \d+ MPI ranks?\s*$", head, re.MULTILINE) and \
            re.search(r"^[^\S\n]*rank\s+\d+\s+@\s+\S+\s*$", head, re.MULTILINE):
        return 0.9
    return 0.0


def _runs(text: str) -> list[dict[tuple[str, str], list[str]]]:
    """Each run's ranks: (host, rank) -> the GPUs it lists, in order. A new run starts at a header, or when a rank
    already listed comes again."""
    runs: list[dict[tuple[str, str], list[str]]] = [{}]
    current: tuple[str, str] | None = None
    alcf_host: dict[str, str] = {}
    for raw in text.split("\n")[:200000]:
        ln = raw.rstrip("\r")
        if len(ln) > 2000:
            continue
        if _RUN_HEAD.match(ln):
            if runs[-1]:
                runs.append({})
            current = None
            continue
        m = _RANK_AT.match(ln) or None
        a = _ALCF_RANK.search(ln) if m is None else None
        if m or a:
            host, rank = (m.group(2), m.group(1)) if m else (a.group(1), a.group(2))
            key = (host, rank)
            if any(r == rank for _, r in runs[-1]):
                runs.append({})  # the same rank again (ranks are numbered job-wide): another run
            if len(runs[-1]) < MAX_RANKS:
                runs[-1][key] = []
                current = key
                alcf_host[rank] = host
            continue
        g = _GPU_LINE.match(ln)
        if g and current is not None and current in runs[-1]:
            runs[-1][current].append(g.group(2))
            continue
        c = _ALCF_GPU.match(ln)
        if c:
            key = (alcf_host.get(c.group(1), ""), c.group(1))
            if key in runs[-1]:
                runs[-1][key].append(c.group(3) or f"device {c.group(2)}")
    return [r for r in runs if r]


@parser(
    "gpu-affinity",
    detect=_detect,
    summary="the GPUs each rank can see, from an affinity checker (CSCS affinity.cuda, ALCF hello_affinity)",
    facts=FACTS,
    command="srun -n <ranks per node> -N1 <same options as the job> ./affinity.cuda   (github.com/bcumming/affinity)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "an affinity checker's per-rank GPU listing")
    runs = _runs(text)
    listed = [(host, rank, gpus) for run in runs for (host, rank), gpus in run.items() if gpus]
    if not listed:
        raise ParseError("no rank listed with its GPUs ('rank N @ host' then 'gpu i : GPU-...', or hello_affinity's "
                         "'To affinity and beyond!! ... rnk= N' then '[N,i] ... Type[ GPU ]')")
    sharing = 0
    nodes: list[str] = []
    for run in runs:
        by_node: dict[str, dict[tuple[str, ...], int]] = {}
        for (host, _), gpus in run.items():
            if len(gpus) >= 2:
                sets = by_node.setdefault(host, {})
                key = tuple(sorted(gpus))
                sets[key] = sets.get(key, 0) + 1
        for host, sets in by_node.items():
            shared = sum(n for n in sets.values() if n > 1)
            if shared:
                sharing += shared
                if host not in nodes and len(nodes) < 32:
                    nodes.append(host)
    return {"job.rank_gpu_ranks": len(listed), "job.rank_gpu_max_visible": max(len(g) for _, _, g in listed),
            "job.ranks_sharing_gpu_set": sharing, "job.rank_gpu_nodes_unbound": nodes}
