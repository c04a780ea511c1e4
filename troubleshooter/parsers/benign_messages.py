"""Messages that look like faults and are not: warnings the GPU stack's own documentation or maintainers call harmless.

Real samples (NVIDIA Container Toolkit docs; NVIDIA Confidential Containers docs; leptonai/gpud#1147; NVIDIA/aicr#2641;
aws/eks-node-monitoring-agent#63;
tests/data/benign-messages)::

    groups: cannot find name for group ID 993
    qemu-system-x86_64: warning: IOMMU_IOAS_MAP failed: Bad address, PCI BAR?
    NVIDIA-H100-PCIe with unhealthy fabric state: GPU GPU-8ca5630b-...: state=Not Supported
      GPU_UUID:GPU-bb3e1419-... IMEX daemon status is -3 (not READY)

Read: each such message found, with what it means and why nothing needs fixing. A paste that holds only these is read
(not "cannot tell what tool printed this"), and no cause is drawn from it: the outputs that would show a fault are
still the ones each hypothesis names.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("benign.messages", "list", "", "known-harmless messages found, each as 'the message: why it is harmless'"),
]

# (pattern, why it is harmless, where that is said)
_KNOWN: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"groups: cannot find name for group ID \d+"),
     "the container runtime added a host group (video, render) that the image's /etc/group does not name; the "
     "process has the group, only its name is unknown (NVIDIA Container Toolkit documentation)"),
    (re.compile(r"IOMMU_IOAS_MAP failed: Bad address, PCI BAR\?|vfio_container_dma_map\([^)]*\) = -14 \(Bad address\)"),
     "QEMU could not map a passed-through device's PCI BAR for peer-to-peer DMA through iommufd; the guest starts and "
     "uses the GPU (NVIDIA Confidential Containers documentation)"),
    (re.compile(r"sched: CPU #\d+'s llc-sibling CPU #\d+ is not on the same node! \[node: \d+ != \d+\]\. Ignoring dependency\."),
     "the hypervisor presents the VM's cache domains across NUMA nodes; the kernel's topology check warns at boot and "
     "goes on (Azure's HB/HC known issues: 'You may ignore the following kernel warning messages')"),
    (re.compile(r"IMEX daemon status is -?\d+ \(not READY\)|DCGMHealthCode122\b|health check system with error code 122\b"),
     "IMEX shares GPU memory across the nodes of a multi-node NVLink domain (GB200/GB300 NVL72): where none is in use "
     "(a single-node NVSwitch system, an idle node with no ComputeDomain) no IMEX daemon runs and DCGM reports it not "
     "ready (DCGM's health code 122, DCGM_FR_IMEX_UNHEALTHY), as expected (NVIDIA/NVSentinel#1471, NVIDIA/aicr#2641, "
     "aws/eks-node-monitoring-agent#63); only a job that spans nodes over NVLink needs it running"),
    (re.compile(r"\b\w[\w-]{0,63}PCIe with unhealthy fabric state: .*state=Not Supported"),
     "a PCIe GPU has no NVSwitch fabric: 'Not Supported' is the only state it can report, not a fault "
     "(leptonai/gpud#1147)"),
]


def _detect(text: str) -> float:
    head = text[:65536]
    return 0.45 if any(rx.search(head) for rx, _ in _KNOWN) else 0.0


@parser(
    "benign-messages",
    detect=_detect,
    summary="warnings the GPU stack's documentation or maintainers call harmless (shown as read, no cause drawn)",
    facts=FACTS,
    command="(the message as printed)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a known-harmless message")
    found: list[str] = []
    for rx, why in _KNOWN:
        m = rx.search(text)
        if m:
            found.append(f"{m.group(0)[:160]}: {why}")
    if not found:
        raise ParseError("no message of the known-harmless ones")
    return {"benign.messages": found}
