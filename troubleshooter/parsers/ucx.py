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
DEBUG, TRACE); Open MPI's UCX components add ``[host:pid] pml_ucx.c:N  Error: message``; UCX's fatal errors
``[host:pid:thread:tid] file.c:line  FATAL: message``. ``ucx_info -d`` prints ``#``-commented memory domains,
transports and devices, and ``< failed to open interface >`` under a transport it could not open; ``ucx_info -v``
its release (``# Library version: 1.16.0``; before 1.10 ``# UCT version=1.8.0 revision c30b7da``) and its build
line (``# Configured with:``, in lower case before 1.10, its options often wrapped onto the lines below).

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
    ("ucx.segfault", "bool", "", "a process crashed inside UCX: 'Caught signal 11 (Segmentation fault ...)' or UCX's '==== backtrace ====' with UCX frames (ucp_/uct_) in it"),
    ("ucx.crash_frames", "list", "", "the crash backtrace's functions, innermost first, UCX's own signal handling left out (at most 12; 'libc.so.6+' where a frame has no symbol)"),
    ("ucx.crash_signal", "string", "", "the signal UCX's handler caught ('Segmentation fault', 'Bus error'), from 'Caught signal N (NAME: ...)': the handler reports any crash of a process that loaded UCX, in UCX or not"),
    ("ucx.segfault_in_copy", "bool", "", "the crash is a CPU memory copy (memcpy, or an unnamed libc frame) called from UCX's send or pack path: UCX treated a buffer as host memory that the CPU cannot touch, a GPU buffer when UCX runs without its CUDA support"),
    ("ucx.cuda_unavailable", "bool", "", "UCX runs without its CUDA transports: its own warning that the 'cuda_*' "
     "transports asked for are not available (the ones it offers instead have no cuda_*), or NIXL's 'VRAM memory is "
     "detected as host by UCX' / 'UCX CUDA support was not found' (a UCX built without CUDA, its CUDA modules not "
     "found, or UCX_TLS leaving cuda_copy out)"),
    ("ucx.configured_without", "list", "", "transports and libraries ucx_info -v's 'Configured with:' line turns off "
     "(--without-verbs, --without-rc, --without-ud, --without-dc, --without-mlx5-dv, --without-cuda ...: 'verbs', 'rc', "
     "...), in order; a UCX built --without-verbs has no InfiniBand/RoCE transport at all"),
    ("ucx.version", "string", "", "UCX's release as ucx_info -v prints it ('# Library version: 1.16.0', before 1.10 '# UCT version=1.8.0 revision ...')"),
    ("ucx.tls_in_log", "string", "", "UCX_TLS=VALUE as a program printed it in its log (a launcher or NIXL agent echoing "
     "its environment), the last one seen"),
    ("ucx.shm_alloc_failures", "list", "", "UCX's shared-memory transport (mm, posix over /dev/shm) failing to allocate its receive FIFO or buffers ('mm_iface failed to allocate receive FIFO', 'Not enough memory to write total of N bytes. Please check that /dev/shm ...'), with or without the UCX ERROR prefix, as printed"),
]

# [1652739463.054681] [cn0022:4071024:0]        ib_iface.c:1035 UCX  ERROR message
_LINE = re.compile(r"(?:\[(?P<host>[\w.\-]+):\d+(?::\d+)?\]\s+)?(?:(?<![\w.\-])(?P<loc>[\w.\-]+\.\w+:\d+)\s+)?UCX\s+"
                   r"(?P<lvl>FATAL|ERROR|WARN|DIAG|INFO|DEBUG|TRACE)\s+(?P<msg>.*\S|)\s*$")
# [cn0022:4071024] pml_ucx.c:309  Error: Failed to create UCP worker
# UCX's fatal errors (ucs_log_fatal_error, ucs/debug/log.c): "[host:pid  :thread:tid] file.c:line  FATAL: message",
# the pid left-justified in five columns, the thread a number (a name in newer releases); UCX 1.3's QP errors
_FATAL = re.compile(r"\[(?P<host>[\w.\-]{1,128}):\d+ *:[\w.\-]{1,64}:\d+\]\s+(?P<loc>[\w.\-]{1,128}:\d+)\s+FATAL:\s+(?P<msg>.*\S)\s*$")
_OMPI = re.compile(r"\[(?P<host>[\w.\-]+):\d+\]\s+(?P<loc>(?:pml|osc|spml|btl|common)_ucx\w*\.c:\d+)\s+Error:\s*(?P<msg>.*\S|)[^\S\n]*$",
                   re.MULTILINE)  # (detection counts them in the whole text: on any line, not the last alone)
_INFO = re.compile(r"^\s*#\s+(?P<key>Memory domain|Transport|Device|Component):\s*(?P<value>\S+)")
# UCX's mm transport running out of shared memory (src/uct/sm/mm: mm_iface.c, mm_posix.c, mm_sysv.c), as printed
# (sysv's shmget failures are the kernel's IPC limits, ipcs -l, not /dev/shm: not read here)
_SHM = re.compile(r"mm_iface failed to allocate receive FIFO|Not enough memory to write total of \d+ bytes\. Please check "
                  r"that /dev/shm")
# UCX's crash report: "Caught signal 11 (Segmentation fault: ...)" and its "==== backtrace (tid: N) ====" block
_CAUGHT = re.compile(r"Caught signal 11 \(Segmentation fault|^\s*(?:>\s*)?==== backtrace\b")
# UCS's handler: "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)"
_SIGNAL = re.compile(r"Caught signal (\d{1,2}) \(([A-Za-z][A-Za-z ]{2,40})(?::|\))")
# backtrace frames: "4  libuct_ib.so.0(uct_rc_mlx5_ep_am_short+0x25b) [0x7f..]" or "> 1 0x000000000003ea99 ucp_dt_pack()  dt.c:120"
_FRAME_LIB = re.compile(r"^\s*(?:>\s*)?\d{1,3}\s+(\S+?)\((\w*)(?:\+0x[0-9a-fA-F]+)?\)\s+\[0x[0-9a-fA-F]+\]")
_FRAME_SYM = re.compile(r"^\s*(?:>\s*)?\d{1,3}\s+0x[0-9a-fA-F]+\s+(\w+)\(\)")
# UCX (ucp_context.c): "transports 'cuda_ipc','cuda_copy' are not available, please use one or more of: mm, posix,
# self, shm, sm, sysv, tcp"; NIXL's ucx_utils.cpp: "VRAM memory is detected as host by UCX." and "N NVIDIA GPU(s) were
# detected, but UCX CUDA support was not found!"
_NO_CUDA_TLS = re.compile(r"transports? ('[^']*'(?:,\s*'[^']*')*) (?:is|are) not available, please use one or more of: (.*)")
_NIXL_NO_CUDA = re.compile(r"VRAM memory is detected as host by UCX|UCX CUDA support was not found")
_TLS_ECHO = re.compile(r"(?<![\w-])UCX_TLS=([^\s,;'\"]*)")
# ucx_info -v: "# Configured with: --disable-logging ... --without-verbs ..." (gcc -v prints a "Configured with:" line
# too: only one with UCX's own transport options is UCX's)
_CONFIGURED = re.compile(r"^[#\s]*[Cc]onfigured with:\s*(.*)$")  # UCX before 1.10 prints it in lower case
# ucx_info -v's version line: "# Library version: 1.16.0" (1.10 and later), "# UCT version=1.8.0 revision c30b7da"
_VERSION = re.compile(r"^[^\S\n]*#[^\S\n]*(?:Library version:|UCT version=)[^\S\n]*(\d+\.\d+(?:\.\d+)?)", re.MULTILINE)
_UCX_OPTION = re.compile(r"--with(?:out)?-(?:verbs|rc|ud|dc|mlx5-dv|knem|xpmem|gdrcopy|ib-hw-tm|rdmacm)\b")
_WITHOUT = re.compile(r"--without-([\w-]+)")
_UNOPENED = re.compile(r"^\s*#\s+<\s*failed to open (?:interface|memory domain)\s*>")


# '[1608298882.555115] [b2294:54275:0]          ib_md.c:1678 UCX  ERROR ...': UCX's own prefix (ucs/debug/log.c)
_OWN_LINE = re.compile(r"(?m)^[^\S\n]*\[\d{9,}\.\d+\]\s+\[[\w.-]+:\d+:\d+\]\s+\w+\.c:\d+\s+UCX\s+[A-Z]+\b")


def _error(errors: list[str], sites: list[str], msg: str, loc: str | None) -> None:
    """An error message, and the UCX source file it came from ('ib_iface.c:1035' -> 'ib_iface.c') once."""
    add_clipped(errors, msg, MAX_MESSAGES, MAX_TEXT)
    site = loc.rsplit(":", 1)[0] if loc else None
    if site and site not in sites and len(sites) < MAX_MESSAGES:
        sites.append(site)


def _build_lines(lines: list[str]) -> list[str]:
    """ucx_info -v's build line and the option lines wrapped below it: the options, one string per line."""
    out: list[str] = []
    for ln in lines:
        m = _CONFIGURED.match(ln) if "onfigured with" in ln else None
        if m:
            out = [m.group(1)]
        elif out and ln.lstrip().startswith("--"):
            out.append(ln.strip())
        elif out:
            break
    return out


def _detect(text: str) -> float:
    head = text[:262144]
    n = len(re.findall(r"\bUCX\s+(?:FATAL|ERROR|WARN|DIAG|INFO|DEBUG)\b", head))
    n += len(_OMPI.findall(head))
    if "FATAL:" in head:  # (most pastes have none: no split of the text for them)
        n += sum(1 for ln in head.split("\n") if "FATAL:" in ln and _FATAL.search(ln))
    info = len(re.findall(r"^[^\S\n]*#\s+(?:Memory domain|Transport|Device):", head, re.MULTILINE))
    if n >= 2 or (n and info) or info >= 4:
        return 0.9
    if n == 1 and _OWN_LINE.search(head):  # one line in UCX's own layout: its epoch stamp is not the kernel's uptime
        return 0.9
    if _SIGNAL.search(head) and re.search(r"^[^\S\n]*>?\s*==== backtrace\b", head, re.MULTILINE):
        return 0.6  # UCX's crash report of a process that loaded it (its frames may be another library's)
    if "onfigured with" in head and _UCX_OPTION.search(" ".join(_build_lines(head.split("\n", 200)[:200]))):
        return 0.8  # ucx_info -v's build line
    if "UCT version=" in head and _VERSION.search(head) or re.search(
            r"^[^\S\n]*#[^\S\n]*Library version:[^\S\n]*\d[^\n]*\n[^\S\n]*#[^\S\n]*(?:Library path|API headers version):", head, re.MULTILINE):
        return 0.8  # ucx_info -v's version lines
    if n == 1 or _SHM.search(head) or _NIXL_NO_CUDA.search(head) or (re.search(r"\b(?:ucp|uct)_\w+", head) and (
            _CAUGHT.search(head) or sum(1 for ln in head.split("\n")[:400] if _FRAME_LIB.match(ln) or _FRAME_SYM.match(ln)) >= 3)):
        return 0.6  # one line; UCX's shared-memory failure quoted without its prefix; UCX's crash backtrace
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
    frames: list[str] = []
    caught = False
    signal = ""
    no_cuda = False
    tls = None
    without: list[str] | None = None
    build: list[str] = []
    version = None
    for raw in text.split("\n") + [""]:
        line = raw.rstrip()
        if "UCX" in line and _NIXL_NO_CUDA.search(line):
            no_cuda = True
            seen += 1
        if "version" in line and (vm := _VERSION.match(line)):
            version = vm.group(1)
            seen += 1
            continue
        if "UCX_TLS=" in line and (tm := _TLS_ECHO.search(line)):
            tls = tm.group(1)
        if "onfigured with" in line and _CONFIGURED.match(line) or (build and line.lstrip().startswith("--")):
            build.append(line)  # the build line, and its options a terminal or a ticket wrapped onto lines below
            continue
        if build:
            options = " ".join(_build_lines(build))
            if version or _UCX_OPTION.search(options):  # below UCX's version line, or with its options
                without = list(dict.fromkeys(_WITHOUT.findall(options)))
                seen += 1
            build = []
        if not signal and "Caught signal" in line and (sg := _SIGNAL.search(line)):
            signal = sg.group(2).strip()
            seen += 1
        if ("Caught signal 11" in line or "==== backtrace" in line) and _CAUGHT.search(line):
            caught = True
            seen += 1
        if len(frames) < 64 and (fm := _FRAME_LIB.match(line) or _FRAME_SYM.match(line)):
            frames.append(_frame(fm))  # (a paste's "==== backtrace ====" banner may have been cut away before us)
            seen += 1
            continue
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
                    _error(errors, sites, m.group("msg"), m.group("loc"))
                elif lvl == "WARN":
                    add_clipped(warnings, m.group("msg"), MAX_MESSAGES, MAX_TEXT)
                    nt = _NO_CUDA_TLS.search(m.group("msg"))
                    if nt and "cuda" in nt.group(1) and "cuda" not in nt.group(2):
                        no_cuda = True
                continue
        if "FATAL:" in line and (fm := _FATAL.search(line)):
            seen += 1
            hosts.add(fm.group("host"))
            _error(errors, sites, fm.group("msg"), fm.group("loc"))
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
    if no_cuda:
        facts["ucx.cuda_unavailable"] = True
    if tls is not None:
        facts["ucx.tls_in_log"] = tls
    if without is not None:
        facts["ucx.configured_without"] = without
    if version:
        facts["ucx.version"] = version
    crash = [f for f in frames if not f.startswith(("libucs", "ucs_", "libpthread", "__restore_rt", "killpg"))]
    if signal:
        facts["ucx.crash_signal"] = signal
        if crash:
            facts["ucx.crash_frames"] = crash[:12]
    if (caught or len(frames) >= 3) and any(f.startswith(("ucp_", "uct_")) for f in crash):
        facts["ucx.segfault"] = True
        facts["ucx.crash_frames"] = crash[:12]
        first = next(i for i, f in enumerate(crash) if f.startswith(("ucp_", "uct_")))
        facts["ucx.segfault_in_copy"] = first > 0 and ("memcpy" in crash[first - 1] or crash[first - 1] == "libc.so.6+")
    return facts


def _frame(m: re.Match[str]) -> str:
    """A frame's function; a libc frame without a symbol as 'libc.so.6+'."""
    if m.re is _FRAME_LIB:
        lib, func = m.group(1).rsplit("/", 1)[-1], m.group(2)
        return func or (f"{lib}+" if lib.startswith("libc.") else lib)
    return m.group(1)
