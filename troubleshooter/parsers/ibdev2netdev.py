"""``ibdev2netdev`` (MLNX_OFED / DOCA-OFED): which network interface each RDMA port is, and whether it is up.

Real sample (H100 node: 8x ConnectX-7 IB + 2x dual-port ConnectX-6 Ethernet, piped through ``column -t``,
with the author's ``#`` comments; from ../shared/corpus/lscpu-ibstat)::

    mlx5_0   port  1  ==>  ibp26s0        (Down)  # CX-7 1/8 infiniband
    mlx5_1   port  1  ==>  enp27s0f0np0   (Up)    # CX-6 2/2 *ethernet* port 1/2
    mlx5_10  port  1  ==>  ibp204s0       (Down)  # CX-7 7/8 infiniband

What it tells: the RDMA device behind a NIC name (``NCCL_SOCKET_IFNAME`` names netdevs, ``NCCL_IB_HCA``
names RDMA devices: this is the bridge), and the netdev's state. ``(Down)`` on an InfiniBand port only
means IPoIB is not configured, not that the IB link is down (check ``ibstat``); on a RoCE port the
netdev state is the link.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("ib.netdev_map", "dict", "", "'mlx5_0:1' -> {netdev, state: Up/Down} from ibdev2netdev"),
]

_LINE = re.compile(r"^\s*(\S+)\s+port\s+(\d+)\s*==>\s*(\S+)\s+\((Up|Down)\)", re.IGNORECASE)


def _detect(text: str) -> float:
    lines = [ln for ln in text[:65536].splitlines() if ln.strip()]
    if not lines:
        return 0.0
    hits = sum(1 for ln in lines if _LINE.match(ln))
    if not hits:
        return 0.0
    return 0.95 if hits >= len(lines) / 2 else 0.6


@parser(
    "ibdev2netdev",
    detect=_detect,
    summary="ibdev2netdev: RDMA port -> network interface name and its Up/Down state",
    facts=FACTS,
    command="ibdev2netdev",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "ibdev2netdev output (mlx5_0 port 1 ==> ib0 (Up))")
    mapping: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            mapping[f"{m.group(1)}:{m.group(2)}"] = {"netdev": m.group(3), "state": m.group(4).capitalize()}
    if not mapping:
        raise ParseError("no 'DEV port N ==> NETDEV (Up|Down)' line found: this is not ibdev2netdev output")
    return {"ib.netdev_map": mapping}
