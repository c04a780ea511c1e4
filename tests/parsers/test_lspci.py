"""lspci parser: device lists and link status on real captures (exact values)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_grepped_device_list_names_the_connectx_model():
    text = load("lspci/grep-connect-one-connectx6-fenced.txt")
    assert parsers.detect(text) == "lspci"
    f = parsers.run("lspci", text)
    assert f["pci.devices"] == [{"bdf": "0e:00.0", "class": "Infiniband controller",
                                 "name": "Mellanox Technologies MT28908 Family [ConnectX-6]"}]
    assert f["pci.nic_models"] == ["ConnectX-6"] and f["pci.links"] == []


def test_x16_cards_trained_x8_are_width_degraded_not_speed():
    f = parsers.run("lspci", load("lspci/rtx2060-x16-cards-trained-x8-lnkcap-lnksta.txt"))
    assert [(ln["bdf"], ln["speed_gts"], ln["speed_max_gts"], ln["width"], ln["width_max"]) for ln in f["pci.links"]] == [
        ("01:00.0", 8, 8, 8, 16), ("02:00.0", 8, 8, 8, 16)]
    assert [d["bdf"] for d in f["pci.links_width_degraded"]] == ["01:00.0", "02:00.0"]
    assert f["pci.links_speed_below_max"] == []


def test_bare_addresses_idle_speed_and_width_below_max():
    f = parsers.run("lspci", load("lspci/mi50-bare-bdf-lnkcap-lnksta-idle-pcie1.txt"))
    assert f["pci.devices"] == []
    assert [d["bdf"] for d in f["pci.links_width_degraded"]] == ["31:00.0", "34:00.0", "4b:00.0", "4e:00.0"]
    assert f["pci.links_speed_below_max"][0] == {"bdf": "31:00.0", "name": "", "speed_gts": 2.5, "speed_max_gts": 16}


def test_acs_redirect_on_a_bridge_and_prose():
    f = parsers.run("lspci", "00:01.0 PCI bridge: Intel Corporation Device 09ab\n"
                             "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n")
    assert f["pci.acs_redirect"] == ["00:01.0"]
    with pytest.raises(ParseError):
        parsers.run("lspci", "the card sits in slot 2 at x8\n")
