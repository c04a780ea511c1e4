"""``iblinkinfo`` (infiniband-diags): every link of the InfiniBand fabric as the subnet sees it, both ends of each.

Real samples (tests/data/iblinkinfo: an EDR cluster's ``iblinkinfo | grep Up``, QDR clusters with their unused switch
ports)::

    CA: centos-data-200 HCA-1:
        0x0002c903000d81f9      4    1[  ] ==( 4X          10.0 Gbps Active/ LinkUp)==>       2    3[  ] "Infiniscale-IV Mellanox Technologies" ( )
    Switch: 0x0002c9020046c588 Infiniscale-IV Mellanox Technologies:
               2    1[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>       3    1[  ] "centos-data-202 HCA-1" ( )
               2    5[  ] ==(                Down/ Polling)==>             [  ] "" ( )

Each port line: (a host's port GUID,) its LID and port number, then ``==( WIDTH LANE-SPEED STATE/ PHYS-STATE)==>``
and the port at the other end with its node's name. The lane speed is per lane (``4X 25.78125 Gbps`` is EDR,
100 Gb/s, ``4X 106.25 Gbps`` NDR, 400 Gb/s). The last parentheses are the tool's own verdict on the link
(infiniband-diags' ``get_max_msg``): empty, or ``Could be 4X`` / ``Could be 25.78125 Gbps`` where both ends support a
wider or faster link than the one that trained. ``-l`` puts the node's GUID and name on every line instead of the
``CA:``/``Switch:`` headers. A switch port with no cable is ``Down/ Polling``: normal, not a fault.

What it means here: a link in the job's path trained narrower (a lane lost: 1X or 2X among 4X links) or slower than
its ends support halves or quarters what every flow through it gets, and a collective at scale runs at the slowest
link's pace while each node's own ports look fine (``ibstat`` on a node sees only its own end).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from troubleshooter.model.hca import LANE_GBPS
from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("ib.fabric_port_lines", "number", "count", "iblinkinfo's port lines read (each link shows once from each end)"),
    ("ib.fabric_active_links", "number", "count", "port lines whose state is Active"),
    ("ib.fabric_link_speeds", "dict", "", "'4X 25.78125 Gbps (EDR, 100 Gb/s)' -> how many Active port lines run at it"),
    ("ib.fabric_links_below_capable", "list", "", "links iblinkinfo itself says could run wider or faster (both ends "
     "support more: its 'Could be 4X' / 'Could be 25.78125 Gbps'): 'NODE port N -> PEER: could be ...'"),
    ("ib.fabric_links_narrow", "list", "", "Active links narrower than the fabric's usual width (1X or 2X among 4X: "
     "lanes lost in the cable, optics or port): 'NODE port N (1X) -> PEER'"),
    ("ib.fabric_links_slower", "list", "", "Active links whose lanes run slower than most of the fabric's "
     "('NODE port N at 4X 14.0625 Gbps -> PEER; most at 4X 25.78125 Gbps'): trained down, or a slower device"),
    ("ib.fabric_ca_ports_not_active", "list", "", "host (CA) ports iblinkinfo lists that are not Active: "
     "'NODE port N Down/Polling' (an unused second port of a dual-port HCA is Down too)"),
]

MAX_LINE = 4096
# ==( 4X      25.78125 Gbps Active/  LinkUp)==>  and  ==(                Down/ Polling)==>
_LINK = re.compile(r"==\(\s*(?:(?P<width>\d+)X\s+(?P<speed>\d+(?:\.\d+)?)\s*Gbps(?:\s*\((?P<fdr10>FDR10)\))?\s+)?"
                   r"(?P<state>[A-Za-z]+)/\s*(?P<phys>[A-Za-z]+)\s*\)(?:\s*\((?:HOQ|VL_Stall)[^)]*\))?==>")  # (-p adds HOQ, VL_Stall)
# what is left of the '==(' on a port line: [0xGUID ["NAME"]] LID PORT[EXT]
_LEFT = re.compile(r"^\s*(?:(?P<guid>0x[0-9a-fA-F]{16})\s+(?:\"(?P<name>[^\"]*)\"\s+)?)?(?P<lid>\d+)\s+(?P<port>\d+)\[[^\]]*\]\s*$")
# right of '==>': [0xGUID] LID PORT[EXT] "PEER" (VERDICT)
_RIGHT = re.compile(r"^\s*(?:0x[0-9a-fA-F]{16}\s+)?(?:(?P<lid>\d+)\s+(?P<port>\d+))?\s*\[[^\]]*\]\s*\"(?P<peer>[^\"]*)\"\s*"
                    r"\((?P<verdict>[^)]*)\)")
_HEADER = re.compile(r"^\s*(?P<type>CA|Switch|Router):\s+(?:0x[0-9a-fA-F]{16}\s+)?(?P<name>.*?):?\s*$")
# the speed each signalling rate iblinkinfo prints is (IBTA: 64b/66b from FDR on); its nominal Gb/s per lane is hca's
_LANE = {"2.5": "SDR", "5.0": "DDR", "10.0": "QDR", "14.0625": "FDR", "25.78125": "EDR", "53.125": "HDR",
         "106.25": "NDR", "212.5": "XDR"}


def _detect(text: str) -> float:
    n = sum(1 for ln in text[:65536].split("\n") if ")==>" in ln and _LINK.search(ln))
    return 0.95 if n else 0.0


def _speed_label(width: str, speed: str, fdr10: bool) -> tuple[str, float]:
    """'4X 25.78125 Gbps (EDR, 100 Gb/s)' and the lane's nominal Gb/s, from what iblinkinfo printed."""
    name = "FDR10" if fdr10 else _LANE.get(speed, "")
    lane = LANE_GBPS[name] if name else float(speed)
    shown = f"{width}X {speed} Gbps"
    return (f"{shown} ({name}, {int(width) * lane:g} Gb/s)" if name else shown), lane


@parser(
    "iblinkinfo",
    detect=_detect,
    summary="iblinkinfo (infiniband-diags): every fabric link's width, lane speed and state, both ends, and the "
            "tool's own 'Could be' where a link trained below what its ends support",
    facts=FACTS,
    command="iblinkinfo   # on a node with the infiniband-diags and access to the fabric (iblinkinfo -l: one line per port)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "iblinkinfo output")
    node, ntype = "", ""
    lines = 0
    active: list[dict[str, Any]] = []
    below: list[str] = []
    not_active: list[str] = []
    for raw in text.split("\n"):
        ln = raw[:MAX_LINE]
        h = _HEADER.match(ln) if "==(" not in ln else None
        if h:
            node, ntype = h.group("name").strip(), h.group("type")
            continue
        m = _LINK.search(ln)
        if not m:
            continue
        left, right = _LEFT.match(ln[:m.start()]), _RIGHT.match(ln[m.end():])
        if not left:
            continue
        lines += 1
        name = (left.group("name") or "").strip() or node or f"LID {left.group('lid')}"
        # a line that starts with a port GUID is a host's (switch ports show the switch's LID first)
        kind = ntype or ("CA" if left.group("guid") and not left.group("name") else "")
        where = f"{name} port {left.group('port')}"
        peer = right.group("peer").strip() if right else ""
        to = f" -> {peer}" if peer else ""
        state, phys = m.group("state"), m.group("phys")
        if state != "Active":
            if kind == "CA":
                not_active.append(f"{where} {state}/{phys}")
            continue
        if not m.group("width"):
            continue
        label, lane = _speed_label(m.group("width"), m.group("speed"), bool(m.group("fdr10")))
        link = {"where": where, "to": to, "width": int(m.group("width")), "lane": lane, "label": label}
        active.append(link)
        verdict = " ".join((right.group("verdict") if right else "").split())
        if "Could be" in verdict:
            below.append(f"{where}{to}: {verdict.replace('Could be ', 'could be ', 1)}")
    if not lines:
        raise ParseError("no iblinkinfo port line ('LID PORT[ ] ==( 4X 25.78125 Gbps Active/  LinkUp)==> ...')")
    speeds = Counter(link["label"] for link in active)
    facts: dict[str, Any] = {"ib.fabric_port_lines": lines, "ib.fabric_active_links": len(active),
                             "ib.fabric_link_speeds": dict(speeds.most_common()),
                             "ib.fabric_links_below_capable": below[:50],
                             "ib.fabric_ca_ports_not_active": not_active[:50]}
    if active:
        width = Counter(link["width"] for link in active).most_common(1)[0][0]
        lane = Counter(link["lane"] for link in active).most_common(1)[0][0]
        usual = Counter(link["label"] for link in active if link["lane"] == lane).most_common(1)[0][0]
        facts["ib.fabric_links_narrow"] = [f"{link['where']} ({link['width']}X){link['to']}" for link in active
                                           if link["width"] < width][:50]
        facts["ib.fabric_links_slower"] = [f"{link['where']} at {link['label']}{link['to']}; most at {usual}"
                                           for link in active if link["lane"] < lane][:50]
    return facts
