"""``nvidia-smi -q``: the full per-GPU report, as text. It runs wherever the nvidia-smi binary does (in a
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

A fragment without the GPU headers (``nvidia-smi -q | grep -A8 'Clocks Throttle'``, one reasons section per
GPU, ``--`` between them) is read too: each section is a GPU, in order, so the event reasons come out.
Drivers before R535 call the reasons "Clocks Throttle Reasons"; before R450 power is under
"Power Readings" with "Enforced Power Limit", and ECC counts are under "Single Bit"/"Double Bit" with
"Total" lines. Driver 580 prints "Average Power Draw" and "Instantaneous Power Draw"; like NVML's
``power.draw`` we take the average. The GPUs' dicts are those of the NVML document (see
:mod:`troubleshooter.parsers.nvml_json`) and the facts are built by the same function, so the two sources
give the same ``gpu.*`` facts. A GPU's index is its position in the report (nvidia-smi lists them in order).

The driver's word on whether a GPU needs recovering after an error is read too, also from a section quoted alone
(vllm-project/vllm#8847; drivers 570 and later deprecate the first form for the second)::

    GPU Reset Status
        Reset Required                    : Yes
        Drain and Reset Recommended       : No
    GPU Recovery Action                   : Reset

"Reset Required: Yes" is a GPU that must be reset before it works normally again, "Drain and Reset Recommended"
one to drain and reset at the next chance; the recovery action names what to do (None, Reset, Reboot, Drain P2P,
Drain and Reset: NVML's nvmlGpuRecoveryAction_t).
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from troubleshooter.parsers.base import ParseError, parser, require_text, to_number
from troubleshooter.parsers.nvidia_smi import COMPUTE_EXCLUSIVE_FACT, INFOROM_FACT, inforom_corrupted
from troubleshooter.parsers.nvml_json import FACTS, gpu_facts

_BANNER = re.compile(r"^=+\s*NVSMI LOG\s*=+\s*$", re.MULTILINE)
_GPU_HEADER = re.compile(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
# "Key      : value"; the key holds no ':' (so "GPU 00000000:4F:00.0" is a section header, not a key).
_KV = re.compile(r"^(\s*)([^:]*?[^:\s])\s*:(?:\s(.*)|)$")
_NUMBER = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?)\s*(?:[A-Za-z%/]+)?\s*$")


def _kv(line: str) -> tuple[str, str] | None:
    """``_KV`` without the regular expression (the parser's hot loop; same result on every line without a
    newline, which ``str.split("\n")`` guarantees): the key is the text before the first ':', stripped and
    not empty, and the ':' ends the line or is followed by whitespace. Returns (key, value stripped)."""
    i = line.find(":")
    if i < 0:
        return None
    key = line[:i].strip()
    if not key:
        return None
    rest = line[i + 1:]
    if rest and not rest[0].isspace():
        return None
    return key, rest.strip()

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

    __slots__ = ("key", "value", "children", "indent", "lkey")

    def __init__(self, key: str, value: str | None, indent: int) -> None:
        self.key, self.value, self.indent = key, value, indent
        self.lkey = key.lower()
        self.children: list[Node] = []

    def child(self, *names: str) -> "Node | None":
        """The first child whose key is one of ``names`` (case-insensitive)."""
        if len(names) == 1:
            wanted1 = names[0].lower()
            for c in self.children:
                if c.lkey == wanted1:
                    return c
            return None
        wanted = {n.lower() for n in names}
        for c in self.children:
            if c.lkey in wanted:
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


# The GPU section's top-level keys that device() reads (lower case); _tree skips the others and their lines.
GPU_KEYS = frozenset({
    "product name", "gpu uuid", "pci", "performance state", "persistence mode", "clocks", "max clocks",
    "gpu power readings", "power readings", "temperature", "clocks event reasons", "clocks throttle reasons",
    "clocks throttle reason", "ecc errors", "remapped rows", "retired pages", "processes", "fabric",
    "vgpu software licensed product", "gpu reset status", "gpu recovery action",
})


def _tree(lines: list[str], root: Node, keep: frozenset[str] | None = None) -> Node:
    """The lines as a tree by indentation under ``root``. With ``keep``, a top-level line whose key (lower
    case) is not in it is left out with every line under it (the tree is otherwise the same)."""
    stack = [root]
    top = root
    skip_deeper = -1  # >= 0 while leaving out a top-level line's subtree: the lines indented deeper than this
    for raw in lines:
        line = raw.rstrip()
        if not line:
            continue
        indent = len(line) - len(line.lstrip())
        if skip_deeper >= 0:
            if indent > skip_deeper:
                continue
            skip_deeper = -1
        # _kv(line), inlined: this loop runs once per line of the report
        i = line.find(":")
        key = line[:i].strip() if i >= 0 else ""
        rest = line[i + 1:] if key else ""
        if key and (not rest or rest[0].isspace()):
            node = Node(key, rest.strip(), indent)
        else:
            node = Node(line.strip(), None, indent)
        while top.indent >= indent and len(stack) > 1:
            stack.pop()
            top = stack[-1]
        if keep is not None and top is root and node.lkey not in keep:
            skip_deeper = indent
            continue
        top.children.append(node)
        stack.append(node)
        top = node
    return root


def _number(value: str | None) -> float | int | None:
    """'29.70 W' -> 29.7, '16x' -> 16, '1740 MHz' -> 1740, 'N/A' -> None."""
    if value is None:
        return None
    m = _NUMBER.match(value)
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
    header = _GPU_HEADER.match(gpu.key)
    bus = gpu.value_at("PCI", "Bus Id") or (header.group(1) if header else None)
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
        "fabric": _fabric(gpu),
        # a vGPU guest's license ('Licensed (Expiry: ...)', 'Unlicensed (Restricted)'); None elsewhere
        "vgpu_license": gpu.value_at("vGPU Software Licensed Product", "License Status") or None,
        "recovery_action": _recovery(gpu),
    }


def _recovery(gpu: Node) -> str | None:
    """The recovery the driver asks for this GPU: 'GPU Recovery Action' (None, Reset, Reboot, Drain P2P, Drain and
    Reset), else the older 'GPU Reset Status' as the same words (Reset Required: Yes -> Reset, Drain and Reset
    Recommended: Yes -> Drain and Reset, both No -> None); None where neither says (N/A, deprecated, not shown)."""
    action = (gpu.value_at("GPU Recovery Action") or "").strip()
    if action and action != "N/A" and not action.lower().startswith("requested functionality"):
        return action
    status = gpu.child("GPU Reset Status")
    if status is None:
        return None
    reset, drain = _yes_no(status.value_at("Reset Required")), _yes_no(status.value_at("Drain and Reset Recommended"))
    if drain:
        return "Drain and Reset"
    if reset:
        return "Reset"
    return "None" if reset is False else None


def _fabric(gpu: Node) -> dict[str, str] | None:
    """The NVSwitch fabric registration ('Fabric' / State, Status; driver 535+), None where not shown or N/A."""
    state, status = gpu.value_at("Fabric", "State"), gpu.value_at("Fabric", "Status")
    if not state or state == "N/A":
        return None
    return {"state": state, "status": status or ""}


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
        if line.startswith("GPU") and _GPU_HEADER.match(line):
            sections.append((line.strip(), []))
            continue
        if sections and (not line or line[0].isspace()):
            sections[-1][1].append(line)
            continue
        if not line or line[0].isspace():
            continue  # before any section: only top-level "key : value" lines count
        kv = _kv(line)
        if kv is not None:
            if sections:
                sections.append(("", []))  # a top-level line closes the GPU section (Unit sections etc.)
            header.setdefault(kv[0], kv[1])
    devices = []
    for key, body in sections:
        if not key:
            continue
        gpu = _tree(body, Node(key, None, -1), GPU_KEYS)
        devices.append(device(gpu, len(devices)))
    if not devices:
        devices = _reason_fragments(lines)
    if not devices:
        raise ParseError("no GPU section found (expected lines like 'GPU 00000000:4F:00.0' as in nvidia-smi -q)")
    return header, devices


_REASON_SECTIONS = frozenset({"clocks event reasons", "clocks throttle reasons", "clocks throttle reason"})
# a quoted fragment counts as a GPU only with one of these (the sections that say something on their own)
_ANCHOR_SECTIONS = _REASON_SECTIONS | {"fabric", "vgpu software licensed product", "gpu reset status",
                                        "gpu recovery action", "remapped rows", "ecc errors"}
_FRAGMENT_SECTIONS = _ANCHOR_SECTIONS | {"performance state", "clocks", "max clocks", "power readings",
                                         "gpu power readings", "temperature", "ecc mode"}
_PROMPT = re.compile(r"^\S*[$#]\s")
_BANNER_MIDDLE = re.compile(r"[\w .:/()-]*")


def _banner_line(s: str) -> bool:
    """A script's "=== SECTION ===" echo: a run of '=', '-' or '#' at each end, words between. The same lines as
    ``^(?:=+|-+|#+)\\s*[\\w .:/()-]*\\s*(?:=+|-+|#+)$`` without its three-way split of a run of dashes (800 dashes
    and a word took 0.8 CPU-s, cubic): each end's run is taken whole, which the middle never needs."""
    if len(s) < 2 or s[0] not in "=-#" or s[-1] not in "=-#":
        return False
    return _BANNER_MIDDLE.fullmatch(s[1:-1].lstrip(s[0]).rstrip(s[-1]).strip()) is not None
# a line of the report with its key padded to the value column ("Fan Speed          : ..."), at the margin where a
# person quoted a few lines of it: kept out of the GPUs unless it is a section read here, and no reason to refuse
_PADDED_KEY = re.compile(r"^[A-Z][\w ./()-]{0,40}?\S {2,}: \S")


def _reason_fragments(lines: list[str]) -> list[dict[str, Any]]:
    """GPUs from a fragment without GPU headers, as ``nvidia-smi -q | grep -A8 'Clocks Throttle'`` prints, or as
    people quote a section or two of ``nvidia-smi -q -d PERFORMANCE,CLOCK`` (at the left margin or indented):
    sections are grouped into one GPU until a section repeats (the next GPU's; ``--`` between GPUs from grep),
    and a group counts only with its reasons section. Only such a fragment: any other unindented line (a report
    whose GPU header was lost, another tool's output) and it is not one, and the caller's error stands."""
    body = []
    for ln in lines:
        if ln[:1].isspace():
            body.append(ln)
            continue
        s = ln.strip()
        if not s or s in ("--", "...", "…") or _PROMPT.match(ln) or _banner_line(s):
            continue  # grep's separator, an elision, the command, a script's "=== SECTION ===" echo
        if s.split(":", 1)[0].strip().lower() not in _FRAGMENT_SECTIONS and not _PADDED_KEY.match(ln):
            return []  # an unindented line that is neither a line of the report nor grep's separator
        body.append(ln)
    root = _tree(body, Node("", None, -1))
    known = [node for node in root.children if node.lkey in _FRAGMENT_SECTIONS]
    if not known:
        return []
    groups: list[list[Node]] = [[]]
    for node in known:  # other sections a grep kept around them (Inforom Version, GPU Fabric GUID) are left out
        if any(n.lkey == node.lkey for n in groups[-1]):
            groups.append([])
        groups[-1].append(node)
    devices: list[dict[str, Any]] = []
    for group in groups:
        if not any(n.lkey in _ANCHOR_SECTIONS for n in group):
            continue
        gpu = Node("", None, -1)
        gpu.children = group
        d = device(gpu, len(devices))
        if (d["clocks_event_reasons"] is not None or d["fabric"] is not None or d["vgpu_license"] is not None
                or d["recovery_action"] is not None or d.get("remapped_rows") is not None
                or d["ecc_uncorrected_volatile"] is not None or d["ecc_corrected_volatile"] is not None):
            devices.append(d)
    return devices


def _detect(text: str) -> float:
    if _BANNER.search(text):
        return 0.95
    if re.search(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d\s*$", text, re.MULTILINE) and re.search(
            r"^[^\S\n]+Product Name\s+:", text, re.MULTILINE):
        return 0.85
    if re.search(r"^[^\S\n]*Clocks (?:Event|Throttle) Reasons?\s*$", text, re.MULTILINE) and len(re.findall(
            r"^[^\S\n]*(?:Idle|GPU Idle|SW Power Cap|HW Slowdown|Sync Boost|SW Thermal Slowdown)\s*: (?:Not )?Active\s*$",
            text[:65536], re.MULTILINE)) >= 2:
        return 0.8  # a grep'd fragment: nvidia-smi -q | grep -A8 'Clocks Throttle'
    if re.search(r"^[^\S\n]*Fabric\s*\n\s+State\s+: [\w /]+\n\s+Status\s+: ", text[:65536], re.MULTILINE):
        return 0.75  # nvidia-smi -q | grep -A2 Fabric: the NVSwitch fabric registration per GPU
    if re.search(r"^[^\S\n]*vGPU Software Licensed Product\s*\n(?:\s+.*\n)?\s+License Status\s+: ", text[:65536], re.MULTILINE):
        return 0.75  # nvidia-smi -q | grep -A2 'vGPU Software Licensed Product': a vGPU guest's license
    if re.search(r"^[^\S\n]*GPU Reset Status\s*\n\s+Reset Required\s+: \S", text[:65536], re.MULTILINE) or re.search(
            r"^[^\S\n]*GPU Recovery Action\s+: \S", text[:65536], re.MULTILINE):
        return 0.75  # the driver's word on recovering a GPU after an error, quoted alone
    if re.search(r"^[^\S\n]*Remapped Rows\s*\n(?:\s+.*\n){0,3}?\s+Uncorrectable Error\s+: \d+", text[:65536], re.MULTILINE):
        return 0.75  # nvidia-smi -q -d ROW_REMAPPER (or a grep of it): a GPU's memory rows remapped after errors
    if re.search(r"^[^\S\n]*ECC Errors\s*\n[^\S\n]+Volatile\s*\n(?:[^\S\n]+.*\n){0,3}?[^\S\n]+(?:[\w ]{0,40}"
                 r"Correctable|[\w ]{0,40}Uncorrectable|Single Bit|Double Bit)\b", text[:65536], re.MULTILINE):
        return 0.75  # nvidia-smi -q -d ECC quoted without its GPU header: one GPU's error counters
    return 0.0


_COMPUTE_MODE = re.compile(r"^[^\S\n]*Compute Mode\s*:\s*(\w+)\s*$", re.MULTILINE)


@parser(
    "nvidia-smi-q",
    detect=_detect,
    summary="nvidia-smi -q: full per-GPU report (clocks, event/throttle reasons, power, ECC, remapped rows, PCIe)",
    facts=FACTS + [INFOROM_FACT, COMPUTE_EXCLUSIVE_FACT],
    command="nvidia-smi -q",
)
def parse(text: str) -> dict[str, object]:
    header, devices = read(text)
    driver = header.get("Driver Version") or None
    cuda = header.get("CUDA Version") or None
    attached = to_number(header.get("Attached GPUs", ""))
    facts = gpu_facts(devices, driver=driver if driver != "N/A" else None,
                      cuda=cuda if cuda != "N/A" else None,
                      count=attached if isinstance(attached, int) else None)
    bad = inforom_corrupted(text)
    if bad:
        facts["gpu.inforom_corrupted"] = bad
    modes = _COMPUTE_MODE.findall(text[:1 << 22])
    if modes and len(modes) == len(devices):  # "Compute Mode : Exclusive_Process", one per GPU section
        facts["gpu.compute_exclusive"] = [d["index"] for d, m in zip(devices, modes)
                                          if m.lower() in ("exclusive_process", "prohibited")]
    if all(d["bus_id"] is None for d in devices):
        # a grep'd fragment (no GPU headers): how many GPUs the machine has, and their names, are not shown
        if not isinstance(attached, int):
            facts.pop("gpu.count", None)
        if not facts.get("gpu.names"):
            facts.pop("gpu.names", None)
    return facts
