"""/proc/meminfo: memory size and huge pages.

Real sample (this project's development machine, tests/data/host/proc-meminfo-this-sandbox.txt)::

    MemTotal:       24684084 kB
    MemAvailable:   24373656 kB
    AnonHugePages:         0 kB
    HugePages_Total:       0
    HugePages_Free:        0
    Hugepagesize:       2048 kB

What matters for training speed: pinned host buffers and large models want huge pages; no preallocated huge
pages (``HugePages_Total: 0``) and no transparent huge pages in use (``AnonHugePages: 0 kB``) mean more TLB
misses on the host side (reference case 1 saw a multi-fold dTLB miss increase in a VM). ``kB`` values
stay in kB.

>>> parse("MemTotal: 1024 kB\\nHugePages_Total: 4\\nHugePages_Free: 4\\nHugepagesize: 1048576 kB\\n")["mem.hugepage_size_kb"]
1048576
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("mem.total_kb", "number", "kB", "MemTotal: memory the kernel manages"),
    ("mem.available_kb", "number", "kB", "MemAvailable: memory available for new work without swapping"),
    ("mem.hugepages_total", "number", "count", "HugePages_Total: preallocated huge pages of the default size"),
    ("mem.hugepages_free", "number", "count", "HugePages_Free: preallocated huge pages not in use"),
    ("mem.hugepage_size_kb", "number", "kB", "Hugepagesize: the default huge page size"),
    ("mem.anon_hugepages_kb", "number", "kB", "AnonHugePages: anonymous memory backed by transparent huge pages"),
    ("mem.hugetlb_kb", "number", "kB", "Hugetlb: memory held by huge pages of all sizes"),
    ("mem.cma_total_kb", "number", "kB", "CmaTotal: memory reserved for the Contiguous Memory Allocator"),
    ("mem.cma_free_kb", "number", "kB", "CmaFree: free memory in CMA (MIGRATE_CMA) pageblocks"),
    ("mem.cma_uncounted_kb", "number", "kB", "CmaFree above CmaTotal (0 when not): free CMA pageblocks the kernel "
     "released without counting them as CMA, as Kexec HandOver's scratch area is on some 7.0 kernels; pages there "
     "must be migrated before they can be pinned for long (RDMA memory registration), which can fail with ENOMEM"),
]

# a value may carry the poster's note after it ("CmaFree:  940604 kB     <- 919 MiB free ..."): the number is kept
_LINE = re.compile(r"^([A-Za-z][\w()]*):\s+(\d+)(?:\s*kB)?(?:\s+(?:<-|#|//)\s.*)?\s*$")
_MAP = {
    "MemTotal": "mem.total_kb",
    "MemAvailable": "mem.available_kb",
    "HugePages_Total": "mem.hugepages_total",
    "HugePages_Free": "mem.hugepages_free",
    "Hugepagesize": "mem.hugepage_size_kb",
    "AnonHugePages": "mem.anon_hugepages_kb",
    "Hugetlb": "mem.hugetlb_kb",
    "CmaTotal": "mem.cma_total_kb",
    "CmaFree": "mem.cma_free_kb",
}


def _detect(text: str) -> float:
    if re.search(r"^MemTotal:\s+\d+ kB", text, re.MULTILINE) and re.search(r"^MemFree:\s+\d+ kB", text, re.MULTILINE):
        return 0.95
    if re.search(r"^CmaTotal:\s+\d+ kB", text, re.MULTILINE) and re.search(r"^CmaFree:\s+\d+ kB", text, re.MULTILINE):
        return 0.7  # the CMA pair alone (grep Cma /proc/meminfo)
    return 0.4 if re.search(r"^(HugePages_Total|Hugepagesize):", text, re.MULTILINE) else 0.0


@parser("meminfo", detect=_detect, summary="/proc/meminfo", facts=FACTS, command="cat /proc/meminfo")
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "/proc/meminfo")
    facts: dict[str, Any] = {}
    for line in text.split("\n"):
        m = _LINE.match(line.strip())
        if m and m.group(1) in _MAP:
            facts.setdefault(_MAP[m.group(1)], int(m.group(2)))
    if not facts:
        raise ParseError("no /proc/meminfo lines (MemTotal:, HugePages_Total: ...)")
    if "mem.cma_total_kb" in facts and "mem.cma_free_kb" in facts:
        facts["mem.cma_uncounted_kb"] = max(0, facts["mem.cma_free_kb"] - facts["mem.cma_total_kb"])
    return facts
