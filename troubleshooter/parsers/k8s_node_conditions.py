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
the reason and message are the agent's own words, kept as printed for the causes to read. The same output's Capacity
and Allocatable blocks (and status.capacity/allocatable in ``-o yaml``) count the node's GPUs: Allocatable below
Capacity is the device plugin withholding devices it marked unhealthy (k8s-device-plugin#58: "Capacity: Total number
of GPUs, Allocatable: Number of GPUs in a Healthy state").
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("k8s.node_problems", "list", "", "the node's conditions that report a problem, 'Type: Reason: Message' as printed "
     "(a condition True, or Ready False), at most 20"),
    ("k8s.node_conditions", "dict", "", "each condition's status as printed: Type -> True | False | Unknown"),
    ("k8s.gpu_capacity", "dict", "", "GPU resources the node registers (Capacity / status.capacity): resource -> count"),
    ("k8s.gpu_allocatable", "dict", "", "GPU resources the node offers to pods (Allocatable / status.allocatable): "
     "resource -> count; below the capacity by the devices the device plugin reports unhealthy"),
    ("k8s.gpus_withheld", "list", "", "GPU resources whose allocatable count is below the capacity, as "
     "'nvidia.com/gpu: 6 of 8': devices the device plugin marked unhealthy"),
]

_ROW = re.compile(r"^\s*([A-Za-z][\w./-]{1,80})\s+(True|False|Unknown)\s+(?:\S+,\s+\d.*?[+-]\d{4}\s+\S+,\s+\d.*?[+-]\d{4}\s+)?"
                  r"([A-Z][A-Za-z]{2,80})\s+(\S(?:.*\S)?)\s*$")
_FIELD = re.compile(r"^\s*(Type|Status|Reason|Message):\s+(\S(?:.*\S)?)\s*$")
# kubectl describe node's "Capacity:" / "Allocatable:" blocks, and the same under status in -o yaml ("capacity:")
_SECTION = re.compile(r"^(\s*)(Capacity|Allocatable|capacity|allocatable):\s*$")
_GPU_RES = re.compile(r"^\s*((?:nvidia|amd)\.com/gpu):\s+\"?(\d+)\"?\s*$")
MAX_LINE = 4000


def _detect(text: str) -> float:
    head = text[:131072]
    rows = [m for m in (_ROW.match(ln) for ln in head.split("\n", 2000)[:2000] if len(ln) < MAX_LINE) if m]
    if len(rows) >= 2 or (rows and re.search(r"^[^\S\n]*Conditions:\s*$", head, re.MULTILINE)):
        return 0.8
    if re.search(r"^[^\S\n]*Type:\s+\S+\s*\n\s*Status:\s+(?:True|False|Unknown)\s*$", head, re.MULTILINE):
        return 0.8
    # every paste is offered to every detector: walk its lines only where an Allocatable block can be
    if "llocatable:" in head and _gpu_resources(head)[1]:
        return 0.8
    return 0.0


def _gpu_resources(text: str) -> tuple[dict[str, int], dict[str, int]]:
    """GPU counts under the Capacity and Allocatable blocks (describe node) or capacity/allocatable maps (-o yaml)."""
    found: dict[str, dict[str, int]] = {"capacity": {}, "allocatable": {}}
    section, indent = "", -1
    for raw in text.split("\n", 20000)[:20000]:
        m = _SECTION.match(raw)
        if m:
            section, indent = m.group(2).lower(), len(m.group(1))
            continue
        if not section or not raw.strip():
            continue
        if len(raw) - len(raw.lstrip()) <= indent:
            section = ""  # the block ended at a line no deeper than its header
            continue
        g = _GPU_RES.match(raw)
        if g:
            found[section][g.group(1)] = int(g.group(2))
    return found["capacity"], found["allocatable"]


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
    capacity, allocatable = _gpu_resources(text)
    if not statuses and not allocatable:
        raise ParseError("no node condition ('Type  Status  ...  Reason  Message' rows, or 'Type: ... Status: ...') and "
                         "no GPU resource under Capacity/Allocatable")
    facts: dict[str, Any] = {"k8s.node_problems": problems, "k8s.node_conditions": statuses} if statuses else {}
    if allocatable:
        facts["k8s.gpu_allocatable"] = allocatable
        if capacity:
            facts["k8s.gpu_capacity"] = capacity
            facts["k8s.gpus_withheld"] = [f"{r}: {n} of {capacity[r]}" for r, n in allocatable.items()
                                          if r in capacity and n < capacity[r]]
    return facts
