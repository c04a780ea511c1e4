import pytest

from troubleshooter import parsers
from troubleshooter.parsers import ParseError
from tests.corpus import load


def parse(text):
    return parsers.run("cmdline", text)


def test_epyc_isolated_passthrough_mitigations_off():
    f = parse(load("cmdline/proc-cmdline-epyc9374f-1numa-amd_iommu-on-iommu-pt-mitigations-off-isolcpus.txt"))
    assert f["kernel.iommu_passthrough"] is True
    assert f["kernel.iommu"] == ["amd_iommu=on", "iommu=pt"]
    assert f["kernel.mitigations"] == "off"
    assert f["kernel.isolcpus"] == "0-15"
    assert f["kernel.nohz_full"] == "0-15"
    assert f["kernel.hugepages"] == 20
    assert "kernel.max_cstate" not in f  # no C-state limit on this box
    assert f["kernel.duplicate_params"] == []
    assert f["kernel.cmdline"].startswith("isolcpus=0-15 nohz_full=0-15")


def test_xeon_duplicates_and_invalid_intel_iommu_pt():
    f = parse(load("cmdline/proc-cmdline-xeon6354-2numa-intel_iommu-pt-typo-duplicate-isolcpus.txt"))
    # iommu=pt is absent: intel_iommu=pt does not turn passthrough on
    assert f["kernel.iommu_passthrough"] is False
    assert f["kernel.iommu"] == ["intel_iommu=pt"]  # last value wins, as in the kernel
    assert f["kernel.isolcpus"] == "managed_irq,domain,0,2,4,6,8,10,12,14"
    assert f["kernel.hugepages"] == 0
    assert f["kernel.duplicate_params"] == ["hugepages", "hugepagesz", "intel_iommu", "intel_pstate", "isolcpus", "nosoftlockup"]
    assert any("intel_iommu=pt" in w for w in f["kernel.cmdline_warnings"])


def test_dmesg_kernel_command_line():
    f = parse(load("dmesg/dmesg-kernel-cmdline-spectre-off-nopti-intel_iommu-on-dmar-enabled-rocm.txt"))
    assert f["kernel.params"]["BOOT_IMAGE"] == "/boot/vmlinuz-4.16.15-amd"
    assert f["kernel.params"]["spectre_v2"] == "off"
    assert f["kernel.iommu_passthrough"] is True
    assert f["kernel.mitigations"] == "auto"


def test_cstate_limits_take_the_lower():
    f = parse("BOOT_IMAGE=/vmlinuz ro intel_idle.max_cstate=0 processor.max_cstate=1 idle=poll")
    assert f["kernel.max_cstate"] == 0
    assert f["kernel.idle"] == "poll"


@pytest.mark.parametrize("text", ["", "   \n", "NUMA:\n  NUMA node(s):   1\n"])
def test_empty_or_not_a_cmdline(text):
    with pytest.raises(ParseError):
        parse(text)
