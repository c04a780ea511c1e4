import os
import shutil

import pytest
from hypothesis import given, settings, strategies as st

from troubleshooter.model import facts
from troubleshooter import parsers, sources
from troubleshooter.parsers import ParseError
from troubleshooter.sources import Params
from troubleshooter.probe.targets import ExecTarget, LocalTarget

REAL = os.environ.get("TS_REQUIRE_REAL") == "1"

# Real output of the container-markers probe on this project's dev machine (a Firecracker VM with a
# stray /.dockerenv; SANDBOX.md), and inside `bwrap --unshare-pid` on it.
HOST = """#@ container-markers 1
uid=0
pid1_comm=process_api
pid1_cgroup=/ 
self_cgroup=/ /process_api/68be2191fcccb48b33e52fc2295c34e7 
pid_ns=pid:[4026531836]
mnt_ns=mnt:[4026531832]
pid1_mnt_ns=-
dockerenv=1
containerenv=0
singularity_d=0
etc_enroot=0
run_systemd_container=-
env_container=
env_markers=
detect_virt=docker
root_mount=/ ext4 /dev/vda
"""
BWRAP = HOST.replace("pid1_comm=process_api", "pid1_comm=bwrap").replace("pid:[4026531836]", "pid:[4026532181]")


def parse(text):
    return parsers.run("container", text)


def test_host_with_stray_dockerenv_is_not_a_container():
    f = parse(HOST)
    assert f["container.inside"] is False
    assert f["container.runtime"] == "none"
    assert f["container.pid1"] == "process_api"
    assert f["container.pid_ns_initial"] is True
    assert f["container.detect_virt"] == "docker"
    assert any("/.dockerenv" in r for r in f["container.ignored"])
    assert any("systemd-detect-virt" in r for r in f["container.ignored"])


def test_bwrap():
    f = parse(BWRAP)
    assert f["container.inside"] is True and f["container.runtime"] == "bubblewrap"
    assert f["container.evidence"][0] == "PID 1 is bwrap (bubblewrap with --unshare-pid)"


@pytest.mark.parametrize("change,runtime", [
    ({"pid_ns": "pid:[4026532500]", "pid1_comm": "python"}, "docker"),  # new pid ns + /.dockerenv
    ({"pid1_cgroup": "/kubepods/burstable/pod1/cri-containerd-abc "}, "kubernetes"),
    ({"self_cgroup": "/system.slice/docker-0123456789abcdef.scope "}, "docker"),
    ({"containerenv": "1", "dockerenv": "0"}, "podman"),
    ({"env_markers": "KUBERNETES_SERVICE_HOST "}, "kubernetes"),
    ({"singularity_d": "1", "dockerenv": "0"}, "apptainer"),
    ({"env_container": "lxc"}, "lxc"),
    ({"root_mount": "/enroot-data/user-1000/pyxis_77 ext4 /dev/nvme0n1p1"}, "enroot"),
    ({"detect_virt": "systemd-nspawn"}, "systemd-nspawn"),
    ({"pid_ns": "pid:[4026532500]", "dockerenv": "0", "detect_virt": "none"}, "unknown"),
])
def test_runtimes(change, runtime):
    lines = dict(ln.split("=", 1) for ln in HOST.splitlines()[1:])
    lines.update(change)
    f = parse("#@ container-markers 1\n" + "\n".join(f"{k}={v}" for k, v in lines.items()))
    assert f["container.inside"] is True
    assert f["container.runtime"] == runtime


def test_weak_markers_alone_are_not_enough():
    lines = dict(ln.split("=", 1) for ln in HOST.splitlines()[1:])
    lines.update({"env_markers": "ENROOT_CACHE_PATH ENROOT_DATA_PATH ", "etc_enroot": "1", "pid1_mnt_ns": "mnt:[1]",
                  "root_mount": "/ overlay overlay"})
    f = parse("#@ container-markers 1\n" + "\n".join(f"{k}={v}" for k, v in lines.items()))
    assert f["container.inside"] is False
    assert len(f["container.ignored"]) == 6


@pytest.mark.parametrize("text", ["", " \n", "uid=0\n", "#@ container-markers 1\n", "NCCL_DEBUG=INFO\nPATH=/bin\n"])
def test_empty_or_other(text):
    with pytest.raises(ParseError):
        parse(text)


def test_detect():
    assert parsers.detect(HOST) == "container"
    assert parsers.detect(BWRAP) == "container"


def test_declared_facts():
    declared = parsers.get("container").facts
    for text in (HOST, BWRAP):
        for name in parse(text):
            assert name in declared and facts.is_known_name(name)


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_random_text_only_parse_error(text):
    for t in (text, "#@ container-markers 1\npid_ns=" + text + "\npid1_comm=x\ndockerenv=1\n"):
        try:
            parsers.get("container").func(t)
        except ParseError:
            pass


def _markers(target):
    ev = target.run(sources.get("container-markers"), Params())
    assert ev.ok, ev.describe()
    assert parsers.detect(ev.text) == "container"
    return parsers.run("container", ev.text)


def test_source_on_this_machine():
    f = _markers(LocalTarget())
    if os.path.exists("/.dockerenv") and open("/proc/1/cgroup").read().strip().endswith("::/"):
        # the SANDBOX.md trap: /.dockerenv on a host whose PID namespace is the initial one
        assert f["container.inside"] is False and f["container.runtime"] == "none"
    assert f["container.uid"] == os.getuid()


@pytest.mark.bwrap
def test_source_inside_bwrap():
    if shutil.which("bwrap") is None:
        if REAL:
            pytest.fail("bwrap is not installed and TS_REQUIRE_REAL=1 (apt-get install -y bubblewrap)")
        pytest.skip("bubblewrap (bwrap) is not installed: the container-boundary test needs it")
    target = ExecTarget(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
                         "--clearenv", "--setenv", "PATH", "/usr/bin:/bin"])
    f = _markers(target)
    assert f["container.inside"] is True
    assert f["container.runtime"] == "bubblewrap"
    assert f["container.pid1"] == "bwrap"
    assert f["container.pid_ns_initial"] is False
