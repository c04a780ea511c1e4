"""mlxlink parser: a ConnectX port's state and speed against what it has enabled and its cable supports, the
firmware's troubleshooting verdict, the BER counters; on real captures (exact values)."""

from __future__ import annotations

from tests.corpus import load
from troubleshooter import parsers


def test_a_connectx7_at_ndr_with_its_module_info_is_healthy():
    text = load("mlxlink/csegpu1-cx7-show-mo-ib-ndr-4x-healthy-module-info.txt")
    assert parsers.detect(text) == "mlxlink"
    facts = parsers.run("mlxlink", text)
    assert facts["mlxlink.ports"] == [{
        "port": "mt4129_pciconf0", "state": "Active", "physical_state": "LinkUp", "speed": "IB-NDR", "width": "4x",
        "fec": "Ethernet_Consortium_LL_50G_RS_FEC_PLR -(272,257+1)", "recommendation": "No issue was observed",
        "firmware": "28.46.3048", "enabled": ["NDR", "HDR", "EDR", "FDR", "SDR"],
        "cable": ["NDR", "HDR", "EDR", "FDR", "SDR"], "status_opcode": 0}]
    assert facts["mlxlink.below_capable"] == [] and facts["mlxlink.not_active"] == []
    assert facts["mlxlink.status_problems"] == [] and "mlxlink.error_ports" not in facts  # no counters asked


def test_eight_hdr100_ports_in_a_loop_and_their_counters_grepped():
    facts = parsers.run("mlxlink", load("mlxlink/brev-a100-eight-cx6-hdr-2x-ber-monitor-refused-counters-grep.txt"))
    ports = facts["mlxlink.ports"]
    assert [p["port"] for p in ports] == [f"mt4123_pciconf{i}" for i in range(8)] + [f"mlx5_{i}" for i in range(8)]
    # HDR at 2x lanes is HDR100 by design: width is not judged, and HDR is the fastest both allow
    assert {p["speed"] for p in ports[:8]} == {"IB-HDR"} and {p["width"] for p in ports[:8]} == {"2x"}
    assert facts["mlxlink.below_capable"] == []
    # the counters: 0 effective errors and a BER of 15E-255 (none) after FEC; the raw BER before FEC is not judged
    assert ports[8] == {"port": "mlx5_0", "fec": "RS-FEC - (544,514) + PLR", "effective_errors": 0.0,
                        "effective_ber": 1.5e-254}
    assert facts["mlxlink.error_ports"] == []
    # the same refusal for each of the eight devices: one line, with how many more
    assert facts["mlxlink.refused"] == [
        'mt4123_pciconf0 (and 7 more): "--show_ber_monitor" option is not supported for HCA']


def test_ethernet_ports_and_their_extended_speed_lists():
    facts = parsers.run("mlxlink", load("mlxlink/rdmanotes-grep-speed-ethernet-100g-ext-lists.txt"))
    # a grep of three lines, named by the command above it: 100G where the cable supports 100G at most
    assert facts["mlxlink.ports"] == [{"port": "mlx5_1", "speed": "100G",
                                       "enabled": ["100G_2X", "100G_4X", "50G_1X", "50G_2X", "40G", "25G", "10G", "1G"],
                                       "cable": ["100G_4X", "50G_2X", "40G", "25G", "10G", "1G"]}]
    assert facts["mlxlink.below_capable"] == []
    sonic = parsers.run("mlxlink", load("mlxlink/sonic-spectrum-port-25gbe-healthy.txt"))
    assert sonic["mlxlink.ports"][0]["speed"] == "25GbE" and sonic["mlxlink.below_capable"] == []
    assert sonic["mlxlink.ports"][0]["recommendation"] == "No issue was observed."


def test_not_mlxlink():
    import pytest

    with pytest.raises(parsers.ParseError):
        parsers.run("mlxlink", "Settings for eth0:\n\tSpeed: 1000Mb/s\n")


def test_the_firmware_says_the_cable_speed_is_not_enabled():
    facts = parsers.run("mlxlink", load("mlxlink/cx5-ib-sdr-cable-speed-not-enabled.txt"))
    assert facts["mlxlink.status_problems"] == ["mlx5_0: Status Opcode 25: Cable speed not enabled"]
    assert facts["mlxlink.ports"][0]["speed"] == "IB-SDR"
    # SDR is all the port has enabled and all the cable reports: not 'below capable', the opcode says it
    assert facts["mlxlink.below_capable"] == [] and facts["mlxlink.cable_limited"] == []


def test_a_200g_port_held_at_100g_by_its_cable_and_an_edr_card_whose_port_enables_fdr_only():
    facts = parsers.run("mlxlink", load("mlxlink/cx7-200g-card-at-100g-dac-aerial-doc.txt"))
    assert facts["mlxlink.cable_limited"] == [
        "0000:01:00.0: 100G; the port is enabled up to 200G_2X, the cable supports 100G_4X at most"]
    assert facts["mlxlink.below_capable"] == []
    # the ConnectX-4's port enables FDR at most and the cable supports FDR: mlxlink alone cannot say the card runs EDR
    cx4 = parsers.run("mlxlink", load("mlxlink/cx4-edr-at-fdr-cable-limited.txt"))
    assert cx4["mlxlink.ports"][0]["speed"] == "IB-FDR"
    assert cx4["mlxlink.below_capable"] == [] and cx4["mlxlink.cable_limited"] == []


def test_mlxlink_json():
    text = load("mlxlink/json-cx7-400g-dr4-mft4341.txt")
    assert parsers.detect(text) == "mlxlink"
    facts = parsers.run("mlxlink", text)
    port = facts["mlxlink.ports"][0]
    assert (port["speed"], port["state"], port["width"], port["status_opcode"]) == ("400G", "Active", "4x", 0)
    assert port["cable"] == ["400G_4X", "200G_2X", "100G_1X"] and port["enabled"][0] == "400G_4X"
    # raw BER 5E-10 before FEC is not an error; effective 15E-255 after it is none
    assert facts["mlxlink.error_ports"] == [] and facts["mlxlink.link_down_max"] == 0
    assert parsers.run("mlxlink", load("mlxlink/json-cx7-400g-eye-fec-histogram-serdes.txt"))["mlxlink.ports"][0][
        "speed"] == "400G"


def test_an_nvlink_port_of_a_b200_and_a_bluefield_with_counters():
    gce = parsers.run("mlxlink", load("mlxlink/gce-b200-nvlink-xdr.txt"))
    assert gce["mlxlink.ports"][0]["port"] == "netir10497_00.cc.00_gpu7"
    assert gce["mlxlink.ports"][0]["speed"] == "NVLink-XDR"
    assert "mlxlink.below_capable" not in gce  # the cable's speeds are N/A: nothing to judge against
    bf3 = parsers.run("mlxlink", load("mlxlink/bf3-100g-module-counters-healthy.txt"))
    assert bf3["mlxlink.error_ports"] == [] and bf3["mlxlink.link_down_max"] == 0
    assert bf3["mlxlink.ports"][0]["speed"] == "100G"
