"""gpu-affinity parser: the GPUs each rank can see, as the centres' affinity checkers print it (real captures, exact
values)."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers

CSCS = "gpu-affinity/cscs-affinity-cuda-unbound-then-gpus-per-task.txt"
ALCF = "gpu-affinity/alcf-polaris-hello-affinity-all-ranks-see-4-gpus.txt"


def test_every_rank_of_a_polaris_node_sees_all_four_gpus():
    text = load(ALCF)
    assert parsers.detect(text) == "gpu-affinity"
    assert parsers.run("gpu-affinity", text) == {
        "job.rank_gpu_ranks": 4, "job.rank_gpu_max_visible": 4, "job.ranks_sharing_gpu_set": 4,
        "job.rank_gpu_nodes_unbound": ["x3212c0s25b1n0"]}


def test_two_runs_in_one_listing_are_judged_each_on_its_own():
    # the unbound run (4 ranks, the same 4 GPUs each) then --gpus-per-task=1 (one each) on another node: the rank
    # numbers start again, so the runs are not mixed into one node's eight ranks
    text = load(CSCS)
    assert parsers.detect(text) == "gpu-affinity"
    assert parsers.run("gpu-affinity", text) == {
        "job.rank_gpu_ranks": 8, "job.rank_gpu_max_visible": 4, "job.ranks_sharing_gpu_set": 4,
        "job.rank_gpu_nodes_unbound": ["nid005555"]}
    bound = text[text.index("$ srun -n4 -N1 --gpus-per-task=1"):]
    assert parsers.run("gpu-affinity", bound)["job.ranks_sharing_gpu_set"] == 0


def test_other_outputs_are_not_claimed():
    with pytest.raises(parsers.ParseError):
        parsers.run("gpu-affinity", "rank 0 @ nid001\n cores : [0:7]\n")
    assert parsers.get("gpu-affinity").detect("MPI 000 - OMP 000 - HWT 001 - Node frontier001\n") < parsers.DETECT_MIN
