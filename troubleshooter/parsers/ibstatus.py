"""``ibstatus`` (infiniband-diags' shell script over ``/sys/class/infiniband``): every RDMA port's state,
physical state, rate and link layer, one block per port.

Real sample (4x ConnectX InfiniBand EDR, from a cuML/Dask-UCX setup guide; TAB-indented as the script prints,
pastes often turn the TABs into spaces)::

    Infiniband device 'mlx5_0' port 1 status:
    	default gid:	 fe80:0000:0000:0000:506b:4b03:00f5:ce9c
    	base lid:	 0xf
    	sm lid:		 0x1
    	state:		 4: ACTIVE
    	phys state:	 5: LinkUp
    	rate:		 100 Gb/sec (4X EDR)
    	link_layer:	 InfiniBand

What it means here: the same signal as ``ibstat`` (and the same ``ib.*`` facts, built by
:func:`troubleshooter.parsers.ibstat.summarize`): a port that is not ``4: ACTIVE`` / ``5: LinkUp`` carries
no traffic, a rate below the fabric's (``100 Gb/sec (4X EDR)`` on an NDR fabric) caps inter-node bandwidth,
``link_layer: Ethernet`` is RoCE. ``ibstatus`` shows no HCA model or firmware, so ``ib.devices`` holds only
names and port numbers. A paste cut inside a block keeps what is there (a port without its ``rate:`` line has
no ``rate_gbps``). The script's own failure (``Fatal error: ...``) is a ParseError that carries its message, except its two words
for no RDMA device exposed here ('No devices', "device '*': sys files not found"), read as ``ib.sysfs_present``
false.

>>> f = parse("Infiniband device 'mlx5_0' port 1 status:\\n\\tstate:\\t\\t 1: DOWN\\n\\trate:\\t\\t 400 Gb/sec (4X NDR)\\n")
>>> f["ib.down_ports"], f["ib.ports"][0]["rate_gbps"]
(['mlx5_0:1'], 400)
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text, to_number
from troubleshooter.parsers.ibstat import COMMON_FACTS, norm_link_layer, norm_phys_state, norm_state, set_lanes, summarize

FACTS = list(COMMON_FACTS) + [
    ("ib.sysfs_present", "bool", "", "/sys/class/infiniband exists in this context (RDMA core loaded, devices exposed)"),
]

_BLOCK = re.compile(r"^[^\S\n]*Infiniband device '([^']+)' port (\d+) status:\s*$")
_KV = re.compile(r"^[^\S\n]*(default gid|base lid|sm lid|state|phys state|rate|link_layer)\s*:\s*(.*\S|)\s*$")
_RATE = re.compile(r"^([\d.]+)\s*Gb/sec\b")
_FATAL = re.compile(r"^[^\S\n]*Fatal error:\s*(.*\S|)\s*$", re.MULTILINE)
# the script's two words for "no RDMA device is exposed here" (rdma-core infiniband-diags/scripts/ibstatus):
# 'cd /sys/class/infiniband || fatal No devices' when the class directory is absent (no RDMA core loaded), and
# "device '*': sys files not found" when it exists and is empty (the glob stays '*')
_NO_SYSFS = re.compile(r"^[^\S\n]*Fatal error:\s+(?:No devices|device '\*': sys files not found)", re.MULTILINE)


def _detect(text: str) -> float:
    head = text[:65536]
    blocks = len(re.findall(r"^[^\S\n]*Infiniband device '[^']+' port \d+ status:\s*$", head, re.MULTILINE))
    if not blocks:
        return 0.6 if _NO_SYSFS.search(head) else 0.0
    hits = sum(k in head for k in ("default gid:", "phys state:", "link_layer:", "sm lid:", "Gb/sec"))
    return 0.95 if hits >= 2 else 0.7


@parser(
    "ibstatus",
    detect=_detect,
    summary="ibstatus: RDMA port state, physical state, rate and link layer (the infiniband-diags script)",
    facts=FACTS,
    command="ibstatus",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "ibstatus output (Infiniband device '...' port N status: blocks)")
    devices: dict[str, dict[str, Any]] = {}
    ports: list[dict[str, Any]] = []
    port: dict[str, Any] | None = None
    for raw in text.split("\n"):
        line = raw.lstrip("> \t") if raw.lstrip().startswith(">") else raw
        m = _BLOCK.match(line)
        if m:
            name, num = m.group(1), int(m.group(2))
            dev = devices.setdefault(name, {"name": name, "ports": []})
            dev["ports"].append(num)
            port = {"device": name, "port": num}
            ports.append(port)
            continue
        if port is None:
            continue
        m = _KV.match(line)
        if not m:
            if line.strip() and not line[:1].isspace():
                port = None  # a prompt or another tool's output ends the block
            continue
        key, value = m.group(1), m.group(2)
        if not value:
            continue
        if key == "state":
            port["state"] = norm_state(value)
        elif key == "phys state":
            port["phys_state"] = norm_phys_state(value)
        elif key == "rate":
            r = _RATE.match(value)
            rate = to_number(r.group(1)) if r else None
            if rate is not None and 0 < rate < 1e6:
                port["rate_gbps"] = rate
                set_lanes(port, value)
        elif key == "link_layer":
            port["link_layer"] = norm_link_layer(value)
    if not ports:
        if _NO_SYSFS.search(text):
            # no RDMA device is exposed here (the class directory absent, or empty)
            facts = summarize([], [])
            facts["ib.sysfs_present"] = False
            return facts
        fatal = _FATAL.search(text)
        if fatal:
            raise ParseError(f"ibstatus failed: {fatal.group(1) or 'Fatal error'}")
        raise ParseError("no \"Infiniband device '...' port N status:\" block: this is not ibstatus output")
    return summarize(list(devices.values()), ports)
