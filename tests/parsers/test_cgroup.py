"""cgroup: bpftool cgroup show/tree and /proc/PID/cgroup, from real outputs with exact values."""

from __future__ import annotations

import pytest

from tests.corpus import files, load
from troubleshooter import parsers
from troubleshooter.diagnosis import intake

SLICE = "cgroup/pytorch190132-bpftool-user-slice-sd-devices.txt"
PROC = "cgroup/pytorch190132-proc-cgroup-docker-user-service.txt"
TREE = "cgroup/aks-node-bpftool-tree-service-programs-healthy.txt"


def parse(text: str) -> dict:
    return parsers.run("cgroup", text)


def test_a_device_filter_on_a_user_slice() -> None:
    f = parse(load(SLICE))
    assert f["cgroup.programs"] == [{"cgroup": "/user.slice/user-1009.slice", "type": "cgroup_device",
                                     "flags": "multi", "name": "sd_devices"}]
    assert f["cgroup.device_filters"] == f["cgroup.device_filter_slices"] == ["/user.slice/user-1009.slice"]


def test_services_own_filters_are_not_a_slices() -> None:
    f = parse(load(TREE))
    assert f["cgroup.device_filters"] == ["/system.slice/systemd-networkd.service"]
    assert f["cgroup.device_filter_slices"] == []
    assert [p["name"] for p in f["cgroup.programs"]] == ["sd_devices", "sd_fw_ingress", "sd_fw_egress"]


def test_the_runtime_under_a_user_slice() -> None:
    f = parse(load(PROC))
    assert f == {"cgroup.path": "/user.slice/user-1009.slice/user@1009.service/app.slice/docker.service",
                 "cgroup.runtime_in_user_slice": True}
    assert parse("0::/system.slice/docker.service\n")["cgroup.runtime_in_user_slice"] is False


@pytest.mark.parametrize("path", files("cgroup"), ids=lambda p: p.name)
def test_detected(path) -> None:
    assert parsers.detect(load(f"cgroup/{path.name}")) == "cgroup"


def test_bpftool_cgroup_is_routed_and_other_text_refused() -> None:
    assert intake.tool_of("sudo bpftool cgroup tree") == "cgroup"
    with pytest.raises(parsers.ParseError):
        parse("12:devices:/user.slice\n11:memory:/user.slice\n")  # cgroup v1's per-controller lines: not read here


@pytest.mark.parametrize("name, allowed, rules", [
    # the container that lost its GPU under kubelet's static CPU manager: the defaults, no major 195
    ("mattshma150-devices-list-gpu-rules-dropped.txt", False, 12),
    # a GPU container before a daemon-reload, behind a root prompt and its cat: c 195:255 rw, c 195:7 rw
    ("nvct192-devices-list-before-daemon-reload-nvidia-rw.txt", True, 15),
])
def test_a_cgroup_v1_devices_list(name, allowed, rules):
    text = load(f"cgroup/{name}")
    assert parsers.detect(text) == "cgroup"
    f = parsers.run("cgroup", text)
    assert (f["cgroup.nvidia_devices_allowed"], len(f["cgroup.device_rules"])) == (allowed, rules)
    assert f["cgroup.device_rules"][:2] == (["c 1:5 rwm", "c 1:3 rwm"] if not allowed else ["c 136:* rwm", "c 10:200 rwm"])
    assert "cgroup.path" not in f and "cgroup.device_filters" not in f
