"""ibv_devinfo parser, and how the ibv-devinfo source's failure on a machine without RDMA is classified."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus import load
from troubleshooter.model import facts
from troubleshooter import parsers
from troubleshooter.model.evidence import Evidence, Status
from troubleshooter.parsers import ParseError
from troubleshooter.probe.runner import classify

CORPUS = "ibstat/ibv_devinfo-cx7-4129-port-down-in-container-h100-roce.txt"


def parse(text):
    return parsers.run("ibv-devinfo", text)


def test_cx7_port_down_in_container_truncated_second_hca():
    f = parse(load(CORPUS))
    assert f["ib.device_names"] == ["mlx5_0", "mlx5_1"]
    assert f["ib.devices"][0] == {"name": "mlx5_0", "ports": [1], "transport": "InfiniBand", "fw": "28.39.2048",
                                  "vendor_part_id": 4129, "board_id": "MT_0000000838"}
    # the paste ends inside mlx5_1's device attributes: no port block, nothing invented
    assert f["ib.devices"][1]["ports"] == []
    assert f["ib.ports"] == [{"device": "mlx5_0", "port": 1, "state": "Down", "active_mtu": 4096,
                              "link_layer": "InfiniBand"}]
    assert f["ib.active_ports"] == 0
    assert f["ib.down_ports"] == ["mlx5_0:1"]
    assert f["ib.rates_gbps"] == []
    assert "ib.min_active_rate_gbps" not in f  # plain ibv_devinfo has no rate
    assert f["ib.vendor_part_ids"] == [4129]
    assert f["ib.link_layers"] == ["InfiniBand"]


def test_verbose_rate_from_width_and_speed():
    # port attributes as `ibv_devinfo -d rocep1s0f0 -v` prints them on a DGX Spark (ConnectX-7, 2 lanes)
    text = ("hca_id:\trocep1s0f0\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t28.45.4028\n"
            "\tvendor_part_id:\t\t\t4129\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n"
            "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tphys_state:\t\tLINK_UP (5)\n"
            "\t\t\tactive_width:\t\t2X (16)\n\t\t\tactive_speed:\t\t100.0 Gbps (128)\n"
            "\t\t\tlink_layer:\t\tEthernet\n\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:0000:0000:0000:0001, RoCE v1\n")
    f = parse(text)
    assert f["ib.ports"] == [{"device": "rocep1s0f0", "port": 1, "state": "Active", "phys_state": "LinkUp",
                              "rate_gbps": 200, "link_layer": "Ethernet"}]
    assert f["ib.min_active_rate_gbps"] == 200
    assert f["ib.active_ports"] == 1


def test_old_pastebin_list_rendering_link_layer_ib():
    text = ("- hca_id: qib0\n- transport: InfiniBand (0)\n- fw_ver: 0.0.0\n- vendor_part_id: 29474\n"
            "- board_id: InfiniPath_QLE7340\n- phys_port_cnt: 1\n- port: 1\n- state: PORT_ACTIVE (4)\n"
            "- max_mtu: 4096 (5)\n- active_mtu: 2048 (4)\n- link_layer: IB\n")
    f = parse(text)
    assert f["ib.ports"][0]["link_layer"] == "InfiniBand"
    assert f["ib.ports"][0]["state"] == "Active"
    assert f["ib.vendor_part_ids"] == [29474]


@pytest.mark.parametrize("text", ["", "\n\n", "Failed to get IB devices list: Function not implemented\n",
                                  "No IB devices found\n"])
def test_empty_or_no_devices_fails(text):
    with pytest.raises(ParseError):
        parse(text)


def test_function_not_implemented_is_a_clear_error_state():
    # what ibv_devinfo does on a machine without RDMA support (see SANDBOX.md): exit 255, one stderr line
    ev = Evidence("ibv-devinfo", Status.OK, stdout=b"", stderr=b"Failed to get IB devices list: Function not implemented\n",
                  rc=255, argv=["ibv_devinfo", "-v"])
    ev = classify(ev, (0,))
    assert ev.status is Status.ERROR
    assert ev.reason == "exit 255: Failed to get IB devices list: Function not implemented"


def test_source_declared():
    import troubleshooter.sources.fabric  # noqa: F401
    from troubleshooter.sources.base import SOURCES

    src = SOURCES["ibv-devinfo"]
    assert src.parser == "ibv-devinfo" and src.needs == "ibv_devinfo" and src.package == "ibverbs-utils"
    assert SOURCES["ibstat"].package == "infiniband-diags"


def test_detect():
    assert parsers.detect(load(CORPUS)) == "ibv-devinfo"


def test_only_declared_facts():
    out = parse(load(CORPUS))
    assert set(out) <= set(parsers.get("ibv-devinfo").facts)
    assert all(facts.is_known_name(n) for n in out)


_fragments = st.sampled_from(["hca_id: mlx5_0", "\tport:\t1", "\t\tstate: PORT_ACTIVE (4)", "active_width: 4X (2)",
                              "active_speed: 1e308 Gbps (1)", "active_width: 99999999999X", "vendor_part_id: x",
                              "- ", "port: 0", "link_layer: IB"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_fragments, st.text(max_size=40)), max_size=30))
def test_random_text_only_parse_error(parts):
    try:
        parsers.get("ibv-devinfo").func("\n".join(parts))
    except ParseError:
        pass


def _grepped(rel: str, pattern: str) -> str:
    """A real capture filtered the way `ibv_devinfo | grep -E PATTERN` filters it (whole lines kept, in order)."""
    import re

    return "\n".join(ln for ln in load(rel).split("\n") if re.search(pattern, ln)) + "\n"


def test_grep_that_keeps_state_and_link_layer_without_the_port_lines():
    # `ibv_devinfo | grep -E 'hca_id|state|link_layer'`: the port's lines stay, its "port:" line goes. Read as the
    # device's port 1, not as a device with no port (which said 0 active ports where one was Down, another Active)
    f = parse(_grepped(CORPUS, r"hca_id|state|link_layer"))
    assert f["ib.ports"] == [{"device": "mlx5_0", "port": 1, "state": "Down", "link_layer": "InfiniBand"}]
    assert f["ib.down_ports"] == ["mlx5_0:1"] and f["ib.active_ports"] == 0
    assert f["ib.devices"][1] == {"name": "mlx5_1", "ports": []}  # the capture ends before mlx5_1's port


def test_grep_that_keeps_the_port_lines_reads_as_the_whole_output():
    verbose = "ibstat/ibv_devinfo-v-cx6-4123-roce-25g-x4-gid-table-v2-ipv4-index3.txt"
    whole = parse(load(verbose))
    f = parse(_grepped(verbose, r"hca_id|port:|state|link_layer"))
    keep = ("device", "port", "state", "link_layer")
    assert [{k: v for k, v in p.items() if k in keep} for p in f["ib.ports"]] == \
        [{k: v for k, v in p.items() if k in keep} for p in whole["ib.ports"]]


def test_grep_without_port_lines_claims_nothing_about_ports():
    # `ibv_devinfo | grep -e hca_id -e fw_ver`: the devices, and no "0 active ports, none down" invented
    f = parse(_grepped(CORPUS, r"hca_id|fw_ver"))
    assert f["ib.device_names"] == ["mlx5_0", "mlx5_1"]
    for name in ("ib.ports", "ib.active_ports", "ib.down_ports", "ib.link_layers", "ib.rates_gbps"):
        assert name not in f


def test_grep_of_one_device_named_on_the_command_line():
    # `ibv_devinfo -d mlx5_1 | grep link_layer` on the jazz hosts (openucx/ucx#2346, through pdsh and dshbak -c)
    from pathlib import Path

    from troubleshooter.diagnosis.pasted import EvidenceFacts

    paste = Path(__file__).resolve().parents[1] / "data" / "pdsh" / "ucx2346-dshbak-c-jazz-24-hosts-ofed-info-link-layer.txt"
    files = [f for f in EvidenceFacts.from_specs([str(paste)]).files if f.kind == "ibv-devinfo"]
    assert files[0].facts["ib.ports"] == [{"device": "mlx5_1", "port": 1, "link_layer": "Ethernet"}]
    assert "ib.active_ports" not in files[0].facts  # the state was not kept: how many are up is unknown
    assert files[1].facts["ib.vendor_part_ids"] == [4119] and "ib.ports" not in files[1].facts
    # the link layer a grep of another field did not show is not taken back by it
    facts = EvidenceFacts.from_specs([str(paste)])
    assert facts.lookup("ib.link_layers") == ["Ethernet"]
