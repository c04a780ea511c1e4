"""ethtool parser: an Ethernet (RoCE) port's speed against the modes it advertises, its link, and its physical-layer
error counters; on real captures (exact values)."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_a_gaudi_port_quoted_in_an_email_reply():
    text = load("ethtool/hblen-netdev-gaudi-eth0-100g-quoted-in-reply.txt")
    assert parsers.detect(text) == "ethtool"
    # the '> ' quote markers go; the link partner's modes are 'Not reported' (no partner figure)
    assert parsers.run("ethtool", text) == {
        "net.ethtool_links": {"eth0": {"speed_mbps": 100000, "duplex": "Full", "supported_max_mbps": 100000,
                                       "advertised_max_mbps": 100000}},
        "net.links_not_detected": [], "net.links_below_advertised": []}


def test_not_ethtool():
    with pytest.raises(parsers.ParseError):
        parsers.run("ethtool", "driver: mlx5_core\nversion: 5.8-1.1.2\nfirmware-version: 22.36.1010 (MT_0000000359)\n")


def test_ethtool_s_grepped_for_errors_on_a_lossy_100g_optic():
    text = load("ethtool/S-cx6dx-100g-lr4-crc-symbol-errors.txt")
    assert parsers.detect(text) == "ethtool"
    # the interface from the command above the counters; the per-lane counters are not in the list read
    assert parsers.run("ethtool", text) == {
        "net.phy_error_ports": ["eth5: rx_crc_errors_phy=13147323, rx_symbol_err_phy=13115284"]}


def test_ports_with_no_link():
    i40e = parsers.run("ethtool", load("ethtool/i40e-unsupported-sfp-link-down-with-module.txt"))
    assert i40e["net.links_not_detected"] == ["net03"]
    assert i40e["net.ethtool_links"]["net03"] == {"duplex": "Unknown! (255)", "link_detected": False,
                                                  "supported_max_mbps": 10000, "advertised_max_mbps": 10000}
    sw = parsers.run("ethtool", load("ethtool/mlxsw-200g-port-link-down-then-100g-2lanes.txt"))
    assert sw["net.links_not_detected"] == ["swp1"] and sw["net.ethtool_links"]["swp1"]["advertised_max_mbps"] == 200000


def test_a_cloud_vnic_with_no_link_modes_is_not_judged():
    facts = parsers.run("ethtool", load("ethtool/azure-mana-speed-unknown-link-yes.txt"))
    assert facts["net.ethtool_links"] == {"enP30832s1": {"duplex": "Full", "link_detected": True, "speed_mbps": 100}}
    assert facts["net.links_below_advertised"] == []


def test_outputs_this_reader_does_not_claim():
    # ENA's allowance counters (no _phy counter) and a grep of Speed lines alone: not claimed, said so
    for rel in ("ethtool/S-ena-aws-allowance-exceeded.txt", "ethtool/dgx-spark-cx7-200g-at-100g-grep-speed-doc.txt"):
        with pytest.raises(parsers.ParseError):
            parsers.run("ethtool", load(rel))


def test_grepped_counters_after_a_settings_block_in_one_paste():
    # two real captures as one terminal paste: a port's settings, then `ethtool -S X | grep ...` whose grepped lines
    # have no 'NIC statistics:' header; the command line says the counters start (they were dropped before)
    text = load("ethtool/i40e-unsupported-sfp-link-down-with-module.txt") + "\n" + \
        load("ethtool/S-cx6dx-100g-lr4-crc-symbol-errors.txt")
    facts = parsers.run("ethtool", text)
    assert facts["net.phy_error_ports"] == ["eth5: rx_crc_errors_phy=13147323, rx_symbol_err_phy=13115284"]
    assert facts["net.links_not_detected"] == ["net03"]
    assert facts["net.ethtool_links"]["net03"]["advertised_max_mbps"] == 10000
