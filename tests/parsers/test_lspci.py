"""lspci: device listings, -vvv blocks, and the bare ACSCtl / LnkSta lines people paste (real captures)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def parse(name):
    return parsers.run("lspci", load(f"lspci/{name}"))


def test_acs_source_validation_only_is_not_a_redirect():
    f = parse("acsctl-grep-srcvalid-amd-switch-nccl606.txt")
    assert f["pci.acs_lines"] == 9
    assert f["pci.acs_redirect_count"] == 0
    assert f["pci.acs_srcvalid_only"] == 4
    assert f["pci.acs_redirect_ports"] == []


def test_acs_redirect_on_some_ports():
    f = parse("acsctl-grep-redirect-on-bios-nccl523-cut.txt")
    assert (f["pci.acs_lines"], f["pci.acs_redirect_count"], f["pci.acs_srcvalid_only"]) == (11, 5, 2)


def test_tab_after_the_colon():
    f = parse("acsctl-plx-tab-redirect-nccl304.txt")
    assert (f["pci.acs_lines"], f["pci.acs_redirect_count"]) == (1, 1)


def test_plx_bridges_cut_mid_line():
    f = parse("plx-bridges-grep-nccl19-cut.txt")
    assert [d["bdf"] for d in f["pci.devices"]][:3] == ["03:00.0", "04:08.0", "04:10.0"]
    assert len(f["pci.devices"]) == 9
    assert f["pci.devices"][0]["class"] == "PCI bridge"
    assert f["pci.nic_models"] == [] and f["pci.gpu_names"] == []
    assert "pci.acs_lines" not in f  # nothing said about ACS: unknown, not "off"


def test_connectx6_dx_model():
    f = parse("cx6dx-grep-net-3fs283.txt")
    assert f["pci.nic_models"] == ["ConnectX-6 Dx"]
    assert f["pci.devices"][1] == {"bdf": "86:00.1", "class": "Ethernet controller",
                                   "name": "Mellanox Technologies MT2892 Family [ConnectX-6 Dx]"}


def test_gpu_from_vvv_nn_block():
    f = parse("a100-vvv-nn-hwloc653-cut.txt")
    assert f["pci.gpu_names"] == ["A100 SXM4 40GB"]
    assert f["pci.devices"] == [{"bdf": "da:00.0", "class": "3D controller",
                                 "name": "NVIDIA Corporation GA100 [A100 SXM4 40GB] [10de:20b0] (rev a1)"}]
    assert f["pci.links"] == []


def test_link_lines_without_a_device_line():
    f = parse("lnkcap-lnksta-4090-riser-jan183.txt")
    assert f["pci.links"] == [{"speed": "2.5GT/s", "width": 16, "downgraded": True,
                               "cap_speed": "16GT/s", "cap_width": 16}]


def test_detected_among_other_kinds():
    assert parsers.detect(load("lspci/acsctl-grep-srcvalid-amd-switch-nccl606.txt")) == "lspci"
    assert parsers.detect(load("lspci/cx6dx-grep-net-3fs283.txt")) == "lspci"


def test_not_lspci():
    with pytest.raises(ParseError):
        parsers.run("lspci", "hello\nworld\n")
