"""gpud: GPUd's component states, Xid events and NVML errors, from real pastes with exact values."""

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_the_fabric_manager_component_unhealthy_with_its_data():
    text = load("gpud/gpud1151-states-fabric-manager-found-not-active.txt")
    assert parsers.detect(text) == "gpud"
    assert parsers.run("gpud", text) == {
        "gpud.unhealthy": ["accelerator-nvidia-fabric-manager: NVIDIA-H100-80GB-HBM3 checked fabric state; fabric "
                           "manager found but not active"],
        "gpud.components": ["accelerator-nvidia-fabric-manager"],
        "gpud.fabric_manager_active": False, "gpud.fabric_state_supported": True}


def test_an_old_build_calling_it_healthy_while_its_data_says_inactive():
    f = parsers.run("gpud", load("gpud/gpud1151-states-old-build-healthy-fm-inactive-data.txt"))
    assert f["gpud.unhealthy"] == [] and f["gpud.fabric_manager_active"] is False


def test_an_xid_event_and_nvmls_gpu_lost():
    assert parsers.run("gpud", load("gpud/gpud604-xid79-event.txt")) == {"gpud.unhealthy": [], "gpud.xid_codes": [79]}
    assert parsers.run("gpud", load("gpud/gpud604-remapped-rows-error-gpu-is-lost.txt")) == {
        "gpud.unhealthy": [], "gpud.gpu_lost": True}


@pytest.mark.parametrize("text", ["", "hello\n", "XID is a word\n"])
def test_other_text_is_refused(text):
    with pytest.raises(parsers.ParseError):
        parsers.run("gpud", text)
