"""``rdma link`` (iproute2's RDMA tool): every RDMA port's state, physical state and network device.

Real sample (a node with two Intel iWARP and two ConnectX-4 ports, iproute2 of 2018 printing an index before
each link; from a RoCE setup guide, tests/data/rdma-link)::

    0/1: i40iw0/1: state DOWN physical_state NOP
    1/1: i40iw1/1: state ACTIVE physical_state NOP
    2/1: mlx5_0/1: state DOWN physical_state DISABLED netdev ens803f0
    3/1: mlx5_1/1: state ACTIVE physical_state LINK_UP netdev ens803f1

Newer iproute2 prints ``link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens1np0`` (InfiniBand ports add
``subnet_prefix ... lid ... sm_lid ...`` before the state). It shows no rate and no link layer.

What it means here: the same signal as ``ibstat`` for port state (the same ``ib.*`` facts): a port that is not
ACTIVE carries no traffic; ``netdev`` names the Ethernet or IPoIB interface of the port (for NCCL_SOCKET_IFNAME
and RoCE GIDs).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text
from troubleshooter.parsers.ibstat import COMMON_FACTS, norm_phys_state, norm_state, summarize

FACTS = list(COMMON_FACTS) + [
    ("ib.netdev_map", "dict", "", "'mlx5_0:1' -> {netdev, state: Up/Down} from ibdev2netdev"),
]

_LINK = re.compile(r"^\s*(?:\d+/\d+:\s*)?(?:link\s+)?([A-Za-z][\w.\-]*)/(\d+):?\s+(?:.*?\s)?state\s+(\w+)"
                   r"(?:\s+physical_state\s+(\w+))?(?:.*?\snetdev\s+(\S+))?")


def _detect(text: str) -> float:
    n = sum(1 for ln in text[:65536].split("\n") if "state" in ln and "physical_state" in ln and _LINK.match(ln))
    return 0.9 if n else 0.0


@parser(
    "rdma-link",
    detect=_detect,
    summary="rdma link: RDMA port state, physical state and netdev (iproute2)",
    facts=FACTS,
    command="rdma link show",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "rdma link output")
    devices: dict[str, dict[str, Any]] = {}
    ports: list[dict[str, Any]] = []
    netdevs: dict[str, dict[str, str]] = {}
    for raw in text.split("\n"):
        if "state" not in raw:
            continue
        m = _LINK.match(raw)
        if not m:
            continue
        name, num = m.group(1), int(m.group(2))
        dev = devices.setdefault(name, {"name": name, "ports": []})
        dev["ports"].append(num)
        port: dict[str, Any] = {"device": name, "port": num, "state": norm_state(m.group(3))}
        if m.group(4):
            port["phys_state"] = norm_phys_state(m.group(4))
        ports.append(port)
        if m.group(5):
            netdevs[f"{name}:{num}"] = {"netdev": m.group(5), "state": "Up" if port["state"] == "Active" else "Down"}
    if not ports:
        raise ParseError("no 'link DEV/PORT state ... physical_state ...' line: this is not rdma link output")
    facts = summarize(list(devices.values()), ports)
    if netdevs:
        facts["ib.netdev_map"] = netdevs
    return facts
