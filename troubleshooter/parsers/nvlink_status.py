"""``nvidia-smi nvlink -s`` (``--status``): every NVLink of every GPU, its speed or ``<inactive>``; also the
per-link error counters of ``nvidia-smi nvlink -e`` when those lines are there.

Real sample (Tesla V100-SXM2-32GB, from Azure/azhpc-diagnostics issue #73; the author elided the other GPUs)::

    nvidia-smi nvlink -s
    ....
    GPU 3: Tesla V100-SXM2-32GB (UUID: ...)
             Link 0: 25.781 GB/s
             Link 1: 25.781 GB/s
             Link 2: 25.781 GB/s
             Link 3: <inactive>
             Link 4: 25.781 GB/s
             Link 5: <inactive>

What it means here: an ``<inactive>`` link on an SXM GPU is a lost NVLink lane group (a bad bridge, NVSwitch
port or GPU baseboard): the GPU still works, but its share of every all-reduce crosses fewer links (or falls
back to PCIe), so the whole node runs at the slow GPU's pace. ``gpu.nvlink_inactive`` has the meaning it has
from NVML (inactive links across GPUs). A GPU whose links are all down prints
``NVML: Unable to retrieve NVLink information as all links are inActive`` instead of link lines: it is listed in
``gpu.nvlink_all_inactive`` and, since its link count is not shown, ``gpu.nvlink_inactive`` is then omitted.
Link speeds are per direction, in GB/s (25.781 on V100, 25 on A100, 26.562 on H100, 53.125 on GB200).
With ``-e`` the lines read ``Link 0: Replay Errors: 0`` (some pastes group the zero ones:
``Links 1-5: Replay/Recovery/CRC Errors: 0``, ``Links 0-5: No errors``); the counters are summed per name and
the links with a non-zero counter listed. CRC counters stop at 65535.

>>> f = parse("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\\n\\t Link 0: 26.562 GB/s\\n\\t Link 1: <inactive>\\n")
>>> f["gpu.nvlink_inactive"], f["gpu.nvlink_inactive_links"], f["gpu.nvlink_speeds_gbs"]
(1, {'0': [1]}, [26.562])
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text, to_number

FACTS = [
    ("gpu.nvlink_inactive", "number", "count", "inactive NVLinks across GPUs (only where the GPUs have NVLink)"),
    ("gpu.nvlink_active", "number", "count", "active NVLinks across GPUs (nvidia-smi nvlink -s)"),
    ("gpu.nvlink_inactive_links", "dict", "", "GPU index -> its inactive link numbers, GPUs with any inactive link only (nvidia-smi nvlink -s)"),
    ("gpu.nvlink_all_inactive", "list", "", "indexes of GPUs that report 'all links are inActive' (no link lines)"),
    ("gpu.nvlink_gpus", "list", "", "per GPU in the output: {index, name, uuid, links: count shown, active, inactive, speeds_gbs} (keys omitted when not shown)"),
    ("gpu.nvlink_speeds_gbs", "list", "GB/s", "sorted distinct per-link speeds of the active NVLinks"),
    ("gpu.nvlink_min_speed_gbs", "number", "GB/s", "the slowest active NVLink's speed"),
    ("gpu.nvlink_error_counts", "dict", "count", "nvidia-smi nvlink -e: counter name (replay_errors, recovery_errors, crc_errors, ...) -> total across links"),
    ("gpu.nvlink_error_links", "list", "", "nvidia-smi nvlink -e: 'gpu:link counter=value' for every non-zero counter"),
]

_GPU = re.compile(r"^\s*GPU (\d+): ((?:.*?\S)??)\s*(?:\(UUID: ([^)]*)\)\s*)?$")
_LINK = re.compile(r"^\s*Link (\d+): (.*)$")
_SPEED = re.compile(r"^([\d.]+)\s*GB/s$")
_COUNTER = re.compile(r"^([A-Za-z](?:[A-Za-z0-9 ]*[A-Za-z0-9])?)\s*:\s*(\d+)$")
_ALL_INACTIVE = re.compile(r"all links are in ?active", re.IGNORECASE)
# "Links 0-2, 4-5: Replay/Recovery/CRC Errors: 0", "Links 1-5: No errors": counters of several links at once
_LINK_GROUP = re.compile(r"^\s*Links \d[\d ,\-]*:(.*)$")
_GROUP_ZERO = re.compile(r"^(?:No errors|[A-Za-z][A-Za-z/ ]*: 0)$", re.IGNORECASE)


def _detect(text: str) -> float:
    head = text[:65536]
    gpus = len(re.findall(r"^[^\S\n]*GPU \d+: .*\(UUID: [^)]*\)\s*$", head, re.MULTILINE))
    links = len(re.findall(r"^[^\S\n]*(?:Link \d+: (?:[\d.]+ GB/s|<inactive>|[A-Za-z][A-Za-z0-9 ]*: \d+)|"
                           r"Links \d[\d ,\-]*: (?:No errors|[A-Za-z][A-Za-z/ ]*: 0))\s*$", head, re.MULTILINE | re.IGNORECASE))
    if gpus and links:
        return 0.95
    if links >= 2:
        return 0.6
    if gpus and _ALL_INACTIVE.search(head):
        return 0.96  # only `nvidia-smi nvlink` prints it (under each GPU's line, which nvidia-smi -L prints too)
    return 0.0


def _counter_name(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


@parser(
    "nvlink-status",
    detect=_detect,
    summary="nvidia-smi nvlink -s / -e: per-GPU NVLink speeds, inactive links, link error counters",
    facts=FACTS,
    command="nvidia-smi nvlink -s",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "nvidia-smi nvlink -s output (GPU N: ... then Link N: 26.562 GB/s or <inactive>)")
    gpus: list[dict[str, Any]] = []
    gpu: dict[str, Any] | None = None
    errors: dict[str, int] = {}
    error_links: list[str] = []
    all_inactive: list[int] = []
    saw_counters = False
    for raw in text.split("\n"):
        m = _GPU.match(raw)
        if m:
            gpu = {"index": int(m.group(1)), "name": m.group(2), "links": {}, "counters": False}
            uuid = (m.group(3) or "").strip()
            if uuid.startswith("GPU-") or uuid.startswith("MIG-"):
                gpu["uuid"] = uuid
            gpus.append(gpu)
            continue
        if gpu is None:
            m = _LINK.match(raw)
            if m:
                gpu = {"index": None, "links": {}, "counters": False}  # a paste cut before its GPU line
                gpus.append(gpu)
            else:
                continue
        if _ALL_INACTIVE.search(raw):
            if gpu["index"] is not None and gpu["index"] not in all_inactive:
                all_inactive.append(gpu["index"])
            gpu["all_inactive"] = True
            continue
        g = _LINK_GROUP.match(raw)
        if g:
            if _GROUP_ZERO.match(g.group(1).strip()):
                gpu["counters"] = True
                saw_counters = True
            continue
        m = _LINK.match(raw)
        if not m:
            continue
        link, value = int(m.group(1)), m.group(2).strip()
        if value.lower() == "<inactive>":
            gpu["links"][link] = None
            continue
        s = _SPEED.match(value)
        if s:
            speed = to_number(s.group(1))
            if speed is not None and 0 <= speed < 1e6:
                gpu["links"][link] = speed
            continue
        c = _COUNTER.match(value)
        if c:
            name, count = _counter_name(c.group(1)), int(c.group(2))
            gpu["counters"] = True
            saw_counters = True
            errors[name] = errors.get(name, 0) + count
            if count:
                error_links.append(f"{gpu['index'] if gpu['index'] is not None else '?'}:{link} {name}={count}")
    if not gpus:
        raise ParseError("no 'GPU N: ... (UUID: ...)' or 'Link N:' line: this is not nvidia-smi nvlink output")
    facts: dict[str, Any] = {}
    status = [g for g in gpus if g["links"] or g.get("all_inactive")]
    if not status and not saw_counters:
        raise ParseError("GPU lines but no 'Link N: ...' line: the nvlink output was cut (or the GPUs have no NVLink)")
    if status:
        active = [s for g in status for s in g["links"].values() if s is not None]
        inactive = {str(g["index"]): sorted(n for n, s in g["links"].items() if s is None)
                    for g in status if g["index"] is not None and any(s is None for s in g["links"].values())}
        facts["gpu.nvlink_active"] = len(active)
        if not all_inactive:
            facts["gpu.nvlink_inactive"] = sum(1 for g in status for s in g["links"].values() if s is None)
        facts["gpu.nvlink_inactive_links"] = inactive
        facts["gpu.nvlink_all_inactive"] = sorted(all_inactive)
        speeds = sorted(set(active))
        facts["gpu.nvlink_speeds_gbs"] = speeds
        if speeds:
            facts["gpu.nvlink_min_speed_gbs"] = speeds[0]
    out = []
    for g in gpus:
        entry: dict[str, Any] = {}
        if g["index"] is not None:
            entry["index"] = g["index"]
        for key in ("name", "uuid"):
            if g.get(key):
                entry[key] = g[key]
        if g["links"]:
            speeds = [s for s in g["links"].values() if s is not None]
            entry.update(links=len(g["links"]), active=len(speeds), inactive=len(g["links"]) - len(speeds),
                         speeds_gbs=sorted(set(speeds)))
        out.append(entry)
    facts["gpu.nvlink_gpus"] = out
    if saw_counters:
        facts["gpu.nvlink_error_counts"] = errors
        facts["gpu.nvlink_error_links"] = error_links
    return facts
