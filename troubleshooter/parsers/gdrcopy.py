"""GDRCopy's test programs (sanity, gdrcopy_copybw, gdrcopy_copylat, gdrcopy_sanity) and the libraries built on it:
``gdr_open error: Is gdrdrv driver installed and loaded?``, printed when the library cannot open /dev/gdrdrv.

Real sample (NVIDIA/gdrcopy#234, a Jetson with gdrdrv loaded; tests/data/gdrcopy)::

    Running suite(s): Sanity
    gdr_open error: Is gdrdrv driver installed and loaded?

What it means here: gdr_open() opens /dev/gdrdrv. It fails when the gdrdrv module is not loaded, and also when it is
loaded but its device node was never created (the module loaded with modprobe instead of GDRCopy's insmod.sh, which
makes the node) or cannot be opened (a container without the device, or a device cgroup that does not allow it).
UCX's gdr_copy transport and NCCL/aws-ofi-nccl then fall back to slower copies, or the program stops.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("gdrcopy.open_failed", "bool", "", "GDRCopy could not open its device ('gdr_open error: Is gdrdrv driver installed "
     "and loaded?'): gdrdrv not loaded, or /dev/gdrdrv missing or not accessible"),
    ("gdrcopy.open_lines", "number", "count", "how many times it said so (one per test or rank)"),
]

_OPEN = re.compile(r"gdr_open error: Is gdrdrv driver installed")


def _detect(text: str) -> float:
    return 0.85 if _OPEN.search(text[:131072]) else 0.0


@parser(
    "gdrcopy",
    detect=_detect,
    summary="GDRCopy's tests and users: gdr_open failing (gdrdrv not loaded, or /dev/gdrdrv missing or not accessible)",
    facts=FACTS,
    command="gdrcopy_sanity 2>&1 | tail -20; lsmod | grep gdrdrv; ls -l /dev/gdrdrv",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "GDRCopy's output ('gdr_open error: Is gdrdrv driver installed and loaded?')")
    n = len(_OPEN.findall(text))
    if not n:
        raise ParseError("no 'gdr_open error: Is gdrdrv driver installed and loaded?' line")
    return {"gdrcopy.open_failed": True, "gdrcopy.open_lines": n}
