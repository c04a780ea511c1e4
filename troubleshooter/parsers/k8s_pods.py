"""A Kubernetes pod listing: ``kubectl get pods [-A] [-o wide]``: which pods are not running, and which of them are
the GPU stack's own (the NVIDIA driver, container toolkit, device plugin, validators, DCGM, MIG manager, the network
operator's RDMA pods).

Real samples (NVIDIA's GPU Operator troubleshooting page; NVIDIA/k8s-device-plugin#13; tests/data/k8s-pods)::

    NAME                            READY   STATUS             RESTARTS      AGE
    gpu-operator-568c7ff7f6-chg5b   0/1     CrashLoopBackOff   4 (85s ago)   4m42s

What it means here: a GPU-stack pod that is not Running (CrashLoopBackOff, Init:0/4, Error, Pending) says where the
node's GPU plumbing stopped, not why; its logs (kubectl logs, describe) say why. The listing alone names no cause.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("k8s.pods_listed", "number", "count", "pods the listing shows"),
    ("k8s.pods_not_running", "list", "", "pods whose STATUS is not Running or Completed, as 'NAME: STATUS (restarts N)'"),
    ("k8s.gpu_stack_pods_not_running", "list", "", "of those, the GPU stack's own pods (nvidia-driver, container toolkit, "
     "device plugin, GPU feature discovery, validators, DCGM, MIG manager, RDMA/network operator), the same way"),
]

_HEADER = re.compile(r"^\s*(?:NAMESPACE\s+)?NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\b")
_ROW = re.compile(r"^\s*(?:(?P<ns>[a-z0-9][a-z0-9.-]*)\s+)?(?P<name>[a-z0-9][a-z0-9.-]*)\s+(?P<ready>\d+/\d+)\s+"
                  r"(?P<status>\S+)\s+(?P<restarts>\d+)(?:\s+\([^)]*\))?\s+(?P<age>\S+)")
_OK = {"Running", "Completed", "Succeeded"}
_GPU_STACK = re.compile(r"nvidia|gpu-operator|gpu-feature-discovery|device-plugin|dcgm|mig-manager|cuda-validator|"
                        r"operator-validator|container-toolkit|driver-daemonset|mofed|rdma|network-operator|sriov|"
                        r"gpu-operator-node-feature|nvsentinel|gpud")
MAX_ROWS = 5000


def _detect(text: str) -> float:
    lines = text.split("\n")[:200]
    for i, ln in enumerate(lines):
        if _HEADER.match(ln):
            rows = sum(1 for r in lines[i + 1:i + 20] if _ROW.match(r))
            return 0.85 if rows else 0.0
    return 0.0


@parser(
    "k8s-pods",
    detect=_detect,
    summary="kubectl get pods: pods not running, the GPU stack's (driver, toolkit, device plugin, validators) apart",
    facts=FACTS,
    command="kubectl get pods -A -o wide | grep -E 'nvidia|gpu|NAME'",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a kubectl get pods listing (NAME READY STATUS RESTARTS AGE)")
    seen_header = False
    listed = 0
    bad: list[str] = []
    gpu: list[str] = []
    for ln in text.split("\n"):
        if _HEADER.match(ln):
            seen_header = True
            continue
        if not seen_header or len(ln) > 2000:
            continue
        m = _ROW.match(ln)
        if not m:
            continue
        listed += 1
        if listed > MAX_ROWS:
            break
        if m.group("status") in _OK:
            continue
        item = f"{m.group('name')}: {m.group('status')} (restarts {m.group('restarts')})"
        add_clipped(bad, item, 50)
        if _GPU_STACK.search(m.group("name")):
            add_clipped(gpu, item, 50)
    if not seen_header or not listed:
        raise ParseError("no 'NAME READY STATUS RESTARTS AGE' header with pod rows: not a kubectl get pods listing")
    return {"k8s.pods_listed": listed, "k8s.pods_not_running": bad, "k8s.gpu_stack_pods_not_running": gpu}
