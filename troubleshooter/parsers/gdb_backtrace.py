"""A gdb session's stop on a signal and its backtrace: which signal, and in which functions.

Real samples (NVIDIA/JAX-Toolbox#183, a JAX container; monero-project/monero's LMDB bus error; tests/data/gdb-backtrace)::

    Thread 787 "imagenet_fake_d" received signal SIGBUS, Bus error.
    [Switching to Thread 0x7f45d7dff640 (LWP 3925)]
    (gdb) bt
    #0 0x00007f6b59544f3b in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) ()
      from /usr/local/lib/python3.10/dist-packages/jaxlib/xla_extension.so
    #1 0x00007f6b595436d7 in ncclProxyService(void*) ()

Read: the signal gdb stopped on (its name and description), and each backtrace frame's function, innermost first,
without arguments ('ncclShmOpen'), with the library it is in where gdb says ('from LIB').

What it means here: a bus error (SIGBUS) in NCCL's shared-memory functions is NCCL touching a /dev/shm segment
larger than what /dev/shm could back (a container's 64 MB default): the shm-too-small cause reads it. Other signals
and frames are shown as read.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

MAX_FRAMES = 40

FACTS = [
    ("gdb.signal", "string", "", "the description of the signal gdb stopped on ('Bus error', 'Segmentation fault')"),
    ("gdb.signal_name", "string", "", "the signal's name (SIGBUS, SIGSEGV, SIGABRT)"),
    ("gdb.frames", "list", "", f"the backtrace's functions, innermost first, without arguments, at most {MAX_FRAMES}"),
    ("gdb.frame_libraries", "list", "", "the libraries gdb names for those frames ('from LIB'), file names, deduplicated"),
]

_SIGNAL = re.compile(r"(?:Program|Thread \d+(?: \"[^\"]*\")?) received signal (SIG[A-Z0-9]+), ([^.\n]{1,60})\.")
# "#0  0x00007f.. in ncclShmOpen(char*, ...) () from /lib/x.so", "#2 0x.. in start_thread (arg=...) at file.c:442",
# "#0  traps () at scripts/fixdep.c:364" (no address for frame 0 when it is the current pc)
_FRAME = re.compile(r"^\s*#(\d{1,4})\s+(?:0x[0-9a-fA-F]+ in )?([~\w:.<>$@*-]+?)\s*(?:\(|$)")
_FROM = re.compile(r"\bfrom (/?[\w./+-]+)")


def _detect(text: str) -> float:
    head = text[:262144]
    if _SIGNAL.search(head) and re.search(r"^[^\S\n]*#\d+\s+(?:0x[0-9a-fA-F]+ in )?\S", head, re.MULTILINE):
        return 0.5 if "NCCL INFO" in head or "NCCL WARN" in head else 0.8  # a trace inside NCCL's log is its
    return 0.0


@parser(
    "gdb-backtrace",
    detect=_detect,
    summary="gdb's stop on a signal and its backtrace: the signal, and the functions and libraries it happened in",
    facts=FACTS,
    command="gdb -p <pid> -batch -ex 'thread apply all bt' 2>&1 | head -200",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a gdb backtrace")
    sig = _SIGNAL.search(text)
    frames: list[str] = []
    libs: list[str] = []
    seen: set[int] = set()
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        m = _FRAME.match(ln) if "#" in ln[:8] else None
        if not m or len(frames) >= MAX_FRAMES:
            continue
        n = int(m.group(1))
        if n in seen:  # a second thread's backtrace: keep the first one's frames
            break
        seen.add(n)
        frames.append(m.group(2))
        # 'from LIB' on the frame's line or on the line gdb wrapped it onto
        tail = ln + (" " + lines[i + 1] if i + 1 < len(lines) and not lines[i + 1].lstrip().startswith("#") else "")
        f = _FROM.search(tail)
        if f:
            lib = f.group(1).rsplit("/", 1)[-1]
            if lib not in libs:
                libs.append(lib)
    if not sig and not frames:
        raise ParseError("no 'received signal' line and no '#N ...' backtrace frame: not a gdb backtrace")
    facts: dict[str, Any] = {"gdb.frames": frames}
    if sig:
        facts["gdb.signal_name"], facts["gdb.signal"] = sig.group(1), sig.group(2).strip()
    if libs:
        facts["gdb.frame_libraries"] = libs
    return facts
