"""ibstat and ibdev2netdev parsers, on every corpus file of their kinds (tests/data/ibstat)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus import files, load
from troubleshooter.model import facts
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def parse(text):
    return parsers.run("ibstat", text)


def test_h20_cx7_ndr_400_truncated_third_ca():
    f = parse(load("ibstat/ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt"))
    assert f["ib.device_names"] == ["mlx5_0", "mlx5_1", "mlx5_2"]
    assert f["ib.devices"][0] == {"name": "mlx5_0", "ports": [1], "ca_type": "MT4129", "fw": "28.43.2026"}
    assert f["ib.ports"][0] == {"device": "mlx5_0", "port": 1, "state": "Active", "phys_state": "LinkUp",
                                "rate_gbps": 400, "link_layer": "InfiniBand"}
    # the third CA was cut after "Physical state": what is there is read, the rate is not invented
    assert f["ib.ports"][2] == {"device": "mlx5_2", "port": 1, "state": "Active", "phys_state": "LinkUp"}
    assert f["ib.active_ports"] == 3
    assert f["ib.down_ports"] == []
    assert f["ib.rates_gbps"] == [400]
    assert f["ib.min_active_rate_gbps"] == 400
    assert f["ib.link_layers"] == ["InfiniBand"]


def test_mixed_cx6_hdr_with_disabled_port_at_rate_10():
    f = parse(load("ibstat/ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt"))
    assert f["ib.device_names"] == ["mlx5_0", "mlx5_1", "mlx5_2"]
    assert [d["ca_type"] for d in f["ib.devices"]] == ["MT4123", "MT4123", "MT4117"]
    assert f["ib.devices"][2]["fw"] == "14.32.1010"
    assert f["ib.ports"][1] == {"device": "mlx5_1", "port": 1, "state": "Down", "phys_state": "Disabled",
                                "rate_gbps": 10, "link_layer": "InfiniBand"}
    assert f["ib.down_ports"] == ["mlx5_1:1"]
    assert f["ib.active_ports"] == 2
    # the Down port's "Rate: 10" is not an active rate; the truncated CX-4 Lx has no rate line
    assert f["ib.rates_gbps"] == [200]
    assert f["ib.min_active_rate_gbps"] == 200


def test_bluefield3_bonded_roce():
    f = parse(load("ibstat/ibstat-bluefield3-mt41692-mlx5_bond-roce-rate200.txt"))
    assert f["ib.device_names"] == ["mlx5_bond_0", "mlx5_bond_1", "mlx5_bond_2"]
    assert f["ib.devices"][2] == {"name": "mlx5_bond_2", "ports": [], "ca_type": "MT41692", "fw": "32.39.3804"}
    assert f["ib.active_ports"] == 2
    assert f["ib.link_layers"] == ["Ethernet"]
    assert f["ib.rates_gbps"] == [200]


def test_cx6dx_ethernet_100_after_log_banner():
    f = parse(load("ibstat/ibstat-cx6dx-mt4125-ethernet-rate100-l2fwd-pcie-gen3.txt"))
    assert f["ib.device_names"] == ["mlx5_0", "mlx5_1"]
    assert f["ib.active_ports"] == 2
    assert f["ib.rates_gbps"] == [100]
    assert f["ib.link_layers"] == ["Ethernet"]
    assert {d["fw"] for d in f["ib.devices"]} == {"22.32.2004"}


def test_connectx3_fdr_tab_indented():
    f = parse(load("ibstat/ibstat-connectx3-mlx4-fdr56.txt"))
    assert f["ib.devices"] == [{"name": "mlx4_0", "ports": [1], "ca_type": "MT4099", "fw": "2.42.5000"}]
    assert f["ib.min_active_rate_gbps"] == 56
    assert f["ib.link_layers"] == ["InfiniBand"]


def test_two_port_card_without_indentation():
    text = ("CA 'mlx4_0'\nCA type: MT4099\nNumber of ports: 2\nFirmware version: 2.35.5100\nPort 1:\n"
            "State: Active\nPhysical state: LinkUp\nRate: 56\nLink layer: InfiniBand\nPort 2:\nState: Down\n"
            "Physical state: Polling\nRate: 10\nLink layer: InfiniBand\n")
    f = parse(text)
    assert f["ib.devices"][0]["ports"] == [1, 2]
    assert f["ib.down_ports"] == ["mlx4_0:2"]
    assert f["ib.ports"][1]["phys_state"] == "Polling"


@pytest.mark.parametrize("text", ["", "  \n", "Architecture: x86_64\nCPU(s): 8\n"])
def test_empty_or_not_ibstat(text):
    with pytest.raises(ParseError):
        parse(text)


def test_ibdev2netdev_column_t_with_comments():
    f = parsers.run("ibdev2netdev", load("ibstat/ibdev2netdev-h100-node-8x-cx7-ib-2x-cx6-eth-annotated.txt"))
    m = f["ib.netdev_map"]
    assert len(m) == 12
    assert m["mlx5_0:1"] == {"netdev": "ibp26s0", "state": "Down"}
    assert m["mlx5_1:1"] == {"netdev": "enp27s0f0np0", "state": "Up"}
    assert m["mlx5_11:1"] == {"netdev": "ibp220s0", "state": "Down"}
    assert sorted(k for k, v in m.items() if v["state"] == "Up") == ["mlx5_1:1", "mlx5_7:1"]


@pytest.mark.parametrize("text", ["", "mlx5_0 port 1\n"])
def test_ibdev2netdev_empty_fails(text):
    with pytest.raises(ParseError):
        parsers.run("ibdev2netdev", text)


def _kind_of(name):
    if name.startswith("ibdev2netdev"):
        return "ibdev2netdev"
    if name.startswith("ibv_devinfo"):
        return "ibv-devinfo"
    return "ibstat"


@pytest.mark.parametrize("path", files("ibstat"), ids=lambda p: p.name)
def test_detect(path):
    assert parsers.detect(load(f"ibstat/{path.name}")) == _kind_of(path.name)


@pytest.mark.parametrize("kind", ["ibstat", "ibdev2netdev"])
@pytest.mark.parametrize("path", files("ibstat"), ids=lambda p: p.name)
def test_only_declared_facts(kind, path):
    if _kind_of(path.name) != kind:
        return
    out = parsers.run(kind, load(f"ibstat/{path.name}"))
    declared = set(parsers.get(kind).facts)
    assert set(out) <= declared
    for name in out:
        assert facts.is_known_name(name)


_fragments = st.sampled_from(["CA 'mlx5_0'", "\tCA type: MT4129", "\tPort 1:", "\t\tState: Active", "\t\tRate: ",
                              "\t\tRate: 4e400", "Link layer: ", "mlx5_0 port 1 ==> ib0 (Up)", "Port x:", ":", "\x00"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_fragments, st.text(max_size=40)), max_size=30))
def test_random_text_only_parse_error(parts):
    text = "\n".join(parts)
    for kind in ("ibstat", "ibdev2netdev"):
        try:
            parsers.get(kind).func(text)
        except ParseError:
            pass


def test_ibstat_with_a_ca_and_port_argument_prints_ca_colon_and_unindented_keys():
    text = load("ibstat/ibstat-ca-port-argument-mlx4-port2-down-polling.txt")
    assert parsers.detect(text) == "ibstat"
    f = parsers.run("ibstat", text)
    assert f["ib.ports"] == [{"device": "mlx4_0", "port": 2, "state": "Down", "phys_state": "Polling", "rate_gbps": 10}]
    assert f["ib.down_ports"] == ["mlx4_0:2"]


def test_a_port_block_without_its_ca_line():
    text = load("ibstat/port-block-without-ca-line-active-polling-roce.txt")
    assert parsers.detect(text) == "ibstat"
    f = parsers.run("ibstat", text)
    assert f["ib.ports"] == [{"device": "(not shown)", "port": 1, "state": "Active", "phys_state": "Polling",
                              "rate_gbps": 100, "link_layer": "Ethernet"}]


def test_ibstat_giving_up_on_a_device_without_an_ib_port():
    f = parsers.run("ibstat", load("ibstat/azhpcimages213-ibpanic-mlx5-an0-accelnet.txt"))
    assert f == {"ib.ibstat_failed_devices": ["mlx5_an0"]}
