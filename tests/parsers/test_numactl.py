import os

import pytest
from hypothesis import given, settings, strategies as st

from troubleshooter.model import facts as factreg
from troubleshooter import parsers, sources
from troubleshooter.model.evidence import Status
from troubleshooter.parsers import ParseError
from troubleshooter.probe.targets import LocalTarget
from tests.corpus import load

KIND = "numactl"


def parse(text):
    return parsers.run(KIND, text)


def test_epyc7401_memory_on_two_of_eight_nodes_quoted():
    f = parse(load("numa/epyc7401-8nodes-memory-only-on-2-nodes-lkml.txt"))
    assert f["numa.node_count"] == 8
    assert f["numa.nodes"]["0"] == {"cpus": "0,8,16,24,32,40,48,56,64,72,80,88", "cpu_count": 12, "size_mb": 0, "free_mb": 0}
    assert f["numa.nodes"]["5"] == {"cpus": "3,11,19,27,35,43,51,59,67,75,83,91", "cpu_count": 12, "size_mb": 32214, "free_mb": 31625}
    assert f["numa.memoryless_nodes"] == [0, 2, 3, 4, 6, 7]
    assert f["numa.cpu_memoryless_nodes"] == [0, 2, 3, 4, 6, 7]
    assert f["numa.cpuless_nodes"] == []
    assert f["numa.total_mb"] == 63798
    assert f["numa.min_free_pct"] == 96.24  # node 1: 30397/31584
    assert "numa.distances" not in f and "numa.max_distance" not in f  # excerpt has no table


def test_epyc9375f_two_nodes_distance_32():
    f = parse(load("numa/epyc9375f-2s-smt-off-numactl-distance-32-numastat-m-token-warnings.txt"))
    assert f["numa.node_count"] == 2
    assert f["numa.nodes"]["1"] == {"cpus": "32-63", "cpu_count": 32, "size_mb": 774028, "free_mb": 684984}
    assert f["numa.distances"] == {"0": {"0": 10, "1": 32}, "1": {"0": 32, "1": 10}}
    assert f["numa.max_distance"] == 32
    assert f["numa.min_free_pct"] == 87.79


def test_gh200_cpuless_gpu_memory_and_255():
    f = parse(load("numa/gh200-numactl-hardware-9nodes-gpu-mem-node1-distance-80-255.txt"))
    assert f["numa.node_count"] == 9
    assert f["numa.nodes"]["0"] == {"cpus": "0-71", "cpu_count": 72, "size_mb": 490037, "free_mb": 484432}  # wrapped list
    assert f["numa.nodes"]["1"] == {"cpus": "", "cpu_count": 0, "size_mb": 97280, "free_mb": 97279}
    assert f["numa.cpuless_nodes"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert f["numa.memoryless_nodes"] == [2, 3, 4, 5, 6, 7, 8]
    assert f["numa.cpu_memoryless_nodes"] == []
    assert f["numa.distances"]["0"]["1"] == 80 and f["numa.distances"]["1"]["2"] == 255
    assert f["numa.max_distance"] == 255
    assert f["numa.max_reachable_distance"] == 80
    assert f["numa.min_free_pct"] == 98.86


def test_leonardo_snc4_trailing_spaces_and_lscpu_after():
    f = parse(load("numa/leonardo-dcgp-spr-snc4-2s-8nodes-numactl-lscpu-e.txt"))
    assert f["numa.node_count"] == 8
    assert [f["numa.nodes"][str(i)]["cpus"] for i in range(8)] == [
        "0-13", "14-27", "28-41", "42-55", "56-69", "70-83", "84-97", "98-111"]
    assert f["numa.distances"]["0"] == {"0": 10, "1": 12, "2": 12, "3": 12, "4": 21, "5": 21, "6": 21, "7": 21}
    assert f["numa.max_distance"] == 21
    assert f["numa.total_mb"] == 515074
    assert f["numa.min_free_pct"] == 96.52


def test_two_nodes_indented_followed_by_topo():
    f = parse(load("numa/numactl-hardware-2node-and-topo-all-gpus-on-node0.txt"))
    assert f["numa.nodes"] == {
        "0": {"cpus": "0-15", "cpu_count": 16, "size_mb": 256924, "free_mb": 249438},
        "1": {"cpus": "16-31", "cpu_count": 16, "size_mb": 257999, "free_mb": 256694},
    }
    assert f["numa.max_distance"] == 11


def test_vm_irregular_cpus_nearly_out_of_memory():
    f = parse(load("numa/vm-2node-uneven-cpus-free-191mb-numactl-numastat-c.txt"))
    assert f["numa.nodes"]["0"] == {"cpus": "0-8,10-13,28-33", "cpu_count": 19, "size_mb": 62224, "free_mb": 191}
    assert f["numa.free_mb"] == 427
    assert f["numa.min_free_pct"] == 0.31
    assert f["numa.distances"] == {"0": {"0": 10, "1": 11}, "1": {"0": 11, "1": 10}}


def test_pdf_scrambled_file_yields_only_numactl_show():
    # the --show lines survived the PDF extraction (three pairs fused on one line); the numastat parts did not
    f = parse(load("numa/pdf-extracted-numastat-4node-scrambled-columns.txt"))
    assert f == {
        "numa.policy": "default", "numa.preferred_node": "current", "numa.physcpubind": "0-127",
        "numa.physcpubind_count": 128, "numa.cpubind": [0, 1, 2, 3], "numa.nodebind": [0, 1, 2, 3],
        "numa.membind": [0, 1, 2, 3],
    }


def test_show_this_machine_format():
    f = parse("policy: default\npreferred node: current\nphyscpubind: 0 1 \ncpubind: 0 \nnodebind: 0 \n"
              "membind: 0 \npreferred: \n")
    assert f["numa.physcpubind"] == "0-1" and f["numa.membind"] == [0] and f["numa.policy"] == "default"


def test_no_numa():
    assert parse("No NUMA available on this system\n") == {"numa.available": False}


@pytest.mark.parametrize("text", ["", "  \n", "numastat\nnuma_hit 1 2\n", "available: banana"])
def test_empty_or_not_numactl(text):
    with pytest.raises(ParseError):
        parse(text)


@pytest.mark.parametrize("rel", [
    "numa/epyc7401-8nodes-memory-only-on-2-nodes-lkml.txt",
    "numa/epyc9375f-2s-smt-off-numactl-distance-32-numastat-m-token-warnings.txt",
    "numa/gh200-numactl-hardware-9nodes-gpu-mem-node1-distance-80-255.txt",
    "numa/leonardo-dcgp-spr-snc4-2s-8nodes-numactl-lscpu-e.txt",
    "numa/pdf-extracted-numastat-4node-scrambled-columns.txt",
    "numa/vm-2node-uneven-cpus-free-191mb-numactl-numastat-c.txt",
])
def test_detected_as_numactl(rel):
    assert parsers.detect(load(rel)) == KIND


def test_numactl_then_topo_scores_top():
    # numactl --hardware followed by nvidia-smi topo -m: both tools' output is complete here, so the
    # nvidia-smi-topo detector may tie with ours; ours must score at the top.
    ranked = parsers.scores(load("numa/numactl-hardware-2node-and-topo-all-gpus-on-node0.txt"))
    top = ranked[0][0]
    assert (top, KIND) in ranked and top >= 0.9


def test_declared_facts():
    p = parsers.get(KIND)
    texts = [load("numa/gh200-numactl-hardware-9nodes-gpu-mem-node1-distance-80-255.txt"),
             load("numa/pdf-extracted-numastat-4node-scrambled-columns.txt"), "No NUMA available on this system"]
    for text in texts:
        for name in parse(text):
            assert name in p.facts, name
            assert factreg.spec(name) is not None


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(), st.binary().map(lambda b: b.decode("utf-8", errors="replace")),
                 st.lists(st.sampled_from(["available: 2 nodes (0-1)", "node 0 cpus: 0 1", "node 0 size: 5 MB",
                                           "node 1 free: x MB", "node distances:", "node 0 1", "0: 10 11",
                                           "1: 11", "physcpubind: 0-99999999", "12 13", "> ", ""])).map("\n".join)))
def test_only_parse_errors(text):
    try:
        parse(text)
    except ParseError:
        pass


def test_real_source_here():
    ev = LocalTarget().run(sources.get("numactl-hardware"), sources.Params(pid=os.getpid()))
    assert ev.status in (Status.OK, Status.NOT_INSTALLED), ev.reason
    if ev.status is Status.NOT_INSTALLED:
        assert "numactl" in ev.reason and "package numactl" in ev.reason
    else:
        f = parse(ev.text)
        assert f["numa.node_count"] >= 1 and f["numa.nodes"]["0"]["cpu_count"] >= 1
