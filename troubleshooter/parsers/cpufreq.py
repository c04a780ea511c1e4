"""cpufreq sysfs, SMT state and CPU vulnerabilities (``grep -H .`` path:value lines).

Input: ``grep -H .`` over ``/sys/devices/system/cpu/cpu*/cpufreq/{scaling_driver,scaling_governor,
scaling_max_freq,cpuinfo_max_freq,scaling_cur_freq}``, ``cpufreq/boost``, ``intel_pstate/no_turbo``,
``smt/{active,control}`` and ``vulnerabilities/*``. Real sample (this project's KVM development machine,
whose cpufreq directory is empty: no frequency lines at all, tests/data/cpufreq/)::

    /sys/devices/system/cpu/smt/active:0
    /sys/devices/system/cpu/smt/control:notsupported
    /sys/devices/system/cpu/vulnerabilities/spec_store_bypass:Vulnerable
    /sys/devices/system/cpu/vulnerabilities/spectre_v1:Mitigation: usercopy/swapgs barriers and __user pointer sanitization

On a bare-metal server the same command adds lines such as
``/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor:powersave`` and
``/sys/devices/system/cpu/intel_pstate/no_turbo:0``.

What matters for training speed: a ``powersave`` governor or a ``scaling_max_freq`` below
``cpuinfo_max_freq`` holds busy cores below their clock, turbo switched off (``no_turbo=1``, ``boost=0``)
loses the turbo range; SMT and mitigations change the CPU cost of each step (case 2 turned both off).
Frequencies are kHz in sysfs and MHz here. Without cpufreq lines only the SMT and vulnerability facts come
out (a VM without a cpufreq driver is normal).

>>> f = parse("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor:powersave\\n/sys/devices/system/cpu/intel_pstate/no_turbo:1\\n")
>>> f["cpu.freq.governor"], f["cpu.freq.boost"]
('powersave', False)
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("cpu.freq.driver", "string", "", "cpufreq scaling driver (intel_pstate, acpi-cpufreq, amd-pstate, cppc_cpufreq...), the most common over CPUs"),
    ("cpu.freq.governor", "string", "", "cpufreq governor used by most CPUs (performance, powersave, schedutil, ondemand)"),
    ("cpu.freq.governors", "list", "", "distinct governors over CPUs, sorted (more than one: CPUs are configured differently)"),
    ("cpu.freq.max_mhz", "number", "MHz", "highest hardware max clock (cpuinfo_max_freq); scaling_max_freq when that is all there is"),
    ("cpu.freq.scaling_max_mhz", "number", "MHz", "lowest scaling_max_freq over CPUs (the policy cap)"),
    ("cpu.freq.capped", "bool", "", "some CPU's scaling_max_freq is below its cpuinfo_max_freq"),
    ("cpu.freq.cur_mhz_median", "number", "MHz", "median scaling_cur_freq over CPUs at the time of reading"),
    ("cpu.freq.boost", "bool", "", "turbo/boost enabled (cpufreq/boost=1 or intel_pstate/no_turbo=0)"),
    ("cpu.freq.cpus", "number", "count", "CPUs that expose cpufreq"),
    ("cpu.smt_active", "bool", "", "SMT (hyper-threading) siblings are online (smt/active)"),
    ("cpu.smt_control", "string", "", "SMT control state: on, off, forceoff, notsupported, notimplemented"),
    ("cpu.vulnerabilities", "dict", "", "kernel's report per CPU vulnerability (name -> text)"),
    ("cpu.mitigated_count", "number", "count", "vulnerabilities reported as 'Mitigation: ...'"),
    ("cpu.vulnerable_count", "number", "count", "vulnerabilities reported as 'Vulnerable...'"),
]

_BASE = "/sys/devices/system/cpu/"
_PERCPU = re.compile(r"^/sys/devices/system/cpu/cpu(\d+)/cpufreq/(\w+):(.*)$")
_OTHER = re.compile(r"^/sys/devices/system/cpu/(cpufreq/boost|intel_pstate/no_turbo|smt/active|smt/control|vulnerabilities/[\w.-]+):(.*)$")


def _detect(text: str) -> float:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()][:300]
    if not lines:
        return 0.0
    hits = sum(bool(_PERCPU.match(ln) or _OTHER.match(ln)) for ln in lines)
    if hits == 0:
        return 0.0
    return 0.95 if hits / len(lines) >= 0.5 else 0.6


def _khz_to_mhz(v: str) -> float | None:
    v = v.strip()
    if not v.isdigit():
        return None
    mhz = int(v) / 1000.0
    return int(mhz) if mhz == int(mhz) else mhz


@parser(
    "cpufreq",
    detect=_detect,
    summary="cpufreq/SMT/vulnerabilities sysfs (grep -H . path:value lines)",
    facts=FACTS,
    command="grep -H . /sys/devices/system/cpu/cpu*/cpufreq/{scaling_driver,scaling_governor,scaling_max_freq,"
    "cpuinfo_max_freq,scaling_cur_freq} /sys/devices/system/cpu/cpufreq/boost "
    "/sys/devices/system/cpu/intel_pstate/no_turbo /sys/devices/system/cpu/smt/{active,control} "
    "/sys/devices/system/cpu/vulnerabilities/*",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "cpufreq sysfs lines (grep -H . /sys/devices/system/cpu/...)")
    percpu: dict[int, dict[str, str]] = {}
    other: dict[str, str] = {}
    for line in text.split("\n"):
        s = line.strip()
        m = _PERCPU.match(s)
        if m:
            percpu.setdefault(int(m.group(1)), {})[m.group(2)] = m.group(3).strip()
            continue
        m = _OTHER.match(s)
        if m:
            other[m.group(1)] = m.group(2).strip()
    if not percpu and not other:
        raise ParseError("no cpufreq, smt or vulnerabilities lines (expected /sys/devices/system/cpu/...:value)")
    facts: dict[str, Any] = {}
    drivers = Counter(v["scaling_driver"] for v in percpu.values() if v.get("scaling_driver"))
    if drivers:
        facts["cpu.freq.driver"] = drivers.most_common(1)[0][0]
    governors = Counter(v["scaling_governor"] for v in percpu.values() if v.get("scaling_governor"))
    if governors:
        facts["cpu.freq.governor"] = sorted(governors.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        facts["cpu.freq.governors"] = sorted(governors)
    hw_max = [x for v in percpu.values() if (x := _khz_to_mhz(v.get("cpuinfo_max_freq", ""))) is not None]
    sc_max = [x for v in percpu.values() if (x := _khz_to_mhz(v.get("scaling_max_freq", ""))) is not None]
    cur = [x for v in percpu.values() if (x := _khz_to_mhz(v.get("scaling_cur_freq", ""))) is not None]
    if hw_max:
        facts["cpu.freq.max_mhz"] = max(hw_max)
    elif sc_max:
        facts["cpu.freq.max_mhz"] = max(sc_max)
    if sc_max:
        facts["cpu.freq.scaling_max_mhz"] = min(sc_max)
    pairs = [(_khz_to_mhz(v.get("scaling_max_freq", "")), _khz_to_mhz(v.get("cpuinfo_max_freq", ""))) for v in percpu.values()]
    pairs = [(s, h) for s, h in pairs if s is not None and h is not None]
    if pairs:
        facts["cpu.freq.capped"] = any(s < h for s, h in pairs)
    if cur:
        import statistics  # here: statistics (with fractions) was ~2 ms of start-up

        facts["cpu.freq.cur_mhz_median"] = statistics.median(cur)
    if percpu:
        facts["cpu.freq.cpus"] = len(percpu)
    no_turbo = other.get("intel_pstate/no_turbo")
    boost = other.get("cpufreq/boost")
    if no_turbo in ("0", "1"):
        facts["cpu.freq.boost"] = no_turbo == "0"
    elif boost in ("0", "1"):
        facts["cpu.freq.boost"] = boost == "1"
    if other.get("smt/active") in ("0", "1"):
        facts["cpu.smt_active"] = other["smt/active"] == "1"
    if other.get("smt/control"):
        facts["cpu.smt_control"] = other["smt/control"]
    vulns = {k.split("/", 1)[1]: v for k, v in sorted(other.items()) if k.startswith("vulnerabilities/")}
    if vulns:
        facts["cpu.vulnerabilities"] = vulns
        facts["cpu.mitigated_count"] = sum(v.startswith("Mitigation") for v in vulns.values())
        facts["cpu.vulnerable_count"] = sum(v.startswith("Vulnerable") for v in vulns.values())
    return facts
