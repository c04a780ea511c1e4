"""``sysctl`` output (``sysctl kernel.numa_balancing``, ``sysctl -a | grep ...``): kernel settings as
``key = value`` lines.

Real sample (``sysctl -a`` of an FD.io CSIT test host, Ubuntu 16.04, two NUMA nodes; tests/data/sysctl)::

    kernel.ns_last_pid = 11764
    kernel.numa_balancing = 1
    kernel.numa_balancing_scan_delay_ms = 1000

What it means: ``kernel.numa_balancing`` 1 (the default of many distributions) lets the kernel scan every
process's memory in the process's own context and migrate pages between NUMA nodes; on a GPU node whose ranks
are bound to their node it only costs stalls (``task_numa_work``). Values are kept as printed; a value that is
one integer is also a number.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("sysctl.values", "dict", "", "every key = value line, values as printed (whitespace runs made one space)"),
    ("sysctl.numa_balancing", "number", "", "kernel.numa_balancing: 0 off, 1 on (2: memory tiering mode, newer kernels)"),
]

_LINE = re.compile(r"^\s*((?:kernel|vm|net|fs|dev|user|abi|debug|crypto|sunrpc)\.[\w.\-/]+)\s*=\s?(.*\S|)\s*$")
MAX_KEYS = 5000


def _detect(text: str) -> float:
    lines = [ln for ln in text.split("\n")[:2000] if ln.strip() and not ln.lstrip().startswith(("$", "#"))]
    if not lines:
        return 0.0
    hits = sum(1 for ln in lines if len(ln) < 2000 and _LINE.match(ln))
    return 0.85 if hits and hits / len(lines) >= 0.6 else 0.0


@parser(
    "sysctl",
    detect=_detect,
    summary="sysctl key = value lines: kernel settings (kernel.numa_balancing ...)",
    facts=FACTS,
    command="sysctl kernel.numa_balancing",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "sysctl output (key = value lines)")
    values: dict[str, str] = {}
    for raw in text.split("\n"):
        m = _LINE.match(raw) if len(raw) < 2000 else None
        if m and len(values) < MAX_KEYS:
            values[m.group(1)] = " ".join(m.group(2).split())
    if not values:
        raise ParseError("no sysctl line: expected 'kernel.numa_balancing = 1' (key = value)")
    facts: dict[str, Any] = {"sysctl.values": values}
    nb = values.get("kernel.numa_balancing", "")
    if re.fullmatch(r"\d+", nb):
        facts["sysctl.numa_balancing"] = int(nb)
    return facts
