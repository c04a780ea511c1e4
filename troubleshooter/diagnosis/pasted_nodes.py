"""Pasted outputs of several nodes: each node diagnosed on its own, and the nodes compared with each other.

Outputs given per node (``node07:ibstat.txt node08:ibstat.txt``, or one pdsh paste whose lines each name their
host) were read and then left out of the diagnosis: a walk diagnoses one machine, and two named machines are not
one. With two or more nodes and no output of the job's own side, every node is the machine diagnosed in turn
(its outputs as the target, the host side's beside them), and the node-vs-node comparison that ``fanout`` runs on
captured bundles runs on their facts: what one node has that the others do not.
"""

from __future__ import annotations

import dataclasses
import json

from troubleshooter.diagnosis.compare.nodes import NodeComparator, NodeReport, _natural, canonical, never_compared
from troubleshooter.diagnosis.pasted import ACROSS_FILES, EvidenceFacts
from troubleshooter.model.facts import Fact

_NOT_NODES = ("target", "host")


def node_names(facts: EvidenceFacts) -> list[str]:
    """The named nodes whose outputs were read, in natural order (node2 before node10), when there are at least
    two and no output of the job's own side: else [] (one machine, diagnosed as it is)."""
    read = {f.side for f in facts.files if f.kind and not f.error}
    if "target" in read:
        return []
    names = sorted((s for s in read if s not in _NOT_NODES), key=_natural)
    return names if len(names) >= 2 else []


def for_node(facts: EvidenceFacts, node: str) -> EvidenceFacts:
    """The outputs as one node's diagnosis sees them: that node's files are the target, the host side's stay the
    host's, the other nodes' are left out (each is diagnosed in its own turn)."""
    files = [dataclasses.replace(f, side="target", how=f"{f.how}; node {node}'s outputs, diagnosed as one machine")
             if f.side == node else f for f in facts.files if f.side in (node, "host")]
    one = EvidenceFacts(files)
    whole = facts.factsets.get("target")
    for name, *_ in ACROSS_FILES:  # what the whole evidence infers across its files, every node carries
        got = whole.get(name) if whole is not None else None
        if got is not None and name not in one.factsets["target"]:
            one.factsets["target"].add(Fact(name, got.value, got.unit, got.source, "", 0.0))
    return one


def compare(facts: EvidenceFacts, names: list[str]) -> NodeReport:
    """Node against node over the facts each node's outputs gave (the comparator ``fanout`` uses on bundles)."""
    comp = NodeComparator()
    for n in names:
        fs = facts.factsets.get(n)
        comp.add(n, {name: f.value for name, f in fs.items()} if fs is not None else {})
    return comp.report()


def alike(facts: EvidenceFacts, names: list[str], report: NodeReport) -> list[list[str]]:
    """The nodes in groups whose outputs gave the same facts: each group's diagnosis is the same walk, made once
    (512 nodes of one pdsh paste are a few walks, not 512). Facts that name a node and nothing more are left out
    of the likeness unless a rule reads them: the comparator's identity facts (port GUIDs, serials: different on
    every node) and those it never compares (the node's own name, counters that move between readings). The
    groups with a node that stands out come first, then the larger ones (nodes in natural order within)."""
    from troubleshooter.diagnosis.treetools import facts_read_by_rules

    read, identity = facts_read_by_rules(), set(report.identity)
    groups: dict[str, list[str]] = {}
    for n in names:
        fs = facts.factsets.get(n)
        key = json.dumps({k: canonical(f.value) for k, f in (fs.items() if fs is not None else ())
                          if k in read or not (k in identity or never_compared(k))}, sort_keys=True, default=str)
        groups.setdefault(key, []).append(n)
    odd = {s["node"] for s in report.suspects()}
    return sorted(groups.values(), key=lambda g: (not odd.intersection(g), -len(g), _natural(g[0])))
