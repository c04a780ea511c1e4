"""NVIDIA Fabric Manager's own log (``/var/log/fabricmanager.log``): whether it configured the NVSwitch fabric, and
the NVSwitch and NVLink errors it reports once it runs.

Real samples (leptonai/gpud's testdata/fabricmanager.log from an HGX node; pytorch/ci-infra#552's EKS nodes, the log's
level words kept, its timestamps cut; tests/data/fabricmanager-log)::

    [Feb 27 2025 15:10:02] [ERROR] [tid 12727] detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 61
    [ERROR] not all local fabric manager instances finished their configuration
    [ERROR] failed to configure all the available GPUs or NVSwitches

Read: every line's level and message (``[date] [LEVEL] [tid N] message``, or ``[LEVEL] message`` where the paste cut
the time), its ERROR messages, the NVSwitch errors it detected (fatal and non-fatal, with the SXid code, the switch's
PCI address and the port), a GPU's NVLink fatal error as NVL5 systems report it (``Fabric Manager detected GPU NVL
Fatal error on :``), its own words that it did or did not configure the fabric, and its version.

What it means here: on an NVSwitch system CUDA work waits until the fabric manager has configured every GPU and
NVSwitch; its "failed to configure all the available GPUs or NVSwitches" leaves the GPUs unusable (CUDA 802, system
not yet initialised) whatever the service's state says. A fatal NVSwitch error stops the traffic through that port:
the GPUs and switches need a reset. Non-fatal errors are counted and shown, not taken for a fault (the fabric
manager corrects them, and NVIDIA's tools track them the same way).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

MAX_ITEMS = 20
MAX_TEXT = 300

FACTS = [
    ("fm.log.version", "string", "", "the fabric manager's version ('Fabric Manager version 535.104.05 is running')"),
    ("fm.log.errors", "list", "", f"the log's ERROR and FATAL messages as printed (time cut), deduplicated, at most {MAX_ITEMS}"),
    ("fm.log.config_failed", "list", "", "the fabric manager's own words that it did not configure the fabric ('failed to "
     "configure all the available GPUs or NVSwitches', 'not all local fabric manager instances finished their "
     "configuration', 'error handler is called for unhandled config error type 8')"),
    ("fm.log.configured", "bool", "", "it says it configured the fabric ('Successfully configured all the available "
     "GPUs and NVSwitches')"),
    ("fm.log.nvswitch_fatal", "list", "", "fatal NVSwitch errors it detected, as 'SXid N on 00000000:86:00.0 port 33'"),
    ("fm.log.nvswitch_nonfatal", "number", "count", "non-fatal NVSwitch errors it detected (corrected; shown, not a fault)"),
    ("fm.log.gpu_nvl_fatal", "number", "count", "GPU NVLink fatal errors it reported ('Fabric Manager detected GPU NVL "
     "Fatal error on :', NVL5 systems)"),
]

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_LEVELS = r"(?:INFO|ERROR|WARNING|WARN|FATAL|DEBUG|CRITICAL)"
# "[Feb 27 2025 15:10:02] [ERROR] [tid 12727] message", the time or the tid cut by a paste
_LINE = re.compile(rf"^\s*(?:\[{_MONTH} [ \d]\d \d{{4}} \d\d:\d\d:\d\d\]\s*)?\[({_LEVELS})\]\s*(?:\[tid \d+\]\s*)?(.*\S|)\s*$")
_STAMPED = re.compile(rf"(?m)^[^\S\n]*\[{_MONTH} [ \d]\d \d{{4}} \d\d:\d\d:\d\d\] \[{_LEVELS}\] \[tid \d+\]")
_CONFIG_FAILED = re.compile(r"failed to configure all the available GPUs or NVSwitches|not all local fabric manager "
                            r"instances finished their configuration|fabric manager error handler is called for "
                            r"unhandled config error|failed to (?:initialize|configure) (?:all )?(?:the )?(?:GPUs?|NVSwitch)",
                            re.IGNORECASE)
_CONFIGURED = re.compile(r"Successfully configured all the available (?:GPUs and )?NVSwitches", re.IGNORECASE)
_SXID = re.compile(r"detected NVSwitch (non-)?fatal error (\d+) on fid \d+ on NVSwitch pci bus id ([0-9a-fA-F:.]+)"
                   r"(?: physical id \d+)?(?: port (\d+))?")
_NVL_FATAL = re.compile(r"Fabric Manager detected GPU NVL Fatal error")
_VERSION = re.compile(r"Fabric Manager version (\d[\w.-]*) is running")
_FM_WORDS = re.compile(r"(?i)fabric manager|NVSwitch|nvlink|multicast")


def _detect(text: str) -> float:
    head = text[:262144]
    if _STAMPED.search(head):
        return 0.85
    # level words with the time cut: only with the fabric manager's own messages
    if re.search(rf"(?m)^[^\S\n]*\[{_LEVELS}\] ", head) and (_CONFIG_FAILED.search(head) or _SXID.search(head)
                                                         or _NVL_FATAL.search(head)):
        return 0.8
    return 0.0


@parser(
    "fabricmanager-log",
    detect=_detect,
    summary="NVIDIA Fabric Manager's log: fabric configured or not, NVSwitch fatal and non-fatal errors",
    facts=FACTS,
    command="sudo tail -200 /var/log/fabricmanager.log",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "the fabric manager's log (/var/log/fabricmanager.log)")
    errors: list[str] = []
    failed: list[str] = []
    fatal: list[str] = []
    nonfatal = nvl = 0
    configured = False
    version = ""
    seen = 0
    for raw in text.split("\n")[:500000]:
        if len(raw) > 4000:
            continue
        m = _LINE.match(raw)
        msg = m.group(2) if m else raw.strip()
        if m:
            seen += 1
            if m.group(1) in ("ERROR", "FATAL", "CRITICAL"):
                add_clipped(errors, msg, MAX_ITEMS, MAX_TEXT)
        elif not _FM_WORDS.search(raw):
            continue
        if c := _CONFIG_FAILED.search(msg):
            add_clipped(failed, c.group(0), MAX_ITEMS, MAX_TEXT)
        configured = configured or bool(_CONFIGURED.search(msg))
        if s := _SXID.search(msg):
            if s.group(1):
                nonfatal += 1
            else:
                port = f" port {s.group(4)}" if s.group(4) else ""
                add_clipped(fatal, f"SXid {s.group(2)} on {s.group(3)}{port}", MAX_ITEMS, MAX_TEXT)
        nvl += bool(_NVL_FATAL.search(msg))
        if v := _VERSION.search(msg):
            version = v.group(1)
    if not seen:
        raise ParseError("no fabric manager log line ('[Feb 27 2025 15:10:02] [INFO] [tid 1803] ...' or '[ERROR] ...')")
    facts: dict[str, Any] = {"fm.log.errors": errors, "fm.log.nvswitch_nonfatal": nonfatal}
    if version:
        facts["fm.log.version"] = version
    if failed:
        facts["fm.log.config_failed"] = failed
    if configured:
        facts["fm.log.configured"] = True
    if fatal:
        facts["fm.log.nvswitch_fatal"] = fatal
    if nvl:
        facts["fm.log.gpu_nvl_fatal"] = nvl
    return facts
