"""The RDMA shared device plugin's log (Mellanox/k8s-rdma-shared-dev-plugin, deployed alone or by the NVIDIA Network
Operator: ``kubectl logs -n nvidia-network-operator rdma-shared-dp-ds-xxxxx``).

Real sample (Mellanox/k8s-rdma-shared-dev-plugin#87, tests/data/rdma-device-plugin; the wording is the plugin's
cmd/k8s-rdma-shared-dp/main.go and pkg/resources/resources_manager.go)::

     Exiting.. can not change : incorrect RDMA subsystem network namespace

What it means here: the plugin shares each RDMA device with every pod that asks for its resource, which works only
while the kernel's RDMA subsystem is in *shared* network-namespace mode. On a node switched to exclusive mode
(``rdma system set netns exclusive``, or ``options ib_core netns_mode=0``) it refuses to start, its pods crash-loop,
and no pod gets the RDMA resource: NCCL in them finds no IB device and falls back to sockets. Its other start-up
failures (invalid configuration, no device found for a selector) are kept as printed.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("rdma_dp.netns_exclusive", "bool", "", "the RDMA shared device plugin refused to start because the node's RDMA "
     "subsystem is in exclusive network-namespace mode ('Exiting.. can not change : incorrect RDMA subsystem network "
     "namespace')"),
    ("rdma_dp.errors", "list", "", "the plugin's fatal and warning lines, as printed ('Exiting.. ...', 'Error: ...', "
     "'Warning: no devices in device pool ...'), at most 20"),
    ("rdma_dp.empty_resources", "list", "", "resources the plugin serves with no device ('no devices in device pool, "
     "creating empty resource server for NAME'): pods asking for them get no RDMA device"),
]

_STARTING = re.compile(r"Starting K8s RDMA Shared Device Plugin")
_NETNS = re.compile(r"incorrect RDMA subsystem network namespace")
_FATAL = re.compile(r"(Exiting\.\. .+|Error: (?:error discovering host devices|initializing resource servers|starting "
                    r"resource servers).*|Warning: (?:no devices in device pool|DiscoverHostDevices\(\)).*)$")
_EMPTY = re.compile(r"no devices in device pool, creating empty resource server for (\S+)")
MAX_LINE = 4000


def _detect(text: str) -> float:
    head = text[:131072]
    if _NETNS.search(head) or _STARTING.search(head):
        return 0.9
    return 0.6 if re.search(r"Exiting\.\. (?:can not change|one or more invalid configuration)", head) else 0.0


@parser(
    "rdma-device-plugin",
    detect=_detect,
    summary="the RDMA shared device plugin's log (Kubernetes, NVIDIA Network Operator): RDMA netns mode, devices found",
    facts=FACTS,
    command="kubectl logs -n nvidia-network-operator -l app=rdma-shared-dp --tail=100",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "the RDMA shared device plugin's log")
    seen = netns = False
    errors: list[str] = []
    empty: list[str] = []
    for raw in text.split("\n"):
        ln = raw[:MAX_LINE].rstrip()
        if _STARTING.search(ln):
            seen = True
        if _NETNS.search(ln):
            seen = netns = True
        m = _FATAL.search(ln)
        if m:
            seen = True
            add_clipped(errors, m.group(1).strip(), 20)
        e = _EMPTY.search(ln)
        if e:
            add_clipped(empty, e.group(1), 64)
    if not seen:
        raise ParseError("no RDMA shared device plugin line ('Starting K8s RDMA Shared Device Plugin', 'Exiting.. ...')")
    facts: dict[str, Any] = {"rdma_dp.netns_exclusive": netns, "rdma_dp.errors": errors}
    if empty:
        facts["rdma_dp.empty_resources"] = empty
    return facts
