"""``df -h`` (or ``df``, ``df -h /dev/shm``): how big each filesystem is and how full, /dev/shm above all.

Real sample (a container where PyTorch's DataLoader workers died of bus errors; from a public project report,
tests/data/df)::

    $ df -h /dev/shm
    Filesystem      Size  Used Avail Use% Mounted on
    shm              64M     0   64M   0% /dev/shm

Read: every row of the table (filesystem, size, used, available, use%, mount point), human sizes (``64M``,
``3.9G``, ``1.0P``, powers of 1024 as df prints them) or 1K blocks (plain ``df``), rows that df wraps onto two
lines when the filesystem name is long.

What it means: /dev/shm of 64 MB is Docker's default (Kubernetes gives a pod none of its own); NCCL's
shared-memory transport and PyTorch's DataLoader workers need far more, and fail when it runs out. A full
root or /tmp filesystem stops checkpoints and caches.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("fs.mounts", "dict", "", "mount point -> {filesystem, size_mib, used_pct} from df"),
    ("fs.full_mounts", "list", "", "mount points at 95% use or more"),
    ("shm.size_mib", "number", "MiB", "the size of /dev/shm (df): 64 is Docker's default"),
    ("shm.used_pct", "number", "%", "how full /dev/shm is (df Use%)"),
]

_HEADER = re.compile(r"^\s*Filesystem\s+(?:Size|1K-blocks|1024-blocks|1M-blocks)\s+Used\s+Avail(?:able)?\s+(?:Use|Capacity)%\s+Mounted on\s*$")
_ROW = re.compile(r"^\s*(?:(\S+)\s+)?(\d+(?:\.\d+)?[KMGTPE]?i?)\s+(\d+(?:\.\d+)?[KMGTPE]?i?)\s+(\d+(?:\.\d+)?[KMGTPE]?i?)\s+"
                  r"(\d{1,3})%\s+(/\S*)\s*$")
_UNIT = {"": 1 / 1024, "K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 ** 2, "P": 1024 ** 3, "E": 1024 ** 4}


def _mib(token: str, blocks: bool) -> float | None:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGTPE]?)i?", token)
    if not m:
        return None
    v = float(m.group(1))
    if blocks and not m.group(2):
        return round(v / 1024, 1)  # 1K blocks
    return round(v * _UNIT[m.group(2)], 1)


def _detect(text: str) -> float:
    head = text[:65536]
    if any(_HEADER.match(ln) for ln in head.split("\n")[:400]):
        return 0.85
    return 0.0


@parser(
    "df",
    detect=_detect,
    summary="df -h: filesystem sizes and use, /dev/shm's size",
    facts=FACTS,
    command="df -h /dev/shm / /tmp",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "df output")
    mounts: dict[str, dict[str, Any]] = {}
    blocks = False
    seen = False
    pending: str | None = None  # a long filesystem name df printed on its own line
    for raw in text.split("\n"):
        if _HEADER.match(raw):
            seen = True
            blocks = "blocks" in raw
            continue
        if not seen:
            continue
        s = raw.strip()
        if s and not any(c.isspace() for c in s):
            pending = s  # "/dev/mapper/vg-root" alone: df puts the numbers on the next line
            continue
        m = _ROW.match(raw)
        if not m:
            pending = None
            continue
        fs = m.group(1) or pending or ""
        pending = None
        size = _mib(m.group(2), blocks)
        mounts[m.group(6)] = {"filesystem": fs, "size_mib": size, "used_pct": int(m.group(5))}
    if not mounts:
        raise ParseError("no df table (a 'Filesystem Size Used Avail Use% Mounted on' header and its rows)")
    facts: dict[str, Any] = {"fs.mounts": mounts, "fs.full_mounts": [mp for mp, v in mounts.items() if v["used_pct"] >= 95]}
    shm = mounts.get("/dev/shm")
    if shm is not None:
        if shm["size_mib"] is not None:
            facts["shm.size_mib"] = shm["size_mib"]
        facts["shm.used_pct"] = shm["used_pct"]
    return facts
