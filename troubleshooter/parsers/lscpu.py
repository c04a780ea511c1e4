"""lscpu: CPU model, counts, topology, clocks, NUMA nodes and hypervisor, in both of lscpu's layouts.

Real sample (util-linux >= 2.37 tree layout, AMD EPYC 7502P with SMT switched off at runtime, from
../shared/corpus/lscpu-ibstat)::

    Architecture:            x86_64
    CPU(s):                  64
      On-line CPU(s) list:   0-31
      Off-line CPU(s) list:  32-63
    Vendor ID:               AuthenticAMD
      Model name:            AMD EPYC 7502P 32-Core Processor
        Thread(s) per core:  1
        Core(s) per socket:  32
        Socket(s):           1
        CPU max MHz:         2500.0000

The older layout is flat (``NUMA node0 CPU(s):   0-5,48-53`` at column 0). Both are read as ``Key: value``
lines whatever the indentation; the first occurrence of a key wins (pastes often repeat lscpu lines).

What matters for training speed: the NUMA layout and which CPUs are online decide where loader threads
should be pinned near the GPUs; NUMA nodes without CPUs (GH200/GB200 GPU memory nodes) break tools that
assume every node has CPUs; a hypervisor vendor says we are in a VM (reference cases 1, 2, 4).

Robustness: a first character lost in the paste (``rchitecture:``) is recovered for known keys; ``-`` for
sockets (Arm VMs) gives no ``cpu.sockets``; empty NUMA CPU lists give ``numa.cpuless_nodes``; a Flags line
hard-wrapped at a fixed width is re-joined. ``cpu.virtualized`` is true with a hypervisor vendor (or the
x86 ``hypervisor`` flag), false only on x86 output that reaches the cache/NUMA lines printed after the
hypervisor lines, and absent otherwise (lscpu cannot always see a hypervisor on Arm).

>>> f = parse("Architecture: x86_64\\nCPU(s): 8\\nSocket(s): 1\\nHypervisor vendor: KVM\\nVirtualization type: full\\n")
>>> f["cpu.count"], f["cpu.hypervisor"], f["cpu.virtualized"]
(8, 'KVM', True)
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text, to_number

FACTS = [
    ("cpu.arch", "string", "", "CPU architecture (x86_64, aarch64)"),
    ("cpu.vendor", "string", "", "vendor id (GenuineIntel, AuthenticAMD, ARM)"),
    ("cpu.model", "string", "", "CPU model name"),
    ("cpu.count", "number", "count", "logical CPUs the kernel knows (CPU(s))"),
    ("cpu.online_list", "string", "", "online CPU list (e.g. 0-31)"),
    ("cpu.online_count", "number", "count", "CPUs in the online list"),
    ("cpu.offline_list", "string", "", "offline CPU list; absent when all are online"),
    ("cpu.sockets", "number", "count", "sockets; absent when lscpu prints '-' (Arm VMs)"),
    ("cpu.cores_per_socket", "number", "count", "cores per socket"),
    ("cpu.threads_per_core", "number", "count", "threads per core (1 = SMT off or absent)"),
    ("cpu.max_mhz", "number", "MHz", "CPU max MHz (hardware max clock, turbo included)"),
    ("cpu.min_mhz", "number", "MHz", "CPU min MHz; absent when lscpu prints 0"),
    ("cpu.freq.boost", "bool", "", "turbo/boost enabled (lscpu 'Frequency boost')"),
    ("cpu.hypervisor", "string", "", "hypervisor vendor (KVM, Microsoft, VMware, Xen); absent on bare metal"),
    ("cpu.virtualization_type", "string", "", "virtualization type: full, para, none, container"),
    ("cpu.virtualized", "bool", "", "running under a hypervisor (see the module doc for when it is omitted)"),
    ("numa.node_count", "number", "count", "NUMA nodes (NUMA node(s), else the nodes listed)"),
    ("numa.node_cpus", "dict", "", "CPU list per NUMA node id ('0' -> '0-31'); empty for CPU-less nodes"),
    ("numa.cpuless_nodes", "list", "", "NUMA node ids with no CPUs (GPU or CXL memory nodes)"),
    ("cpu.flags", "list", "", "CPU feature flags"),
]

KNOWN = {
    "Architecture", "CPU op-mode(s)", "Byte Order", "Address sizes", "CPU(s)", "On-line CPU(s) list",
    "Off-line CPU(s) list", "Vendor ID", "BIOS Vendor ID", "Model name", "BIOS Model name", "CPU family",
    "Model", "Thread(s) per core", "Core(s) per socket", "Core(s) per cluster", "Socket(s)", "Cluster(s)",
    "Stepping", "Frequency boost", "CPU(s) scaling MHz", "CPU max MHz", "CPU min MHz", "CPU MHz", "BogoMIPS",
    "Flags", "Virtualization", "Hypervisor vendor", "Virtualization type", "L1d cache", "L1i cache",
    "L2 cache", "L3 cache", "NUMA node(s)", "Book(s)", "Drawer(s)",
}
_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ()/_.,-]{0,60}?)\s*:\s*(.*\S|)\s*$")
_NODE = re.compile(r"^NUMA node(\d+) CPU\(s\)$")
_FLAG = re.compile(r"^[a-z0-9_.]+$")
_CORE_KEYS = ("Architecture", "CPU(s)", "Model name", "Thread(s) per core", "Core(s) per socket", "Socket(s)",
              "On-line CPU(s) list", "Vendor ID", "NUMA node(s)")
_AFTER_HYPERVISOR = ("L1d cache", "L1d", "L2 cache", "L3 cache")


_RANGE = re.compile(r"(\d+)(?:-(\d+))?")  # compiled once: one per part of a CPU list

def _canon(key: str) -> str | None:
    if key in KNOWN or _NODE.match(key) or key.startswith("Vulnerability "):
        return key
    for k in KNOWN:  # a paste that lost the first character: 'rchitecture'
        if len(key) >= 4 and k[1:] == key:
            return k
    return None


def _detect(text: str) -> float:
    hits = sum(bool(re.search(rf"^[^\S\n]*{re.escape(k)}:", text, re.MULTILINE)) for k in _CORE_KEYS)
    if hits >= 6:
        return 1.0  # a whole lscpu block: wins over a numactl/numastat paste that follows it
    if hits >= 3:
        return 0.95
    if re.search(r"^[^\S\n]*NUMA node\d+ CPU\(s\):", text, re.MULTILINE):
        # lscpu's NUMA section alone; less sure when other output shares the paste (a cmdline after it)
        foreign = [ln for ln in text.splitlines() if ln.strip() and not _LINE.match(ln)]
        return 0.7 if foreign else 0.8
    return 0.3 if hits else 0.0


def cpu_list_count(spec: str) -> int | None:
    """'0-3,8,10-11' -> 7; None when it is not a CPU list."""
    total = 0
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        m = _RANGE.fullmatch(part)
        if not m:
            return None
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            return None
        total += hi - lo + 1
    return total


def _int(v: str | None) -> int | None:
    n = to_number(v) if v is not None else None
    return n if isinstance(n, int) else None


@parser(
    "lscpu",
    detect=_detect,
    summary="lscpu (flat or tree layout)",
    facts=FACTS,
    command="lscpu",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "lscpu output")
    kv: dict[str, str] = {}
    order: list[str] = []
    lines = text.split("\n")
    flags_lines: list[str] | None = None
    in_flags = False
    for raw in lines:
        if in_flags and flags_lines is not None:
            toks = raw.split()
            if toks and ":" not in raw and all(_FLAG.match(t) for t in toks):
                flags_lines.append(raw)
                continue
            in_flags = False
        m = _LINE.match(raw)
        if not m:
            continue
        key = _canon(m.group(1).strip())
        if key is None:
            continue
        order.append(key)
        if key == "Flags":
            if flags_lines is None:
                flags_lines = [raw]
                in_flags = True
            continue
        kv.setdefault(key, m.group(2))
    if not any(k in kv for k in _CORE_KEYS) and not any(_NODE.match(k) for k in kv):
        raise ParseError("no lscpu lines found (Architecture:, CPU(s):, Model name:, NUMA node0 CPU(s): ...)")
    facts: dict[str, Any] = {}
    for key, name in (("Architecture", "cpu.arch"), ("Vendor ID", "cpu.vendor"), ("Model name", "cpu.model"),
                      ("On-line CPU(s) list", "cpu.online_list"), ("Off-line CPU(s) list", "cpu.offline_list"),
                      ("Hypervisor vendor", "cpu.hypervisor"), ("Virtualization type", "cpu.virtualization_type")):
        if kv.get(key):
            facts[name] = kv[key]
    for key, name in (("CPU(s)", "cpu.count"), ("Socket(s)", "cpu.sockets"), ("Core(s) per socket", "cpu.cores_per_socket"),
                      ("Thread(s) per core", "cpu.threads_per_core")):
        n = _int(kv.get(key))
        if n is not None:
            facts[name] = n
    if kv.get("On-line CPU(s) list"):
        n = cpu_list_count(kv["On-line CPU(s) list"])
        if n is not None:
            facts["cpu.online_count"] = n
    for key, name in (("CPU max MHz", "cpu.max_mhz"), ("CPU min MHz", "cpu.min_mhz")):
        v = to_number(kv.get(key, ""))
        if v is not None and v > 0:
            facts[name] = float(v)
    boost = kv.get("Frequency boost", "").lower()
    if boost in ("enabled", "disabled"):
        facts["cpu.freq.boost"] = boost == "enabled"
    if flags_lines:
        first = _LINE.match(flags_lines[0])
        text_flags = first.group(2) if first else ""
        width = len(flags_lines[0].rstrip("\n"))
        prev = flags_lines[0]
        for cont in flags_lines[1:]:
            # hard-wrapped at a fixed width (mid-word): join directly; otherwise a word boundary
            glue = "" if len(prev) == width and not prev.endswith(" ") else " "
            text_flags = text_flags + glue + cont.strip()
            prev = cont
        flags = text_flags.split()
        if flags:
            facts["cpu.flags"] = flags
    nodes: dict[str, str] = {}
    for k, v in kv.items():
        m = _NODE.match(k)
        if m:
            nodes[m.group(1)] = v.strip()
    if nodes:
        facts["numa.node_cpus"] = dict(sorted(nodes.items(), key=lambda kv_: int(kv_[0])))
        facts["numa.cpuless_nodes"] = sorted(int(n) for n, cpus in nodes.items() if not cpus)
    count = _int(kv.get("NUMA node(s)"))
    if count is not None:
        facts["numa.node_count"] = count
    elif nodes:
        facts["numa.node_count"] = len(nodes)
    arch = facts.get("cpu.arch", "")
    if facts.get("cpu.hypervisor"):
        facts["cpu.virtualized"] = True
    elif "hypervisor" in facts.get("cpu.flags", []):
        facts["cpu.virtualized"] = True
    elif arch in ("x86_64", "i686", "i386") and any(k in order for k in _AFTER_HYPERVISOR) or (
        arch in ("x86_64", "i686", "i386") and any(_NODE.match(k) or k.startswith("Vulnerability ") for k in order)
    ):
        facts["cpu.virtualized"] = False
    return facts
