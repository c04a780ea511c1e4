"""GPUd (leptonai/gpud, NVIDIA's node health daemon): its component states (``gpud status``, its API's JSON, each with
``component``, ``health`` and ``reason``), its event lines, and the NVML errors it logs.

Real samples (leptonai/gpud#1151, #604; tests/data/gpud)::

    "component": "accelerator-nvidia-fabric-manager",
    "health": "Unhealthy",
    "reason": "NVIDIA-H100-80GB-HBM3 checked fabric state; fabric manager found but not active",
    "data": "{\\"fabric_manager_active\\":false,\\"fabric_state_supported\\":true,...

    XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00
    failed to get remapped rows for GPU-ac896b35-...: failed to get device remapped rows: ERROR_GPU_IS_LOST

What it means here: a component GPUd calls Unhealthy names where to look, and its reason says what it saw; the Xid
events are the driver's (the same codes as the kernel log); NVML's ERROR_GPU_IS_LOST is a GPU gone from the bus.
Pasted JSON is often cut: the fields are read by name, not by parsing the document.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("gpud.unhealthy", "list", "", "GPUd components in an Unhealthy or Degraded state, as 'component: reason'"),
    ("gpud.components", "list", "", "GPUd components the text shows a state of, each once"),
    ("gpud.xid_codes", "list", "", "Xid codes of GPUd's events ('XID 79(GPU has fallen off the bus) detected on PCI:...'), sorted"),
    ("gpud.gpu_lost", "bool", "", "NVML said a GPU is lost (ERROR_GPU_IS_LOST, 'GPU is lost'): it fell off the bus"),
    ("gpud.fabric_manager_active", "bool", "", "GPUd's fabric-manager check data ('fabric_manager_active': true/false)"),
    ("gpud.fabric_state_supported", "bool", "", "the same data's 'fabric_state_supported': the GPUs have an NVSwitch fabric "
     "to register with (false on PCIe boards, where no fabric manager runs by design)"),
]

_COMPONENT = re.compile(r'"component"\s*:\s*"([\w.-]+)"')
_HEALTH = re.compile(r'"health"\s*:\s*"(\w+)"')
_REASON = re.compile(r'"reason"\s*:\s*"((?:[^"\\]|\\.){0,400})')
_XID = re.compile(r"\bXID (\d{1,3})\s*\(")
_LOST = re.compile(r"ERROR_GPU_IS_LOST|\bGPU is lost\b")
_FM_ACTIVE = re.compile(r'\\?"fabric_manager_active\\?"\s*:\s*(true|false)')
_FS_SUPPORTED = re.compile(r'\\?"fabric_state_supported\\?"\s*:\s*(true|false)')


def _detect(text: str) -> float:
    head = text[:131072]
    if '"component"' in head and '"health"' in head and re.search(r'"component"\s*:\s*"(?:accelerator|infiniband|'
                                                                  r'cpu|disk|memory|kernel|network|library|os)-', head):
        return 0.85
    if _XID.search(head) and "detected on PCI" in head:
        return 0.8
    if "ERROR_GPU_IS_LOST" in head:
        return 0.6
    return 0.0


@parser(
    "gpud",
    detect=_detect,
    summary="GPUd's component states, Xid events and NVML errors (leptonai/gpud)",
    facts=FACTS,
    command="gpud status   (or curl -sk https://localhost:15132/v1/states)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "GPUd's states ('\"component\": ..., \"health\": ...') or events ('XID 79(...)')")
    components: list[str] = []
    unhealthy: list[str] = []
    current = ""
    health = ""
    for line in text.split("\n"):
        if len(line) > 20000:
            continue
        c = _COMPONENT.search(line)
        if c:
            current = c.group(1)
            if current not in components and len(components) < 200:
                components.append(current)
        h = _HEALTH.search(line)
        if h:
            health = h.group(1)
        r = _REASON.search(line)
        if r and current and health.lower() in ("unhealthy", "degraded"):
            add_clipped(unhealthy, f"{current}: {r.group(1)}", 50)
            health = ""
    xids = sorted({int(x) for x in _XID.findall(text)})
    lost = bool(_LOST.search(text))
    fm = _FM_ACTIVE.findall(text)
    fs = _FS_SUPPORTED.findall(text)
    if not components and not xids and not lost:
        raise ParseError("no GPUd component state, Xid event or NVML 'GPU is lost' error")
    facts: dict[str, Any] = {"gpud.unhealthy": unhealthy}
    if components:
        facts["gpud.components"] = components
    if xids:
        facts["gpud.xid_codes"] = xids
    if lost:
        facts["gpud.gpu_lost"] = True
    if fm:
        facts["gpud.fabric_manager_active"] = fm[-1] == "true"
    if fs:
        facts["gpud.fabric_state_supported"] = fs[-1] == "true"
    return facts
