"""perftest's bandwidth and latency tables (tests/data/perftest: real runs from public threads and docs)."""

import pytest

from tests.corpus import DATA, load
from troubleshooter import parsers
from troubleshooter.diagnosis.pasted import EvidenceFacts
from troubleshooter.model import combine
from troubleshooter.model.facts import Fact, FactSet
from troubleshooter.parsers import ParseError

GPUOP = "perftest/gpuoperator-docs-roce-write-bw-gbits-cuda-dmabuf-92g.txt"


def test_a_roce_write_bandwidth_sweep_in_gbits():
    text = load(GPUOP)
    assert parsers.detect(text) == "perftest"
    f = parsers.run("perftest", text)
    assert (f["perftest.test"], f["perftest.kind"], f["perftest.device"], f["perftest.link_type"]) == (
        "RDMA_Write BW", "bw", "mlx5_0", "Ethernet")
    assert (f["perftest.transport"], f["perftest.connection"], f["perftest.qps"]) == ("IB", "RC", 1)
    assert (f["perftest.mtu_bytes"], f["perftest.gid_index"], f["perftest.bidirectional"]) == (1024, 5, False)
    assert len(f["perftest.rows"]) == 23
    assert f["perftest.rows"][0] == {"size_bytes": 2, "iterations": 5000, "bw_peak_gbps": 0.11, "bw_avg_gbps": 0.11,
                                     "msg_rate_mpps": 6.897101}
    assert (f["perftest.bw_avg_gbps"], f["perftest.bw_avg_at_bytes"]) == (92.46, 16384)
    assert "perftest.gpu_memory" not in f  # the doc's block starts at the settings: perftest's CUDA lines are not there


@pytest.mark.parametrize("name, test, device, link, best, rows, runs, gpu", [
    # InfiniBand, the older MB/sec (2^20 bytes a second): 4508.79 MB/sec is 37.82 Gb/s; server and client in one paste
    ("felixfu-cx3-ib-write-bw-server-and-client-mbsec.txt", "RDMA_Write BW", "mlx4_0", "IB", 37.82, 1, 2, False),
    ("ompi6888-ib-read-bw-server-mbsec.txt", "RDMA_Read BW", "mlx5_0", "IB", 98.92, 1, 1, False),
    # the settings elided with "..." by the writer: the table alone, no device or test named
    ("aksrdma-ib-read-bw-sweep-gbits-header-elided.txt", None, None, None, 197.48, 23, 1, None),
    # --run_infinitely: the same size again and again, a peak of 0.00 (not measured)
    ("dgxspark-roce-write-bw-run-infinitely.txt", "RDMA_Write BW", "roceP2p1s0f0", "Ethernet", 97.29, 6, 1, False),
    ("perftest273-roce-write-bw-post-list-8b-duration.txt", "RDMA_Write Post List BW", "ib0", "Ethernet", 0.48, 1, 1, None),
    # two hosts' runs, bidirectional: the figure counts both directions
    ("pollara-roce-write-bw-bidirectional-q4-two-hosts.txt", "RDMA_Write Bidirectional BW", "ionic_1", "Ethernet", 779.21, 23, 2, False),
    # GPU memory (perftest's CUDA lines, or --use_cuda on the command line): 10.5 Gb/s where host memory gave 92.56;
    # host memory where the command line is shown without --use_cuda (False), not said where it is not (None)
    ("netopdemos-roce-write-bw-gpu-memory-t4-10g.txt", "RDMA_Write BW", "mlx5_5", "Ethernet", 10.5, 1, 1, True),
    ("netopdemos-roce-write-bw-host-memory-92g.txt", "RDMA_Write BW", "mlx5_4", "Ethernet", 92.56, 1, 1, False),
    ("nvtools-roce-write-bw-cuda-dmabuf-q16-duration.txt", "RDMA_Write BW", "mlx5_1", "Ethernet", 181.46, 1, 1, True),
    ("moc-roce-write-bw-cuda-q8-gpu-far-from-nic-105g.txt", "RDMA_Write BW", "mlx5_2", "Ethernet", 105.1, 23, 1, True),
    # the header row and one row per case quoted, the average set in Markdown bold; both command lines above both
    # tables, so the second table's command is not told
    ("perftest65-send-bw-rows-in-markdown-bold-mbsec.txt", None, None, None, 7.72, 1, 2, None),
])
def test_bandwidth_runs_as_posted(name, test, device, link, best, rows, runs, gpu):
    text = load(f"perftest/{name}")
    assert parsers.detect(text) == "perftest"
    f = parsers.run("perftest", text)
    assert (f.get("perftest.test"), f.get("perftest.device"), f.get("perftest.link_type")) == (test, device, link)
    assert (f["perftest.kind"], f["perftest.bw_avg_gbps"], len(f["perftest.rows"]), len(f["perftest.runs"])) == (
        "bw", best, rows, runs)
    assert f.get("perftest.gpu_memory") == gpu


def test_a_duration_run_measures_no_peak_and_a_dmabuf_buffer_is_told():
    f = parsers.run("perftest", load("perftest/nvtools-roce-write-bw-cuda-dmabuf-q16-duration.txt"))
    assert f["perftest.rows"] == [{"size_bytes": 65536, "iterations": 10384867, "bw_peak_gbps": None,
                                   "bw_avg_gbps": 181.46, "msg_rate_mpps": 0.3461}]
    assert (f["perftest.qps"], f["perftest.mtu_bytes"], f["perftest.gid_index"], f["perftest.dmabuf"]) == (16, 1024, 3, True)


def test_the_runs_of_one_paste_each_keep_their_own_device():
    f = parsers.run("perftest", load("perftest/pollara-roce-write-bw-bidirectional-q4-two-hosts.txt"))
    assert [(r["device"], r["bidirectional"], r["bw_avg_gbps"]) for r in f["perftest.runs"]] == [
        ("ionic_7", True, 779.21), ("ionic_1", True, 779.21)]
    g = parsers.run("perftest", load("perftest/perftest65-send-bw-rows-in-markdown-bold-mbsec.txt"))
    assert [r["bw_avg_gbps"] for r in g["perftest.runs"]] == [46.51, 7.72]  # 5544.28 and 920.13 MB/sec


@pytest.mark.parametrize("name, test, rows, typical, avg, gpu", [
    # server and client in one paste, the CPU-frequency warnings between the header and the row
    ("felixfu-cx3-ib-write-lat-server-and-client.txt", "RDMA_Write Latency", 1, 0.98, 0.98, False),
    ("moc-roce-read-lat-cuda-sweep.txt", "RDMA_Read Latency", 23, 5.96, 6.02, True),
])
def test_latency_runs(name, test, rows, typical, avg, gpu):
    text = load(f"perftest/{name}")
    assert parsers.detect(text) == "perftest"
    f = parsers.run("perftest", text)
    assert (f["perftest.test"], f["perftest.kind"], len(f["perftest.rows"])) == (test, "lat", rows)
    assert (f["perftest.lat_typical_usec"], f.get("perftest.lat_avg_usec"), f.get("perftest.gpu_memory")) == (typical, avg, gpu)
    assert "perftest.bw_avg_gbps" not in f


def test_settings_with_no_table_are_no_measurement():
    # an old ib_atomic_bw server block that ends at its addresses, as posted
    text = load("perftest/pib4-ib-atomic-bw-server-settings-only.txt")
    with pytest.raises(ParseError, match="no perftest result table"):
        parsers.get("perftest").func(text)


def test_a_run_that_stopped_before_its_table_is_the_verbs_error():
    # ib_send_bw on a soft-iWARP device: its settings, then "Couldn't allocate MR": no measurement
    text = load("verbs-errors/softiwarp23-ib-send-bw-couldnt-allocate-mr.txt")
    with pytest.raises(ParseError, match="no perftest result table"):
        parsers.get("perftest").func(text)
    assert parsers.detect(text) == "verbs-errors"
    ef = EvidenceFacts.from_specs([str(DATA / "verbs-errors/softiwarp23-ib-send-bw-couldnt-allocate-mr.txt")])
    assert "verbs-errors" in [p.kind for p in ef.files if not p.error]


def _facts(**values):
    fs = FactSet()
    for k, v in values.items():
        fs.add(Fact(k.replace("__", "."), v, "", "test", "", 0.0))
    return fs


def test_the_best_average_against_the_rate_of_the_port_it_ran_on():
    runs = parsers.run("perftest", load(GPUOP))["perftest.runs"]
    ports = [{"device": "mlx5_0", "port": 1, "state": "Active", "rate_gbps": 100, "link_layer": "Ethernet"},
             {"device": "mlx5_1", "port": 1, "state": "Active", "rate_gbps": 200, "link_layer": "InfiniBand"}]
    fs = _facts(perftest__runs=runs, ib__ports=ports)
    combine.apply(fs)
    assert fs.get_value("rdma.perftest_vs_port") == ["mlx5_0 (RDMA_Write BW): 92.46 Gb/s of a 100 Gb/s port (92%)"]
    assert fs.get_value("rdma.perftest_port_pct") == 92
    # the same figure on a 400 Gb/s port is under a quarter of it; a device without a known port rate says nothing
    fs = _facts(perftest__runs=runs, ib__ports=[dict(ports[0], rate_gbps=400)])
    combine.apply(fs)
    assert fs.get_value("rdma.perftest_port_pct") == 23
    fs = _facts(perftest__runs=runs, ib__ports=ports[1:])
    combine.apply(fs)
    assert "rdma.perftest_vs_port" not in fs


def test_pasted_beside_ibstat_the_run_is_set_against_its_port():
    # two public captures combined: ibstat of a ConnectX-6 Dx at Rate 100 (mlx5_0, Ethernet) and the docs' RoCE run
    ef = EvidenceFacts.from_specs([str(DATA / "ibstat/ibstat-cx6dx-mt4125-ethernet-rate100-l2fwd-pcie-gen3.txt"),
                                   str(DATA / GPUOP)])
    assert ef.lookup("rdma.perftest_vs_port") == ["mlx5_0 (RDMA_Write BW): 92.46 Gb/s of a 100 Gb/s port (92%)"]
    assert ef.lookup("rdma.perftest_port_pct") == 92


FAR, NEAR, HOST = ("perftest/moc-roce-write-bw-cuda-q8-gpu-far-from-nic-105g.txt",
                   "perftest/moc-roce-write-bw-cuda-q8-gpu-near-nic-211g.txt",
                   "perftest/moc-roce-write-bw-host-memory-q8-232g.txt")


def test_a_run_from_gpu_memory_against_the_same_nics_other_run():
    # one experiment's logs (tssala23/moc-training-scripts): mlx5_2 from host memory, from the GPU its config pairs
    # with the NIC, and from a GPU away from it
    assert parsers.run("perftest", load(HOST))["perftest.runs"][0]["gpu_memory"] is None  # not shown to be a GPU's
    ef = EvidenceFacts.from_specs([str(DATA / FAR), str(DATA / HOST)])
    assert ef.lookup("rdma.gdr_below_other_runs") == [
        "mlx5_2: 105.1 Gb/s from GPU memory, 232.07 Gb/s in another run on the same device (45%)"]
    ef = EvidenceFacts.from_specs([str(DATA / NEAR), str(DATA / HOST)])
    assert ef.lookup("rdma.gdr_below_other_runs") == []  # 210.74 of 232.07: 91%
    ef = EvidenceFacts.from_specs([str(DATA / FAR)])
    assert ef.lookup("rdma.gdr_below_other_runs") != []  # nothing to set it against: unknown, not fine
    assert "unknown" in str(ef.lookup("rdma.gdr_below_other_runs"))


def test_the_slow_gpu_run_makes_the_far_gpu_possible_with_the_matrix_that_decides():
    from troubleshooter.service.diagnose import diagnose

    ef = EvidenceFacts.from_specs([str(DATA / FAR), str(DATA / HOST)])
    walk, doc = diagnose("nccl-wrong-fabric", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
    assert walk.conclusions == []  # possible: listed first with the command that decides, never found
    first = walk.hypotheses[0]
    assert (first.id, first.state) == ("gpu-nic-far", "suspected")
    assert first.settle.startswith("nvidia-smi topo -m")
    assert doc["headline"].startswith("No root cause decided: the outputs point at 1 possible cause")


def test_the_comparisons_are_shown_in_their_steps_only_where_a_run_was_given():
    from troubleshooter.service.diagnose import diagnose

    def shown(specs):
        walk, _ = diagnose("nccl-wrong-fabric", EvidenceFacts.from_specs(specs), answers={}, profile_id=None,
                           target_desc={"kind": "evidence"})
        return {k: v for s in walk.steps if s.node in ("ports", "affinity") for k, v in s.facts.items()}

    facts = shown([str(DATA / FAR), str(DATA / HOST)])
    assert "45%" in str(facts["rdma.gdr_below_other_runs"])
    # no perftest attached (a live walk never has one): the step does not list it as unknown
    facts = shown([str(DATA / "ibstat/ibstat-cx6dx-mt4125-ethernet-rate100-l2fwd-pcie-gen3.txt")])
    assert "ib.rates_gbps" in facts and "rdma.perftest_vs_port" not in facts and "rdma.gdr_below_other_runs" not in facts
