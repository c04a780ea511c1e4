"""RoCE's quality of service on a Mellanox/NVIDIA NIC: ``mlnx_qos -i IFACE`` (mlnx-tools) and the RDMA traffic class
the driver forces on every queue pair (``cat /sys/class/infiniband/DEV/tc/1/traffic_class``, MLNX_OFED).

Real sample (att/netarbiter, a lossless-RoCE setup script run under ``set -x``; tests/data/roce-qos)::

    + mlnx_qos -i eth4 --pfc 0,0,0,1,0,0,0,0
    DCBX mode: OS controlled
    Priority trust state: dscp
    dscp2prio mapping:
            prio:0 dscp:07,06,05,04,03,02,01,00,
            prio:3 dscp:31,30,29,28,27,26,25,24,
    Cable len: 7
    PFC configuration:
            priority    0   1   2   3   4   5   6   7
            enabled     0   0   0   1   0   0   0   0
    tc: 3 ratelimit: unlimited, tsa: vendor
             priority:  3

and ``Global tclass=106`` from the sysfs file (empty when no class is forced). The format is mlnx_qos'
``pretty_print`` (Mellanox/mlnx-tools python/mlnx_qos; the dscp2prio rows wrap after eight values).

What it means for the job: RoCE needs its RDMA packets in a lossless class, a priority with PFC (priority flow
control) on the NIC and on every switch port, else congestion drops them and every drop costs a retransmission
timeout (NCCL's "completion with error 12", transfers far below the link rate). With ``trust dscp`` the NIC puts
a packet on the priority its DSCP maps to (the packet's traffic class >> 2: tclass 106 is DSCP 26, priority 3 by
default); the traffic class is the one the driver forces (``Global tclass``), else the one the program asks for
(NCCL_IB_TC, default 0). Read here as printed; which priority RDMA lands on is set against PFC in
:mod:`troubleshooter.model.roce_qos`.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("roce.qos_ports", "list", "", "each mlnx_qos output read, in order: {iface (from its command line, when shown), "
     "trust ('pcp' or 'dscp'), pfc (priorities with PFC enabled), dscp_prio ({DSCP: priority} as its dscp2prio "
     "mapping prints it, only when printed), dcbx ('OS controlled' or 'Firmware controlled')}"),
    ("roce.pfc_priorities", "list", "", "priorities with PFC (lossless) enabled on any port mlnx_qos showed, sorted; "
     "[] when PFC is on no priority of any"),
    ("roce.ports_without_pfc", "list", "", "ports mlnx_qos showed with PFC on no priority at all (lossy RoCE), by "
     "interface name ('port N' in the order read where its command line is not shown)"),
    ("roce.trust", "list", "", "the priority trust states mlnx_qos showed, distinct: 'dscp' (the IP header's DSCP picks "
     "the priority: RoCE v2 without VLANs) or 'pcp' (the VLAN tag's priority bits)"),
    ("roce.global_tclass", "list", "", "traffic classes the RDMA driver forces on every queue pair ('Global "
     "tclass=106' in /sys/class/infiniband/DEV/tc/1/traffic_class): {device (when the path is shown), tclass}"),
]

_MARKERS = ("DCBX mode:", "Priority trust state:", "PFC configuration:", "Cable len:", "Receive buffer size")
_MARKER = re.compile("|".join(re.escape(m) for m in _MARKERS) + r"|\btc: \d ratelimit:")
_CMD = re.compile(r"\bmlnx_qos\b.*?(?:\s-i\s*=?\s*|\s--interface[= ]\s*)([\w.@:-]+)")
_DCBX = re.compile(r"^\s*DCBX mode:\s*(OS controlled|Firmware controlled)\s*$", re.IGNORECASE)
_TRUST = re.compile(r"^\s*Priority trust state:\s*(pcp|dscp)\s*$", re.IGNORECASE)
_PRIO_DSCP = re.compile(r"\bprio:([0-7])\s+dscp:((?:\d{1,2},)*\d{1,2},?)(?=\s|$)")
_ENABLED = re.compile(r"(?:^|\s)enabled\s+([01](?:\s+[01]){7})\s*$")
_TCLASS_PATH = re.compile(r"/sys/class/infiniband/([^/\s]+)/tc/\d+/traffic_class\b")
_TCLASS = re.compile(r"\bGlobal tclass=(\d{1,3})\b")


def _detect(text: str) -> float:
    head = text[:65536]
    if re.search(r"(?m)^[^\S\n]*Priority trust state:[^\S\n]*(?:pcp|dscp)[^\S\n]*$", head) or (
            "PFC configuration:" in head and re.search(r"(?m)(?:^|[^\S\n])enabled(?:[^\S\n]+[01]){8}[^\S\n]*$", head)):
        return 0.9
    return 0.8 if _TCLASS.search(head) and re.search(r"(?m)^[^\S\n]*(?:\S[^\n]*=[^\S\n]*)?Global tclass=\d{1,3}[^\S\n]*$",
                                                     head) else 0.0


def _starts_port(line: str, pfc_head: bool, cur: dict[str, Any] | None) -> bool:
    """Whether the line begins another port's output: mlnx_qos' first line (DCBX mode), or a trust state or PFC table
    that the port being read already has (a grep'd output that kept only those lines)."""
    if _DCBX.match(line):
        return True
    if _TRUST.match(line):
        return cur is None or cur["trust"] is not None
    return pfc_head and (cur is None or cur["pfc"] is not None)


@parser(
    "roce-qos",
    detect=_detect,
    summary="mlnx_qos -i IFACE (trust state, dscp2prio, PFC per priority) and the forced RDMA traffic class "
            "(Global tclass=N)",
    facts=FACTS,
    command="mlnx_qos -i IFACE; cat /sys/class/infiniband/DEV/tc/1/traffic_class",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "mlnx_qos output ('Priority trust state: dscp', 'PFC configuration:') or "
                              "'Global tclass=N'")
    ports: list[dict[str, Any]] = []
    tclasses: list[dict[str, Any]] = []
    iface = device = None
    cur: dict[str, Any] | None = None
    in_map = in_pfc = False
    for n, line in enumerate(text.split("\n"), 1):
        if len(_MARKER.findall(line)) > 1:
            raise ParseError("mlnx_qos' lines are run together on one line (a web page or a quoted reply joined "
                             "them): its values cannot be told apart", n)
        if m := _CMD.search(line):
            iface = m.group(1)
            continue
        if m := _TCLASS_PATH.search(line):
            device = None if re.search(r"[{*?\[]", m.group(1)) else m.group(1)
        if m := _TCLASS.search(line):
            tclasses.append({"device": device, "tclass": int(m.group(1))})
            continue
        pfc_head = "PFC configuration:" in line
        if _starts_port(line, pfc_head, cur):
            cur = {"iface": iface, "trust": None, "pfc": None, "dcbx": None}
            ports.append(cur)
            iface, in_map, in_pfc = None, False, False
        if m := _DCBX.match(line):
            cur["dcbx"] = m.group(1)
        elif m := _TRUST.match(line):
            cur["trust"] = m.group(1).lower()
        if "dscp2prio mapping:" in line:
            in_map, in_pfc = True, False
        if pfc_head:
            in_map, in_pfc = False, True
        if in_map:
            for pm in _PRIO_DSCP.finditer(line):
                table = cur.setdefault("dscp_prio", {})
                for d in pm.group(2).rstrip(",").split(","):
                    if int(d) > 63:
                        raise ParseError(f"DSCP {d} in the dscp2prio mapping (DSCP is 0-63)", n)
                    table[str(int(d))] = int(pm.group(1))
        if in_pfc and (m := _ENABLED.search(line)):
            cur["pfc"] = [i for i, v in enumerate(m.group(1).split()) if v == "1"]
            in_pfc = False
    last: dict[str, dict[str, Any]] = {}
    for i, p in enumerate(q for q in ports if q["trust"] or q["pfc"] is not None):
        last.pop(p["iface"] or f"#{i}", None)  # a port shown again (a script that sets, then shows): its last state
        last[p["iface"] or f"#{i}"] = p
    read = list(last.values())
    if not read and not tclasses:
        raise ParseError("no 'Priority trust state:' or 'PFC configuration: ... enabled' of mlnx_qos, and no "
                         "'Global tclass=N'")
    facts: dict[str, Any] = {}
    if read:
        for i, p in enumerate(read, 1):
            if not p["iface"]:
                p["iface"] = f"port {i}"
        facts["roce.qos_ports"] = read
        shown = [p for p in read if p["pfc"] is not None]
        if shown:
            facts["roce.pfc_priorities"] = sorted({q for p in shown for q in p["pfc"]})
            facts["roce.ports_without_pfc"] = [p["iface"] for p in shown if not p["pfc"]]
        trust = sorted({p["trust"] for p in read if p["trust"]})
        if trust:
            facts["roce.trust"] = trust
    if tclasses:
        facts["roce.global_tclass"] = tclasses
    return facts
