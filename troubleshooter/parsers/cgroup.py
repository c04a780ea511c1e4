"""Control groups: ``bpftool cgroup show PATH`` / ``bpftool cgroup tree`` (the eBPF programs cgroup v2 uses for
device access), cgroup v1's ``devices.list`` (the devices a container may open: ``c 195:255 rw`` is
/dev/nvidiactl, major 195 the NVIDIA GPUs) and ``/proc/PID/cgroup`` (where a process, a container runtime above
all, runs).

Real samples (pytorch/pytorch#190132, a CI runner whose containers saw no GPU; tests/data/cgroup)::

    # bpftool cgroup show /sys/fs/cgroup/user.slice/user-1009.slice
    ID       AttachType      AttachFlags     Name
    20       cgroup_device   multi           sd_devices

    0::/user.slice/user-1009.slice/user@1009.service/app.slice/docker.service

What it means here: cgroup v2 has no devices controller; systemd enforces a unit's ``DevicePolicy=`` /
``DeviceAllow=`` with a ``cgroup_device`` program named ``sd_devices``, and every process below that cgroup is held
to it. On a service unit (systemd-journald.service, polkit.service) that is routine. On a slice it covers everything
started below it: a container runtime running as a user service under ``user-UID.slice`` (rootless or a user's
docker.service) inherits the slice's filter, and a filter without ``/dev/nvidia*`` leaves NVML with no device
("No devices were found") in every container it starts, while other users' shells see the GPUs.

>>> f = parse("$ bpftool cgroup show /sys/fs/cgroup/user.slice/user-1009.slice\\nID  AttachType  AttachFlags  Name\\n"
...           "20  cgroup_device  multi  sd_devices\\n")
>>> f["cgroup.device_filters"], f["cgroup.device_filter_slices"]
(['/user.slice/user-1009.slice'], ['/user.slice/user-1009.slice'])
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("cgroup.device_filters", "list", "", "cgroups (paths under /sys/fs/cgroup) with a cgroup_device eBPF program attached (bpftool cgroup show/tree): systemd's DevicePolicy, or a container's device rules"),
    ("cgroup.device_filter_slices", "list", "", "the device-filtered cgroups that are systemd slices (*.slice): a filter there holds every unit and container started below it"),
    ("cgroup.programs", "list", "", "each attached program: {cgroup, type, flags, name} (at most 256)"),
    ("cgroup.device_rules", "list", "", "a cgroup v1 devices.list as printed ('c 195:255 rw', 'c *:* m'): the devices the cgroup's processes may open (at most 256)"),
    ("cgroup.nvidia_devices_allowed", "bool", "", "that devices.list lets its processes read and write an NVIDIA GPU device (character major 195: /dev/nvidia0.., /dev/nvidiactl), or every device ('a *:* rwm'); false when it lists rules and none does: NVML in that container gets EPERM on /dev/nvidiactl ('Failed to initialize NVML: Unknown Error')"),
    ("cgroup.path", "string", "", "the process's cgroup v2 path (/proc/PID/cgroup's '0::' line)"),
    ("cgroup.runtime_in_user_slice", "bool", "", "the process is a container runtime (docker/containerd/podman service) running under a user's slice (user-UID.slice), not system.slice"),
]

_SHOW = re.compile(r"bpftool\s+(?:-\w+\s+)*cgroup\s+(?:show|list)\s+(\S+)")
_TREE_PATH = re.compile(r"^\s*(/sys/fs/cgroup\S*)\s*$")
_HEADER = re.compile(r"^\s*(?:CgroupPath\s*$|ID\s+AttachType\s+AttachFlags\s+Name\s*$)")
# (the flags are the first of two words, or none: taken whole, not tried at each length under the name's \S+)
_PROG = re.compile(r"^\s*(\d+)\s+(cgroup_\w+|sock_ops|sk_\w+)\s++(multi|override|(?=\S++\s+\S)\S++|)\s*(?:(\S+)\s*)?$")
_PROC_V2 = re.compile(r"^\s*0::(/\S*)\s*$")
# cgroup v1 devices.list: "TYPE MAJOR:MINOR ACCESS" (a: all, c: char, b: block; * for any; r, w, m)
_DEV_RULE = re.compile(r"^\s*([abc]) (\*|\d{1,10}):(\*|\d{1,10}) ([rwm]{1,3})\s*$")
_DEV_RULE_ANY = re.compile(r"^[^\S\n]*[abc] (?:\*|\d{1,10}):(?:\*|\d{1,10}) [rwm]{1,3}[^\S\n]*$", re.MULTILINE)
_NVIDIA_MAJOR = "195"  # /dev/nvidia0.. and /dev/nvidiactl (Documentation/admin-guide/devices.txt); uvm's is dynamic
_RUNTIME = re.compile(r"(?:^|/)(?:docker|containerd|podman|crio|cri-o)[\w@.-]*\.service(?:/|$)")
MAX_PROGS = 256


def _detect(text: str) -> float:
    head = text[:65536]
    if _DEV_RULE_ANY.search(head):  # (detection runs on every paste: the lines are counted only where one is a rule)
        lines = [ln for ln in head.split("\n") if ln.strip() and not ln.lstrip().startswith(("#", "$"))]
        rules = sum(1 for ln in lines if _DEV_RULE.match(ln))
        if rules >= 3 and rules >= 0.6 * len(lines):
            return 0.8  # a cgroup v1 devices.list (its command line and a prompt aside)
    if re.search(r"^[^\S\n]*ID\s+AttachType\s+AttachFlags\s+Name\s*$", head, re.MULTILINE):
        return 0.95
    if re.search(r"^[^\S\n]*0::/\S*\s*$", head, re.MULTILINE) and not re.search(r"^[^\S\n]*\d+:[a-z_,=]+:/", head, re.MULTILINE):
        return 0.7  # /proc/PID/cgroup on a cgroup v2 host (v1 lists one line per controller: not read here)
    return 0.0


def _rel(path: str) -> str:
    return path.removeprefix("/sys/fs/cgroup").rstrip("/") or "/"


@parser(
    "cgroup",
    detect=_detect,
    summary="bpftool cgroup show/tree (device-filter eBPF programs of cgroup v2), cgroup v1 devices.list and /proc/PID/cgroup (where a process runs)",
    facts=FACTS,
    command="cat /proc/$(pgrep -xo dockerd || pgrep -xo containerd)/cgroup; sudo bpftool cgroup tree",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "bpftool cgroup show/tree output, or /proc/PID/cgroup")
    current: str | None = None
    programs: list[dict[str, str]] = []
    rules: list[tuple[str, ...]] = []
    path = None
    for raw in text.split("\n"):
        line = raw.rstrip()
        m = _SHOW.search(line)
        if m:
            current = _rel(m.group(1))
            continue
        m = _TREE_PATH.match(line)
        if m:
            current = _rel(m.group(1))
            continue
        if _HEADER.match(line):
            continue
        m = _PROG.match(line)
        if m and current is not None and len(programs) < MAX_PROGS:
            programs.append({"cgroup": current, "type": m.group(2), "flags": m.group(3), "name": m.group(4) or ""})
            continue
        m = _PROC_V2.match(line)
        if m and path is None:
            path = m.group(1)
            continue
        m = _DEV_RULE.match(line)
        if m and len(rules) < MAX_PROGS:
            rules.append(m.groups())
    if not programs and path is None and not rules:
        raise ParseError("no bpftool program rows under a cgroup path (bpftool cgroup show PATH / tree), no "
                         "'0::/...' line of /proc/PID/cgroup and no devices.list rule: this is not cgroup output")
    facts: dict[str, Any] = {}
    if programs or current is not None:
        filtered = list(dict.fromkeys(p["cgroup"] for p in programs if p["type"] == "cgroup_device"))
        facts["cgroup.programs"] = programs
        facts["cgroup.device_filters"] = filtered
        facts["cgroup.device_filter_slices"] = [c for c in filtered if c.endswith(".slice")]
    if rules:
        facts["cgroup.device_rules"] = [f"{t} {ma}:{mi} {acc}" for t, ma, mi, acc in rules]
        facts["cgroup.nvidia_devices_allowed"] = any(
            t in "ac" and (t == "a" or ma in ("*", _NVIDIA_MAJOR)) and "r" in acc and "w" in acc for t, ma, mi, acc in rules)
    if path is not None:
        facts["cgroup.path"] = path
        facts["cgroup.runtime_in_user_slice"] = bool(_RUNTIME.search(path)) and "/user.slice/" in path
    return facts
