"""``nvidia-smi --query-gpu=... --format=csv``: the columns asked for, one row per GPU.

Sample (a sampler's fixture in another project, in the shape ``-lms`` output takes: a timestamp column, units in
the values, the same GPUs sampled again; tests/data/nvidia-smi-csv)::

    timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz], clocks.current.memory [MHz], utilization.gpu [%], utilization.memory [%]
    2026/09/11 04:19:41.982, 0, 187.80 W, 33, 120 MHz, 3996 MHz, 0 %, 0 %
    2026/09/11 04:19:42.990, 0, 912.10 W, 61, 1965 MHz, 3996 MHz, 98 %, 74 %

Columns are read by their names (``clocks.sm [MHz]`` is ``clocks.sm`` in MHz); ``noheader`` output has no names,
so it is read only with the command line that printed it (intake puts the ``--query-gpu`` list back on top).
Values ``[N/A]`` / ``N/A`` are unknown; units printed in the values (``187.80 W``, ``120 MHz``) are dropped.
With ``-l`` / ``-lms`` the same GPUs come again and again: each GPU's last sample is read. The clock event (throttle) reasons come as the bitmask
(``clocks_event_reasons.active``, ``clocks_throttle_reasons.active``: 0x4 SW power cap, 0x8 HW slowdown, 0x20
SW thermal, 0x40 HW thermal, 0x80 HW power brake; 0x1 idle and 0x2 application clocks are no slowdown) or as
one ``Active`` / ``Not Active`` column per reason.

What it means: the same ``gpu.*`` facts as NVML and ``nvidia-smi -q`` give (see the nvml-json kind): clocks held
down by a reason, PCIe links below their generation or width (normal at idle), ECC errors, persistence mode.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text, to_number
from troubleshooter.parsers.nvml_json import FACTS as GPU_FACTS, gpu_facts

FACTS = list(GPU_FACTS)

REASON_BITS = {0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
               0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown",
               0x80: "hw_power_brake_slowdown", 0x100: "display_clock_setting"}
# query name -> device key of troubleshooter.parsers.nvml_json.DEVICE_KEYS
_COLUMNS = {
    "index": "index", "name": "name", "gpu_name": "name", "uuid": "uuid", "gpu_uuid": "uuid", "pci.bus_id": "bus_id",
    "gpu_bus_id": "bus_id", "pstate": "perf_state", "clocks.sm": "sm_clock_mhz", "clocks.current.sm": "sm_clock_mhz",
    "clocks.max.sm": "sm_clock_max_mhz", "clocks.max.sm_clock": "sm_clock_max_mhz", "clocks.mem": "mem_clock_mhz",
    "clocks.current.memory": "mem_clock_mhz", "clocks.max.mem": "mem_clock_max_mhz", "clocks.max.memory": "mem_clock_max_mhz",
    "power.draw": "power_w", "power.draw.instant": "power_w", "power.limit": "power_limit_w",
    "enforced.power.limit": "power_limit_w", "temperature.gpu": "temp_c",
    "ecc.errors.uncorrected.volatile.total": "ecc_uncorrected_volatile",
    "ecc.errors.corrected.volatile.total": "ecc_corrected_volatile",
    "pcie.link.gen.current": "pcie_gen", "pcie.link.gen.gpucurrent": "pcie_gen", "pcie.link.gen.max": "pcie_gen_max",
    "pcie.link.gen.gpumax": "pcie_gen_max", "pcie.link.width.current": "pcie_width", "pcie.link.width.max": "pcie_width_max",
    "persistence_mode": "persistence_mode",
}
_REASONS_ACTIVE = ("clocks_event_reasons.active", "clocks_throttle_reasons.active")
_REASON_COL = re.compile(r"^clocks_(?:event|throttle)_reasons\.(\w+)$")
_KNOWN = re.compile(r"^(?:index|name|uuid|pci\.bus_id|pstate|clocks[._]|power\.|temperature\.|ecc\.|pcie\.|persistence_mode|"
                    r"driver_version|memory\.|utilization\.|fan\.speed|count|serial|timestamp|enforced\.power|gpu_)")


def _name(col: str) -> str:
    """'clocks.sm [MHz]' -> 'clocks.sm': the unit in brackets at the end goes. Done by hand, not with a regular
    expression anchored at the end, which retries from every '[' of a long garbage line (quadratic)."""
    c = col.strip()
    if c.endswith("]"):
        i = c.rfind("[")
        if i >= 0 and "]" not in c[i + 1:-1]:
            c = c[:i].rstrip()
    return c


def _names(header: str) -> list[str]:
    return [_name(c) for c in header.split(",")]


def _detect(text: str) -> float:
    first = next((ln for ln in text[:8192].split("\n") if ln.strip()), "")
    cols = _names(first)
    if len(cols) >= 2 and sum(1 for c in cols if _KNOWN.match(c)) >= max(2, len(cols) - 1):
        return 0.9
    return 0.0


def _value(col: str, raw: str) -> Any:
    v = raw.strip()
    if not v or v.upper() in ("[N/A]", "N/A", "[NOT SUPPORTED]", "[UNKNOWN ERROR]"):
        return None
    if col in ("name", "uuid", "bus_id", "perf_state"):
        return v
    if col == "persistence_mode":
        return {"enabled": True, "disabled": False}.get(v.lower())
    n = to_number(re.sub(r"(?<!\s)\s*(?:MHz|W|MiB|%|C)$", "", v))
    return n


@parser(
    "nvidia-smi-csv",
    detect=_detect,
    summary="nvidia-smi --query-gpu=... --format=csv: the queried columns per GPU, as gpu.* facts",
    facts=FACTS,
    command="nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,clocks_event_reasons.active,power.draw,power.limit,temperature.gpu,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max --format=csv",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "nvidia-smi --query-gpu CSV output with its header line")
    lines = [ln for ln in text.split("\n") if ln.strip()]
    cols = _names(lines[0])
    if sum(1 for c in cols if _KNOWN.match(c)) < max(1, len(cols) - 1):
        raise ParseError("no --query-gpu header line (e.g. 'index, name, clocks.sm [MHz]'): a noheader CSV cannot be "
                         "read without the command that printed it", line=1)
    by_index: dict[int, dict[str, Any]] = {}
    driver = None
    for n, ln in enumerate(lines[1:], 2):
        cells = [c.strip() for c in ln.split(",")]
        if len(cells) != len(cols):
            raise ParseError(f"{len(cells)} values for {len(cols)} columns (a line cut or run together?)", line=n)
        d: dict[str, Any] = {"index": len(by_index)}
        reasons: list[str] | None = None
        for c, raw in zip(cols, cells):
            key = _COLUMNS.get(c)
            if key:
                v = _value(key, raw)
                if v is not None:
                    d[key] = int(v) if key == "index" and isinstance(v, (int, float)) else v
            elif c in _REASONS_ACTIVE:
                try:
                    mask = int(raw.strip(), 16)
                except ValueError:
                    continue
                reasons = (reasons or []) + [name for bit, name in REASON_BITS.items() if mask & bit]
            elif c == "driver_version" and raw.strip():
                driver = raw.strip()
            else:
                r = _REASON_COL.match(c)
                if r and r.group(1) not in ("active", "supported") and raw.strip().lower() in ("active", "not active"):
                    reasons = reasons or []
                    if raw.strip().lower() == "active":
                        reasons.append(r.group(1).replace("hw_power_brake", "hw_power_brake_slowdown")
                                       if r.group(1) == "hw_power_brake" else r.group(1))
        if reasons is not None:
            d["clocks_event_reasons"] = sorted(set(reasons))
        # with -l / -lms the same GPUs come again: the last sample of each is the one kept
        by_index[d["index"] if isinstance(d["index"], int) else len(by_index)] = d
    if not by_index:
        raise ParseError("a header and no GPU row")
    return gpu_facts([by_index[i] for i in sorted(by_index)], driver=driver)
