"""``ls /dev/nvidia*``: which NVIDIA device nodes a context (a host, a container, a job step) can see.

Real samples (a docker image's README, ``ls /dev/nvidia*`` in a GPU container; a kernel notes page, ``ls -l``)::

    /dev/nvidia-uvm  /dev/nvidia-uvm-tools  /dev/nvidia0  /dev/nvidiactl

    crw-rw-rw- 1 root root 195,   0 Dec  1 20:10 /dev/nvidia0
    crw-rw-rw- 1 root root 195, 255 Dec  1 20:10 /dev/nvidiactl

    ls: cannot access '/dev/nvidia*': No such file or directory

What it means: a process can open only the GPUs whose ``/dev/nvidiaN`` node exists where it runs (and that its
devices cgroup allows). The N is the host's index of the GPU: a container given the host's GPU 2 alone holds
``/dev/nvidia2`` and no ``/dev/nvidia0``, and CUDA inside numbers that GPU 0, so a ``CUDA_VISIBLE_DEVICES=2`` carried
in from the host names no device there (NVIDIA/pyxis#47). ``cannot access`` lines name nodes that do not exist
(``ls -l /dev/nvidia{0..7}`` lists the missing ones so); the glob itself not found means no NVIDIA node at all.
``nvidiactl`` and ``nvidia-uvm`` are the driver's control nodes, which every CUDA process needs besides its GPUs.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("gpu.dev_nodes", "list", "", "the GPUs' device nodes the listing shows, by number (/dev/nvidia2 -> 2), sorted"),
    ("gpu.dev_node_count", "number", "count", "how many GPU device nodes (/dev/nvidiaN) the listing shows"),
    ("gpu.dev_nodes_missing", "list", "", "the GPU device nodes ls said do not exist ('cannot access "
     "/dev/nvidiaN'), by number, sorted; absent when it named none"),
    ("gpu.dev_control_nodes", "list", "", "the driver's other nodes the listing shows (nvidiactl, nvidia-uvm, "
     "nvidia-uvm-tools, nvidia-modeset, nvidia-caps)"),
]

_PATH = r"/dev/nvidia[\w-]*"
_MISSING = re.compile(r"^\s*(?:\S*/)?ls: cannot access '?(/dev/nvidia[^\s':]*)'?: No such file or directory\s*$")
_LONG = re.compile(r"^[bcdlps-][rwxsStT-]{9}[.+@]?\s+\d+\s+\S+\s+\S+\s+(?:\d+,\s*\d+|\d+)\s+.+?\s(" + _PATH + r")\s*$")
_SHORT = re.compile(r"^\s*(?:" + _PATH + r"\s+)*" + _PATH + r"\s*$")
# `ls -l /dev | grep nvidia`: a character device named without its directory ("crw-rw-rw-. 1 root root 195, 0 Apr  5
# 15:04 nvidia0")
_BARE_LONG = re.compile(r"^c[rwxsStT-]{9}[.+@]?\s+\d+\s+\S+\s+\S+\s+\d+,\s*\d+\s+.+?\s(nvidia[\w-]*)\s*$")
_GPU = re.compile(r"^/dev/nvidia(\d+)$")


def _read(text: str) -> tuple[set[str], set[str], bool]:
    """(paths listed, paths ls said are missing, whether anything was read)."""
    present: set[str] = set()
    missing: set[str] = set()
    seen = False
    cwd = "/dev"  # a directory ls lists under its own header ("/dev/nvidia-caps:") names its files without the path
    for ln in text.split("\n"):
        if len(ln) > 4000:
            continue
        d = re.match(r"^(/[\w/.-]+):\s*$", ln)
        if d:
            cwd = d.group(1).rstrip("/")
            continue
        m = _MISSING.match(ln)
        if m:
            missing.add(m.group(1))
            seen = True
            continue
        m = _LONG.match(ln) or (_BARE_LONG.match(ln) if cwd == "/dev" else None)
        if m:
            present.add(m.group(1) if m.group(1).startswith("/") else "/dev/" + m.group(1))
            seen = True
        elif _SHORT.match(ln):
            present.update(ln.split())
            seen = True
    return present, missing, seen


def _detect(text: str) -> float:
    present, missing, seen = _read(text[:65536])
    return 0.9 if seen and (present or missing) else 0.0


@parser(
    "dev-nvidia",
    detect=_detect,
    summary="ls /dev/nvidia*: the NVIDIA device nodes (GPUs and the driver's control nodes) a context can see",
    facts=FACTS,
    command="ls -l /dev/nvidia*   (inside the job's container: srun --jobid=J --overlap ls -l /dev/nvidia*)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "ls /dev/nvidia* output (/dev/nvidia0 ... or ls: cannot access '/dev/nvidia*')")
    present, missing, seen = _read(text)
    if not seen:
        raise ParseError("no /dev/nvidia* path listed and no 'ls: cannot access /dev/nvidia...' line")
    gpus = sorted(int(m.group(1)) for p in present if (m := _GPU.match(p)))
    facts: dict[str, Any] = {"gpu.dev_nodes": gpus, "gpu.dev_node_count": len(gpus),
                             "gpu.dev_control_nodes": sorted(p[len("/dev/"):] for p in present if not _GPU.match(p))}
    gone = sorted(int(m.group(1)) for p in missing if (m := _GPU.match(p)))
    if gone:
        facts["gpu.dev_nodes_missing"] = gone
    return facts
