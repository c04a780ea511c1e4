"""NVIDIA DCGM's command line, apart from its diagnostic (the dcgm-diag kind): ``dcgmi discovery -l``, ``dcgmi health
-c`` (its table and ``-j`` JSON), ``dcgmi nvlink --link-status``, and the errors dcgmi prints.

Real samples (NVIDIA/DCGM#229, #198, #263, #176, #50; NVIDIA/dcgm-exporter#193; KempnerInstitute/kempnerpulse#15;
tests/data/dcgmi)::

    8 GPUs found (Active).
    | 0      | Name: NVIDIA H100 80GB HBM3                                          |
    gpuId 0:
        D D D D D D D D D D D D D D D D D D
    Error: Unable to connect to host engine. Host engine connection invalid/disconnected.

Read: how many GPUs DCGM found and their names, the health report's overall verdict and its incidents, each GPU's
NVLink links by state (U up, D down, X disabled, _ not supported), and dcgmi's own errors (the host engine not
reachable, health watches not set, a module not loaded).

What it means here: DCGM reports what NVML tells it. A GPU on a PCIe card without an NVLink bridge has links that are
'down' to DCGM's NVLink check (NVIDIA/DCGM#49, NVIDIA/NVSentinel#1481), so links down say something only for a part
that has NVLink. 'Healthy' covers only the watches that were set (a GPU waiting for a reset can be Healthy,
NVIDIA/DCGM#263). An error from dcgmi itself is DCGM's state, not the GPUs'.
"""

from __future__ import annotations

import json
import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("dcgm.gpus_found", "number", "count", "GPUs DCGM found ('8 GPUs found (Active).')"),
    ("dcgm.gpu_names", "list", "", "the GPUs' names as DCGM lists them (<<<NULL>>> when NVML gave none)"),
    ("dcgm.health_overall", "string", "", "the health report's overall verdict: Healthy, Warning or Failure"),
    ("dcgm.health_incidents", "list", "", "the health report's incidents as printed ('GPU 0's NvLink link 0 is currently "
     "down'), at most 20"),
    ("dcgm.nvlink_down", "dict", "", "per GPU, its NVLink links DCGM reports Down (dcgmi nvlink --link-status)"),
    ("dcgm.nvlink_links_down", "number", "count", "NVLink links down, over all GPUs: from the link status, or the "
     "health report's 'NvLink link N is currently down' incidents"),
    ("dcgm.cli_errors", "list", "", "dcgmi's own errors ('Unable to connect to host engine', 'Health watches not "
     "enabled', 'Error setting watches. Result: -33 ...')"),
]

_FOUND = re.compile(r"^[^\S\n]*(\d+) GPUs? found\b", re.M)
_NAME = re.compile(r"^[^\S\n]*\|\s*(?:\d+\s*)?\|\s*Name:\s*(.*\S|)\s*\|\s*$", re.M)
_LINKS_GPU = re.compile(r"^[^\S\n]*gpuId (\d+):\s*$")
_LINKS_ROW = re.compile(r"^[^\S\n]*((?:[UDX_]\s+){0,63}[UDX_])\s*$")
_LINK_DOWN = re.compile(r"NvLink link (\d+) is currently down", re.IGNORECASE)
_OVERALL = re.compile(r"^[^\S\n]*\|\s*Overall Health\s*\|\s*(Healthy|Warning|Failure)\b", re.M)
_ERROR = re.compile(r"^[^\S\n]*(Error(?: setting watches)?[:.]\s*.{0,300}?)\s*$", re.M)
_KEY = "Key: Up=U, Down=D"


def _detect(text: str) -> float:
    head = text[:262144]
    if _KEY in head or re.search(r"^[^\S\n]*\d+ GPUs? found(?: \(Active\))?\.\s*$", head, re.M) and "Device Information" in head:
        return 0.9
    if _OVERALL.search(head) or ('"Overall Health"' in head and "Health Monitor Report" in head):
        return 0.9
    if re.search(r"Unable to connect to host engine|Health watches not enabled|Error setting watches\. Result: -?\d+", head):
        return 0.8
    return 0.0


def _json_health(text: str) -> tuple[str, list[str]]:
    """The verdict and incidents of ``dcgmi health -c -j``: the JSON document that holds "Overall Health", tried from
    the first '{' to each of the last closing braces (at most 32 tries, within 1 MB: a paste around it is cut off)."""
    start = text.find("{")
    if start < 0 or '"Overall Health"' not in text:
        return "", []
    window = text[start:start + 1_000_000]
    ends = [i + 1 for i, c in enumerate(window) if c == "}"][-32:]
    for end in reversed(ends):
        end += start
        try:
            doc = json.loads(text[start:end])
        except ValueError:
            continue
        body = doc.get("body", {}) if isinstance(doc, dict) else {}
        overall = body.get("Overall Health", {}) if isinstance(body, dict) else {}
        value = overall.get("value", "") if isinstance(overall, dict) else ""
        incidents = re.findall(r'"(?:value|Error|Health)"\s*:\s*"([^"]{8,300})"', text[start:end])
        return str(value), [i for i in incidents if i not in ("Healthy", "Warning", "Failure")]
    return "", []


@parser(
    "dcgmi",
    detect=_detect,
    summary="dcgmi discovery -l, health -c and nvlink --link-status: GPUs found, health verdict, links down, errors",
    facts=FACTS,
    command="dcgmi discovery -l; dcgmi health -s a && dcgmi health -c; dcgmi nvlink --link-status",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "dcgmi's output (discovery -l, health -c, nvlink --link-status)")
    facts: dict[str, Any] = {}
    if m := _FOUND.search(text):
        facts["dcgm.gpus_found"] = int(m.group(1))
    names = [n for n in _NAME.findall(text)][:64]
    if names:
        facts["dcgm.gpu_names"] = names
    overall = _OVERALL.search(text)
    incidents: list[str] = []
    verdict = overall.group(1) if overall else ""
    if not verdict:
        verdict, from_json = _json_health(text)
        for i in from_json:
            add_clipped(incidents, i, 20, 300)
    if verdict:
        facts["dcgm.health_overall"] = verdict
    down: dict[str, int] = {}
    gpu = ""
    down_incidents = 0
    for ln in text.split("\n")[:200000]:
        if m := _LINKS_GPU.match(ln):
            gpu = m.group(1)
            continue
        if gpu and (m := _LINKS_ROW.match(ln)):
            down[gpu] = m.group(1).split().count("D")
            gpu = ""
            continue
        gpu = "" if ln.strip() else gpu
        if overall and ln.strip().startswith("|"):
            cells = [c.strip() for c in ln.strip().strip("|").split("|")]
            detail = cells[-1] if len(cells) >= 2 else ""
            if detail and detail not in ("Healthy", "Warning", "Failure") and not detail.startswith("..."):
                add_clipped(incidents, detail, 20, 300)
        down_incidents += len(_LINK_DOWN.findall(ln))
    if incidents:
        facts["dcgm.health_incidents"] = incidents
    if down:
        facts["dcgm.nvlink_down"] = down
    total = sum(down.values()) if down else down_incidents
    if down or down_incidents:
        facts["dcgm.nvlink_links_down"] = total
    errors: list[str] = []
    for m in _ERROR.finditer(text[:1_000_000]):
        add_clipped(errors, m.group(1), 20, 300)
    if errors:
        facts["dcgm.cli_errors"] = errors
    if not facts:
        raise ParseError("no dcgmi output ('N GPUs found', the health report, the NvLink link status, or dcgmi's "
                         "'Error: ...')")
    return facts
