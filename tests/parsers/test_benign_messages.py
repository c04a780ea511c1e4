"""benign-messages parser: warnings documented as harmless, read as such, on real captures (exact values)."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


@pytest.mark.parametrize("rel, start", [
    ("benign-messages/nvctdocs-groups-cannot-find-name-for-gid.txt", "groups: cannot find name for group ID 993: "),
    ("benign-messages/cocodocs-qemu-iommufd-ioas-map-pci-bar.txt", "IOMMU_IOAS_MAP failed: Bad address, PCI BAR?: "),
    ("benign-messages/gpud1147-h100pcie-fabric-state-not-supported.txt", "NVIDIA-H100-PCIe with unhealthy fabric state: "),
    ("benign-messages/aicr2641-gb300-idle-dcgm-imex-not-ready.txt", "IMEX daemon status is -3 (not READY): IMEX shares "),
    ("benign-messages/eksnma63-node-condition-dcgm-health-code-122-imex.txt", "DCGMHealthCode122: IMEX shares "),
])
def test_a_known_harmless_message_is_read_as_one(rel, start):
    text = load(rel)
    assert parsers.detect(text) == "benign-messages"  # a fallback: no tool's kind claims these pastes
    (msg,) = parsers.run("benign-messages", text)["benign.messages"]
    assert msg.startswith(start)


def test_the_fabric_state_of_a_baseboard_part_is_not_called_harmless():
    with pytest.raises(parsers.ParseError):
        parsers.run("benign-messages", "NVIDIA-H100-80GB-HBM3 with unhealthy fabric state: GPU GPU-1: state=Not Supported\n")


def test_a_harmless_message_beside_a_tools_output_leaves_the_paste_to_that_tool():
    text = load("benign-messages/nvctdocs-groups-cannot-find-name-for-gid.txt") + load("dev-nvidia/linux-box-ls-l-eight-gpus-and-nvidia-caps.txt")
    assert parsers.detect(text) == "dev-nvidia"


def test_the_hb_series_topology_warning_quoted_alone_is_harmless_and_in_its_dmesg_is_the_kernel_logs():
    text = load("benign-messages/azdocs-hb-sched-llc-sibling-not-on-same-node.txt")
    assert parsers.detect(text) == "dmesg"  # the whole boot log is read as one, with no cause drawn from it
    line = next(ln for ln in text.split("\n") if "llc-sibling" in ln).split("] ", 1)[1]
    assert parsers.detect(line + "\n") == "benign-messages"
    assert parsers.run("benign-messages", line)["benign.messages"][0].startswith("sched: CPU #4's llc-sibling CPU #0")
