"""cdi parser: container engines refusing CDI devices, on real captures (tests/data/cdi)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_a_spec_naming_a_device_node_the_host_no_longer_has():
    text = load("cdi/nvct885-podman-failed-to-stat-cdi-host-device-renderd129.txt")
    assert parsers.detect(text) == "cdi"
    assert parsers.run("cdi", text) == {"cdi.missing_host_devices": ["/dev/dri/renderD129"]}


def test_no_spec_for_the_name_asked_for():
    # podman's words beside the host's working nvidia-smi, and containerd's inside a journal line's escaped quotes
    assert parsers.run("cdi", load("cdi/nixpkgs420638-podman-unresolvable-cdi-devices-gpu-all.txt")) == {
        "cdi.unresolvable_devices": ["nvidia.com/gpu=all"], "cdi.unresolvable_plain": True}
    kata = load("cdi/kata12549-containerd-cold-plug-unresolvable-cdi-pgpu-vfio1.txt")
    assert parsers.detect(kata) == "cdi"
    assert parsers.run("cdi", kata) == {"cdi.unresolvable_devices": ["nvidia.com/pgpu=vfio1"], "cdi.unresolvable_plain": False}


@pytest.mark.parametrize("text", ["", "Error: setting up CDI devices: no such file or directory\n",
                                  "failed to stat /dev/nvidia0: no such file or directory\n"])
def test_other_text_is_refused(text):
    with pytest.raises(ParseError):
        parsers.run("cdi", text)
