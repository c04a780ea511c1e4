"""ib-sysfs: the fixed script's output, parsed; run for real on this machine (which has no RDMA)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from troubleshooter.model import facts
from troubleshooter import parsers
from troubleshooter.model.evidence import Status
from troubleshooter.parsers import ParseError
from troubleshooter.parsers.ib_sysfs import ABSENT, DEV_MARKER, SYSFS_MARKER
from troubleshooter.sources.base import Params

# sysfs values in the kernel's format (state "4: ACTIVE", phys_state "5: LinkUp", rate "400 Gb/sec (4X NDR)")
H100_NODE = f"""{SYSFS_MARKER}
/sys/class/infiniband/mlx5_0/fw_ver:28.39.2048
/sys/class/infiniband/mlx5_0/hca_type:MT4129
/sys/class/infiniband/mlx5_0/board_id:MT_0000000838
/sys/class/infiniband/mlx5_1/fw_ver:28.39.2048
/sys/class/infiniband/mlx5_1/hca_type:MT4129
/sys/class/infiniband/mlx5_1/board_id:MT_0000000838
/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE
/sys/class/infiniband/mlx5_1/ports/1/state:1: DOWN
/sys/class/infiniband/mlx5_0/ports/1/phys_state:5: LinkUp
/sys/class/infiniband/mlx5_1/ports/1/phys_state:3: Disabled
/sys/class/infiniband/mlx5_0/ports/1/rate:400 Gb/sec (4X NDR)
/sys/class/infiniband/mlx5_1/ports/1/rate:10 Gb/sec (4X SDR)
/sys/class/infiniband/mlx5_0/ports/1/link_layer:InfiniBand
/sys/class/infiniband/mlx5_1/ports/1/link_layer:InfiniBand
{DEV_MARKER}
rdma_cm
umad0
umad1
uverbs0
uverbs1
"""

CONTAINER_WITHOUT_DEVICES = f"""{SYSFS_MARKER}
/sys/class/infiniband/mlx5_0/hca_type:MT4129
/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE
/sys/class/infiniband/mlx5_0/ports/1/rate:200 Gb/sec (2X NDR)
/sys/class/infiniband/mlx5_0/ports/1/link_layer:Ethernet
{DEV_MARKER}
{ABSENT}
"""

NOTHING = f"{SYSFS_MARKER}\n{ABSENT}\n{DEV_MARKER}\n{ABSENT}\n"


def parse(text):
    return parsers.run("ib-sysfs", text)


def test_host_with_one_active_ndr_port_and_one_disabled():
    f = parse(H100_NODE)
    assert f["ib.sysfs_present"] is True
    assert f["ib.dev_infiniband_visible"] is True
    assert f["ib.uverbs_devices"] == ["uverbs0", "uverbs1"]
    assert f["ib.devices"] == [
        {"name": "mlx5_0", "ports": [1], "fw": "28.39.2048", "ca_type": "MT4129", "board_id": "MT_0000000838"},
        {"name": "mlx5_1", "ports": [1], "fw": "28.39.2048", "ca_type": "MT4129", "board_id": "MT_0000000838"},
    ]
    assert f["ib.ports"] == [
        {"device": "mlx5_0", "port": 1, "state": "Active", "phys_state": "LinkUp", "rate_gbps": 400, "link_layer": "InfiniBand"},
        {"device": "mlx5_1", "port": 1, "state": "Down", "phys_state": "Disabled", "rate_gbps": 10, "link_layer": "InfiniBand"},
    ]
    assert f["ib.active_ports"] == 1
    assert f["ib.down_ports"] == ["mlx5_1:1"]
    assert f["ib.rates_gbps"] == [400]
    assert f["ib.min_active_rate_gbps"] == 400


def test_container_sees_sysfs_but_no_verbs_devices():
    f = parse(CONTAINER_WITHOUT_DEVICES)
    assert f["ib.sysfs_present"] is True
    assert f["ib.active_ports"] == 1
    assert f["ib.link_layers"] == ["Ethernet"]
    assert f["ib.dev_infiniband_visible"] is False
    assert f["ib.uverbs_devices"] == []


def test_nothing_is_a_fact_not_an_error():
    f = parse(NOTHING)
    assert f["ib.sysfs_present"] is False
    assert f["ib.dev_infiniband_visible"] is False
    assert f["ib.active_ports"] == 0
    assert f["ib.devices"] == [] and f["ib.ports"] == [] and f["ib.uverbs_devices"] == []
    assert "ib.min_active_rate_gbps" not in f


def test_plain_grep_paste_without_markers():
    f = parse("/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE\n/sys/class/infiniband/mlx5_0/ports/1/rate:100 Gb/sec (4X EDR)\n")
    assert f["ib.sysfs_present"] is True
    assert f["ib.min_active_rate_gbps"] == 100
    assert "ib.dev_infiniband_visible" not in f  # not shown: unknown


def test_real_run_on_this_machine():
    import troubleshooter.sources.fabric  # noqa: F401
    from troubleshooter.sources.base import SOURCES
    from troubleshooter.probe.targets import LocalTarget

    ev = LocalTarget().run(SOURCES["ib-sysfs"], Params())
    assert ev.status is Status.OK, ev.reason
    f = parse(ev.text)
    import os

    assert f["ib.sysfs_present"] is os.path.isdir("/sys/class/infiniband")
    assert f["ib.dev_infiniband_visible"] is (os.path.isdir("/dev/infiniband") and bool(os.listdir("/dev/infiniband")))
    if not os.path.isdir("/sys/class/infiniband"):
        assert f["ib.active_ports"] == 0


def test_script_markers_match_the_parser():
    from troubleshooter.sources.fabric import IB_SYSFS_SCRIPT

    assert f"echo '{SYSFS_MARKER}'" in IB_SYSFS_SCRIPT
    assert f"echo '{DEV_MARKER}'" in IB_SYSFS_SCRIPT
    assert f"echo '{ABSENT}'" in IB_SYSFS_SCRIPT
    assert ">" not in IB_SYSFS_SCRIPT.replace("2>/dev/null", "")  # reads only, writes nothing


@pytest.mark.parametrize("text", ["", " \n", "mlx5_0\nuverbs0\n", "/sys/class/net/eth0/speed:1000\n"])
def test_empty_or_unrelated_fails(text):
    with pytest.raises(ParseError):
        parse(text)


@pytest.mark.parametrize("text", [H100_NODE, CONTAINER_WITHOUT_DEVICES, NOTHING])
def test_detect(text):
    assert parsers.detect(text) == "ib-sysfs"


@pytest.mark.parametrize("text", [H100_NODE, CONTAINER_WITHOUT_DEVICES, NOTHING])
def test_only_declared_facts(text):
    out = parse(text)
    assert set(out) <= set(parsers.get("ib-sysfs").facts)
    assert all(facts.is_known_name(n) for n in out)


_fragments = st.sampled_from([SYSFS_MARKER, DEV_MARKER, ABSENT, "/sys/class/infiniband/x/ports/1/rate:",
                              "/sys/class/infiniband/x/ports/9/state:4: ACTIVE", "/sys/class/infiniband/x/fw_ver:",
                              "/sys/class/infiniband/x/ports/1/rate:nan Gb/sec", "uverbs0"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_fragments, st.text(max_size=40)), max_size=30))
def test_random_text_only_parse_error(parts):
    try:
        parsers.get("ib-sysfs").func("\n".join(parts))
    except ParseError:
        pass
