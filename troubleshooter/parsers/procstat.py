"""/proc/stat: CPU time since boot, for steal and iowait.

Real sample (this project's KVM development machine, tests/data/host/proc-stat-this-sandbox.txt)::

    cpu  2624 0 1615 74176 260 0 54 8 0 0
    cpu0 1298 0 820 37116 130 0 30 4 0 0
    intr 402745 0 9 0 0 0 ...
    ctxt 731829

The ``cpu`` line counts clock ticks in user, nice, system, idle, iowait, irq, softirq, steal, guest,
guest_nice (guest time is already inside user/nice, so the total is the first eight). Steal is time the
hypervisor ran something else while this VM wanted the CPU: a high share (reference case 2: hypervisor
housekeeping sharing cores with data loaders) shows up as stalls and a long tail of slow steps. These are
averages since boot, not over the job: compare across nodes, or sample twice.

>>> parse("cpu  80 0 10 0 0 0 0 10 0 0\\n")["cpu.steal_pct"]
10.0
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("cpu.steal_pct", "number", "%", "share of CPU time since boot stolen by the hypervisor (/proc/stat steal / total)"),
    ("cpu.iowait_pct", "number", "%", "share of CPU time since boot idle waiting on I/O"),
    ("cpu.idle_since_boot_pct", "number", "%", "share of CPU time since boot idle (idle + iowait)"),
    ("cpu.stat_cpus", "number", "count", "per-CPU lines (cpuN) in /proc/stat: CPUs online"),
]

_CPU = re.compile(r"^cpu\s+(\d+(?:\s+\d+)*)\s*$")


def _detect(text: str) -> float:
    if re.search(r"^cpu\s+\d+ \d+ \d+ \d+", text, re.MULTILINE):
        return 0.95 if re.search(r"^(ctxt|intr|btime) \d+", text, re.MULTILINE) else 0.8
    return 0.0


_CPU_N = re.compile(r"^cpu\d+\s+\d+")  # compiled once: one line per CPU

@parser("procstat", detect=_detect, summary="/proc/stat (first 'cpu' line)", facts=FACTS, command="cat /proc/stat")
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "/proc/stat")
    fields = None
    ncpu = 0
    for line in text.split("\n"):
        s = line.strip()
        m = _CPU.match(s)
        if m and fields is None:
            fields = [int(x) for x in m.group(1).split()]
        elif _CPU_N.match(s):
            ncpu += 1
    if fields is None or len(fields) < 4:
        raise ParseError("no aggregate 'cpu  user nice system idle ...' line (as in /proc/stat)")
    total = sum(fields[:8])
    if total <= 0:
        raise ParseError("the 'cpu' line counts no time at all")
    facts: dict[str, Any] = {}
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    facts["cpu.idle_since_boot_pct"] = round(idle * 100.0 / total, 3)
    if len(fields) > 4:
        facts["cpu.iowait_pct"] = round(fields[4] * 100.0 / total, 3)
    if len(fields) > 7:
        facts["cpu.steal_pct"] = round(fields[7] * 100.0 / total, 3)
    if ncpu:
        facts["cpu.stat_cpus"] = ncpu
    return facts
