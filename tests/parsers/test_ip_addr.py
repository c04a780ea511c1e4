"""ip-addr parser: ip addr / ip -br addr / ifconfig on real captures (exact values), and the inference that
reads NCCL_SOCKET_IFNAME against them."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.model.combine import socket_ifname_selects
from troubleshooter.parsers import ParseError


def parse(rel):
    return parsers.run("ip-addr", load(rel))


def test_gpu_node_ip_addr_with_ipoib_down_and_docker_bridge():
    f = parse("ip-addr/ip-addr-gpu-node-ib-down-docker0-transcript.txt")
    assert [(d["name"], d["state"], d["mtu"], d["link"], d["kind"], d["ipv4"]) for d in f["net.interfaces"]] == [
        ("lo", "UNKNOWN", 65536, "loopback", "loopback", ["127.0.0.1/8"]),
        ("enp97s0f0", "UP", 1500, "ether", "ethernet", ["10.30.23.25/24"]),
        ("enp97s0f1", "UP", 1500, "ether", "ethernet", []),
        ("ibp16s0", "DOWN", 4092, "infiniband", "infiniband", []),
        ("ibp130s0", "DOWN", 4092, "infiniband", "infiniband", []),
        ("ibs38", "DOWN", 4092, "infiniband", "infiniband", []),
        ("docker0", "DOWN", 1500, "ether", "bridge", ["172.17.0.1/16"])]
    assert f["net.ipv4_interfaces"] == ["enp97s0f0"]
    assert f["net.bridge_interfaces"] == ["docker0"]
    assert f["net.ipoib_interfaces"] == ["ibp16s0", "ibp130s0", "ibs38"]
    assert f["net.no_routable_interface"] is False


def test_ifconfig_with_the_ipoib_warning_line_at_column_zero():
    f = parse("ip-addr/ifconfig-hpc-login-eth-ipoib-lo.txt")
    assert [(d["name"], d["state"], d["mtu"], d["kind"], d["ipv4"]) for d in f["net.interfaces"]] == [
        ("eth0", "UP", 1500, "ethernet", ["10.66.10.34"]), ("eth1", "UP", 1500, "ethernet", ["192.38.95.134"]),
        ("ib0", "UP", 2044, "infiniband", ["10.66.80.44"]), ("lo", "UP", 65536, "loopback", ["127.0.0.1"])]
    assert f["net.interfaces"][2]["ipv6"] == ["fe80::22f1:7c03:c4:adfa", "fd23:711a:2e3c:49e5:22f1:7c03:c4:adfa"]
    assert f["net.routable_candidates"] == ["eth0", "eth1", "ib0"]


def test_ip_addr_then_brief_listing_merge_by_name():
    f = parse("ip-addr/ip-addr-and-brief-sandbox-eth0.txt")
    assert f["net.interface_names"] == ["lo", "ifb0", "ifb1", "eth0"]
    assert f["net.interfaces"][3]["ipv4"] == ["192.0.2.2/24"]
    assert f["net.interfaces"][3]["ipv6"] == ["fd00::2/64", "fe80::fc:ff:fe00:1/64"]
    assert [d["kind"] for d in f["net.interfaces"]] == ["loopback", "virtual", "virtual", "ethernet"]


def test_a_network_namespace_with_only_loopback_down():
    f = parse("ip-addr/ip-addr-and-brief-netns-loopback-only.txt")
    assert f["net.interface_names"] == ["lo"]
    assert f["net.interfaces"][0]["state"] == "DOWN"
    assert f["net.no_routable_interface"] is True


def test_nccl_socket_ifname_syntax():
    names = ["lo", "eth0", "eth1", "docker0", "ib0"]
    assert socket_ifname_selects("eth", names) == ["eth0", "eth1"]
    assert socket_ifname_selects("^docker,lo", names) == ["eth0", "eth1", "ib0"]
    assert socket_ifname_selects("=eth", names) == []
    assert socket_ifname_selects("bond0", names) == []


def test_prose_is_not_an_interface_listing():
    with pytest.raises(ParseError):
        parsers.run("ip-addr", "my interfaces are eth0 and ib0, both UP\n")
