"""``show_gids`` (Mellanox/NVIDIA OFED script): the GID table of every RDMA port, with the IPv4 address and
RoCE version of each entry and the network device it belongs to.

Real sample (ConnectX-6, from IBM/SpectrumScale_NETWORK_READINESS pull request #4)::

    DEV     PORT    INDEX   GID                                     IPv4            VER     DEV
    ---     ----    -----   ---                                     ------------    ---     ---
    mlx5_0  1       0       fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8                 v1      ens1f0
    mlx5_0  1       1       fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8                 v2      ens1f0
    mlx5_0  1       4       0000:0000:0000:0000:0000:ffff:ac13:003c 172.19.0.60     v1      ens1f0
    mlx5_0  1       5       0000:0000:0000:0000:0000:ffff:ac13:003c 172.19.0.60     v2      ens1f0
    n_gids_found=6

What it means here: on RoCE, NCCL (``NCCL_IB_GID_INDEX``), UCX and perftest must use a GID that is RoCE v2
and carries the interface's IPv4 address (routable, and what the switches' PFC/ECN QoS is set up for). It is
index 3 on a plain port, but not always (here 5, because the port has a second IPv6 link-local address): a
hard-coded index 3 then picks a link-local v2 GID and traffic fails or goes slow. ``n_gids_found=0`` (inside a
container whose network namespace has no RoCE netdev) means no GID is usable from there. The same ``ib.gid*``
facts come from the ``GID[  3]: ::ffff:10.0.0.1, RoCE v2`` lines of ``ibv_devinfo -v`` (see
:mod:`troubleshooter.parsers.ibv_devinfo`).

>>> f = parse("DEV PORT INDEX GID IPv4 VER DEV\\nmlx5_0 1 3 0000:0000:0000:0000:0000:ffff:0a00:0001 10.0.0.1 v2 eth1\\n")
>>> f["ib.gid_v2_ipv4_index"]
{'mlx5_0:1': 3}
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

# Facts shared with ibv-devinfo (its GID[ n] lines with -v).
GID_FACTS = [
    ("ib.gids", "list", "", "GID table entries: {device, port, index, gid, ipv4 (IPv4-mapped GIDs), version v1/v2 (RoCE), netdev (show_gids)} (keys omitted when not shown)"),
    ("ib.gid_count", "number", "count", "GID entries listed (0 when show_gids found none)"),
    ("ib.gid_v2_ipv4_index", "dict", "", "'dev:port' -> index of the first RoCE v2 GID with an IPv4 address (what NCCL_IB_GID_INDEX should be on RoCE)"),
    ("ib.gid_v2_ipv4_indexes", "list", "", "sorted distinct such indexes across ports (one value: the same NCCL_IB_GID_INDEX fits every port)"),
    ("ib.ports_without_v2_ipv4_gid", "list", "", "'dev:port' of ports with GIDs listed but none RoCE v2 with an IPv4 address"),
]

FACTS = list(GID_FACTS)

_HEADER = re.compile(r"^[^\S\n]*DEV\s+PORT\s+INDEX\s+GID\s+IPv4\s+VER\s+DEV\s*$", re.MULTILINE)
_FOUND = re.compile(r"^[^\S\n]*n_gids_found\s*=\s*(\d+)\s*$", re.MULTILINE)
_VER = re.compile(r"^v\d$")
_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")


def ipv4_of(gid: str) -> str | None:
    """The IPv4 address of an IPv4-mapped GID ('::ffff:10.0.0.1', '0000:...:ffff:0a00:0001'), else None."""
    try:
        addr = ipaddress.IPv6Address(gid.strip())
    except ValueError:
        return None
    mapped = addr.ipv4_mapped
    return str(mapped) if mapped is not None else None


def roce_version(text: str) -> str | None:
    """'RoCE v2' -> 'v2', 'IB/RoCE v1' / 'RoCE v1' / 'v1' -> 'v1'."""
    m = re.search(r"\bv([12])\b", text, re.IGNORECASE)
    return f"v{m.group(1)}" if m else None


def gid_facts(gids: list[dict[str, Any]]) -> dict[str, Any]:
    """The ib.gid* facts from GID entries (in the order listed)."""
    first: dict[str, int] = {}
    ports: list[str] = []
    for g in gids:
        key = f"{g['device']}:{g['port']}"
        if key not in ports:
            ports.append(key)
        if g.get("version") == "v2" and g.get("ipv4") and key not in first:
            first[key] = g["index"]
    return {
        "ib.gids": gids,
        "ib.gid_count": len(gids),
        "ib.gid_v2_ipv4_index": first,
        "ib.gid_v2_ipv4_indexes": sorted(set(first.values())),
        "ib.ports_without_v2_ipv4_gid": [p for p in ports if p not in first],
    }


def _detect(text: str) -> float:
    head = text[:65536]
    if _HEADER.search(head):
        return 0.95
    if _FOUND.search(head):
        return 0.7
    return 0.0


@parser(
    "show-gids",
    detect=_detect,
    summary="show_gids (OFED): per RDMA port GID table with IPv4, RoCE version and netdev",
    facts=FACTS,
    command="show_gids",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "show_gids output (DEV PORT INDEX GID IPv4 VER DEV table)")
    header = _HEADER.search(text)
    found = _FOUND.search(text)
    if not header and not found:
        raise ParseError("no 'DEV PORT INDEX GID IPv4 VER DEV' header or n_gids_found= line: this is not show_gids output")
    gids: list[dict[str, Any]] = []
    body = text[header.end():] if header else text
    for line in body.split("\n"):
        tokens = line.split()
        if len(tokens) < 4 or not tokens[1].isdigit() or not tokens[2].isdigit():
            continue
        dev, port, index, gid, rest = tokens[0], int(tokens[1]), int(tokens[2]), tokens[3], tokens[4:]
        if ":" not in gid:
            continue
        entry: dict[str, Any] = {"device": dev, "port": port, "index": index, "gid": gid}
        ipv4 = rest.pop(0) if rest and _IPV4.match(rest[0]) else None
        ipv4 = ipv4 or ipv4_of(gid)
        if ipv4:
            entry["ipv4"] = ipv4
        if rest and _VER.match(rest[0]):
            entry["version"] = rest.pop(0)
        if rest:
            entry["netdev"] = rest[0]
        gids.append(entry)
    if not gids and not found:
        raise ParseError("show_gids header but no GID row and no n_gids_found line (the output was cut)")
    return gid_facts(gids)
