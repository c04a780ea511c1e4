"""docker-info parser on a real `docker info` (Docker 28 with the NVIDIA Container Toolkit) and grep'd lines."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_full_docker_info_with_the_nvidia_runtime_and_systemd_cgroups():
    text = load("docker-info/ctk-1.17.6-docker-28-systemd-cgroup2-nvidia-runtime.txt")
    assert parsers.detect(text) == "docker-info"
    assert parsers.run("docker-info", text) == {
        "docker.server_version": "28.0.0-rc.1", "docker.cgroup_driver": "systemd", "docker.cgroup_version": "2",
        "docker.runtimes": ["io.containerd.runc.v2", "nvidia", "runc"], "docker.nvidia_runtime": True,
        "docker.default_runtime": "runc"}


def test_the_lines_a_grep_kept():
    f = parsers.run("docker-info", " Runtimes: io.containerd.runc.v2 runc\n Default Runtime: runc\n")
    assert (f["docker.nvidia_runtime"], f["docker.default_runtime"]) == (False, "runc")
    with pytest.raises(ParseError):
        parsers.run("docker-info", "Containers: 3\n")
