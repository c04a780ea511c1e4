"""nvbandwidth, read from real outputs with exact values: v0.2 / v0.8 / v0.10 layouts, GPU pairs, waived testcases."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus import files, load
from troubleshooter import parsers
from troubleshooter.diagnosis import intake
from troubleshooter.diagnosis.pasted import EvidenceFacts

A6000 = "nvbandwidth/nvbw50-a6000-6gpu-pcie-d2d-read-ce-healthy.txt"
B300 = "nvbandwidth/b300-7gpu-nvlink-v0.10-ce-host-and-d2d-bidirectional.txt"
H800 = "nvbandwidth/h800-8gpu-nvlink-v0.2-d2d-read-ce.txt"
WAIVED = "nvbandwidth/nvbw13-rtx2080ti-2gpu-d2d-write-ce-waived-no-p2p.txt"
READ = "device_to_device_memcpy_read_ce"


def parse(text: str) -> dict:
    return parsers.run("nvbandwidth", text)


def test_six_a6000_over_pcie_read_ce_two_groups_of_three() -> None:
    f = parse(load(A6000))
    assert (f["nvbandwidth.version"], f["nvbandwidth.cuda_runtime_version"], f["gpu.driver_version"]) == (
        "v0.8", "13000", "580.95.05")
    assert "nvbandwidth.devices" not in f and f["nvbandwidth.testcases"] == []  # the poster cut them ('...')
    m = f["nvbandwidth.matrices"][READ]
    assert m["title"] == "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)" and m["unit"] == "GB/s"
    assert m["rows"][3] == [21.82, 21.82, 22.26, None, 26.34, 26.35]
    assert f[f"nvbandwidth.sum.{READ}"] == 715.53
    assert [f[f"nvbandwidth.{s}_gbs.{READ}"] for s in ("min", "median", "max")] == [21.8, 22.64, 26.35]
    assert f[f"nvbandwidth.min_pairs.{READ}"] == ["0->5"]
    assert f[f"nvbandwidth.max_pairs.{READ}"] == ["0->2", "2->1", "3->5", "4->3", "5->4"]
    assert (f["p2p.gpu_count"], f["p2p.no_access_pairs"], f["p2p.all_access"]) == (6, [], True)
    # a read test is not p2pBandwidthLatencyTest's P2P-writes matrix: those facts stay for the write test
    assert "p2p.uni_enabled_min_gbs" not in f and "p2p.bi_enabled_min_gbs" not in f


def test_b300_v0_10_host_rows_bidirectional_totals_and_the_p2p_facts() -> None:
    f = parse(load(B300))
    assert (f["nvbandwidth.version"], f["nvbandwidth.cuda_runtime_version"], f["gpu.driver_version"]) == (
        "v0.10.0", "13.3 (13030)", "610.57.04")
    assert f["nvbandwidth.testcases"] == [
        "host_to_device_memcpy_ce", "device_to_host_memcpy_ce", "host_to_device_bidirectional_memcpy_ce",
        "device_to_host_bidirectional_memcpy_ce", READ, "device_to_device_memcpy_write_ce",
        "device_to_device_bidirectional_memcpy_read_ce", "device_to_device_bidirectional_memcpy_write_ce"]
    assert len(f["nvbandwidth.matrices"]) == 12
    h2d = f["nvbandwidth.matrices"]["host_to_device_memcpy_ce"]
    assert h2d["rows"] == [[55.59, 55.6, 55.6, 55.59, 55.58, 55.6, 55.58]]  # one row: the CPU
    assert f["nvbandwidth.sum.device_to_host_bidirectional_memcpy_ce"] == 340.6
    assert f["nvbandwidth.variation.device_to_host_bidirectional_memcpy_ce"] == 0.01
    assert f["nvbandwidth.sum.device_to_device_bidirectional_memcpy_read_ce_read2"] == 31924.12
    # printed for a testcase's last matrix only
    assert "nvbandwidth.variation.device_to_device_bidirectional_memcpy_read_ce_read1" not in f
    assert f[f"nvbandwidth.min_pairs.{READ}"] == ["0->4", "1->6", "2->5", "6->4"]
    assert (f[f"nvbandwidth.min_gbs.{READ}"], f[f"nvbandwidth.max_gbs.{READ}"]) == (764.16, 766.34)
    total = "device_to_device_bidirectional_memcpy_read_ce_total"
    assert (f[f"nvbandwidth.min_gbs.{total}"], f[f"nvbandwidth.min_pairs.{total}"]) == (1517.86, ["1->6", "6->1"])
    # CE writes one pair at a time = P2P=Enabled (P2P Writes); the bidirectional writes' Total = bidirectional P2P
    assert (f["p2p.uni_enabled_min_gbs"], f["p2p.uni_enabled_median_gbs"]) == (774.15, 774.36)
    assert (f["p2p.bi_enabled_min_gbs"], f["p2p.bi_enabled_median_gbs"]) == (1539.28, 1539.76)
    assert (f["p2p.gpu_count"], f["p2p.all_access"]) == (7, True)  # v0.10 lists no devices: the matrices' size


def test_h800_v0_2_layout_unpadded_row_labels_and_the_device_list() -> None:
    f = parse(load(H800))
    assert [d["name"] for d in f["nvbandwidth.devices"]] == ["NVIDIA H800"] * 8
    assert f["nvbandwidth.devices"][0] == {"index": 0, "name": "NVIDIA H800", "pci": ""}  # bus ids came with v0.5
    assert f["nvbandwidth.matrices"][READ]["rows"][7][7] is None
    assert f[f"nvbandwidth.sum.{READ}"] == 9642.08
    assert (f[f"nvbandwidth.min_gbs.{READ}"], f[f"nvbandwidth.max_gbs.{READ}"]) == (171.88, 172.57)
    assert f[f"nvbandwidth.min_pairs.{READ}"] == ["4->1", "6->0"]
    assert f[f"nvbandwidth.max_pairs.{READ}"] == ["0->2", "0->3"]
    assert f["p2p.gpu_count"] == 8


def test_a_waived_gpu_pair_testcase_is_no_peer_access_between_any_pair() -> None:
    f = parse(load(WAIVED))
    assert (f["nvbandwidth.waived"], f["nvbandwidth.waived_count"], f["nvbandwidth.matrices"]) == (
        ["device_to_device_memcpy_write_ce"], 1, {})
    assert (f["p2p.gpu_count"], f["p2p.no_access_pairs"], f["p2p.all_access"]) == (2, ["0->1", "1->0"], False)


def test_an_off_diagonal_n_a_is_a_pair_without_peer_access() -> None:
    row2 = " 2     26.34     26.35       N/A     22.36"
    text = load(A6000).replace(row2, " 2       N/A" + row2[12:])
    f = parse(text)
    assert (f["p2p.no_access_pairs"], f["p2p.all_access"]) == (["2->0"], False)
    assert f[f"nvbandwidth.min_gbs.{READ}"] == 21.8  # the missing pair is no 0 GB/s


def test_a_garbled_matrix_is_not_read_but_its_sum_is() -> None:
    text = load(A6000).replace(" 4     22.64", " 9     22.64")  # a row out of order
    f = parse(text)
    assert f["nvbandwidth.matrices"] == {} and f[f"nvbandwidth.sum.{READ}"] == 715.53
    assert f"nvbandwidth.min_gbs.{READ}" not in f and "p2p.all_access" not in f


def test_sum_lines_alone_as_grep_prints_them() -> None:
    text = "".join(ln + "\n" for ln in load(B300).split("\n") if ln.startswith("SUM "))
    assert parsers.detect(text) == "nvbandwidth"
    f = parse(text)
    assert f[f"nvbandwidth.sum.{READ}"] == 32140.19 and f["nvbandwidth.matrices"] == {}


@pytest.mark.parametrize("path", files("nvbandwidth"), ids=lambda p: p.name)
def test_detected(path: Path) -> None:
    assert parsers.detect(load(f"nvbandwidth/{path.name}")) == "nvbandwidth"


@pytest.mark.parametrize("text", ["", "Running out of time.\n", "SUM of all fears 3\n", "Device 0: NVIDIA H100\n",
                                  "memcpy is fast\n 0 1 2\n"])
def test_other_text_is_refused(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parse(text)
    assert parsers.get("nvbandwidth").detect(text) < parsers.DETECT_MIN


def test_a_pasted_transcript_routes_nvbandwidth_by_its_command(tmp_path: Path) -> None:
    assert intake.tool_of("CUDA_VISIBLE_DEVICES=0,1 ./nvbandwidth -t device_to_device_memcpy_read_ce") == "nvbandwidth"
    p = tmp_path / "session.txt"
    p.write_text(load(B300))
    ef = EvidenceFacts.from_specs([f"host:{p}"])
    # the variable the command line sets is read as its environment, the output by the command's kind
    assert [(f.kind, f.how.split(";")[0]) for f in ef.files] == [("env", "command"), ("nvbandwidth", "command")]
    assert ef.lookup("p2p.uni_enabled_min_gbs") == 774.15
