"""``cpupower idle-info`` and ``cpupower frequency-info``: the C-states a CPU offers and its frequency policy.

Real samples (an AMD machine booted with ``processor.max_cstate=1``, then without it, and its frequency policy;
from a public notes file, tests/data/cpupower)::

    CPUidle driver: acpi_idle
    CPUidle governor: menu
    analyzing CPU 30:

    Number of idle states: 2
    Available idle states: POLL C1
    POLL:
    Flags/Description: CPUIDLE CORE POLL IDLE
    Latency: 0
    ...

    analyzing CPU 24:
      driver: acpi-cpufreq
      hardware limits: 1.50 GHz - 5.46 GHz
      current policy: frequency should be within 1.50 GHz and 2.50 GHz.
                      The governor "performance" may decide which speed to use
      boost state support:
        Supported: yes
        Active: no

idle-info names one CPU's states, shallow to deep, and marks a disabled one ``C6 (DISABLED) :``; frequency-info
gives the driver, the hardware limits, the policy's range and governor, and turbo ("boost") support. ``-c all``
repeats the blocks per CPU: states and policies are merged over CPUs (a state disabled on any CPU is disabled).

What it means (reference case 2): with no deep state offered or enabled (a BIOS limit, ``intel_idle.max_cstate=1``,
``processor.max_cstate=1``), idle cores stay in C1 and keep drawing package power, and busy cores lose turbo
headroom; a policy capped below the hardware limit, a powersave governor or boost off keep busy cores slow. The
same facts as the cpuidle and cpufreq sysfs kinds, so the same causes read them.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text
from troubleshooter.parsers.cpuidle import is_deep

FACTS = [
    ("cpu.cpupower_missing_for_kernel", "string", "", "Ubuntu's cpupower wrapper found no cpupower for the running "
     "kernel ('WARNING: cpupower not found for kernel 4.15.0-42'): linux-tools of that kernel are not installed, so "
     "nothing that calls cpupower (a prolog setting the governor) can read or set the CPUs' power policy"),
    ("cpu.cstate_driver", "string", "", "cpuidle driver in use (intel_idle, acpi_idle, haltpoll, psci_idle...)"),
    ("cpu.cstates.available", "list", "", "idle states the idle driver offers, shallow to deep"),
    ("cpu.cstates.disabled", "list", "", "idle states disabled (disable=1) on at least one CPU"),
    ("cpu.cstates.enabled", "list", "", "idle states enabled on every CPU that lists them, shallow to deep"),
    ("cpu.deep_cstates_available", "bool", "", "a deep idle state (C3/C6 class or deeper, see the module doc) is offered"),
    ("cpu.deep_cstates_enabled", "bool", "", "a deep idle state (C3/C6 class or deeper) is enabled on all CPUs"),
    ("cpu.cstates.latency_us", "dict", "us", "exit latency of each idle state (the highest over CPUs)"),
    ("cpu.freq.driver", "string", "", "cpufreq scaling driver (intel_pstate, acpi-cpufreq, amd-pstate, cppc_cpufreq...), the most common over CPUs"),
    ("cpu.freq.governor", "string", "", "cpufreq governor used by most CPUs (performance, powersave, schedutil, ondemand)"),
    ("cpu.freq.max_mhz", "number", "MHz", "highest hardware max clock (cpuinfo_max_freq); scaling_max_freq when that is all there is"),
    ("cpu.freq.scaling_max_mhz", "number", "MHz", "lowest scaling_max_freq over CPUs (the policy cap)"),
    ("cpu.freq.capped", "bool", "", "some CPU's scaling_max_freq is below its cpuinfo_max_freq"),
    ("cpu.freq.boost", "bool", "", "turbo/boost enabled (cpufreq/boost=1 or intel_pstate/no_turbo=0)"),
]

_FREQ = r"([\d.]+)\s*(GHz|MHz|kHz)"
_HW = re.compile(r"^[^\S\n]*hardware limits:\s*" + _FREQ + r"\s*-\s*" + _FREQ)
_POLICY = re.compile(r"^[^\S\n]*current policy: frequency should be within\s*" + _FREQ + r"\s*and\s*" + _FREQ)
_GOVERNOR = re.compile(r'The governor "([\w-]+)" may decide')
_STATE = re.compile(r"^[^\S\n]*([^\s:](?:[^:]*?[^\s:])??)\s*(?:(\(DISABLED\))\s*)?:\s*$")
_ANALYZING = re.compile(r"^[^\S\n]*analyzing CPU (\d+):", re.MULTILINE)


def _mhz(value: str, unit: str) -> float:
    v = float(value)
    return round(v * 1000 if unit == "GHz" else v / 1000 if unit == "kHz" else v, 1)


# Ubuntu's /usr/bin/cpupower is a wrapper (linux-tools-common) that runs the kernel's own build from
# linux-tools-$(uname -r), or prints this
_NOT_FOR_KERNEL = re.compile(r"WARNING: cpupower not found for kernel (\S+)")


def _detect(text: str) -> float:
    head = text[:65536]
    if _NOT_FOR_KERNEL.search(head):
        return 0.9
    idle = "CPUidle driver:" in head and ("Available idle states:" in head or "Number of idle states:" in head)
    freq = bool(_ANALYZING.search(head) if "analyzing CPU" in head else None) and (
        "hardware limits:" in head or "current policy:" in head or "cpufreq governors:" in head)
    return 0.9 if idle or freq else 0.0


@parser(
    "cpupower",
    detect=_detect,
    summary="cpupower idle-info / frequency-info: C-states offered and disabled, driver, policy, governor, boost",
    facts=FACTS,
    command="cpupower -c all idle-info; cpupower -c all frequency-info",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "cpupower idle-info or frequency-info output")
    driver = None
    available: list[str] = []
    disabled: list[str] = []
    latency: dict[str, int] = {}
    freq_drivers: list[str] = []
    governors: list[str] = []
    hw_max: float | None = None
    policy_max: float | None = None
    boost: bool | None = None
    in_boost = False
    state: str | None = None
    seen = False
    for raw in text.split("\n"):
        line = raw.split("#", 1)[0].rstrip()  # a blog's "# comment" after a value; cpupower prints no '#'
        s = line.strip()
        if not s:
            continue
        if s.startswith("CPUidle driver:"):
            driver, seen = s.split(":", 1)[1].strip() or None, True
            continue
        if s.startswith("Available idle states:"):
            seen = True
            for name in s.split(":", 1)[1].split():
                if name not in available:
                    available.append(name)
            continue
        if s.startswith(("Flags/Desc", "Usage:", "Duration:", "Residency:", "Number of idle states:", "CPUidle governor:")):
            continue
        if s.startswith("Latency:") and state:
            try:
                latency[state] = max(latency.get(state, 0), int(s.split(":", 1)[1]))
            except ValueError:
                pass
            continue
        if s.startswith("driver:"):
            seen = True
            freq_drivers.append(s.split(":", 1)[1].strip())
            continue
        m = _HW.match(line)
        if m:
            seen = True
            top = _mhz(m.group(3), m.group(4))
            hw_max = top if hw_max is None else max(hw_max, top)
            continue
        m = _POLICY.match(line)
        if m:
            seen = True
            top = _mhz(m.group(3), m.group(4))
            policy_max = top if policy_max is None else min(policy_max, top)
        g = _GOVERNOR.search(line) if "governor" in line else None
        if g:
            governors.append(g.group(1))
            continue
        if s.startswith("boost state support:"):
            in_boost = True
            continue
        if in_boost and s.startswith("Active:"):
            active = s.split(":", 1)[1].strip().lower().startswith("yes")
            boost = active if boost is None else (boost and active)
            in_boost = False
            continue
        st = _STATE.match(line) if available and line.endswith(":") and not _ANALYZING.match(line) else None
        if st:
            name = st.group(1).strip()
            state = name
            if st.group(2) and name not in disabled:
                disabled.append(name)
    missing = _NOT_FOR_KERNEL.search(text)
    if missing and not seen:
        return {"cpu.cpupower_missing_for_kernel": missing.group(1)}
    if not seen:
        raise ParseError("no cpupower idle-info ('CPUidle driver:', 'Available idle states:') or frequency-info "
                         "('analyzing CPU N:', 'driver:', 'hardware limits:') lines")
    facts: dict[str, Any] = {}
    if missing:
        facts["cpu.cpupower_missing_for_kernel"] = missing.group(1)
    if driver:
        facts["cpu.cstate_driver"] = driver
    if available:
        deep = [n for n in available if is_deep(n, driver or "")]
        enabled = [n for n in available if n not in disabled]
        facts.update({
            "cpu.cstates.available": available,
            "cpu.cstates.disabled": disabled,
            "cpu.cstates.enabled": enabled,
            "cpu.deep_cstates_available": bool(deep),
            "cpu.deep_cstates_enabled": any(n not in disabled for n in deep),
        })
        if latency:
            facts["cpu.cstates.latency_us"] = latency
    if freq_drivers:
        facts["cpu.freq.driver"] = max(set(freq_drivers), key=freq_drivers.count)
    if governors:
        facts["cpu.freq.governor"] = max(set(governors), key=governors.count)
    if hw_max is not None:
        facts["cpu.freq.max_mhz"] = hw_max
    if policy_max is not None:
        facts["cpu.freq.scaling_max_mhz"] = policy_max
        if hw_max is not None:
            facts["cpu.freq.capped"] = policy_max < hw_max
    if boost is not None:
        facts["cpu.freq.boost"] = boost
    return facts
