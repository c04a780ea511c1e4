"""``ib-sysfs``: RDMA devices and ports straight from ``/sys/class/infiniband``, and ``/dev/infiniband``.

Output of the fixed script of the ``ib-sysfs`` source (troubleshooter/sources/fabric.py): ``path:value``
lines as ``grep -H .`` prints them, then a listing of ``/dev/infiniband`` under a marker line. Real sysfs
values (format as the kernel prints them; ConnectX-7 400G node)::

    == ib-sysfs: /sys/class/infiniband ==
    /sys/class/infiniband/mlx5_0/fw_ver:28.39.2048
    /sys/class/infiniband/mlx5_0/hca_type:MT4129
    /sys/class/infiniband/mlx5_0/board_id:MT_0000000838
    /sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE
    /sys/class/infiniband/mlx5_0/ports/1/phys_state:5: LinkUp
    /sys/class/infiniband/mlx5_0/ports/1/rate:400 Gb/sec (4X NDR)
    /sys/class/infiniband/mlx5_0/ports/1/link_layer:InfiniBand
    == ib-sysfs: /dev/infiniband ==
    rdma_cm
    uverbs0

On a machine (or in a container) without RDMA devices both sections say ``(absent)``::

    == ib-sysfs: /sys/class/infiniband ==
    (absent)
    == ib-sysfs: /dev/infiniband ==
    (absent)

That is a fact, not an error: ``ib.sysfs_present`` false, ``ib.active_ports`` 0. It needs no tool
installed, so it answers where ``ibstat`` / ``ibv_devinfo`` are missing. The host's sysfs can show HCAs
while ``/dev/infiniband`` is missing in the job's container: then NCCL cannot open the verbs devices and
falls back to sockets (``ib.dev_infiniband_visible`` false, or no ``uverbs*`` in ``ib.uverbs_devices``).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text, to_number
from troubleshooter.parsers.ibstat import COMMON_FACTS, set_lanes, set_port_state_field, summarize

SYSFS_MARKER = "== ib-sysfs: /sys/class/infiniband =="
DEV_MARKER = "== ib-sysfs: /dev/infiniband =="
ABSENT = "(absent)"

FACTS = list(COMMON_FACTS) + [
    ("ib.sysfs_present", "bool", "", "/sys/class/infiniband exists in this context (RDMA core loaded, devices exposed)"),
    ("ib.dev_infiniband_visible", "bool", "", "/dev/infiniband exists and lists at least one device node in this context"),
    ("ib.uverbs_devices", "list", "", "uverbs* nodes in /dev/infiniband: the verbs devices a process here can open"),
]

_DEV_ATTR = re.compile(r"^/sys/class/infiniband/([^/\s]+)/(fw_ver|hca_type|board_id):(.*)$")
_PORT_ATTR = re.compile(r"^/sys/class/infiniband/([^/\s]+)/ports/(\d+)/(state|phys_state|rate|link_layer):(.*)$")
_DEV_KEYS = {"fw_ver": "fw", "hca_type": "ca_type", "board_id": "board_id"}


_DEV_NAME = re.compile(r"[\w.\-]+")  # compiled once: one per line

def _detect(text: str) -> float:
    head = text[:65536]
    if SYSFS_MARKER in head or DEV_MARKER in head:
        return 1.0
    if re.search(r"^/sys/class/infiniband/[^/\s]+/(?:ports/\d+/)?\w+:", head, re.MULTILINE):
        return 0.8
    return 0.0


@parser(
    "ib-sysfs",
    detect=_detect,
    summary="RDMA devices and ports from /sys/class/infiniband, and the /dev/infiniband verbs nodes",
    facts=FACTS,
    command="grep -H . /sys/class/infiniband/*/ports/*/{state,phys_state,rate,link_layer}; ls -1 /dev/infiniband",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "the ib-sysfs script's output (or grep -H . /sys/class/infiniband/... lines)")
    section = ""
    saw_sysfs_marker = saw_dev_marker = False
    sysfs_absent = dev_absent = False
    sysfs_lines = 0
    dev_nodes: list[str] = []
    devices: dict[str, dict[str, Any]] = {}
    ports: dict[tuple[str, int], dict[str, Any]] = {}

    def device(name: str) -> dict[str, Any]:
        if name not in devices:
            devices[name] = {"name": name, "ports": []}
        return devices[name]

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == SYSFS_MARKER:
            section, saw_sysfs_marker = "sysfs", True
            continue
        if line == DEV_MARKER:
            section, saw_dev_marker = "dev", True
            continue
        if line == ABSENT:
            if section == "sysfs":
                sysfs_absent = True
            elif section == "dev":
                dev_absent = True
            continue
        m = _PORT_ATTR.match(line)
        if m:
            sysfs_lines += 1
            name, num, key, value = m.group(1), int(m.group(2)), m.group(3), m.group(4).strip()
            dev = device(name)
            port = ports.get((name, num))
            if port is None:
                port = ports[(name, num)] = {"device": name, "port": num}
                dev["ports"].append(num)
            if not value:
                continue
            if set_port_state_field(port, key, value):
                pass
            elif key == "rate":
                rate = to_number(value.split()[0])
                if rate is not None:
                    port["rate_gbps"] = rate
                    set_lanes(port, value)
            continue
        m = _DEV_ATTR.match(line)
        if m:
            sysfs_lines += 1
            if m.group(3).strip():
                device(m.group(1))[_DEV_KEYS[m.group(2)]] = m.group(3).strip()
            continue
        if section == "dev" and _DEV_NAME.fullmatch(line):
            dev_nodes.append(line)
    if not (saw_sysfs_marker or saw_dev_marker or sysfs_lines):
        raise ParseError("neither the ib-sysfs markers nor /sys/class/infiniband/... lines found")
    dev_list = list(devices.values())
    for dev in dev_list:
        dev["ports"].sort()
    port_list = sorted(ports.values(), key=lambda p: (dev_list.index(devices[p["device"]]), p["port"]))
    facts = summarize(dev_list, port_list)
    if saw_sysfs_marker:
        facts["ib.sysfs_present"] = not sysfs_absent
    elif sysfs_lines:
        facts["ib.sysfs_present"] = True
    if saw_dev_marker:
        facts["ib.dev_infiniband_visible"] = (not dev_absent) and bool(dev_nodes)
        facts["ib.uverbs_devices"] = sorted(n for n in dev_nodes if n.startswith("uverbs"))
    return facts
