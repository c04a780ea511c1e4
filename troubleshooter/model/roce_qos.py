"""Derived facts that place RoCE's RDMA traffic in the NIC's priorities: the traffic class in force (the one the driver
forces, ``Global tclass``, else NCCL_IB_TC, else NCCL's default 0), its DSCP (the class >> 2), the priority that DSCP
maps to under ``trust dscp`` (mlnx_qos' dscp2prio mapping), and whether PFC is on there; and the queue pairs whose
packets went unacknowledged (transport retry counter exceeded), the mark of drops on a lossy class. Called by
:mod:`troubleshooter.model.combine`, which holds the READS of every derived fact."""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.model.facts import Fact, FactSet, declare

declare("derived", [
    ("roce.rdma_off_lossless", "list", "", "ports where the traffic class the RDMA traffic is given (the driver's "
     "Global tclass, or NCCL_IB_TC) maps, under DSCP trust, to a priority without PFC while PFC is on another ('tclass "
     "106 (the driver's Global tclass on mlx5_2) is DSCP 26: priority 3 on eth4, where PFC is on priority 5 only'); [] "
     "when every such port puts it on a PFC priority; absent when the mapping or the class is not shown"),
    ("roce.rdma_placement", "list", "", "where the RDMA traffic class lands on each port whose DSCP mapping and PFC "
     "row were shown: 'tclass 236 (the driver's Global tclass) is DSCP 59: priority 5 on eth1, PFC on'"),
    ("roce.default_tc_off_lossless", "list", "", "the same for NCCL's default traffic class 0, where an environment "
     "listing shows NCCL_IB_TC unset and no Global tclass was read (one the driver forces would override it)"),
    ("nccl.non_roce_hcas", "list", "", "the HCAs NCCL's NET/IB list marks other than RoCE (InfiniBand ones): [] when "
     "every HCA it uses is RoCE, so an unacknowledged packet was on Ethernet"),
    ("rdma.retry_exceeded", "list", "", "messages saying a queue pair's work completion failed because its packets were "
     "never acknowledged (IBV_WC_RETRY_EXC_ERR, status 12: 'transport retry counter exceeded', NCCL's 'completion with "
     "error 12'), from NCCL, UCX and the verbs tools; [] when their output was read and none says so"),
])

READS: dict[str, tuple[str, ...]] = {
    "roce.rdma_off_lossless": ("roce.qos_ports", "roce.global_tclass", "nccl.effective.NCCL_IB_TC"),
    "roce.default_tc_off_lossless": ("roce.qos_ports", "roce.global_tclass", "env.names"),
    "roce.rdma_placement": ("roce.qos_ports", "roce.global_tclass", "nccl.effective.NCCL_IB_TC", "env.names"),
}

# NCCL: "Got completion with error 12", then "Got completion from peer 10.2.0.5<33092> with error 12, opcode 0 ...",
# later "... with status=12 opcode=0" (12 is IBV_WC_RETRY_EXC_ERR); verbs: "transport retry counter exceeded"; UCX:
# "Transport retry count exceeded"
_RETRY = re.compile(r"(?i)completion\b.{0,80}?\bwith (?:error |status=)12\b|\bstatus[ =:]*12\b.{0,40}retry|transport "
                    r"retry count(?:er)? exceeded|\bRETRY_EXC(?:_ERR)?\b")
_RETRY_SOURCES = ("nccl.warnings", "ucx.errors", "rdma.verbs_errors")
READS["rdma.retry_exceeded"] = _RETRY_SOURCES
READS["nccl.non_roce_hcas"] = ("nccl.hca_transports",)


def non_roce_hcas(fs: FactSet) -> None:
    layers = fs.get_value("nccl.hca_transports")
    if isinstance(layers, dict) and layers and "nccl.non_roce_hcas" not in fs:
        fs.add(Fact("nccl.non_roce_hcas", sorted(h for h, t in layers.items() if not str(t).startswith("RoCE")), "",
                    "inferred: NCCL's NET/IB list", "", 0.0))


def retry_exceeded(fs: FactSet) -> None:
    if "rdma.retry_exceeded" in fs:
        return
    read, hits = fs.messages_matching({name: _RETRY for name in _RETRY_SOURCES})
    if read:
        fs.add(Fact("rdma.retry_exceeded", hits[:10], "", "inferred: NCCL, UCX and verbs messages of unacknowledged "
                    "queue-pair packets", "", 0.0))


def _placements(ports: list[Any], tclass: int, where: str) -> list[tuple[str, bool]]:
    """For each DSCP-trust port with PFC on some priority and its mapping shown: where ``tclass`` lands, and whether
    PFC is on there."""
    dscp = tclass >> 2
    out = []
    for p in ports:
        if not isinstance(p, dict) or p.get("trust") != "dscp" or not p.get("pfc"):
            continue
        prio = (p.get("dscp_prio") or {}).get(str(dscp))
        if prio is None:
            continue
        pfc = ", ".join(str(q) for q in p["pfc"])
        lossless = prio in p["pfc"]
        out.append((f"tclass {tclass} ({where}) is DSCP {dscp}: priority {prio} on {p.get('iface')}, "
                    + ("PFC on" if lossless else f"where PFC is on priority {pfc} only"), lossless))
    return out


def rdma_priority(fs: FactSet) -> None:
    ports = fs.get_value("roce.qos_ports")
    if not isinstance(ports, list) or "roce.rdma_placement" in fs:
        return
    forced = fs.get_value("roce.global_tclass")
    classes: list[tuple[int, str]] = []
    if isinstance(forced, list):
        for t in forced:
            if isinstance(t, dict) and isinstance(t.get("tclass"), int):
                c = (t["tclass"], f"the driver's Global tclass{' on ' + t['device'] if t.get('device') else ''}")
                if c not in classes:
                    classes.append(c)
    elif "nccl.effective.NCCL_IB_TC" in fs:
        tc = str(fs.get_value("nccl.effective.NCCL_IB_TC")).strip()
        if tc.isdigit() and int(tc) < 256:
            classes.append((int(tc), f"NCCL_IB_TC={tc}"))
    elif "env.names" in fs:  # an environment listing without NCCL_IB_TC: NCCL asks for class 0
        placed = _placements(ports, 0, "NCCL's default: NCCL_IB_TC is not set")
        _add(fs, placed, "roce.default_tc_off_lossless", "NCCL's default traffic class 0")
        return
    _add(fs, [pl for tclass, where in classes for pl in _placements(ports, tclass, where)], "roce.rdma_off_lossless",
         "the RDMA traffic class")


def _add(fs: FactSet, placed: list[tuple[str, bool]], off: str, what: str) -> None:
    if placed:
        src = f"inferred: {what} against mlnx_qos' dscp2prio mapping and PFC"
        fs.add(Fact("roce.rdma_placement", [t for t, _ in placed], "", src, "", 0.0))
        fs.add(Fact(off, [t for t, ok in placed if not ok], "", src, "", 0.0))
