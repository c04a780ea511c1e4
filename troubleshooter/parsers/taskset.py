"""``taskset -cp PID`` (or ``taskset -p PID``): the CPUs a process may run on, its CPU binding.

Real output (util-linux ``schedutils/taskset.c`` prints exactly these two forms)::

    pid 4391's current affinity list: 0-27,56-83
    pid 4391's current affinity mask: ff000000ff

What it means here: with ``numastat -p`` (where the process's pages are) and the CPU-to-node map (``lscpu`` or
``numactl --hardware``), the binding says which of those pages are remote to the process's threads.

>>> parse("pid 4391's current affinity list: 0-27,56-83")["proc.cpus_allowed_list"]
'0-27,56-83'
>>> parse("pid 7's current affinity mask: f0")["proc.cpus_allowed_list"]
'4-7'
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("proc.cpus_allowed_list", "string", "", "CPUs the process may run on, as a cpulist '0-7,56-63'"),
    ("proc.cpus_allowed_count", "number", "count", "how many CPUs the process may run on"),
    ("proc.pid", "number", "", "process id (Pid:)"),
    ("proc.affinity_by_pid", "dict", "", "several processes' bindings, pid -> cpulist, where the paste lists more than one"),
    ("proc.shared_narrow_binding", "number", "count", "the most processes bound to one and the same set of at most two "
     "CPUs (ranks of a launcher that all inherited one core): they take turns on it"),
]

_LINE = re.compile(r"pid (\d+)'s (?:current|new) affinity (list|mask): ?([0-9a-fA-F,\-x]*)")
# the same question answered by a site's helper (OLCF's numa_api example: "core affinity for PID 884147: 1 2 3")
_CORES = re.compile(r"^[^\S\n]*core affinity for PID (\d+): ?((?:\d+ ?)*)$", re.MULTILINE)


def _detect(text: str) -> float:
    head = text[:65536]
    return 0.95 if _LINE.search(head) else 0.8 if _CORES.search(head) else 0.0


def _mask_to_list(mask: str) -> list[int]:
    bits = int(mask.replace(",", "").lower().removeprefix("0x") or "0", 16)
    return [i for i in range(bits.bit_length()) if bits >> i & 1]


def _ranges(cpus: list[int]) -> str:
    out, start, prev = [], None, None
    for c in sorted(cpus) + [None]:
        if start is None:
            start = prev = c
        elif c is not None and c == prev + 1:
            prev = c
        else:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = c
    return ",".join(out)


def _count(cpulist: str) -> int:
    n = 0
    for part in cpulist.split(","):
        lo, _, hi = part.partition("-")
        if lo.isdigit():
            n += int(hi) - int(lo) + 1 if hi.isdigit() else 1
    return n


@parser("taskset", detect=_detect, summary="taskset -cp PID: the CPUs a process may run on", facts=FACTS,
        command="taskset -cp <training pid>")
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "taskset -cp PID output (pid N's current affinity list: ...)")
    found = sorted([(m.start(), m.group(1), m.group(2), m.group(3)) for m in _LINE.finditer(text)] +
                   [(m.start(), m.group(1), "list", _ranges([int(c) for c in m.group(2).split()]))
                    for m in _CORES.finditer(text) if m.group(2).strip()])
    if not found:
        raise ParseError("no \"pid N's current affinity list/mask\" line")
    bindings: dict[str, str] = {}
    for at, pid, form, value in found[:4096]:
        if not value:
            raise ParseError("the affinity line has no CPU list", line=text[:at].count("\n") + 1)
        try:
            cpulist = value if form == "list" else _ranges(_mask_to_list(value))
        except ValueError as exc:
            raise ParseError(f"not a CPU mask: {value!r}", line=text[:at].count("\n") + 1) from exc
        if not cpulist:
            raise ParseError("empty CPU affinity", line=text[:at].count("\n") + 1)
        bindings[pid] = cpulist
    pid, cpulist = found[-1][1], bindings[found[-1][1]]
    facts: dict[str, Any] = {"proc.cpus_allowed_list": cpulist, "proc.cpus_allowed_count": _count(cpulist),
                             "proc.pid": int(pid)}
    if len(bindings) > 1:
        facts["proc.affinity_by_pid"] = bindings
        narrow = [c for c in bindings.values() if _count(c) <= 2]
        facts["proc.shared_narrow_binding"] = max((narrow.count(c) for c in narrow), default=0)
    return facts
