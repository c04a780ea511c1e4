"""bandwidthTest (CUDA samples), read from real outputs with exact values: MB/s and GB/s releases, range mode,
runs split by the program's banner or by the poster's, and the NUMA binding numactl/taskset gave each run."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.diagnosis import intake
from troubleshooter.diagnosis.pasted import EvidenceFacts
from troubleshooter.parsers import _bind

GEARSHIFFT = "bandwidth-test/gearshifft82-p100-numactl-node0-node1.txt"
CUDA_DEMO = "bandwidth-test/cuda-demo-t4-v100-two-runs.txt"
DELLA = "bandwidth-test/della-range-mode-two-clusters.txt"


def parse(text: str) -> dict:
    return parsers.run("bandwidth-test", text)


def test_p100_bound_to_each_socket_in_mb_per_s() -> None:
    f = parse(load(GEARSHIFFT))
    a, b = f["cuda_bw.runs"]
    assert a == {"devices": ["Tesla P100-PCIE-16GB"], "memory": "pinned", "h2d_gbps": 12.15, "d2h_gbps": 12.89,
                 "d2d_gbps": 443.84, "binding": {"membind": "0", "cpunodebind": "0"}, "numa_node": 0}
    # the second run stops inside its Device to Device header: no d2d number is made up
    assert b == {"devices": ["Tesla P100-PCIE-16GB"], "memory": "pinned", "h2d_gbps": 3.78, "d2h_gbps": 2.54,
                 "binding": {"membind": "1", "cpunodebind": "1"}, "numa_node": 1}
    assert f["cuda_bw.numa_h2d_gbps"] == {"0": 12.15, "1": 3.78}
    assert (f["cuda_bw.numa_h2d_spread"], f["cuda_bw.numa_slow_nodes"]) == (3.21, [1])
    assert (f["cuda_bw.h2d_gbps_min"], f["cuda_bw.h2d_gbps_max"], f["cuda_bw.d2h_gbps_min"]) == (3.78, 12.15, 2.54)


def test_two_unbound_runs_in_gb_per_s_after_prompts() -> None:
    f = parse(load(CUDA_DEMO))
    assert [(r["devices"], r["h2d_gbps"], r["d2h_gbps"], r["d2d_gbps"], r["binding"]) for r in f["cuda_bw.runs"]] == [
        (["Tesla T4"], 9.7, 11.1, 239.6, {}), (["Tesla V100-SXM2-16GB"], 9.6, 11.4, 739.8, {})]
    assert f["cuda_bw.devices"] == ["Tesla T4", "Tesla V100-SXM2-16GB"]
    # no run was bound to a node: nothing to compare across nodes
    assert "cuda_bw.numa_h2d_gbps" not in f and "cuda_bw.numa_h2d_spread" not in f


def test_range_mode_takes_the_largest_transfer_and_a_poster_banner_splits_runs() -> None:
    f = parse(load(DELLA))
    assert [(r["h2d_gbps"], r["d2h_gbps"], r["d2d_gbps"]) for r in f["cuda_bw.runs"]] == [
        (12.4, 13.1, 522.6), (25.8, 25.7, 1251.4)]
    assert f["cuda_bw.devices"] == []


def test_csv_lines() -> None:
    # the sample's printResultsCSV format (cuda-samples bandwidthTest.cu)
    f = parse("bandwidthTest-H2D-Pinned, Bandwidth = 24.6 GB/s, Time = 0.00130 s, Size = 32000000 bytes, NumDevsUsed = 1\n"
              "bandwidthTest-D2H-Pinned, Bandwidth = 26.3 GB/s, Time = 0.00122 s, Size = 32000000 bytes, NumDevsUsed = 1\n")
    assert [(r["h2d_gbps"], r["d2h_gbps"]) for r in f["cuda_bw.runs"]] == [(24.6, 26.3)]


def test_not_bandwidthtest_output_is_an_error() -> None:
    with pytest.raises(parsers.ParseError, match="not bandwidthTest output"):
        parse("[CUDA Bandwidth Test] - Starting...\nRunning on...\n\n Device 0: Tesla T4\n Quick Mode\n")


def test_numactl_and_taskset_start_the_program_whose_output_follows() -> None:
    assert intake.tool_of("numactl -m1 -N1 bandwidthTest") == "bandwidth-test"
    assert intake.tool_of("sudo numactl --cpunodebind=0 --membind=0 -- ./bandwidthTest --memory=pinned") == "bandwidth-test"
    assert intake.tool_of("taskset -c 0-5 ./build/all_reduce_perf -b 8 -e 1G -g 1") == "nccl-tests"
    # numactl and taskset printing their own output stay theirs
    assert intake.tool_of("numactl --hardware") == "numactl"
    assert intake.tool_of("numactl -H") == "numactl"
    assert intake.tool_of("taskset -cp 4391") == "taskset"
    assert _bind.launch("numactl -N 1 -m 1 python train.py") == ({"cpunodebind": "1", "membind": "1"}, 5)
    assert _bind.launch("taskset 0xff ./a.out") == ({"cpumask": "ff"}, 2)
    assert _bind.launch("numactl --interleave=all python t.py") == ({"interleave": "all"}, 2)
    assert _bind.single_node({"interleave": "all"}) is None


def test_runs_pasted_as_separate_files_are_compared() -> None:
    # the thread's two code blocks given as two files of the host: read together, each with its own binding
    text = load(GEARSHIFFT)
    first, second = text.split("\n$ numactl -m1")
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        a, b = Path(d, "node0.txt"), Path(d, "node1.txt")
        a.write_text(first + "\n")
        b.write_text("$ numactl -m1" + second)
        ef = EvidenceFacts.from_specs([f"host:{a}", f"host:{b}"])
    assert ef.lookup("cuda_bw.numa_h2d_gbps") == {"0": 12.15, "1": 3.78}
    assert ef.lookup("cuda_bw.numa_slow_nodes") == [1]
