"""``systemctl status UNIT`` (and the unit's journal lines): is the fabric manager, or another service, running.

Real samples (an HGX node whose fabric manager had been killed, from a public post on recovering NVLS; a RHEL AI
node where it runs; tests/data/systemctl-status)::

    × nvidia-fabricmanager.service - NVIDIA fabric manager service
         Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; vendor preset: enabled)
         Active: failed (Result: signal) since Mon 2026-08-10 15:45:34 UTC; 5 days ago
       Main PID: 9946 (code=killed, signal=KILL)

    Mar 25 02:10:15 rhelai-02.redhat.lab nv-fabricmanager[2116]: Successfully configured all the available NVSwitches ...

Read: each unit's name, load state, enablement and active state with its detail (``failed (Result: signal)``,
``active (running)``, ``inactive (dead)``), ``Unit X could not be found.``, and the fabric manager's own log lines
(``nv-fabricmanager[PID]: ...``, also from ``journalctl -u nvidia-fabricmanager``), errors among them kept.

What it means: on an NVSwitch system (HGX/DGX) the GPUs cannot run CUDA work until nvidia-fabricmanager has set
up the fabric; a failed or stopped service, or one whose version differs from the driver's, is why. A fabric
manager that died after setting the fabric up leaves NVLS unusable until the GPUs are reset. On a PCIe system
the service is not installed at all, and that is normal.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

MAX_LINES = 20
MAX_TEXT = 300
FM_UNIT = "nvidia-fabricmanager.service"

FACTS = [
    ("systemd.units", "dict", "", "unit -> {loaded, enabled, active, detail} as systemctl status prints them"),
    ("systemd.failed_units", "list", "", "units whose Active state is failed"),
    ("fm.service_state", "string", "", "the nvidia-fabricmanager unit's state: active, failed, inactive, activating, "
     "not-found (the unit is not installed: normal on PCIe systems)"),
    ("fm.log_errors", "list", "", f"the fabric manager's log lines that report an error or a mismatch, at most {MAX_LINES}"),
]

_HEAD = re.compile(r"^\s*(?:[●×○↻*x]\s+)?([\w@.\-\\]+\.(?:service|socket|timer|path|mount|target))\s+-\s+(.*)$")
_LOADED = re.compile(r"^\s*Loaded:\s*(\S+)(?:\s*\(([^)]*)\))?")
_ACTIVE = re.compile(r"^\s*Active:\s*(\S+)(?:\s*\(([^)]*)\))?")
_NOT_FOUND = re.compile(r"Unit ([\w@.\-]+\.service) could not be found")
_FM_LOG = re.compile(r"\b(?:nv-fabricmanager|nvidia-fabricmanager)(?:\[\d+\])?:\s*(.*)$")
_FM_ERROR = re.compile(r"(?i)error|fail|n't match|not match|mismatch|unable|timed? ?out|abort")


def _detect(text: str) -> float:
    head = text[:65536]
    units = len(re.findall(r"^\s*Active:\s*(?:active|inactive|failed|activating|deactivating|reloading)\b", head, re.M))
    if units and re.search(r"^\s*Loaded:\s*(?:loaded|not-found|masked)\b", head, re.M):
        return 0.9
    if _NOT_FOUND.search(head) or re.search(r"\bnv-fabricmanager\[\d+\]:", head):
        return 0.6
    return 0.0


@parser(
    "systemctl-status",
    detect=_detect,
    summary="systemctl status UNIT (and the fabric manager's journal lines): loaded, enabled, active/failed",
    facts=FACTS,
    command="systemctl status nvidia-fabricmanager --no-pager -l",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "systemctl status output")
    units: dict[str, dict[str, str]] = {}
    fm_errors: list[str] = []
    current: dict[str, str] | None = None
    seen = False
    for raw in text.split("\n"):
        line = raw.rstrip()
        h = _HEAD.match(line) if " - " in line else None
        if h:
            current = units.setdefault(h.group(1), {})
            seen = True
            continue
        nf = _NOT_FOUND.search(line) if "could not be found" in line else None
        if nf:
            units.setdefault(nf.group(1), {})["loaded"] = "not-found"
            seen = True
            continue
        if current is not None:
            lo = _LOADED.match(line) if "Loaded:" in line else None
            if lo:
                current["loaded"] = lo.group(1)
                parts = [p.strip() for p in (lo.group(2) or "").split(";")]
                if len(parts) > 1 and parts[1] in ("enabled", "disabled", "static", "masked", "indirect", "generated"):
                    current["enabled"] = parts[1]
                continue
            ac = _ACTIVE.match(line) if "Active:" in line else None
            if ac:
                current["active"] = ac.group(1)
                if ac.group(2):
                    current["detail"] = ac.group(2)
                continue
        fm = _FM_LOG.search(line) if "fabricmanager" in line else None
        if fm:
            seen = True
            msg = fm.group(1).strip()
            if msg and _FM_ERROR.search(msg):
                add_clipped(fm_errors, msg, MAX_LINES, MAX_TEXT)
    if not seen:
        raise ParseError("no unit ('NAME.service - Description' with Loaded:/Active:), no 'Unit ... could not be "
                         "found' and no fabric manager log line")
    facts: dict[str, Any] = {"systemd.units": units,
                             "systemd.failed_units": [u for u, v in units.items() if v.get("active") == "failed"]}
    fmu = units.get(FM_UNIT)
    if fmu is not None:
        facts["fm.service_state"] = "not-found" if fmu.get("loaded") == "not-found" else fmu.get("active", "unknown")
    if fm_errors:
        facts["fm.log_errors"] = fm_errors
    return facts
