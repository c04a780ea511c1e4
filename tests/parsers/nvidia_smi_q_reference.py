"""The nvidia-smi -q parser as it was before its hot loop lost its regular expressions (kept verbatim but for
the registration, which the live module does): tests/parsers/test_nvidia_smi_q.py checks the live parser gives
the same facts on every corpus file and on mutated reports. The original docstring follows.

``nvidia-smi -q``: the full per-GPU report, as text. It runs wherever the nvidia-smi binary does (in a
container, a Slurm step), where the in-process NVML query of the ``nvml`` source cannot reach.

Real sample (NVIDIA A40, driver 550, from ../shared/corpus/nvidia-smi-q; abridged)::

    ==============NVSMI LOG==============

    Driver Version                            : 550.127.05
    CUDA Version                              : 12.4

    Attached GPUs                             : 10
    GPU 00000000:4F:00.0
        Product Name                          : NVIDIA A40
        Persistence Mode                      : Enabled
        PCI
            GPU Link Info
                PCIe Generation
                    Max                       : 4
                    Current                   : 1
                Link Width
                    Max                       : 16x
                    Current                   : 16x
        Performance State                     : P8
        Clocks Event Reasons
            Idle                              : Not Active
            SW Power Cap                      : Active
            HW Slowdown                       : Not Active
                HW Thermal Slowdown           : Not Active
        Remapped Rows
            Correctable Error                 : 2
            Pending                           : No
        Temperature
            GPU Current Temp                  : 29 C
        GPU Power Readings
            Power Draw                        : 29.70 W
            Current Power Limit               : 300.00 W
        Clocks
            SM                                : 0 MHz
        Max Clocks
            SM                                : 1740 MHz

Drivers before R535 call the reasons "Clocks Throttle Reasons"; before R450 power is under
"Power Readings" with "Enforced Power Limit", and ECC counts are under "Single Bit"/"Double Bit" with
"Total" lines. Driver 580 prints "Average Power Draw" and "Instantaneous Power Draw"; like NVML's
``power.draw`` we take the average. The GPUs' dicts are those of the NVML document (see
:mod:`troubleshooter.parsers.nvml_json`) and the facts are built by the same function, so the two sources
give the same ``gpu.*`` facts. A GPU's index is its position in the report (nvidia-smi lists them in order).
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from troubleshooter.parsers.base import ParseError, require_text, to_number
from troubleshooter.parsers.nvml_json import gpu_facts

_BANNER = re.compile(r"^=+\s*NVSMI LOG\s*=+\s*$", re.MULTILINE)
_GPU_HEADER = re.compile(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
# "Key      : value"; the key holds no ':' (so "GPU 00000000:4F:00.0" is a section header, not a key).
_KV = re.compile(r"^(\s*)([^:]*?[^:\s])\s*:(?:\s(.*)|)$")

# How nvidia-smi -q names each clocks event (throttle) reason -> our name (shared with the NVML decoder).
REASON_NAMES = {
    "idle": "gpu_idle",
    "gpu idle": "gpu_idle",
    "applications clocks setting": "applications_clocks_setting",
    "user defined clocks": "applications_clocks_setting",
    "sw power cap": "sw_power_cap",
    "hw slowdown": "hw_slowdown",
    "hw thermal slowdown": "hw_thermal_slowdown",
    "hw power brake slowdown": "hw_power_brake_slowdown",
    "sync boost": "sync_boost",
    "sw thermal slowdown": "sw_thermal_slowdown",
    "display clock setting": "display_clock_setting",
}


class Node:
    """One line of the report: ``key : value`` and the lines indented under it."""

    __slots__ = ("key", "value", "children", "indent")

    def __init__(self, key: str, value: str | None, indent: int) -> None:
        self.key, self.value, self.indent = key, value, indent
        self.children: list[Node] = []

    def child(self, *names: str) -> "Node | None":
        """The first child whose key is one of ``names`` (case-insensitive)."""
        wanted = {n.lower() for n in names}
        for c in self.children:
            if c.key.lower() in wanted:
                return c
        return None

    def path(self, *steps: str | tuple[str, ...]) -> "Node | None":
        node: Node | None = self
        for step in steps:
            if node is None:
                return None
            node = node.child(*((step,) if isinstance(step, str) else step))
        return node

    def value_at(self, *steps: str | tuple[str, ...]) -> str | None:
        node = self.path(*steps)
        return node.value if node is not None else None

    def walk(self) -> Iterator["Node"]:
        for c in self.children:
            yield c
            yield from c.walk()


def _tree(lines: list[str], root: Node) -> Node:
    stack = [root]
    for raw in lines:
        line = raw.rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        m = _KV.match(line)
        if m:
            key, value = m.group(2).strip(), (m.group(3) or "").strip()
        else:
            key, value = line.strip(), None
        node = Node(key, value, indent)
        while len(stack) > 1 and stack[-1].indent >= indent:
            stack.pop()
        stack[-1].children.append(node)
        stack.append(node)
    return root


def _number(value: str | None) -> float | int | None:
    """'29.70 W' -> 29.7, '16x' -> 16, '1740 MHz' -> 1740, 'N/A' -> None."""
    if value is None:
        return None
    m = re.match(r"^\s*([-+]?\d+(?:\.\d+)?)\s*(?:[A-Za-z%/]+)?\s*$", value)
    return to_number(m.group(1)) if m else None


def _int(value: str | None) -> int | None:
    n = _number(value)
    return int(n) if isinstance(n, (int, float)) else None


def _yes_no(value: str | None) -> bool | None:
    v = (value or "").strip().lower()
    if v in ("yes", "enabled", "active", "on"):
        return True
    if v in ("no", "disabled", "not active", "off"):
        return False
    return None


def _reasons(gpu: Node) -> list[str] | None:
    section = gpu.child("Clocks Event Reasons", "Clocks Throttle Reasons", "Clocks Throttle Reason")
    if section is None:
        return None
    active: list[str] = []
    seen = False
    for node in section.walk():
        state = _yes_no(node.value)
        if state is None:
            continue
        seen = True
        if state:
            name = REASON_NAMES.get(node.key.lower(), re.sub(r"[^a-z0-9]+", "_", node.key.lower()).strip("_"))
            if name and name not in active:
                active.append(name)
    return active if seen else None


def _ecc_volatile(gpu: Node) -> tuple[int | None, int | None]:
    vol = gpu.path("ECC Errors", "Volatile")
    if vol is None:
        return None, None
    single, double = vol.child("Single Bit"), vol.child("Double Bit")
    if single is not None or double is not None:  # before R450: per-unit counts with a Total line
        corrected = _int(single.value_at("Total")) if single is not None else None
        uncorrected = _int(double.value_at("Total")) if double is not None else None
        return uncorrected, corrected
    unc, cor = [], []
    for node in vol.children:
        n = _int(node.value)
        if n is None:
            continue
        key = node.key.lower()
        if "uncorrectable" in key:
            unc.append(n)
        elif "correctable" in key:
            cor.append(n)
    return (sum(unc) if unc else None), (sum(cor) if cor else None)


def _remapped(gpu: Node) -> dict[str, Any] | None:
    node = gpu.child("Remapped Rows")
    if node is None or not node.children:
        return None  # "Remapped Rows : N/A" on GPUs without row remapping
    out = {
        "correctable": _int(node.value_at("Correctable Error")),
        "uncorrectable": _int(node.value_at("Uncorrectable Error")),
        "pending": _yes_no(node.value_at("Pending")),
        "failure": _yes_no(node.value_at("Remapping Failure Occurred")),
    }
    return out if any(v is not None for v in out.values()) else None


def _retired(gpu: Node) -> int | None:
    node = gpu.child("Retired Pages")
    if node is None:
        return None
    counts = [_int(node.value_at(k)) for k in ("Single Bit ECC", "Double Bit ECC")]
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def _processes(gpu: Node) -> list[dict[str, Any]] | None:
    node = gpu.child("Processes")
    if node is None:
        return None
    out = []
    for p in node.children:
        if p.key.lower() != "process id":
            continue
        pid = _int(p.value)
        if pid is None:
            continue
        kind = p.value_at("Type")
        out.append({"pid": pid, "used_mb": _int(p.value_at("Used GPU Memory")), "type": kind or None})
    return sorted(out, key=lambda e: e["pid"])


def _power(gpu: Node) -> tuple[float | None, float | None]:
    readings = gpu.child("GPU Power Readings", "Power Readings")
    if readings is None:
        return None, None
    draw = None
    for key in ("Average Power Draw", "Power Draw", "Instantaneous Power Draw"):
        draw = _number(readings.value_at(key))
        if draw is not None:
            break
    limit = None
    for key in ("Current Power Limit", "Enforced Power Limit", "Power Limit"):
        limit = _number(readings.value_at(key))
        if limit is not None:
            break
    return (float(draw) if draw is not None else None), (float(limit) if limit is not None else None)


def _default_power_limit(gpu: Node) -> float | None:
    readings = gpu.child("GPU Power Readings", "Power Readings")
    value = _number(readings.value_at("Default Power Limit")) if readings is not None else None
    return float(value) if value is not None else None


def device(gpu: Node, index: int) -> dict[str, Any]:
    """One GPU section as the per-GPU dict of the NVML document."""
    link = gpu.path("PCI", "GPU Link Info")
    gen = link.child("PCIe Generation") if link is not None else None
    width = link.child("Link Width") if link is not None else None
    power, limit = _power(gpu)
    unc, cor = _ecc_volatile(gpu)
    pstate = gpu.value_at("Performance State")
    bus = gpu.value_at("PCI", "Bus Id") or _GPU_HEADER.match(gpu.key).group(1)
    persistence = _yes_no(gpu.value_at("Persistence Mode"))
    return {
        "index": index,
        "name": gpu.value_at("Product Name") or None,
        "uuid": gpu.value_at("GPU UUID") or None,
        "bus_id": bus,
        "perf_state": pstate if pstate and re.fullmatch(r"P\d{1,2}", pstate) else None,
        "sm_clock_mhz": _int(gpu.value_at("Clocks", "SM")),
        "sm_clock_max_mhz": _int(gpu.value_at("Max Clocks", "SM")),
        "mem_clock_mhz": _int(gpu.value_at("Clocks", "Memory")),
        "mem_clock_max_mhz": _int(gpu.value_at("Max Clocks", "Memory")),
        "power_w": power,
        "power_limit_w": limit,
        "power_default_limit_w": _default_power_limit(gpu),
        "temp_c": _int(gpu.value_at("Temperature", "GPU Current Temp")),
        "clocks_event_reasons": _reasons(gpu),
        "ecc_uncorrected_volatile": unc,
        "ecc_corrected_volatile": cor,
        "remapped_rows": _remapped(gpu),
        "retired_pages": _retired(gpu),
        "nvlink": None,  # nvidia-smi -q does not report NVLink state (nvidia-smi nvlink -s does)
        "pcie_gen": _int(gen.value_at("Current")) if gen is not None else None,
        "pcie_gen_max": _int(gen.value_at("Max")) if gen is not None else None,
        "pcie_width": _int(width.value_at("Current")) if width is not None else None,
        "pcie_width_max": _int(width.value_at("Max")) if width is not None else None,
        "persistence_mode": persistence,
        "processes": _processes(gpu),
    }


def read(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(header values, per-GPU dicts) of an ``nvidia-smi -q`` report (anything before the banner is ignored)."""
    text = require_text(text, "nvidia-smi -q output")
    m = _BANNER.search(text)
    if m:
        text = text[m.end():]
    lines = text.split("\n")
    header: dict[str, Any] = {}
    sections: list[tuple[str, list[str]]] = []
    for raw in lines:
        line = raw.rstrip()
        gm = _GPU_HEADER.match(line)
        if gm:
            sections.append((line.strip(), []))
            continue
        if sections and (not line or line[0].isspace()):
            sections[-1][1].append(line)
            continue
        km = _KV.match(line)
        if km and not km.group(1):
            if sections:
                sections.append(("", []))  # a top-level line closes the GPU section (Unit sections etc.)
            header.setdefault(km.group(2).strip(), (km.group(3) or "").strip())
    devices = []
    for key, body in sections:
        if not key:
            continue
        gpu = _tree(body, Node(key, None, -1))
        devices.append(device(gpu, len(devices)))
    if not devices:
        raise ParseError("no GPU section found (expected lines like 'GPU 00000000:4F:00.0' as in nvidia-smi -q)")
    return header, devices


def _detect(text: str) -> float:
    if _BANNER.search(text):
        return 0.95
    if re.search(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d\s*$", text, re.MULTILINE) and re.search(
            r"^\s+Product Name\s+:", text, re.MULTILINE):
        return 0.85
    return 0.0


def parse(text: str) -> dict[str, object]:
    header, devices = read(text)
    driver = header.get("Driver Version") or None
    cuda = header.get("CUDA Version") or None
    attached = to_number(header.get("Attached GPUs", ""))
    return gpu_facts(devices, driver=driver if driver != "N/A" else None,
                     cuda=cuda if cuda != "N/A" else None,
                     count=attached if isinstance(attached, int) else None)
