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
    assert f["pci.acs_redirect"] == []


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
    assert f["pci.links"] == [{"bdf": "", "name": "", "speed_gts": 2.5, "width": 16, "speed_max_gts": 16, "width_max": 16}]
    # a lower speed alone is an idle GPU saving power: listed, not a degraded link
    assert f["pci.links_width_degraded"] == [] and len(f["pci.links_speed_below_max"]) == 1


def test_detected_among_other_kinds():
    assert parsers.detect(load("lspci/acsctl-grep-srcvalid-amd-switch-nccl606.txt")) == "lspci"
    assert parsers.detect(load("lspci/cx6dx-grep-net-3fs283.txt")) == "lspci"


def test_not_lspci():
    with pytest.raises(ParseError):
        parsers.run("lspci", "hello\nworld\n")

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


def test_a_gpu_whose_config_space_reads_all_ones_has_fallen_off():
    # lyulyul/shine-cluster#171: all four functions of 1c:00 at "(rev ff)", the other three GPUs at rev a1
    f = parse("shinecluster171-quadro-rtx-6000-1c00-rev-ff-fallen-off.txt")
    assert [d["bdf"] for d in f["pci.unreadable"]] == ["1c:00.0", "1c:00.1", "1c:00.2", "1c:00.3"]
    assert f["pci.gpus_unreadable"] == ["1c:00.0"]  # the GPU function, not its audio/USB functions


def test_unknown_header_type_7f_on_a_device_that_is_not_a_gpu():
    f = parse("dell-laptop-lspci-v-ricoh-xd-rev-ff-unknown-header-7f.txt")
    assert f["pci.unreadable"] == [{"bdf": "03:09.4", "name": "Ricoh Co Ltd xD-Picture Card Controller (rev ff) (prog-if ff)"}]
    assert f["pci.gpus_unreadable"] == []
    # a healthy listing: nothing unreadable
    assert parse("acsctl-grep-redirect-on-bios-nccl523-cut.txt").get("pci.gpus_unreadable", []) == []


def test_connectx3_pro_virtual_function_is_an_infiniband_adapter():
    """Azure/azhpc-images#51: the model of '[ConnectX-3/ConnectX-3 Pro Virtual Function]' is the pair's first, and a
    'Network controller' of Mellanox is an adapter an RDMA driver should serve (Ethernet controllers are not)."""
    f = parsers.run("lspci", load("lspci/azhpcimages51-nc24rsv3-v100-connectx3-pro-vf.txt"))
    assert f["pci.nic_models"] == ["ConnectX-3"]
    assert f["pci.ib_nics"] == [{"bdf": "86fc:00:02.0", "class": "Network controller", "model": "ConnectX-3"}]
    assert f["pci.gpu_names"] == ["Tesla V100 PCIe 16GB"]
    dx = parsers.run("lspci", load("lspci/cx6dx-grep-net-3fs283.txt"))
    assert dx["pci.nic_models"] == ["ConnectX-6 Dx"] and dx["pci.ib_nics"] == []
