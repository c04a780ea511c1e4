"""nvidia-ctk cdi generate's log (real captures): what it found, and which of what it could not locate a compute node
can do without."""

import pytest

from tests.corpus import DATA, load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def parse(name):
    text = load("nvidia-ctk-cdi/" + name)
    assert parsers.detect(text) == "nvidia-ctk-cdi"
    return parsers.run("nvidia-ctk-cdi", text)


def test_graphics_libraries_not_located_on_a_575_host():
    f = parse("buildx3295-575-egl-wayland-allocator-not-located.txt")
    assert f["cdi_generate.mode"] == "nvml" and f["cdi_generate.driver_version"] == "575.57.08"
    assert f["cdi_generate.devices"] == ["/dev/nvidia0", "/dev/dri/card1", "/dev/dri/renderD128", "/dev/nvidia-modeset",
                                         "/dev/nvidia-uvm-tools", "/dev/nvidia-uvm", "/dev/nvidiactl"]
    assert f["cdi_generate.not_located"] == f["cdi_generate.optional_missing"] == [
        "libnvidia-egl-gbm.so.*.*", "libnvidia-egl-wayland.so.*.*", "libnvidia-allocator.so.575.57.08",
        "libnvidia-vulkan-producer.so.575.57.08", "nvidia_drv.so"]
    assert f["cdi_generate.compute_missing"] == [] and "cdi_generate.errors" not in f


def test_dri_symlinks_and_daemon_sockets_and_the_empty_hook_pattern():
    f = parse("nvct50-525-dri-symlinks-sockets-not-located.txt")
    assert f["cdi_generate.driver_version"] == "525.78.01" and "cdi_generate.mode" not in f
    assert f["cdi_generate.not_located"] == [  # "Failed to locate : pattern  not found" names nothing: left out
        "/dev/dri/by-path/pci-0000:01:00.0-card", "/dev/dri/by-path/pci-0000:01:00.0-render",
        "/var/run/nvidia-persistenced/socket", "/var/run/nvidia-fabricmanager/socket", "/tmp/nvidia-mps"]
    assert f["cdi_generate.optional_missing"] == f["cdi_generate.not_located"] and f["cdi_generate.compute_missing"] == []


def test_wsl_mode():
    f = parse("nvct972-wsl-mode-sandboxutils-ignored.txt")
    assert f == {"cdi_generate.mode": "wsl", "cdi_generate.devices": ["/dev/dxg"],
                 "cdi_generate.not_located": ["libnvidia-sandboxutils.so.1"],
                 "cdi_generate.optional_missing": ["libnvidia-sandboxutils.so.1"], "cdi_generate.compute_missing": []}


def test_journal_key_value_form_and_compute_libraries():
    # the key=value form a journal shows (the toolkit's refresh service), with the escaped newline logrus writes
    text = ('nvidia-ctk[1774]: time="2025-01-01T00:00:00Z" level=info msg="Auto-detected mode as \'nvml\'"\n'
            'nvidia-ctk[1774]: time="2025-01-01T00:00:00Z" level=warning msg="Could not locate libcuda.so.*.*: pattern '
            'libcuda.so.*.* not found\\nlibcuda.so.*.*: not found"\n')
    assert parsers.detect(text) == "nvidia-ctk-cdi"
    f = parsers.run("nvidia-ctk-cdi", text)
    assert f["cdi_generate.compute_missing"] == ["libcuda.so.*.*"] and f["cdi_generate.optional_missing"] == []
    with pytest.raises(ParseError):
        parsers.run("nvidia-ctk-cdi", "INFO[0000] something else entirely\n")


def test_read_and_no_cause_drawn():
    from troubleshooter.diagnosis.pasted import EvidenceFacts
    from troubleshooter.service.diagnose import diagnose

    ef = EvidenceFacts.from_specs([str(DATA / "nvidia-ctk-cdi" / "buildx3295-575-egl-wayland-allocator-not-located.txt")])
    assert [f.kind for f in ef.files] == ["nvidia-ctk-cdi"]
    walk, _ = diagnose("below-reference", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
    assert walk.conclusions == []
