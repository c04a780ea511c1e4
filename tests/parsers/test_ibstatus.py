"""ibstatus parser: exact ib.* facts (the ones ibstat gives) on real captures, and its failure modes."""

import pytest

from tests.corpus import files, load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def parse(text):
    return parsers.run("ibstatus", text)


def test_four_ib_edr_ports_all_active_tab_indented():
    f = parse(load("ibstatus/ibstatus-4x-cx-ib-edr-100-active-tab-indented-ucx-doc.txt"))
    assert f["ib.device_names"] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    assert f["ib.devices"] == [{"name": f"mlx5_{i}", "ports": [1]} for i in range(4)]
    assert f["ib.ports"] == [{"device": f"mlx5_{i}", "port": 1, "state": "Active", "phys_state": "LinkUp",
                              "rate_gbps": 100, "link_layer": "InfiniBand"} for i in range(4)]
    assert f["ib.active_ports"] == 4
    assert f["ib.down_ports"] == []
    assert f["ib.rates_gbps"] == [100]
    assert f["ib.min_active_rate_gbps"] == 100
    assert f["ib.rates_mixed"] is False
    assert f["ib.link_layers"] == ["InfiniBand"]


def test_roce_edr_after_topo_legend_truncated_third_block():
    f = parse(load("ibstatus/ibstatus-roce-100g-edr-ethernet-active-nccl1866-truncated.txt"))
    assert f["ib.device_names"] == ["mlx5_0", "mlx5_1", "mlx5_2"]
    assert f["ib.ports"][0] == {"device": "mlx5_0", "port": 1, "state": "Active", "phys_state": "LinkUp",
                                "rate_gbps": 100, "link_layer": "Ethernet"}
    # the paste ends after mlx5_2's default gid: the port is there, nothing else is invented
    assert f["ib.ports"][2] == {"device": "mlx5_2", "port": 1}
    assert f["ib.active_ports"] == 2
    assert f["ib.down_ports"] == []  # a port whose state is not shown is not called down
    assert f["ib.rates_gbps"] == [100]
    assert f["ib.link_layers"] == ["Ethernet"]


def test_cx6_ethernet_both_ports_down_disabled_rate_still_200():
    f = parse(load("ibstatus/ibstatus-cx6-mt4123-hdr200-ethernet-both-down-disabled.txt"))
    assert f["ib.ports"] == [{"device": d, "port": 1, "state": "Down", "phys_state": "Disabled", "rate_gbps": 200,
                              "link_layer": "Ethernet"} for d in ("mlx5_0", "mlx5_1")]
    assert f["ib.active_ports"] == 0
    assert f["ib.down_ports"] == ["mlx5_0:1", "mlx5_1:1"]
    assert f["ib.rates_gbps"] == []  # only Active ports count
    assert "ib.min_active_rate_gbps" not in f


def test_same_facts_as_ibstat_for_the_same_ports():
    """The ibstat capture printed just before ibstatus in the same blog (abridged: GUID/LID lines left out) gives
    the same ports."""
    ibstatus = parse(load("ibstatus/ibstatus-cx6-mt4123-hdr200-ethernet-both-down-disabled.txt"))
    ibstat_text = ("CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tFirmware version: 20.35.2000\n\tPort 1:\n"
                   "\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tRate: 200\n\t\tLink layer: Ethernet\n"
                   "CA 'mlx5_1'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tFirmware version: 20.35.2000\n\tPort 1:\n"
                   "\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tRate: 200\n\t\tLink layer: Ethernet\n")
    ibstat = parsers.run("ibstat", ibstat_text)
    for name in ("ib.ports", "ib.down_ports", "ib.active_ports", "ib.rates_gbps", "ib.link_layers", "ib.device_names"):
        assert ibstatus[name] == ibstat[name], name


def test_mixed_rates_compare_like_with_like():
    text = ("Infiniband device 'mlx5_0' port 1 status:\n\tstate:\t\t 4: ACTIVE\n\trate:\t\t 400 Gb/sec (4X NDR)\n"
            "\tlink_layer:\t InfiniBand\n\n"
            "Infiniband device 'mlx5_1' port 1 status:\n\tstate:\t\t 4: ACTIVE\n\trate:\t\t 200 Gb/sec (4X HDR)\n"
            "\tlink_layer:\t InfiniBand\n\n"
            "Infiniband device 'mlx5_2' port 1 status:\n\tstate:\t\t 4: ACTIVE\n\trate:\t\t 25 Gb/sec (1X EDR)\n"
            "\tlink_layer:\t Ethernet\n")
    f = parse(text)
    assert f["ib.rates_gbps"] == [25, 200, 400]
    assert f["ib.min_active_rate_gbps"] == 25
    assert f["ib.rates_mixed"] is True  # the two InfiniBand rails differ; the Ethernet NIC is not compared
    f = parse(text.replace("200 Gb/sec (4X HDR)", "400 Gb/sec (4X NDR)"))
    assert f["ib.rates_mixed"] is False


@pytest.mark.parametrize("text,message", [
    ("", "empty input"),
    ("Fatal error:  device 'mlx5_9': sys files not found (/sys/class/infiniband/mlx5_9/ports)\n", "ibstatus failed"),
    ("Fatal error:  No device\n", "ibstatus failed"),  # not the script's words: no fact from it
    ("CA 'mlx5_0'\n\tCA type: MT4129\n", "not ibstatus output"),
])
def test_empty_error_only_or_other_tool(text, message):
    with pytest.raises(ParseError, match=message):
        parse(text)


@pytest.mark.parametrize("path", files("ibstatus"), ids=lambda p: p.name)
def test_detected_as_ibstatus(path):
    assert parsers.detect(load(f"ibstatus/{path.name}")) == "ibstatus"


def test_a_pasted_transcript_command_names_the_kind():
    from troubleshooter.diagnosis.intake import tool_of
    assert tool_of("sudo ibstatus") == "ibstatus"
    assert tool_of("ibstat") == "ibstat"


def test_no_rdma_device_in_sysfs_is_a_fact_not_an_error():
    text = load("ibstatus/trinity219-fatal-sys-files-not-found.txt")
    f = parsers.run("ibstatus", text)
    assert (f["ib.sysfs_present"], f["ib.active_ports"], f["ib.ports"]) == (False, 0, [])


def test_no_devices_is_no_rdma_class_directory():
    # rdma-core's ibstatus: 'cd /sys/class/infiniband 2>/dev/null || fatal No devices'; oneflow#9115's node with
    # openibd stopped printed it (and an older script's 'exit -1' refused by dash) after ibv_devinfo's ENOSYS
    text = load("transcripts/oneflow9115-ibv-devinfo-enosys-ibstatus-no-devices-openibd-stopped.txt")
    f = parsers.run("ibstatus", text)
    assert (f["ib.sysfs_present"], f["ib.active_ports"], f["ib.ports"]) == (False, 0, [])
    assert parsers.run("verbs-errors", text)["rdma.uverbs_missing"] is True
