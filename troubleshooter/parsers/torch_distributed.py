"""PyTorch distributed (c10d / ProcessGroupNCCL) output: NCCL errors raised into Python, watchdog timeouts.

Real sample (torchrun, 2 nodes of 8x H100 over InfiniBand, NCCL 2.28.9; tests/data/torch-distributed)::

    [rank13]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3780, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9
    [rank13]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
    [rank13]: Last error:
    [rank13]: Call to ibv_create_cq failed with error Cannot allocate memory

and (PyTorch DDP, pytorch/pytorch#141069)::

    [rank2]:[E ProcessGroupNCCL.cpp:563] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=19, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800093 milliseconds before timing out.

Lines may carry launcher prefixes, several deep (torchrun's ``[rank4]:`` / ``[default0]:``, Ray's
``(worker1, rank=1, pid=27522, ip=10.105.0.4)``, Open MPI's ``[1,0]<stdout>:``, srun's ``0: ``); patterns are
searched anywhere in a line. Formats read: ``RuntimeError: NCCL error in: FILE:LINE, MESSAGE, NCCL version X``
(PyTorch < 2.1) and ``torch.distributed.DistBackendError: ...`` (2.1+); the ``nccl*Error: ...`` line after it;
``Last error:`` with its text on the same or the next line (NCCL's last WARN message, which names the real
fault); watchdog timeouts of the old (``[E ProcessGroupNCCL.cpp:N]``) and new (``[E1120 10:24:13.12 ...]``) glog
styles; ``Timeout at NCCL work: N, last enqueued NCCL work: N, last completed NCCL work: N``.

What it means: the NCCL error's last-error text is the same message an ``NCCL_DEBUG=WARN`` log shows, so it is
also given as ``nccl.warnings`` (and the error lines as ``nccl.errors``) for the causes that read NCCL's log.
A watchdog timeout by itself says only that one collective did not finish in time: a rank that stopped
issuing collectives (an application bug, uneven data across ranks), a hang, or a dead peer. It names no
cluster cause on its own, and none is drawn from it.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text
from troubleshooter.parsers._nccl_facts import VERSION
from troubleshooter.parsers.nccl_debug import _NO_IFACE

MAX_MESSAGES = 20
MAX_TEXT = 300

FACTS = [
    ("torch.errors", "list", "", f"exceptions raised by torch.distributed (DistBackendError, 'RuntimeError: NCCL error', DistStoreError, ChildFailedError ...), deduplicated, at most {MAX_MESSAGES}"),
    ("torch.nccl_error_kinds", "list", "", "NCCL result names in the log (ncclSystemError, ncclInternalError, ncclUnhandledCudaError, ncclRemoteError, ncclInvalidUsage), in order seen"),
    ("torch.watchdog_timeouts", "number", "count", "ProcessGroupNCCL watchdog timeout lines ('Watchdog caught collective operation timeout'); 1 when only the timeout's C++ frames were pasted ('Exception raised from ncclCommWatchdog')"),
    ("torch.timeout_ops", "list", "", "collective types that timed out (OpType=ALLREDUCE ...), in order seen"),
    ("torch.timeout_ms", "number", "ms", "the collective timeout in force (Timeout(ms)=...), the largest seen"),
    ("torch.timeout_seqs", "list", "", "sequence numbers (SeqNum=) of the collectives that timed out, sorted"),
    ("torch.connect_timeouts", "list", "", "peers c10d's store or socket client timed out connecting to, as 'ADDRESS:PORT' "
     "('[c10d] The client socket has timed out after 1800s while trying to connect to (172.17.0.2, 44737)')"),
    ("torch.store_listen_refused", "list", "", "addresses the rendezvous store could not listen on ('The server socket "
     "has failed to listen on any local network address. The server socket has failed to bind to [::]:29500 (errno: 98 "
     "- Address already in use)' -> '[::]:29500'); ['any'] when the message gives none"),
    ("torch.unresolved_hosts", "list", "", "rendezvous hosts c10d could not resolve, as 'HOST:PORT' ('[c10d] The "
     "IPv6 network addresses of (pytorch-workers-0-0.pytorch-workers, 3389) cannot be retrieved (gai error: -2 - Name "
     "or service not known)'): repeated while the peers' pods or nodes come up, a fault only if it never stops"),
    ("torch.timed_out_ranks", "list", "", "ranks that reported a timeout ('[Rank N] Watchdog caught ...', 'Timeout at NCCL work'), sorted"),
    ("torch.last_completed_work", "dict", "", "rank -> last completed NCCL work sequence number ('Timeout at NCCL work: N, ..., last completed NCCL work: M')"),
    ("torch.store_port_in_use", "bool", "", "the rendezvous store (TCPStore) could not bind its port: 'RuntimeError: Address already in use' after a TCPStore frame (MASTER_PORT held by another job or a stale process); absent when the log does not say"),
    ("nccl.errors", "list", "", "error lines: completion errors, unhandled system/cuda errors, internal errors, remote errors"),
    ("nccl.warnings", "list", "", "NCCL WARN messages, deduplicated (here: NCCL's 'Last error:' text)"),
    ("nccl.version", "string", "", "NCCL version from the log ('NCCL version 2.18.3+cuda12.2' -> 2.18.3)"),
    ("nccl.no_socket_interface", "bool", "", "NCCL found no usable IP interface for its bootstrap and sockets ('Bootstrap : no socket interface found', ...); absent when the log does not say"),
]

# launcher prefixes, any number of them, at the start of a line
_PREFIX = re.compile(r"^(?:\s*(?:\([^()]*=[^()]*\)|\[(?:rank|default)?\d+\]:|\[\d+,\d+\]<std(?:out|err)>:|\d{1,5}:(?=\s))\s*)+")
_NCCL_ERROR = re.compile(
    r"(?P<exc>(?:torch\.distributed\.)?DistBackendError|RuntimeError|torch\.distributed\.DistError|c10::DistBackendError)"
    r":\s*NCCL error(?: in:)?\s*(?P<where>[^,]*?:\d+)?,?\s*(?P<msg>(?:.*?\S)??)(?:,\s*NCCL version (?P<ver>\d+\.\d+\.\d+)\S*)?\s*$")
_KIND = re.compile(r"\b(nccl(?:System|Internal|UnhandledCuda|Remote|InvalidUsage|InvalidArgument)Error)\b")
_EXC_HEAD = re.compile(r"\s*[\w.:]*(?:Error|Exception|Warning)\s*:")
_LAST = re.compile(r"Last error:\s*(?P<msg>.*\S|)\s*$")
_WATCHDOG = re.compile(
    r"(?:\[Rank (?P<rank>\d+)\]\s*)?Watchdog caught collective operation timeout: WorkNCCL\((?P<args>[^)]*(?:\)[^)]*)?)\)")
_OPTYPE = re.compile(r"OpType=(\w+)")
_SEQ = re.compile(r"SeqNum=(\d+)")
_TIMEOUT = re.compile(r"Timeout\(ms\)=(\d+)")
_TIMEOUT_AT = re.compile(r"\[(?:PG \S+ )?Rank (?P<rank>\d+)\] Timeout at NCCL work: (?P<work>\d+), last enqueued NCCL work: "
                         r"(?P<enq>-?\d+), last completed NCCL work: (?P<done>-?\d+)")
_OTHER_EXC = re.compile(r"\b(torch\.distributed\.(?:DistStoreError|DistNetworkError|elastic\.multiprocessing\.errors\."
                        r"ChildFailedError)|RuntimeError: Detected mismatch between collectives on ranks|"
                        r"RuntimeError: NCCL communicator was aborted[^.]*|"
                        r"NCCL communicator was aborted on rank \d+)\b:?\s*(?P<msg>.*\S|)\s*$")
_MARKERS = re.compile(r"ProcessGroupNCCL|DistBackendError|NCCL error in:|Watchdog caught collective|"
                      r"ncclSystemError|ncclInternalError|ncclUnhandledCudaError|ncclRemoteError|torch\.distributed\.")


# c10d's socket.cpp when the store's server socket cannot listen: "The server socket has failed to listen on any local
# network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). ..." (2.x),
# "DistNetworkError: ... port: 29700, code: -98, name: EADDRINUSE" (later), Windows' "(system error: 10013 - ...)"
_NO_LISTEN = "server socket has failed to listen on any local network address"
_BIND = re.compile(r"server socket has failed to (?:bind to|listen on) (\S+?)(?: \((?:errno|system error): (\d+)|\.?\s*$|\.\s)")
_IN_USE = re.compile(r"errno: 98\b|\bEADDRINUSE\b|Address already in use|code: -98\b")
# c10d's socket.cpp when getaddrinfo fails for the rendezvous host: "The IPv6 network addresses of (HOST, PORT) cannot be
# retrieved (gai error: -2 - Name or service not known)" (IPv4 likewise)
_GAI = re.compile(r"The IPv[46] network addresses of \(\s*+([^,()\s](?:[^,()]*[^,()\s])?)\s*,\s*(\d+)\s*\) cannot be retrieved \(gai error")
# c10d's TCPStore/socket client giving up on a peer ('[c10d] The client socket has timed out after 1800s while trying
# to connect to (172.17.0.2, 44737)'): the address the peer advertised
# (one \s* on each side of the optional port: two in a row split a run of spaces every possible way)
_CONNECT = re.compile(r"client socket has timed out after \d+s while trying to connect to \(\s*([\w.:-]+?)\s*(?:,\s*(\d+)\s*)?\)")


def _rejoined(lines: list[str]) -> list[str]:
    """Lines a terminal or a ticket hard-wrapped inside the parentheses of a watchdog's WorkNCCL(...) or a connect
    target, joined again (the continuation has no prefix of its own; a wrap mid-number must not split it)."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if (("WorkNCCL(" in line or "trying to connect to (" in line) and line.count("(") > line.count(")")
                and i + 1 < len(lines) and len(line) < 4000):
            line = line.rstrip("\n") + lines[i + 1]
            i += 1
        out.append(line)
        i += 1
    return out


def _detect(text: str) -> float:
    head = text[:262144]
    strong = len(re.findall(r"NCCL error in:|Watchdog caught collective operation timeout|DistBackendError|"
                            r"client socket has timed out after|"
                            r"Detected mismatch between collectives on ranks|Exception raised from ncclCommWatchdog|"
                            r"TCPStore\(|server socket has failed to listen on any local|network addresses of \(.{1,200}\) cannot be retrieved \(gai error|"
                            r"\[E[\w :.]*ProcessGroupNCCL\.cpp", head))
    score = 0.85 if strong >= 2 else 0.7 if strong == 1 else 0.5 if len(_MARKERS.findall(head)) >= 2 else 0.0
    if score and "Watchdog caught" not in head and re.search(r"Cuda failure \d+|cudaError\w+|CUDA error:|unhandled cuda error|ncclUnhandledCudaError", head):
        # NCCL's last error is a CUDA error: the cuda-errors parser owns it (it reads the NCCL error lines too)
        score = min(score, 0.45)
    return score


@parser(
    "torch-distributed",
    detect=_detect,
    summary="PyTorch distributed output: NCCL errors raised into Python (DistBackendError, Last error), watchdog timeouts",
    facts=FACTS,
    command="TORCH_NCCL_TRACE_BUFFER_SIZE=2000 NCCL_DEBUG=WARN torchrun ... 2>&1 | tee train.log",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "PyTorch distributed output (a DistBackendError traceback or ProcessGroupNCCL lines)")
    errors: list[str] = []
    nccl_errors: list[str] = []
    last_errors: list[str] = []
    kinds: list[str] = []
    ops: list[str] = []
    seqs: set[int] = set()
    ranks: set[int] = set()
    completed: dict[str, int] = {}
    timeout_ms: int | None = None
    watchdog = 0
    version: str | None = None
    want_last = False
    watchdog_frames = store_frames = store_in_use = False
    seen = 0
    connect: list[str] = []
    unresolved: list[str] = []
    refused: list[str] = []
    listen_failed = False
    for raw in _rejoined(text.split("\n")):
        line = _PREFIX.sub("", raw.rstrip(), count=1)
        if _NO_LISTEN in line or (listen_failed and ("failed to bind to" in line or "EADDRINUSE" in line)):
            seen += 1
            listen_failed = True
            for b in _BIND.finditer(line):
                addr = b.group(1).rstrip(".,")
                if b.group(2) or ":" in addr:  # an address cut by the paste ('... bind to Christians-Desk') is none
                    add_clipped(refused, addr, MAX_MESSAGES, MAX_TEXT)
            if _IN_USE.search(line):
                store_in_use = True
            continue
        if "cannot be retrieved (gai error" in line:
            g = _GAI.search(line)
            if g:
                seen += 1
                add_clipped(unresolved, f"{g.group(1)}:{g.group(2)}", MAX_MESSAGES, MAX_TEXT)
                continue
        if "trying to connect to" in line:
            c = _CONNECT.search(line)
            if c:
                seen += 1
                add_clipped(connect, c.group(1) + (f":{c.group(2)}" if c.group(2) else ""), MAX_MESSAGES, MAX_TEXT)
                continue
        if want_last:
            want_last = False
            # the next line is the text, unless it is the next exception or traceback ('Error while creating
            # shared memory segment ...' is NCCL's text; 'RuntimeError: ...' is not)
            if line.strip() and not line.lstrip().startswith(("Traceback", "File ", "[")) and not _EXC_HEAD.match(line):
                add_clipped(last_errors, line, MAX_MESSAGES, MAX_TEXT)
                continue
        if not line.strip():
            continue
        m = _NCCL_ERROR.search(line) if "NCCL error" in line else None
        if m:
            seen += 1
            add_clipped(errors, line.strip(), MAX_MESSAGES, MAX_TEXT)
            add_clipped(nccl_errors, line.strip(), MAX_MESSAGES, MAX_TEXT)
            if m.group("ver") and version is None:
                version = m.group("ver")
        for k in (_KIND.findall(line) if "nccl" in line else ()):
            seen += 1
            if k not in kinds:
                kinds.append(k)
            if line.lstrip().startswith(k):
                add_clipped(nccl_errors, line.strip(), MAX_MESSAGES, MAX_TEXT)
        if "Last error:" in line:
            seen += 1
            lm = _LAST.search(line)
            if lm and lm.group("msg"):
                add_clipped(last_errors, lm.group("msg"), MAX_MESSAGES, MAX_TEXT)
            else:
                want_last = True
            continue
        if "Watchdog caught" in line:
            w = _WATCHDOG.search(line)
            if w:
                seen += 1
                watchdog += 1
                args = w.group("args")
                for op in _OPTYPE.findall(args):
                    if op not in ops:
                        ops.append(op)
                seqs.update(int(x) for x in _SEQ.findall(args))
                for t in _TIMEOUT.findall(args):
                    timeout_ms = max(int(t), timeout_ms or 0)
                if w.group("rank"):
                    ranks.add(int(w.group("rank")))
            continue
        if "Timeout at NCCL work" in line:
            t = _TIMEOUT_AT.search(line)
            if t:
                seen += 1
                ranks.add(int(t.group("rank")))
                completed[t.group("rank")] = int(t.group("done"))
            continue
        if "TCPStore" in line or "rendezvous" in line:
            store_frames = True
        if "Address already in use" in line and store_frames and _EXC_HEAD.match(line.lstrip("_*")):
            store_in_use = True
            seen += 1
            add_clipped(errors, line.strip().strip("_*"), MAX_MESSAGES, MAX_TEXT)
            continue
        if "Exception raised from ncclCommWatchdog" in line or "ProcessGroupNCCL::WorkNCCL::checkTimeout" in line:
            watchdog_frames = True  # the C++ frames of a watchdog timeout whose message line was not pasted
            seen += 1
            continue
        if "torch.distributed." in line or "communicator was aborted" in line or "mismatch between collectives" in line:
            o = _OTHER_EXC.search(line)
            if o:
                seen += 1
                add_clipped(errors, line.strip(), MAX_MESSAGES, MAX_TEXT)
    if not seen:
        raise ParseError("no PyTorch distributed NCCL error (DistBackendError, 'NCCL error in:', nccl*Error), no "
                         "ProcessGroupNCCL watchdog timeout, no c10d connect timeout and no unresolved rendezvous host "
                         "found")
    facts: dict[str, Any] = {"torch.errors": errors}
    if connect:
        facts["torch.connect_timeouts"] = connect
    if unresolved:
        facts["torch.unresolved_hosts"] = unresolved
    if listen_failed:
        facts["torch.store_listen_refused"] = refused or ["any"]
    if kinds:
        facts["torch.nccl_error_kinds"] = kinds
    if store_in_use:
        facts["torch.store_port_in_use"] = True
    if watchdog or watchdog_frames:
        facts["torch.watchdog_timeouts"] = watchdog or 1
    if ops:
        facts["torch.timeout_ops"] = ops
    if timeout_ms is not None:
        facts["torch.timeout_ms"] = timeout_ms
    if seqs:
        facts["torch.timeout_seqs"] = sorted(seqs)
    if ranks:
        facts["torch.timed_out_ranks"] = sorted(ranks)
    if completed:
        facts["torch.last_completed_work"] = dict(sorted(completed.items(), key=lambda kv: int(kv[0])))
    # only what this log shows: an empty list would hide what an NCCL log of the same side says
    if nccl_errors:
        facts["nccl.errors"] = nccl_errors
    if last_errors:
        facts["nccl.warnings"] = last_errors
        if any(_NO_IFACE.search(w) for w in last_errors):
            facts["nccl.no_socket_interface"] = True
    if version is None:  # a line the error pattern could not take apart (two ranks' output run together) still names it
        v = VERSION.search(text)
        version = v.group(1) if v else None
    if version:
        facts["nccl.version"] = version
    return facts
