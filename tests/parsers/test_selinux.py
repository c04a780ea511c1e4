"""SELinux denials: AVC records and setroubleshoot's alerts, from real GPU-container threads."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_the_nvidia_docker_wrapper_refused_the_docker_binary():
    f = parsers.run("selinux", load("selinux/nvdocker814-avc-nvidia-docker-entrypoint-docker-xserver-t.txt"))
    line = "nvidia-docker {entrypoint} on /usr/bin/docker (file), xserver_t -> container_runtime_exec_t"
    assert f == {"selinux.denials": [line], "selinux.gpu_container_denials": [line], "selinux.enforcing": True}


def test_sealerts_detail_of_a_container_refused_dev_nvidia0():
    f = parsers.run("selinux", load("selinux/selinuxpolicy1695-sealert-container-t-dev-nvidia0.txt"))
    line = "python {?} on /dev/nvidia0 (chr_file), container_t -> xserver_misc_device_t"
    assert f == {"selinux.denials": [line], "selinux.gpu_container_denials": [line], "selinux.enforcing": True}


def test_no_denial_is_no_selinux_output():
    with pytest.raises(ParseError):
        parsers.run("selinux", "Enforcing\n")
