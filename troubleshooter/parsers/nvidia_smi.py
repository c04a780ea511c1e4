"""Plain ``nvidia-smi``: the summary table (one block of two or three lines per GPU).

Real sample (4x GB300, driver 580, from ../shared/corpus/nvidia-smi-q)::

    | NVIDIA-SMI 580.105.08             Driver Version: 580.105.08     CUDA Version: 13.0     |
    +-----------------------------------------+------------------------+----------------------+
    | GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
    | Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
    |                                         |                        |               MIG M. |
    |=========================================+========================+======================|
    |   0  NVIDIA GB300                   On  |   00000008:06:00.0 Off |                    0 |
    | N/A   33C    P0            237W / 1400W |       1MiB / 284208MiB |      0%      Default |
    |                                         |                        |             Disabled |

Drivers before R450 print a narrower frame (``Persistence-M|`` without a space, no MIG row) and cut long
names (``Tesla V100-SXM2...``); names are kept as printed. What matters for speed: the driver/CUDA pair,
GPUs stuck in a low performance state (P8 under load) or near their power cap, persistence mode off
(driver load latency on every job start). Use ``nvidia-smi -q`` for throttle reasons and PCIe state.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text, to_number

_HEADER = re.compile(r"NVIDIA-SMI\s+(\S+)\s+Driver Version:\s*(\S+)(?:\s+CUDA Version:\s*(\S+))?")
_ROW1 = re.compile(
    r"^\|\s*(\d+)\s+(.(?:.*?\S)??)\s+(On|Off|N/A)\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s+\S+\s*\|"
)
_ROW2 = re.compile(
    r"^\|\s*(\S+)\s+(\S+)\s+(P\d+|N/A|ERR!)\s+(.*?)\|\s*(\S+?)\s*/\s*(\S+?)\s*\|\s*(\S+)"
    r"(?:\s+(Default|E\. Process|E\. Thread|Prohibited)\s*\|)?"
)
# nvidia-smi's warning before or after its report when the GPU's InfoROM (the board's configuration and error-record
# store) fails its checksum: "WARNING: infoROM is corrupted at gpu 0000:0B:00.0"
_INFOROM = re.compile(r"WARNING: infoROM is corrupted at gpu ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])")


def inforom_corrupted(text: str) -> list[str]:
    """Bus ids nvidia-smi warned about: the InfoROM failed its checksum."""
    return list(dict.fromkeys(m.group(1).lower() for m in _INFOROM.finditer(text[:1 << 20])))[:64]

INFOROM_FACT = ("gpu.inforom_corrupted", "list", "", "bus ids nvidia-smi warned about: 'WARNING: infoROM is corrupted "
                "at gpu ...' (the board's InfoROM failed its checksum)")
COMPUTE_EXCLUSIVE_FACT = ("gpu.compute_exclusive", "list", "", "indexes of GPUs whose compute mode lets one process "
                          "at most ('E. Process', Exclusive_Process) or none (Prohibited) hold a context")
FACTS = [
    ("gpu.count", "number", "count", "GPUs attached"),
    ("gpu.names", "list", "", "product name of each GPU, in index order"),
    ("gpu.driver_version", "string", "", "NVIDIA driver version"),
    ("gpu.cuda_version", "string", "", "highest CUDA version the driver supports"),
    ("gpu.devices", "list", "", "per-GPU dicts; from the nvidia-smi table: index, name, bus_id, temp_c, perf_state, "
     "power_w, power_limit_w, mem_used_mib, mem_total_mib, util_pct; from nvml / nvidia-smi -q: the health dict "
     "(clocks, event reasons, ECC, remapped rows, PCIe, NVLink, processes)"),
    ("gpu.persistence_off", "list", "", "indexes of GPUs with persistence mode off"),
    COMPUTE_EXCLUSIVE_FACT,
    INFOROM_FACT,
    ("gpu.processes", "list", "", "the Processes table's rows: {gpu, pid, type, name, mem_mib} ([] for 'No running "
     "processes found' or an empty table); inside a container's PID namespace the driver lists none of them"),
    ("gpu.idle_p0_no_persistence", "list", "", "indexes of GPUs idle (no memory used beyond a few MiB, 0% utilization) yet in P0 with persistence mode off: the driver re-initialises them for each client (here nvidia-smi) and holds them at full performance state"),
]


def _unit_number(token: str, unit: str) -> float | int | None:
    t = token.strip()
    if t.endswith(unit):
        t = t[: -len(unit)]
    return to_number(t)


def _power(cell: str) -> tuple[float | None, float | None]:
    m = re.search(r"(?<!\S)(\S+?)\s*/\s*(\S+)", cell)
    if not m:
        return None, None
    draw, cap = _unit_number(m.group(1), "W"), _unit_number(m.group(2), "W")
    return (float(draw) if draw is not None else None), (float(cap) if cap is not None else None)


@parser(
    "nvidia-smi",
    detect=lambda text: _detect(text),
    summary="plain nvidia-smi table: GPUs, driver and CUDA version, temperature, power, memory, utilisation",
    facts=FACTS,
    command="nvidia-smi",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "the nvidia-smi table")
    lines = text.split("\n")
    facts: dict[str, Any] = {}
    devices: list[dict[str, Any]] = []
    persistence: dict[int, bool] = {}
    modes: dict[int, str] = {}
    header_seen = False
    procs_at = None
    for n, line in enumerate(lines):
        if "Processes:" in line:
            procs_at = n
            break  # the processes table (its rows also start with a GPU number)
        h = _HEADER.search(line)
        if h and not header_seen:
            header_seen = True
            facts["gpu.driver_version"] = h.group(2)
            if h.group(3) and h.group(3) != "N/A":
                facts["gpu.cuda_version"] = h.group(3)
            continue
        m = _ROW1.match(line.strip())
        if not m:
            continue
        dev: dict[str, Any] = {
            "index": int(m.group(1)), "name": m.group(2).strip(), "bus_id": m.group(4),
            "temp_c": None, "perf_state": None, "power_w": None, "power_limit_w": None,
            "mem_used_mib": None, "mem_total_mib": None, "util_pct": None,
        }
        if m.group(3) != "N/A":
            persistence[dev["index"]] = m.group(3) == "On"
        nxt = lines[n + 1].strip() if n + 1 < len(lines) else ""
        r2 = _ROW2.match(nxt)
        if r2:
            temp = _unit_number(r2.group(2), "C")
            dev["temp_c"] = int(temp) if temp is not None else None
            dev["perf_state"] = r2.group(3) if r2.group(3).startswith("P") else None
            dev["power_w"], dev["power_limit_w"] = _power(r2.group(4))
            used, total = _unit_number(r2.group(5), "MiB"), _unit_number(r2.group(6), "MiB")
            dev["mem_used_mib"] = int(used) if used is not None else None
            dev["mem_total_mib"] = int(total) if total is not None else None
            util = _unit_number(r2.group(7), "%")
            dev["util_pct"] = util
            if r2.group(8):
                modes[dev["index"]] = r2.group(8)
        devices.append(dev)
    procs = _processes(lines[procs_at:]) if procs_at is not None else None
    if not devices and procs is not None and not header_seen:
        return {"gpu.processes": procs}  # the Processes table alone
    if procs is not None:
        facts["gpu.processes"] = procs
    if not devices:
        if header_seen and facts.get("gpu.driver_version"):
            # the header alone (a paste of its top lines): the driver and the CUDA it supports; how many GPUs is not said
            return {k: v for k, v in facts.items() if k in ("gpu.driver_version", "gpu.cuda_version")}
        if header_seen:
            raise ParseError("nvidia-smi header found but no GPU rows (no GPU, or the table was cut)")
        raise ParseError("not the nvidia-smi table: no 'NVIDIA-SMI ... Driver Version:' header and no GPU rows")
    if header_seen or [d["index"] for d in devices] == list(range(len(devices))):
        facts["gpu.count"] = len(devices)  # a GPU's rows quoted alone (GPU 1 of a node) do not count the node's
    facts["gpu.names"] = [d["name"] for d in devices]
    facts["gpu.devices"] = devices
    if modes:
        facts["gpu.compute_exclusive"] = [i for i, m in sorted(modes.items()) if m in ("E. Process", "Prohibited")]
    bad = inforom_corrupted(text)
    if bad:
        facts["gpu.inforom_corrupted"] = bad
    if persistence:
        off = sorted(i for i, on in persistence.items() if not on)
        facts["gpu.persistence_off"] = off
        facts["gpu.idle_p0_no_persistence"] = [
            d["index"] for d in devices if d.get("index") in off and d.get("perf_state") == "P0"
            and d.get("util_pct") == 0 and d.get("mem_used_mib") is not None and d["mem_used_mib"] <= 8]
    return facts


# "|    0     28290    C   python                                        1012MiB |" (and "|    0   N/A  N/A    122792      C
# nvidia-cuda-mps-server  25MiB |" with the MIG GI/CI columns of newer drivers)
_PROC_ROW = re.compile(r"^\|\s*(\d+)\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(\d+)\s+(C\+G|C|G|M|M\+C)\s+(.(?:.*?\S)??)\s+(\d+)MiB\s*\|\s*$")
_PROC_HEADER = re.compile(r"^\|\s*Processes:\s+(?:GPU Memory\s*)?\|\s*$", re.MULTILINE)


def _processes(lines: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for line in lines[:4096]:
        m = _PROC_ROW.match(line.strip())
        if m and len(out) < 256:
            out.append({"gpu": int(m.group(1)), "pid": int(m.group(2)), "type": m.group(3), "name": m.group(4).strip(),
                        "mem_mib": int(m.group(5))})
    return out


def _detect(text: str) -> float:
    if not _HEADER.search(text):
        # the Processes table alone (a paste of nvidia-smi's lower half)
        if _PROC_HEADER.search(text[:65536]) and re.search(r"PID\s+Type\s+Process name", text[:65536]):
            return 0.6
        # a GPU's two table rows quoted without the banner (a thread quoting the GPU that shows ERR!)
        lines = text[:65536].split("\n")
        if any(_ROW1.match(a.strip()) and _ROW2.match(b.strip()) for a, b in zip(lines, lines[1:])):
            return 0.6
        return 0.0
    if re.search(r"^=+\s*NVSMI LOG\s*=+\s*$", text, re.MULTILINE):
        return 0.6  # the table followed by nvidia-smi -q: the -q parser reads more
    return 0.9
