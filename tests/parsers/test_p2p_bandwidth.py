"""p2pBandwidthLatencyTest parser: peer access, P2P on/off bandwidth, the P2P-slower signature."""

import pytest

from tests.corpus import files, load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError

A100 = "p2p-bandwidth/a100-sxm4-80gb-8gpu-nvswitch-healthy-full.txt"
BROKEN = "p2p-bandwidth/6gpu-p2p-enabled-slower-than-disabled-9.9-vs-22-nccl814-truncated.txt"
NO_P2P = "p2p-bandwidth/rtx4090-8gpu-no-p2p-connectivity-0-fallback-stock-driver.txt"


def parse(text):
    return parsers.run("p2p-bandwidth", text)


def test_a100_nvswitch_healthy():
    f = parse(load(A100))
    assert f["p2p.gpu_count"] == 8
    assert f["p2p.devices"][0] == {"index": 0, "name": "NVIDIA A100-SXM4-80GB", "pci_bus_id": "7"}
    assert [d["pci_bus_id"] for d in f["p2p.devices"]] == ["7", "a", "44", "4a", "84", "8a", "c1", "c4"]
    assert len(f["p2p.access"]) == 56 and f["p2p.access"]["3->6"] is True
    assert f["p2p.no_access_pairs"] == []
    assert f["p2p.all_access"] is True
    assert sorted(f["p2p.matrices"]) == ["bi_disabled", "bi_enabled", "lat_disabled", "lat_enabled",
                                         "uni_disabled", "uni_enabled"]
    assert f["p2p.matrices"]["uni_enabled"][1][0] == 265.05
    assert f["p2p.matrices"]["lat_enabled"][7] == [2.94, 2.94, 3.0, 2.95, 3.06, 2.96, 2.95, 2.48]  # GPU, not CPU, rows
    assert (f["p2p.uni_enabled_min_gbs"], f["p2p.uni_enabled_median_gbs"]) == (265.05, 274.05)
    assert (f["p2p.uni_disabled_min_gbs"], f["p2p.uni_disabled_median_gbs"]) == (10.65, 17.84)
    assert (f["p2p.bi_enabled_min_gbs"], f["p2p.bi_enabled_median_gbs"]) == (416.29, 420.23)
    assert (f["p2p.bi_disabled_min_gbs"], f["p2p.bi_disabled_median_gbs"]) == (8.47, 19.94)
    assert (f["p2p.lat_enabled_median_us"], f["p2p.lat_disabled_median_us"]) == (3.3, 24.5)
    assert f["p2p.enabled_speedup_median"] == 15.36
    assert f["p2p.enabled_slower_pairs"] == []
    assert f["p2p.enabled_slower"] is False


def test_p2p_enabled_slower_than_disabled_every_pair():
    f = parse(load(BROKEN))
    assert f["p2p.gpu_count"] == 6
    assert "p2p.access" not in f  # the paste starts at the bandwidth matrices
    assert sorted(f["p2p.matrices"]) == ["uni_disabled", "uni_enabled", "uni_enabled_reads"]
    assert f["p2p.matrices"]["uni_enabled"][4] == [9.65, 9.64, 9.65, 9.65, 921.29, 9.65]  # writes, not reads
    assert (f["p2p.uni_enabled_min_gbs"], f["p2p.uni_enabled_median_gbs"]) == (9.64, 9.96)
    assert (f["p2p.uni_disabled_min_gbs"], f["p2p.uni_disabled_median_gbs"]) == (20.1, 22.24)
    assert f["p2p.enabled_speedup_median"] == 0.45
    assert f["p2p.enabled_slower"] is True
    assert len(f["p2p.enabled_slower_pairs"]) == 30
    assert f["p2p.enabled_slower_pairs"][:3] == ["0->1", "0->2", "0->3"]
    assert "p2p.bi_enabled_min_gbs" not in f  # cut after the bidirectional header


def test_no_peer_access_fallback_is_not_called_slower():
    f = parse(load(NO_P2P))
    assert f["p2p.gpu_count"] == 8
    assert "p2p.devices" not in f
    assert f["p2p.all_access"] is False
    assert len(f["p2p.no_access_pairs"]) == 56
    assert (f["p2p.uni_enabled_min_gbs"], f["p2p.uni_enabled_median_gbs"]) == (18.41, 19.58)
    assert (f["p2p.uni_disabled_min_gbs"], f["p2p.uni_disabled_median_gbs"]) == (18.37, 19.55)
    assert f["p2p.enabled_speedup_median"] == 1.0
    # 5->0 "enabled" is 20.02 vs 20.04 disabled, and no pair can use P2P: the memcpy fallback, not broken P2P
    assert f["p2p.enabled_slower_pairs"] == []
    assert f["p2p.enabled_slower"] is False
    assert (f["p2p.lat_enabled_median_us"], f["p2p.lat_disabled_median_us"]) == (12.48, 12.41)


def test_can_access_lines_win_over_connectivity_matrix_and_cannot_is_read():
    text = ("Device=0 CAN Access Peer Device=1\nDevice=0 CANNOT Access Peer Device=2\n"
            "Device=1 CAN Access Peer Device=0\nDevice=1 CANNOT Access Peer Device=2\n"
            "Device=2 CANNOT Access Peer Device=0\nDevice=2 CANNOT Access Peer Device=1\n")
    f = parse(text)
    assert f["p2p.access"] == {"0->1": True, "0->2": False, "1->0": True, "1->2": False, "2->0": False, "2->1": False}
    assert f["p2p.no_access_pairs"] == ["0->2", "1->2", "2->0", "2->1"]
    assert "p2p.enabled_slower" not in f


@pytest.mark.parametrize("text", ["", "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n", "D\\D 0 1\n0 1 2\n"])
def test_empty_or_no_matrix(text):
    with pytest.raises(ParseError):
        parse(text)


def test_garbled_rows_stop_the_matrix():
    text = ("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n     0 800.0  22.0\n"
            "     5  22.0 800.0\n")
    f = parse(text)
    assert f["p2p.matrices"] == {"uni_disabled": [[800.0, 22.0]]}
    assert f["p2p.uni_disabled_min_gbs"] == 22.0


@pytest.mark.parametrize("path", files("p2p-bandwidth"), ids=lambda p: p.name)
def test_detected(path):
    assert parsers.detect(load(f"p2p-bandwidth/{path.name}")) == "p2p-bandwidth"


def test_a_pasted_transcript_command_names_the_kind():
    from troubleshooter.diagnosis.intake import tool_of
    assert tool_of("./p2pBandwidthLatencyTest") == "p2p-bandwidth"


def test_a_paste_cut_after_the_device_list_is_still_recognised():
    """Pasted outputs are often cut after the banner and device list: detected as this program, read as far as it goes."""
    text = load("p2p-bandwidth/a100-sxm4-80gb-8gpu-nvswitch-healthy-full.txt")
    head = "\n".join(text.split("\n")[1:5]) + "\n"  # banner and the first devices, as a cut paste shows them
    assert "Device: 0" in head
    assert parsers.detect(head) == "p2p-bandwidth"
