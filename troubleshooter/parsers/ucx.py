"""UCX's log lines (Open MPI, MPICH, NVSHMEM, Dask ... over UCX) and ``ucx_info -d`` listings.

Real sample (an Open MPI job over UCX on an mlx5 InfiniBand cluster whose locked-memory limit was 64 KiB,
then ``ucx_info -d`` failing the same way; openucx/ucx#8229, tests/data/ucx)::

    [1652739463.054681] [cn0022:4071024:0]        ib_iface.c:1035 UCX  ERROR ibv_create_cq(cqe=4096) failed: Cannot allocate memory
    [cn0022:4071024] pml_ucx.c:309  Error: Failed to create UCP worker
    # Memory domain: mlx5_0
    #      Transport: rc_verbs
    #         Device: mlx5_0:1
    [1652740949.516025] [cn0337:3290573:0]        ib_iface.c:1035 UCX  ERROR ibv_create_cq(cqe=4096) failed: Cannot allocate memory
    #   < failed to open interface >

A line is ``[time] [host:pid:tid] file.c:line UCX  LEVEL message`` (LEVEL: FATAL, ERROR, WARN, DIAG, INFO,
DEBUG, TRACE); Open MPI's UCX components add ``[host:pid] pml_ucx.c:N  Error: message``. ``ucx_info -d``
prints ``#``-commented memory domains, transports and devices, and ``< failed to open interface >`` under a
transport it could not open.

What it means for the job: RDMA pins memory; queue creation and memory registration failing with
``Cannot allocate memory`` (ENOMEM) is, nearly always, the locked-memory limit (``ulimit -l``, 64 KiB by
default in many containers and batch sessions), not the host running out of RAM. The same limit stops NCCL's
``ibv_reg_mr``. Messages are kept as printed; no cause is drawn here (``decision_trees/causes.yaml`` does).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

MAX_MESSAGES = 20
MAX_TEXT = 300

FACTS = [
    ("ucx.errors", "list", "", f"UCX ERROR/FATAL messages and Open MPI UCX-component 'Error:' messages, deduplicated, at most {MAX_MESSAGES}"),
    ("ucx.warnings", "list", "", f"UCX WARN messages, deduplicated, at most {MAX_MESSAGES}"),
    ("ucx.error_sites", "list", "", "UCX source files of the ERROR/FATAL lines ('ib_iface.c'): which layer failed"),
    ("ucx.devices", "list", "", "devices ucx_info lists ('mlx5_0:1'), in order"),
    ("ucx.transports", "list", "", "transports ucx_info lists (rc_verbs, rc_mlx5, dc_mlx5, ud_verbs, tcp, ...), in order"),
    ("ucx.unopened_transports", "list", "", "transports under which ucx_info printed '< failed to open interface >'"),
    ("ucx.hosts", "list", "", "sorted distinct host names of the log prefixes"),
    ("ucx.shm_alloc_failures", "list", "", "UCX's shared-memory transport (mm, posix over /dev/shm) failing to allocate its receive FIFO or buffers ('mm_iface failed to allocate receive FIFO', 'Not enough memory to write total of N bytes. Please check that /dev/shm ...'), with or without the UCX ERROR prefix, as printed"),
]

# [1652739463.054681] [cn0022:4071024:0]        ib_iface.c:1035 UCX  ERROR message
_LINE = re.compile(r"(?:\[(?P<host>[\w.\-]+):\d+(?::\d+)?\]\s+)?(?:(?P<loc>[\w.\-]+\.\w+:\d+)\s+)?UCX\s+"
                   r"(?P<lvl>FATAL|ERROR|WARN|DIAG|INFO|DEBUG|TRACE)\s+(?P<msg>.*?)\s*$")
# [cn0022:4071024] pml_ucx.c:309  Error: Failed to create UCP worker
_OMPI = re.compile(r"\[(?P<host>[\w.\-]+):\d+\]\s+(?P<loc>(?:pml|osc|spml|btl|common)_ucx\w*\.c:\d+)\s+Error:\s*(?P<msg>.*?)\s*$")
_INFO = re.compile(r"^\s*#\s+(?P<key>Memory domain|Transport|Device|Component):\s*(?P<value>\S+)")
# UCX's mm transport running out of shared memory (src/uct/sm/mm: mm_iface.c, mm_posix.c, mm_sysv.c), as printed
# (sysv's shmget failures are the kernel's IPC limits, ipcs -l, not /dev/shm: not read here)
_SHM = re.compile(r"mm_iface failed to allocate receive FIFO|Not enough memory to write total of \d+ bytes\. Please check "
                  r"that /dev/shm")
_UNOPENED = re.compile(r"^\s*#\s+<\s*failed to open (?:interface|memory domain)\s*>")


def _detect(text: str) -> float:
    head = text[:262144]
    n = len(re.findall(r"\bUCX\s+(?:FATAL|ERROR|WARN|DIAG|INFO|DEBUG)\b", head))
    n += len(_OMPI.findall(head))
    info = len(re.findall(r"^\s*#\s+(?:Memory domain|Transport|Device):", head, re.MULTILINE))
    if n >= 2 or (n and info) or info >= 4:
        return 0.9
    if n == 1 or _SHM.search(head):
        return 0.6  # one line; or UCX's shared-memory failure quoted without its prefix
    return 0.0


@parser(
    "ucx",
    detect=_detect,
    summary="UCX log lines (UCX ERROR/WARN, Open MPI pml_ucx errors) and ucx_info -d listings",
    facts=FACTS,
    command="UCX_LOG_LEVEL=warn <your job> 2>&1 | tee ucx.log; ucx_info -d",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "UCX log lines or ucx_info -d output")
    errors: list[str] = []
    warnings: list[str] = []
    sites: list[str] = []
    devices: list[str] = []
    transports: list[str] = []
    unopened: list[str] = []
    hosts: set[str] = set()
    transport: str | None = None
    seen = 0
    shm: list[str] = []
    for raw in text.split("\n"):
        line = raw.rstrip()
        if "mm" in line and (sm := _SHM.search(line)):
            seen += 1
            add_clipped(shm, line[sm.start():].strip(), MAX_MESSAGES, MAX_TEXT)
        if "UCX" in line:
            m = _LINE.search(line)
            if m:
                seen += 1
                if m.group("host"):
                    hosts.add(m.group("host"))
                lvl = m.group("lvl")
                if lvl in ("ERROR", "FATAL"):
                    add_clipped(errors, m.group("msg"), MAX_MESSAGES, MAX_TEXT)
                    loc = m.group("loc")
                    if loc and loc.rsplit(":", 1)[0] not in sites and len(sites) < MAX_MESSAGES:
                        sites.append(loc.rsplit(":", 1)[0])
                elif lvl == "WARN":
                    add_clipped(warnings, m.group("msg"), MAX_MESSAGES, MAX_TEXT)
                continue
        if "ucx" in line and "Error" in line:
            m = _OMPI.search(line)
            if m:
                seen += 1
                hosts.add(m.group("host"))
                add_clipped(errors, m.group("msg"), MAX_MESSAGES, MAX_TEXT)
                continue
        if line.lstrip().startswith("#"):
            im = _INFO.match(line)
            if im:
                seen += 1
                key, value = im.group("key"), im.group("value")
                if key == "Transport":
                    transport = value
                    if value not in transports:
                        transports.append(value)
                elif key == "Device" and value not in devices:
                    devices.append(value)
                continue
            if _UNOPENED.match(line):
                seen += 1
                if transport and transport not in unopened:
                    unopened.append(transport)
    if not seen:
        raise ParseError("no UCX log line ('UCX  ERROR ...', 'UCX  WARN ...') and no ucx_info listing found")
    facts: dict[str, Any] = {"ucx.errors": errors, "ucx.warnings": warnings}
    if sites:
        facts["ucx.error_sites"] = sites
    if devices:
        facts["ucx.devices"] = devices
    if transports:
        facts["ucx.transports"] = transports
    if unopened:
        facts["ucx.unopened_transports"] = unopened
    facts["ucx.hosts"] = sorted(hosts)
    if shm:
        facts["ucx.shm_alloc_failures"] = shm
    return facts
