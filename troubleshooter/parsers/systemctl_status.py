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

The fabric manager's messages that say it did not start are read whatever stands before them (the journal's
prefix, a Talos node's address, nothing when quoted alone), each as a kind in ``fm.start_failures`` (real samples:
spectrocloud/CanvOS#700, siderolabs/extensions#511, siderolabs/docs#581, pytorch/pytorch#129749; tests/data)::

    Jul 20 16:15:36 edge-...:  Kernel module "ib_umad" has not been loaded, fabric manager cannot be started
    <node ip>: fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value
    10.0.0.101: nvlsm: ibwarn: [15] umad_init: can't read ABI version from ... is ib_umad module loaded?
    NVIDIA GPU driver interface version 550.90.07 don't match with driver version 550.54.15

- ``version-mismatch``: nv-fabricmanager's version differs from the loaded driver's (it exits);
- ``ib-umad-not-loaded``: the start-up check of ``nvidia-fabricmanager-start.sh`` on an NVLink 5 system (HGX/DGX
  B200, B300, GB200): the NVLink subnet manager (nvlsm) talks to the NVSwitches through ``/dev/infiniband/umad*``;
- ``nvlsm-no-umad``: nvlsm itself could not open the umad interface (``is ib_umad module loaded?``);
- ``nvlsm-missing``: the NVLink subnet manager package is not installed (NVL5+);
- ``config-invalid``: a path item of fabricmanager.cfg whose directory does not exist (the daemon exits at once);
- ``config-unreadable``: the config file itself could not be opened;
- ``cannot-start``: any other "fabric manager cannot be started" conclusion of the start-up check;
- ``exited``: the start script's ``"/usr/bin/nv-fabricmanager ..." failed! Exit code: N``;
- ``no-nvswitch``: the NVSwitch driver's ``WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]``: no NVSwitch here to
  manage (normal on PCIe cards and on GB200/GB300 compute trays, where the fabric manager is not needed).

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
    ("fm.start_failures", "list", "", "what the fabric manager (its start-up check, or nvlsm on NVL5+) says kept it from "
     "starting, in the order first seen: version-mismatch, ib-umad-not-loaded, nvlsm-no-umad, nvlsm-missing, "
     "config-invalid, config-unreadable, cannot-start, exited, no-nvswitch (it found no NVSwitch to manage)"),
    ("fm.config_invalid_items", "list", "", "fabricmanager.cfg items the fabric manager rejected ('... has an invalid "
     "value'): for a path item, its directory does not exist"),
]

_HEAD = re.compile(r"^\s*(?:[●×○↻*x]\s+)?([\w@.\-\\]+\.(?:service|socket|timer|path|mount|target))\s+-\s+(.*)$")
_LOADED = re.compile(r"^\s*Loaded:\s*(\S+)(?:\s*\(([^)]*)\))?")
_ACTIVE = re.compile(r"^\s*Active:\s*(\S+)(?:\s*\(([^)]*)\))?")
_NOT_FOUND = re.compile(r"Unit ([\w@.\-]+\.service) could not be found")
_FM_LOG = re.compile(r"\b(?:nv-fabricmanager|nvidia-fabricmanager)(?:\[\d+\])?:\s*(.*)$")
_FM_ERROR = re.compile(r"(?i)error|fail|n't match|not match|mismatch|unable|timed? ?out|abort")
# The fabric manager's own words that it did not start (nv-fabricmanager, nvidia-fabricmanager-start.sh, and the
# NVLink subnet manager it starts on NVL5+), wherever they stand on the line
_FM_MESSAGES = (
    ("version-mismatch", re.compile(r"driver interface version \S+\s+(?:doesn't|does not|don't|do not) match with "
                                    r"driver version")),
    ("ib-umad-not-loaded", re.compile(r'Kernel module "?ib_umad"? has not been loaded')),
    ("nvlsm-no-umad", re.compile(r"\bnvlsm\b.*\bis ib_umad module loaded\?")),
    ("nvlsm-missing", re.compile(r'/nvlsm"? does not exist|Please install "?Nvidia NVLink Subnet Manager"?', re.IGNORECASE)),
    ("config-invalid", re.compile(r"fabric manager config file item: (\w+) has an invalid value")),
    ("config-unreadable", re.compile(r"fabric manager config file open failed with")),
    ("cannot-start", re.compile(r"(?i)fabric manager cannot (?:be )?start(?:ed)?\b")),
    ("exited", re.compile(r'nv-fabricmanager\b[^"]*" failed! Exit code: [1-9]')),
    # the NVSwitch driver answering 'nothing to do': the fabric manager found no NVSwitch to manage (a system of PCIe
    # cards, a GB200/GB300 compute tray: NVIDIA/gpu-operator#610, data-infra/cube-studio#29)
    ("no-nvswitch", re.compile(r"NVSwitch device information from NVSwitch driver failed with error:\s*WARNING Nothing "
                               r"to do|\[NV_WARN_NOTHING_TO_DO\]")),
)
_FM_WORDS = ("match with driver", "ib_umad", "nvlsm", "fabric manager c", "failed! Exit code", "NOTHING_TO_DO",
             "Nothing to do")
# what stands before a message: a syslog prefix (time, host, an ident), a Talos node's address
_SYSLOG = re.compile(r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+) \S+\s+(?:[\w.@/\-]+(?:\[\d+\])?:\s+)?")
_NODE = re.compile(r"^(?:<[^<>]{1,40}>|\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F]*:[0-9a-fA-F:]+):\s+")


def _detect(text: str) -> float:
    head = text[:65536]
    units = len(re.findall(r"^[^\S\n]*Active:\s*(?:active|inactive|failed|activating|deactivating|reloading)\b", head, re.M))
    if units and re.search(r"^[^\S\n]*Loaded:\s*(?:loaded|not-found|masked)\b", head, re.M):
        return 0.9
    if _NOT_FOUND.search(head) or re.search(r"\bnv-fabricmanager\[\d+\]:", head):
        return 0.6
    if any(w in head for w in _FM_WORDS) and any(_fm_message(ln) for ln in _joined(head.split("\n")[:2000])):
        return 0.6  # the fabric manager's own words, from the journal or quoted alone
    return 0.0


def _joined(lines: list[str]) -> list[str]:
    """The lines, with the mismatch message rejoined where a paste wrapped it ('... interface version X' /
    'don't match with driver version Y')."""
    out: list[str] = []
    for ln in lines:
        if (out and "match with" in ln and "interface version" in out[-1] and len(out[-1]) < 4000
                and re.search(r"driver interface version \S+\s*$", out[-1])
                and re.match(r"\s*(?:doesn't|does not|don't|do not) match with", ln)):
            out[-1] = out[-1].rstrip() + " " + ln.strip()
            continue
        out.append(ln)
    return out


def _fm_message(line: str) -> list[tuple[str, re.Match[str]]]:
    """The fabric manager's start failures this line states."""
    if len(line) > 4000 or not any(w in line for w in _FM_WORDS):
        return []
    return [(kind, m) for kind, rx in _FM_MESSAGES if (m := rx.search(line))]


def _message(line: str) -> str:
    """The line without its log prefix (syslog time, host and ident; a node's address)."""
    s = line.strip()
    m = _SYSLOG.match(s)
    if m:
        s = s[m.end():]
    n = _NODE.match(s)
    return s[n.end():] if n else s


@parser(
    "systemctl-status",
    detect=_detect,
    summary="systemctl status UNIT, and the fabric manager's log lines (journal, or quoted alone): loaded, enabled, "
            "active/failed; why the fabric manager did not start",
    facts=FACTS,
    command="systemctl status nvidia-fabricmanager --no-pager -l",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "systemctl status output")
    units: dict[str, dict[str, str]] = {}
    fm_errors: list[str] = []
    failures: list[str] = []
    items: list[str] = []
    current: dict[str, str] | None = None
    seen = False
    for raw in _joined(text.split("\n")):
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
        said = _fm_message(line)
        for kind, m in said:
            if kind not in failures:
                failures.append(kind)
            if kind == "config-invalid" and m.group(1) not in items:
                items.append(m.group(1))
        fm = _FM_LOG.search(line) if "fabricmanager" in line else None
        if fm:
            seen = True
            msg = fm.group(1).strip()
            if msg and _FM_ERROR.search(msg):
                add_clipped(fm_errors, msg, MAX_LINES, MAX_TEXT)
        elif said:
            seen = True
            add_clipped(fm_errors, _message(line), MAX_LINES, MAX_TEXT)
    if not seen:
        raise ParseError("no unit ('NAME.service - Description' with Loaded:/Active:), no 'Unit ... could not be "
                         "found' and no fabric manager log line or message")
    facts: dict[str, Any] = {"systemd.units": units,
                             "systemd.failed_units": [u for u, v in units.items() if v.get("active") == "failed"]}
    fmu = units.get(FM_UNIT)
    if fmu is not None:
        facts["fm.service_state"] = "not-found" if fmu.get("loaded") == "not-found" else fmu.get("active", "unknown")
    if fm_errors:
        facts["fm.log_errors"] = fm_errors
    if failures:
        facts["fm.start_failures"] = failures
    if items:
        facts["fm.config_invalid_items"] = items
    return facts
