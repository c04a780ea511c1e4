"""Kernel tracing a person ran on the job's process: bcc's ``funclatency`` histogram of a kernel function and
``perf script`` call chains. Read for what they say about the kernel working inside the training process,
above all automatic NUMA balancing (``task_numa_work`` walking the process's memory to mark pages for
migration).

Real samples (deepseek-ai/DeepEP#624, an SGLang scheduler thread on Linux 5.15)::

    # funclatency -d 60 -m -p 2256971 task_numa_work
    Tracing 1 functions for "task_numa_work"... Hit Ctrl-C to end.

         msecs               : count     distribution
             0 -> 1          : 72       |****************************************|
             8 -> 15         : 57       |*******************************         |
            16 -> 31         : 2        |*                                       |

    avg = 5 msecs, total: 789 msecs, count: 139

    sglang::schedul 2256971 53718.148983:     740539 cycles:
            ffffffffba37d536 change_prot_numa+0x36 ([kernel.kallsyms])
            ffffffffba14094b task_numa_work+0x1ab ([kernel.kallsyms])

What it means: ``task_numa_work`` runs in the context of the process it scans (task_work on return to user
space), so every call is time the training or serving thread does not run; calls of several milliseconds put
long tails into step or dispatch times. A histogram's slowest bucket is read as its upper bound in milliseconds
(``16 -> 31`` msecs: 31 ms); perf samples count when any frame of their chain is a NUMA-balancing function.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

#: The kernel's automatic NUMA balancing: the scan (task_numa_work, change_prot_numa) and the hinting faults
#: and migrations it causes (do_numa_page, task_numa_fault, migrate_misplaced_*)
NUMA_BALANCING = ("task_numa_work", "change_prot_numa", "task_numa_fault", "do_numa_page", "do_huge_pmd_numa_page",
                  "migrate_misplaced_page", "migrate_misplaced_folio", "numa_migrate_prep")

FUNCLATENCY_FACTS = [
    ("funclatency.functions", "list", "", "the kernel or user functions funclatency traced"),
    ("funclatency.unit", "string", "", "the histogram's unit as printed (nsecs, usecs, msecs)"),
    ("funclatency.count", "number", "count", "calls in the histogram"),
    ("funclatency.max_ms", "number", "ms", "upper bound of the slowest non-empty bucket, in milliseconds"),
    ("funclatency.total_ms", "number", "ms", "the time the calls took in all (its 'total:' line), in milliseconds"),
    ("funclatency.numa_balancing_max_ms", "number", "ms", "the slowest call of a NUMA-balancing function traced "
     "(task_numa_work, change_prot_numa ...): time the kernel's NUMA scan held the process; absent when none was traced"),
]

PERF_SCRIPT_FACTS = [
    ("perf_script.samples", "number", "count", "samples (call chains) in the perf script output"),
    ("perf_script.commands", "list", "", "the sampled threads' command names"),
    ("perf_script.numa_balancing_samples", "number", "count", "samples whose call chain runs a NUMA-balancing "
     "function (task_numa_work, change_prot_numa, do_numa_page, migrate_misplaced_*)"),
]

MAX_LINE = 400
_UNITS_MS = {"nsecs": 1e-6, "usecs": 1e-3, "msecs": 1.0, "secs": 1000.0}
_TRACING = re.compile(r'^Tracing (\d+) functions? for "([^"]+)"')
_CMDLINE = re.compile(r"^\s*(?:#\s*)?(?:sudo\s+)?(?:\S*/)?funclatency(?:-bpfcc|\.py)?\s+(.*)$")
_HIST_HEAD = re.compile(r"^\s*(nsecs|usecs|msecs|secs)\s+:\s+count\s+distribution\s*$")
_BUCKET = re.compile(r"^\s*(\d+)\s+->\s+(\d+)\s+:\s+(\d+)\s+\|")
_AVG = re.compile(r"^\s*avg\s*=\s*([\d.]+)\s+(nsecs|usecs|msecs|secs),\s*total:\s*([\d.]+)\s+(nsecs|usecs|msecs|secs),"
                  r"\s*count:\s*(\d+)")
# "sglang::schedul 2256971 53718.148983:     740539 cycles: " / "python 123/456 [003] 12.5: 1 cpu-clock:"
_SAMPLE = re.compile(r"^(\S(?:.*?\S)??)\s+(\d+)(?:/\d+)?\s+(?:\[\d+\]\s+)?\d+\.\d+:\s+(?:\d+\s+)?[\w\-:/.]+:\s*\S*\s*$")
_FRAME = re.compile(r"^\s+[0-9a-f]{4,16}\s+(\S+?)(?:\+0x[0-9a-f]+)?\s+\(")


def _funclatency_detect(text: str) -> float:
    head = text[:20000]
    if "funclatency" not in head and "Tracing " not in head:
        return 0.0
    lines = head.split("\n")
    if any(_HIST_HEAD.match(ln) for ln in lines) and any(_TRACING.match(ln.strip()) or _CMDLINE.match(ln) for ln in lines):
        return 0.9
    return 0.0


def _perf_script_detect(text: str) -> float:
    lines = [ln for ln in text[:20000].split("\n") if len(ln) < MAX_LINE]
    samples = sum(1 for ln in lines if _SAMPLE.match(ln))
    frames = sum(1 for ln in lines if _FRAME.match(ln))
    return 0.85 if samples >= 1 and frames >= 2 else 0.0


@parser(
    "funclatency",
    detect=_funclatency_detect,
    summary="bcc funclatency: a kernel function's latency histogram (NUMA balancing's task_numa_work in the job)",
    facts=FUNCLATENCY_FACTS,
    command="funclatency -d 60 -m -p <training pid> task_numa_work (bcc, as root)",
)
def parse_funclatency(text: str) -> dict[str, Any]:
    text = require_text(text, "funclatency output")
    functions: list[str] = []
    unit = None
    count = 0
    max_ms = None
    total_ms = None
    for raw in text.split("\n"):
        line = raw.strip()
        t = _TRACING.match(line)
        if t:
            functions = [f for f in t.group(2).split(",") if f][:50]
            continue
        c = _CMDLINE.match(raw) if not functions else None
        if c:
            args = [a for a in c.group(1).split() if not a.startswith("-") and not a.isdigit()]
            functions = args[-1:] or functions
            continue
        h = _HIST_HEAD.match(raw)
        if h:
            unit = h.group(1)
            continue
        b = _BUCKET.match(raw)
        if b and unit:
            n = int(b.group(3))
            count += n
            if n:
                max_ms = int(b.group(2)) * _UNITS_MS[unit]
            continue
        a = _AVG.match(raw)
        if a:
            total_ms = float(a.group(3)) * _UNITS_MS[a.group(4)]  # bcc prints one label for both; each its own here
    if unit is None:
        raise ParseError("not funclatency output: no histogram header ('msecs : count distribution')")
    facts: dict[str, Any] = {"funclatency.functions": functions, "funclatency.unit": unit, "funclatency.count": count}
    if max_ms is not None:
        facts["funclatency.max_ms"] = round(max_ms, 6)
    if total_ms is not None:
        facts["funclatency.total_ms"] = round(total_ms, 6)
    if max_ms is not None and any(f in NUMA_BALANCING for f in functions):
        facts["funclatency.numa_balancing_max_ms"] = round(max_ms, 6)
    return facts


@parser(
    "perf-script",
    detect=_perf_script_detect,
    summary="perf script call chains: which kernel work the job's threads were sampled in (NUMA balancing scans)",
    facts=PERF_SCRIPT_FACTS,
    command="perf record -g -p <training pid> -- sleep 10; perf script",
)
def parse_perf_script(text: str) -> dict[str, Any]:
    text = require_text(text, "perf script output")
    samples = numa = 0
    commands: list[str] = []
    in_numa = False
    for raw in text.split("\n"):
        if len(raw) >= MAX_LINE:  # no sample or frame line is this long (and the expressions stay linear)
            continue
        s = _SAMPLE.match(raw)
        if s:
            samples += 1
            in_numa = False
            if s.group(1) not in commands and len(commands) < 50:
                commands.append(s.group(1))
            continue
        f = _FRAME.match(raw) if samples else None
        if f and not in_numa and f.group(1) in NUMA_BALANCING:
            numa += 1
            in_numa = True
    if not samples:
        raise ParseError("not perf script output: no sample line ('comm pid time: period event:')")
    return {"perf_script.samples": samples, "perf_script.commands": commands, "perf_script.numa_balancing_samples": numa}
