"""A Kubernetes node's conditions: the Conditions table of ``kubectl describe node``, the compact listing of
``kubectl get node -o custom-columns=...``, and one condition as ``Type: / Status: / Reason: / Message:`` lines.
Node Problem Detector and the clouds' GPU health agents (OCI's HPC GPU checks, GKE's, the GPU Operator's) report GPU
and fabric faults as conditions there.

Real samples (Oracle's OKE documentation on GPU node health; tests/data/k8s-node-conditions)::

    GpuCount       False    GpuCountHasNoIssues    Node has the expected number of GPUs
    RdmaLink       True     RdmaLinkHasIssues      Healthcheck:: RDMA Link Error
    Type:    oci.oraclecloud.com/MaintenanceFault
    Status:  True
    Reason:  HPCGPU-0002-02
    Message: The GPU has exceeded the maximum number of ECC defective row remaps.

What it means here: a condition that is True says its problem holds (Ready is the one condition whose True is good);
the reason and message are the agent's own words, kept as printed for the causes to read.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("k8s.node_problems", "list", "", "the node's conditions that report a problem, 'Type: Reason: Message' as printed "
     "(a condition True, or Ready False), at most 20"),
    ("k8s.node_conditions", "dict", "", "each condition's status as printed: Type -> True | False | Unknown"),
]

_ROW = re.compile(r"^\s*([A-Za-z][\w./-]{1,80})\s+(True|False|Unknown)\s+(?:\S+,\s+\d.*?[+-]\d{4}\s+\S+,\s+\d.*?[+-]\d{4}\s+)?"
                  r"([A-Z][A-Za-z]{2,80})\s+(\S.*?)\s*$")
_FIELD = re.compile(r"^\s*(Type|Status|Reason|Message):\s+(\S.*?)\s*$")
MAX_LINE = 4000


def _detect(text: str) -> float:
    head = text[:131072]
    rows = [m for m in (_ROW.match(ln) for ln in head.split("\n", 2000)[:2000] if len(ln) < MAX_LINE) if m]
    if len(rows) >= 2 or (rows and re.search(r"^\s*Conditions:\s*$", head, re.MULTILINE)):
        return 0.8
    if re.search(r"^\s*Type:\s+\S+\s*\n\s*Status:\s+(?:True|False|Unknown)\s*$", head, re.MULTILINE):
        return 0.8
    return 0.0


@parser(
    "k8s-node-conditions",
    detect=_detect,
    summary="a Kubernetes node's conditions (kubectl describe node, Node Problem Detector, the clouds' GPU health agents)",
    facts=FACTS,
    command="kubectl describe node <node> | sed -n '/^Conditions:/,/^Addresses:/p'",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a node's conditions (kubectl describe node's Conditions table)")
    statuses: dict[str, str] = {}
    problems: list[str] = []

    def add(kind: str, status: str, reason: str, message: str) -> None:
        statuses[kind] = status
        if (status == "True") != (kind == "Ready") and status != "Unknown":
            add_clipped(problems, f"{kind}: {reason}: {message}", 20, 300)

    one: dict[str, str] = {}
    for raw in text.split("\n"):
        ln = raw[:MAX_LINE].rstrip()
        f = _FIELD.match(ln)
        if f:
            if f.group(1) == "Type" and one:
                add(one.get("Type", "?"), one.get("Status", "Unknown"), one.get("Reason", ""), one.get("Message", ""))
                one = {}
            one[f.group(1)] = f.group(2)
            continue
        m = _ROW.match(ln)
        if m and len(statuses) < 64:
            add(m.group(1), m.group(2), m.group(3), m.group(4))
    if one.get("Type") and one.get("Status"):
        add(one["Type"], one["Status"], one.get("Reason", ""), one.get("Message", ""))
    if not statuses:
        raise ParseError("no node condition ('Type  Status  ...  Reason  Message' rows, or 'Type: ... Status: ...')")
    return {"k8s.node_problems": problems, "k8s.node_conditions": statuses}
