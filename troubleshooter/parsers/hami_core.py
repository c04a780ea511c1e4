"""HAMi-core's log: the CUDA interposer (``libvgpu.so``) that the HAMi GPU-sharing device plugin preloads into
every container to enforce per-container GPU memory and core limits, and the backtrace it prints when it crashes.

Real samples (Project-HAMi/HAMi-core#169, a vLLM start under HAMi 2.8.0; a HAMi user guide's training log)::

    [HAMI-core ERROR (pid:565 thread=140267266266944 multiprocess_memory_limit.c:831)]: Illegal device id: 850725928
    !!!!!!! Segfault encountered !!!!!!!
      File "/libvgpu/src/cuda/memory.c", line 582, in cuMemCreate
      File "misc/cudawrap.cc", line 92, in ncclCuMemHostEnable()

    [HAMI-core Warn(1:140244541377408:utils.c:183)]: get default cuda from (null)
    [HAMI-core Msg(1:140244541377408:libvgpu.c:855)]: Initialized

What it means: any ``[HAMI-core ...]`` line says the interposer is loaded in that process, so every CUDA driver
call the job makes (NCCL's included) goes through it first; its Warn and Msg lines are normal (HAMi's FAQ). A
crash whose backtrace runs through the interposer's hooks (``/libvgpu/src/``) while NCCL sets up its
communicator (``ncclCommInitRank``, ``misc/cudawrap.cc``) is the interposer breaking NCCL's CUDA calls.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("hami.present", "bool", "", "HAMi-core's CUDA interposer (libvgpu.so) is loaded in the process that printed this"),
    ("hami.errors", "list", "", "HAMi-core's ERROR lines, as printed"),
    ("hami.segfault", "bool", "", "HAMi-core caught a segmentation fault ('Segfault encountered')"),
    ("hami.crash_frames", "list", "", "the frames of its crash backtrace, innermost first: 'file:line in function'"),
    ("hami.crash_in_nccl", "bool", "", "the crash backtrace runs through both the interposer's hooks (/libvgpu/src/) "
     "and NCCL (ncclCommInitRank, cudawrap.cc ...): the interposer broke one of NCCL's CUDA calls"),
]

_LINE = re.compile(r"^\s*(?:\S+\s+)?\[HAMI-core (\w+)\s*\(([^)]*)\)\]:?\s*(.*)$")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (.(?:.*\S)?)\s*$')
MAX_FRAMES = 50


def _detect(text: str) -> float:
    head = text[:65536]
    if "[HAMI-core " not in head:
        return 0.0
    return 0.9 if any(_LINE.match(ln) for ln in head.split("\n")[:2000] if len(ln) < 4000) else 0.0


@parser(
    "hami-core",
    detect=_detect,
    summary="HAMi-core's log: the GPU-sharing CUDA interposer (libvgpu.so) in the container, its errors and crashes",
    facts=FACTS,
    command="kubectl logs <pod> (HAMi-core prints to the container's output); cat /etc/ld.so.preload in the pod",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "HAMi-core log lines ('[HAMI-core Msg(...)]: ...')")
    present = segfault = False
    errors: list[str] = []
    frames: list[str] = []
    for raw in text.split("\n"):
        if len(raw) > 4000:
            continue
        m = _LINE.match(raw) if "[HAMI-core " in raw else None
        if m:
            present = True
            if m.group(1).lower() == "error":
                add_clipped(errors, m.group(3), 20)
            continue
        if "Segfault encountered" in raw:
            segfault = True
            continue
        f = _FRAME.match(raw) if segfault else None
        if f and len(frames) < MAX_FRAMES:
            frames.append(f"{f.group(1)}:{f.group(2)} in {f.group(3)}")
    if not present:
        raise ParseError("no HAMi-core line ('[HAMI-core Msg(...)]: ...')")
    facts: dict[str, Any] = {"hami.present": True, "hami.errors": errors, "hami.segfault": segfault}
    if segfault:
        facts["hami.crash_frames"] = frames
        facts["hami.crash_in_nccl"] = (any("/libvgpu/" in fr for fr in frames)
                                       and any(re.search(r"\bnccl|cudawrap\.cc", fr, re.IGNORECASE) for fr in frames))
    return facts
