"""cpuidle sysfs: which idle states (C-states) each CPU offers, which are disabled, and how they are used.

Input: ``grep -H .`` over ``/sys/devices/system/cpu/cpu*/cpuidle/state*/{name,disable,latency,usage,time}``
and ``/sys/devices/system/cpu/cpuidle/current_driver`` (``path:value`` lines). Real sample (this project's
KVM development machine, tests/data/cpuidle/this-sandbox-haltpoll.txt)::

    /sys/devices/system/cpu/cpu0/cpuidle/state0/name:POLL
    /sys/devices/system/cpu/cpu0/cpuidle/state1/name:haltpoll idle
    /sys/devices/system/cpu/cpu0/cpuidle/state1/disable:0
    /sys/devices/system/cpu/cpu0/cpuidle/state1/latency:1
    /sys/devices/system/cpu/cpu0/cpuidle/state1/usage:47795
    /sys/devices/system/cpu/cpu0/cpuidle/state1/time:357301420
    /sys/devices/system/cpu/cpuidle/current_driver:haltpoll

What matters for training speed (reference case 2): when deep C-states are unavailable or disabled (BIOS
limit, ``intel_idle.max_cstate=1``, ``disable`` set to 1), idle cores stay in C1 and keep drawing package
power, so busy cores cannot reach their turbo clocks.

Deep-state rule (``cpu.deep_cstates_enabled``): a state is *deep* when its name is ``C<n>...`` with
n >= 3 (C3, C6, C6S, C7s, C8, C9, C10, C6-SKX...), or, under the ``acpi_idle`` driver, n >= 2 (ACPI C2/C3
are the IO-port states that power the core down, e.g. AMD Zen's CC6). POLL, C1, C1E, ``haltpoll idle`` and
unnamed states are shallow. The fact is true when some deep state is enabled on every CPU that lists it,
false when deep states are exposed but disabled on some CPU or none is exposed at all.

>>> f = parse("/sys/devices/system/cpu/cpu0/cpuidle/state0/name:C1\\n/sys/devices/system/cpu/cpu0/cpuidle/state1/name:C6\\n"
...           "/sys/devices/system/cpu/cpu0/cpuidle/state1/disable:1\\n")
>>> f["cpu.cstates.disabled"], f["cpu.deep_cstates_enabled"]
(['C6'], False)
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("cpu.cstate_driver", "string", "", "cpuidle driver in use (intel_idle, acpi_idle, haltpoll, psci_idle...)"),
    ("cpu.cstates.available", "list", "", "idle states the idle driver offers, shallow to deep"),
    ("cpu.cstates.disabled", "list", "", "idle states disabled (disable=1) on at least one CPU"),
    ("cpu.cstates.enabled", "list", "", "idle states enabled on every CPU that lists them, shallow to deep"),
    ("cpu.deepest_enabled_cstate", "string", "", "the deepest idle state enabled on every CPU"),
    ("cpu.deep_cstates_available", "bool", "", "a deep idle state (C3/C6 class or deeper, see the module doc) is offered"),
    ("cpu.deep_cstates_enabled", "bool", "", "a deep idle state (C3/C6 class or deeper) is enabled on all CPUs"),
    ("cpu.cstates.usage", "dict", "count", "times each idle state was entered since boot, summed over CPUs"),
    ("cpu.cstates.time_pct", "dict", "%", "share of all idle time since boot spent in each idle state"),
    ("cpu.cstates.latency_us", "dict", "us", "exit latency of each idle state (the highest over CPUs)"),
    ("cpu.cpuidle_cpus", "number", "count", "CPUs that expose cpuidle states"),
]

_STATE = re.compile(r"^/sys/devices/system/cpu/cpu(\d+)/cpuidle/state(\d+)/(name|disable|latency|usage|time|desc|default_status):(.*)$")
_DRIVER = re.compile(r"^/sys/devices/system/cpu/cpuidle/current_driver:(.*)$")
_CNUM = re.compile(r"^C(\d+)", re.IGNORECASE)


def _detect(text: str) -> float:
    lines = [ln for ln in text.splitlines() if ln.strip()][:200]
    if not lines:
        return 0.0
    hits = sum(bool(_STATE.match(ln.strip()) or _DRIVER.match(ln.strip())) for ln in lines)
    if hits == 0:
        return 0.0
    return 0.95 if hits / len(lines) >= 0.5 else 0.6


def is_deep(name: str, driver: str = "") -> bool:
    m = _CNUM.match(name.strip())
    if not m:
        return False
    n = int(m.group(1))
    return n >= 2 if driver == "acpi_idle" else n >= 3


@parser(
    "cpuidle",
    detect=_detect,
    summary="cpuidle sysfs (grep -H . over cpu*/cpuidle/state*/{name,disable,latency,usage,time})",
    facts=FACTS,
    command="grep -H . /sys/devices/system/cpu/cpu*/cpuidle/state*/{name,disable,latency,usage,time} "
    "/sys/devices/system/cpu/cpuidle/current_driver",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "cpuidle sysfs lines (grep -H . /sys/devices/system/cpu/cpu*/cpuidle/state*/name ...)")
    states: dict[tuple[int, int], dict[str, str]] = {}
    driver = ""
    for line in text.split("\n"):
        s = line.strip()
        m = _STATE.match(s)
        if m:
            states.setdefault((int(m.group(1)), int(m.group(2))), {})[m.group(3)] = m.group(4).strip()
            continue
        m = _DRIVER.match(s)
        if m and m.group(1).strip():
            driver = m.group(1).strip()
    facts: dict[str, Any] = {}
    if driver and driver != "none":
        facts["cpu.cstate_driver"] = driver
    named = {k: v for k, v in states.items() if v.get("name")}
    if not named:
        raise ParseError("no cpuidle states exposed (no /sys/devices/system/cpu/cpu*/cpuidle/state*/name lines)")
    order: list[tuple[int, str]] = []
    for (_, idx), v in sorted(named.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        key = (idx, v["name"])
        if key not in order:
            order.append(key)
    available = []
    for _, name in order:
        if name not in available:
            available.append(name)
    cpus = sorted({cpu for cpu, _ in named})
    disabled = []
    for name in available:
        if any(v["name"] == name and v.get("disable", "0").strip() not in ("0", "") for v in named.values()):
            disabled.append(name)
    enabled = [n for n in available if n not in disabled]
    facts["cpu.cstates.available"] = available
    facts["cpu.cstates.disabled"] = disabled
    facts["cpu.cstates.enabled"] = enabled
    facts["cpu.cpuidle_cpus"] = len(cpus)
    if enabled:
        facts["cpu.deepest_enabled_cstate"] = enabled[-1]
    deep = [n for n in available if is_deep(n, driver)]
    facts["cpu.deep_cstates_available"] = bool(deep)
    # Enabled on all CPUs: not disabled anywhere, and listed by every CPU that has cpuidle states.
    per_cpu = {cpu: {v["name"] for (c, _), v in named.items() if c == cpu} for cpu in cpus}
    facts["cpu.deep_cstates_enabled"] = any(
        n in enabled and all(n in names for names in per_cpu.values()) for n in deep
    )
    usage: dict[str, int] = {}
    times: dict[str, int] = {}
    latency: dict[str, int] = {}
    for v in named.values():
        name = v["name"]
        for field, sink in (("usage", usage), ("time", times)):
            raw = v.get(field, "")
            if raw.isdigit():
                sink[name] = sink.get(name, 0) + int(raw)
        raw = v.get("latency", "")
        if raw.isdigit():
            latency[name] = max(latency.get(name, 0), int(raw))
    if usage:
        facts["cpu.cstates.usage"] = {n: usage[n] for n in available if n in usage}
    total = sum(times.values())
    if times and total > 0:
        facts["cpu.cstates.time_pct"] = {n: round(times[n] * 100.0 / total, 2) for n in available if n in times}
    if latency:
        facts["cpu.cstates.latency_us"] = {n: latency[n] for n in available if n in latency}
    return facts
