"""cdi-spec parser: the device nodes an NVIDIA CDI spec gives containers (real specs, exact values)."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_a_spec_written_before_the_uvm_node_existed():
    text = load("cdi-spec/nvct50-spec-generated-before-uvm-nvidiactl-only.txt")
    assert parsers.detect(text) == "cdi-spec"
    assert parsers.run("cdi-spec", text) == {"cdi.spec_device_nodes": ["/dev/nvidiactl"], "cdi.spec_lacks_uvm": True}


def test_a_healthy_spec_and_a_wsl_spec():
    ok = parsers.run("cdi-spec", load("cdi-spec/docker-docs-g4dn-buildkit-spec-with-uvm.txt"))
    assert ok == {"cdi.spec_device_nodes": ["/dev/nvidia-modeset", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                                            "/dev/nvidiactl"], "cdi.spec_lacks_uvm": False}
    # WSL's GPU is /dev/dxg: no nvidiactl, nothing to say about UVM
    assert parsers.run("cdi-spec", load("cdi-spec/wsl2-spec-dxg-only.txt")) == {"cdi.spec_device_nodes": ["/dev/dxg"]}


def test_a_spec_cut_inside_its_node_list_says_nothing_about_uvm():
    text = "cdiVersion: 0.5.0\ncontainerEdits:\n  deviceNodes:\n  - path: /dev/nvidiactl\n"
    assert parsers.run("cdi-spec", text) == {"cdi.spec_device_nodes": ["/dev/nvidiactl"]}
    with pytest.raises(parsers.ParseError):
        parsers.run("cdi-spec", "containerEdits:\n  deviceNodes:\n  - path: /dev/nvidiactl\n")
