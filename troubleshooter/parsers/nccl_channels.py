"""NCCL channel lines quoted without their log prefix: which transport each connection uses.

Real sample (the two lines a reporter quoted in prose from two nodes' NCCL_DEBUG=INFO logs, NVIDIA/nccl#897;
tests/data/nccl-channels)::

    9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA
    9[1a000] -> 2[6b000] [receive] via NET/IB/1

A line is NCCL's channel message without the ``host:pid:tid [dev] NCCL INFO Channel 00/0 :`` before it:
``RANK[BUSID] -> RANK[BUSID] [send|receive] via TRANSPORT`` (NET/IB/N, NET/IB/N/GDRDMA, NET/Socket/N, P2P/IPC,
P2P/direct pointer, SHM). A whole NCCL log is read by the nccl-debug kind, which detection prefers.

What it means: a connection over InfiniBand/RoCE without ``/GDRDMA`` is staged through host memory; one side
with GPUDirect RDMA and the other without points at a node whose peer-memory module is missing (or a GPU far
from its NIC, where NCCL turns GPUDirect off by distance).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from troubleshooter.parsers._nccl_facts import FACTS as NCCL_FACTS
from troubleshooter.parsers._nccl_facts import count_ib_channel, ib_channel_facts
from troubleshooter.parsers.base import ParseError, parser, require_text

_MINE = ("nccl.nets", "nccl.ib_channels_gdr", "nccl.ib_channels_no_gdr", "nccl.ib_recv_channels_no_gdr")
FACTS = [f for f in NCCL_FACTS if f[0] in _MINE] + [
    ("nccl.channel_transports", "dict", "", "transport -> channel lines ('NET/IB/GDRDMA', 'NET/IB', 'P2P/IPC', 'SHM' ...)"),
]

_LINE = re.compile(r"^\s*\d+\[[0-9a-fA-F]+\]\s*->\s*\d+\[[0-9a-fA-F]+\]\s*(?:\[(?:send|receive)\]\s*)?via\s+"
                   r"(?P<t>NET/(?P<net>[A-Za-z]\w*)(?:/\d+)?(?P<gdr>/GDRDMA)?|P2P/\w+(?: pointer)?|SHM\S*|\S+)")


def _detect(text: str) -> float:
    head = text[:65536]
    if "NCCL INFO" in head or " via " not in head:
        return 0.0
    n = sum(1 for ln in head.split("\n")[:2000] if _LINE.match(ln))
    return 0.7 if n else 0.0


@parser(
    "nccl-channels",
    detect=_detect,
    summary="NCCL channel lines quoted without their prefix ('9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA')",
    facts=FACTS,
    command="NCCL_DEBUG=INFO <your job> 2>&1 | grep ' via '",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "NCCL channel lines")
    transports: Counter[str] = Counter()
    nets: set[str] = set()
    gdr = [0, 0, 0]
    for line in text.split("\n"):
        m = _LINE.match(line) if " via " in line else None
        if not m:
            continue
        if m.group("net"):
            net = m.group("net")
            nets.add(net)
            transports[f"NET/{net}" + ("/GDRDMA" if m.group("gdr") else "")] += 1
            if net == "IB":
                count_ib_channel(gdr, bool(m.group("gdr")), "[receive]" in line)
        else:
            transports[m.group("t").split()[0]] += 1
    if not transports:
        raise ParseError("no NCCL channel line ('R[bus] -> R[bus] via TRANSPORT')")
    facts: dict[str, Any] = {"nccl.channel_transports": dict(sorted(transports.items()))}
    if nets:
        facts["nccl.nets"] = sorted(nets)
    facts.update(ib_channel_facts(gdr))
    return facts
