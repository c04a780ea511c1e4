"""A Python traceback: the exception a training script died with, and where.

Real sample (a multi-rank launch where every rank fails on the same application error; tests/data/python-traceback)::

    [rank0]: Traceback (most recent call last):
    [rank0]:   File "/workspace/train.py", line 88, in <module>
    [rank0]:     model = build_model(cfg)
    [rank0]: KeyError: 'num_layers'

Read: each traceback's exception (type and message, the last line of the traceback, continued over the lines
the message wraps onto), the innermost frame, and how many tracebacks the paste holds (one per rank, often).
Launcher prefixes (``[rank0]:``, ``[default0]:``, ``[1,0]<stderr>:``, Ray's ``(worker, pid=...)``) are read past.

What it means: an exception in the training code (a KeyError, a shape mismatch, CUDA out of memory for the batch
size chosen) is the application's, not the cluster's: it is shown as read, and no cluster cause is drawn from
it. Exceptions that carry NCCL or CUDA runtime errors are read by the torch-distributed and cuda-errors kinds
(this kind then steps back in detection). One message of PyTorch's is the cluster's: a DataLoader worker killed
by a bus error ("This might be caused by insufficient shared memory (shm)") is /dev/shm running out, read by
the shm-too-small cause; a log that holds only that message is read as this kind too.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

MAX_ITEMS = 20
MAX_TEXT = 300

FACTS = [
    ("py.tracebacks", "number", "count", "tracebacks in the paste ('Traceback (most recent call last):')"),
    ("py.exceptions", "list", "", f"'Type: message' of each traceback's exception, deduplicated, at most {MAX_ITEMS}"),
    ("py.exception_types", "list", "", "the exception types, deduplicated, in order (torch.OutOfMemoryError, KeyError ...)"),
    ("py.last_frames", "list", "", "the innermost frame of each traceback ('file:line in function'), deduplicated"),
    ("py.shm_errors", "list", "", "PyTorch DataLoader workers that died for want of shared memory ('Unexpected bus error "
     "encountered in worker. This might be caused by insufficient shared memory (shm)', 'DataLoader worker (pid N) is "
     "killed by signal: Bus error', '... out of shared memory'), deduplicated"),
    ("py.shm_region_errors", "list", "", "a server's own report that it could not create a shared-memory region of the size "
     "it needs (Triton's Python backend: 'Unable to initialize shared memory key ... to requested size (67108864 "
     "bytes) ... Error: No space left on device'), deduplicated"),
    ("py.undefined_symbols", "list", "", "symbols the dynamic loader could not resolve when Python imported a library "
     "('libtorch_cuda.so: undefined symbol: ncclDevCommDestroy'): the library found at run time is older than the one "
     "the importer was built against"),
]

# PyTorch's own words (torch/utils/data/_utils/signal_handling.py and dataloader.py) when a worker's shared memory
# runs out: the bus error handler's message, and the main process's report of the worker's death
_SHM = re.compile(r"(?:Unexpected bus error encountered in worker\b.*|DataLoader worker \(pid \d+\) is killed by "
                  r"signal: Bus error.*|It is possible that dataloader's workers are out of shared memory.*)")
# Triton's Python backend (triton-inference-server/python_backend, shm_manager.cc), each model instance's region
_SHM_REGION = re.compile(r"(?:Unable to initialize shared memory key '[^']{1,200}' to requested size \(\d+ bytes\)|"
                         r"Failed to increase the shared memory pool size for key '[^']{1,200}' to \d+ bytes).{0,400}?"
                         r"(?:No space left on device|Cannot allocate memory)")
# PyTorch's out-of-memory error pasted alone, without its traceback (the batch does not fit: the application's)
_OOM = re.compile(r"^\s*((?:torch\.cuda\.OutOfMemoryError|torch\.OutOfMemoryError|RuntimeError)): (CUDA out of memory.*)$")
_PREFIX = re.compile(r"^(?:\s*(?:\([^()]*=[^()]*\)|\[(?:rank|default)?\d+\]:|\[\d+,\d+\]<std(?:out|err)>:|\d{1,5}:(?=\s))\s*)+")
_TB = "Traceback (most recent call last):"
# the last line of a traceback pasted without the traceback ("AttributeError: module ... has no attribute ...",
# "x3202c0s31b0n0: AssertionError: ..." as pdsh/mpiexec prefix a host): at the start of a line, a dotted CamelCase
# name that Python's exceptions end in, a colon and a message; read only when the paste has no traceback
_BARE = re.compile(r"^(?:[A-Za-z0-9][\w.-]{0,63}: )?((?:[a-z_][\w]*\.)*[A-Z][A-Za-z0-9]*(?:Error|Exception)):(?: (.*))?$")
# the dynamic loader's refusal of a library built against a newer one ("libtorch_cuda.so: undefined symbol: ncclX")
_UNDEFINED = re.compile(r"undefined symbol: ([A-Za-z_]\w{1,127})")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)(?:, in (\S+))?')
_EXC = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning|Timeout)|KeyboardInterrupt|StopIteration)"
                  r"(?::\s*(.*))?$")


_GPU_ERR = re.compile(r"(?i)cuda error|cudaError\w+|cuda failure|cuda runtime error|NCCL error|(?<!\w)(?>\w*?nccl)\w+Error")


def _detect(text: str) -> float:
    head = text[:262144]
    if _TB not in head:
        oom = "CUDA out of memory" in head and any(_OOM.match(ln) for ln in head.split("\n", 2000)[:2000])
        if oom or _SHM.search(head) or _SHM_REGION.search(head):
            return 0.6
        # a bare exception line: a fallback claim, taken only when no tool's kind reads the paste (parsers.fallback)
        if ("Error:" in head or "Exception:" in head) and not _GPU_ERR.search(head) \
                and any(_BARE.match(_PREFIX.sub("", ln, count=1)) for ln in head.split("\n", 2000)[:2000]):
            return 0.45
        return 0.0
    lines = [_PREFIX.sub("", ln, count=1) for ln in head.split("\n", 20000)[:20000]]
    score = 0.65 if any(_EXC.match(ln) for ln in lines) else 0.55
    if _GPU_ERR.search(head):
        score = 0.45  # the exception carries a CUDA or NCCL error: the cuda-errors / torch-distributed kinds read it
    return score


def _bare_exceptions(lines: list[str], exceptions: list[str], types: list[str]) -> None:
    """Exceptions pasted without their traceback: the line, and the indented lines its message wraps onto."""
    for i, ln in enumerate(lines):
        m = _BARE.match(ln) if ("Error:" in ln or "Exception:" in ln) else None
        if not m:
            continue
        msg = (m.group(2) or "").strip()
        j = i + 1
        while j < len(lines) and j < i + 8 and lines[j][:1].isspace() and lines[j].strip() and not _FRAME.match(lines[j]):
            msg += (" " if msg else "") + lines[j].strip()
            j += 1
        add_clipped(exceptions, f"{m.group(1)}: {msg}" if msg else m.group(1), MAX_ITEMS, MAX_TEXT)
        if m.group(1) not in types and len(types) < MAX_ITEMS:
            types.append(m.group(1))


@parser(
    "python-traceback",
    detect=_detect,
    summary="a Python traceback: the exception a script died with and its innermost frame",
    facts=FACTS,
    command="python train.py 2>&1 | tail -n 60",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a Python traceback")
    lines = [_PREFIX.sub("", ln.rstrip(), count=1) for ln in text.split("\n")]
    count = 0
    exceptions: list[str] = []
    types: list[str] = []
    frames: list[str] = []
    in_tb = False
    last_frame = None
    shm: list[str] = []
    regions: list[str] = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        if "bus error" in ln.lower() or "shared memory" in ln:
            m = _SHM.search(ln)
            if m:
                add_clipped(shm, m.group(0), MAX_ITEMS, MAX_TEXT)
            r = _SHM_REGION.search(ln)
            if r:
                add_clipped(regions, r.group(0), MAX_ITEMS, MAX_TEXT)
        if ln.rstrip().endswith(_TB):  # also after prose on the same line ("报错：Traceback ...")
            count += 1
            in_tb, last_frame = True, None
            i += 1
            continue
        if in_tb:
            f = _FRAME.match(ln)
            if f:
                last_frame = f"{f.group(1)}:{f.group(2)}" + (f" in {f.group(3)}" if f.group(3) else "")
                i += 1
                continue
            e = _EXC.match(ln.strip()) if not ln[:1].isspace() else None
            if e:
                msg = e.group(2) or ""
                # a message that wraps onto lines of its own (no frame, no prefix of another record)
                j = i + 1
                while j < len(lines) and j < i + 4 and lines[j].strip() and not lines[j][:1].isspace() \
                        and not _EXC.match(lines[j].strip()) and lines[j].strip() != _TB and ":" not in lines[j][:40]:
                    msg += " " + lines[j].strip()
                    j += 1
                # a message cut after its colon, the rest indented on the next line ("...libtorch_cuda.so:" /
                # "  undefined symbol: ncclDevCommDestroy", as a page or a ticket re-wrapped it)
                if msg.endswith(":") and j < len(lines) and lines[j][:1].isspace() and lines[j].strip() \
                        and not _FRAME.match(lines[j]):
                    msg += " " + lines[j].strip()
                    j += 1
                add_clipped(exceptions, f"{e.group(1)}: {msg}" if msg else e.group(1), MAX_ITEMS, MAX_TEXT)
                if e.group(1) not in types and len(types) < MAX_ITEMS:
                    types.append(e.group(1))
                if last_frame and last_frame not in frames and len(frames) < MAX_ITEMS:
                    frames.append(last_frame)
                in_tb = False
                i = j
                continue
        i += 1
    if not count:
        for ln in lines:  # an out-of-memory error pasted alone: the exception without its traceback
            o = _OOM.match(ln) if "out of memory" in ln else None
            if o:
                add_clipped(exceptions, f"{o.group(1)}: {o.group(2)}", MAX_ITEMS, MAX_TEXT)
                if o.group(1) not in types:
                    types.append(o.group(1))
    if not count and not exceptions:
        _bare_exceptions(lines, exceptions, types)
    if not count and not shm and not regions and not exceptions:
        raise ParseError("no 'Traceback (most recent call last):' line: not a Python traceback")
    out: dict[str, Any] = {"py.tracebacks": count, "py.exceptions": exceptions, "py.exception_types": types,
                           "py.last_frames": frames}
    if shm:
        out["py.shm_errors"] = shm
    if regions:
        out["py.shm_region_errors"] = regions
    symbols = [m.group(1) for e in exceptions for m in _UNDEFINED.finditer(e)]
    if symbols:
        out["py.undefined_symbols"] = list(dict.fromkeys(symbols))[:MAX_ITEMS]
    return out
