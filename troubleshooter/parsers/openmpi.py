"""Open MPI's own reports: a rank that crashed (its signal and backtrace) and shared-memory single-copy failures;
the openib BTL's locked-memory and registerable-memory messages; MPICH's and Cray MPICH's GPU-support messages.

Real samples (nccl-tests built against one MPI and run with another, NVIDIA/nccl-tests#18; Horovod in an
unprivileged Docker container, horovod/horovod#300; tests/data/openmpi)::

    [kyoungrok-ryzen:12576] *** Process received signal ***
    [kyoungrok-ryzen:12576] Signal: Segmentation fault (11)
    [kyoungrok-ryzen:12576] [ 1] /usr/lib/x86_64-linux-gnu/libmpi.so.20(MPI_Comm_size+0x42)[0x7f33a4d353b2]

    [96c7e3d99641:24984] Read -1, expected 122880, errno = 1

Read: the signal a rank received, the frames of its backtrace (``library(function+offset)``), ``mpirun noticed
that process rank N ... exited on signal S``, and the vader/sm BTL's Cross Memory Attach failures (``Read -1,
expected N, errno = E``: process_vm_readv refused between ranks of one node).

What it means: a crash inside MPI_Init/MPI_Comm_size right at start is the program and the MPI library not
matching (built against one MPI, run with another): the application's build, not the cluster (no cause is drawn
from it). CMA failing with errno 1 (EPERM) is a container that does not allow ptrace between its processes
(Docker's default seccomp and capabilities): every large intra-node MPI message loses its single-copy path.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

MAX_FRAMES = 20
MAX_RUNTIME_ERRORS = 10

FACTS = [
    ("mpi.crash_signal", "string", "", "the signal a rank received ('Segmentation fault (11)'), from Open MPI's signal report"),
    ("mpi.crash_frames", "list", "", f"the backtrace's frames as 'library(function)', innermost first, at most {MAX_FRAMES}"),
    ("mpi.exited_on_signal", "list", "", "'mpirun noticed that process rank N ... exited on signal S': the ranks, as 'rank N: signal S'"),
    ("mpi.cma_errors", "number", "count", "single-copy (Cross Memory Attach) failures between ranks: 'Read -1, expected N, errno = E'"),
    ("mpi.cuda_aware", "bool", "", "Open MPI was built with CUDA support: false from its own words ('The user requested CUDA support ... but the library was not compiled with any support') or from ompi_info's 'mpi_built_with_cuda_support:value:false'; true from the latter's 'true'"),
    ("mpi.pmix_missing", "bool", "", "the ranks were launched by srun without PMIx, which this Open MPI needs to join "
     "them into one job ('No PMIx server was reachable, but a PMI1/2 was detected', 'OMPI was not built with SLURM's PMI "
     "support'): each rank starts alone"),
    ("mpi.locked_memory_failed", "list", "", "Open MPI's openib BTL could not allocate locked memory ('The OpenIB BTL "
     "failed to initialize while trying to allocate some locked memory'): the verbs call and device it names, as "
     "'ibv_create_cq() on mthca0'"),
    ("mpi.memlock_limit", "string", "", "the locked-memory limit that message prints ('32768', 'unlimited')"),
    ("mpi.registerable_memory_mib", "number", "MiB", "memory the HCA driver lets be registered, from Open MPI's warning "
     "'your OpenFabrics subsystem is configured to only allow registering part of your physical memory'"),
    ("mpi.total_memory_mib", "number", "MiB", "the node's memory that warning compares it with"),
    ("mpi.gpu_support_disabled", "string", "", "MPICH's datatype engine (yaksa) turned its GPU support off, and why: "
     "'exclusive-mode-all-gpus-visible' ('CUDA is setup in exclusive compute mode, but CUDA_VISIBLE_DEVICES is not set')"),
    ("mpi.exit_code", "number", "", "the exit code MPICH's launcher (Hydra) reports for the process that ended the job "
     "('BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES ... EXIT CODE: 139')"),
    ("mpi.fatal_errors", "list", "", "MPICH's fatal errors ('Abort(N) on node R ...: Fatal error in PMPI_Init_thread: "
     "Other MPI error'), each as 'FUNCTION: CLASS', with the innermost message of its error stack in parentheses"),
    ("mpi.pmi_message", "string", "", "which of Open MPI's complaints about Slurm's PMI: 'no-pmix-server' (Open MPI 5: "
     "'No PMIx server was reachable, but a PMI1/2 was detected ... singletons will be started', a srun launch) or "
     "'not-built-with-slurm-pmi' ('direct launched using \"srun\", but OMPI was not built with SLURM's PMI support', "
     "which a process started by hand inside a Slurm allocation also prints)"),
    ("mpi.btl_tcp_unexpected_peer", "number", "count", "Open MPI's TCP BTL took a connection from another rank than the "
     "one it expected ('mca_btl_tcp_endpoint_recv_connect_ack] received unexpected process identifier [[J,1],R]'): "
     "lines of it"),
    ("mpi.cma_errnos", "list", "", "the errno values of those failures, sorted (1: EPERM, ptrace not allowed; 38: ENOSYS, no CMA)"),
    ("mpi.components_missing", "list", "", "components Open MPI, PMIx or PRRTE could not find or open, as "
     "'FRAMEWORK/COMPONENT' ('A requested component was not found, or was unable to be opened ... Framework: psec / "
     "Component: munge' is 'psec/munge'), sorted"),
    ("mpi.pmix_init_failed", "bool", "", "PMIx could not initialise in a rank ('It looks like pmix_init failed', "
     "'pmix_psec_base_open failed'): the rank cannot join the job; absent when not said"),
    ("mpi.cuda_hook_missing_symbols", "list", "", "what IBM Spectrum MPI's CUDA hook library (preloaded by jsrun) could "
     "not find in the program: the undefined symbols of 'CUDA Hook Library: Failed to find symbol mem_find_dreg_entries, "
     "./a.out: undefined symbol: __PAMI_Invalidate_region' (PAMI's: the program was not built with Spectrum MPI)"),
    ("mpi.help_topics", "list", "", "the help messages other ranks printed as Open MPI counted them ('3 more processes "
     "have sent help message help-mpi-btl-openib-cpc-base.txt / no cpcs for port'), as 'FILE / TOPIC', in order"),
    ("mpi.runtime_errors", "list", "", "the MPI runtime's own error log lines ('ORTE_ERROR_LOG: Data unpack would read "
     "past end of buffer in file grpcomm_direct.c at line 355', 'PMIX ERROR: PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER in "
     "file ...', ORTE's 'FORCE-TERMINATE AT ...'), each as 'MESSAGE (FILE:LINE)', distinct, in order, at most "
     f"{MAX_RUNTIME_ERRORS}"),
    ("mpi.init_failed", "bool", "", "a rank aborted inside MPI_Init before it joined the job (Open MPI's '*** An error "
     "occurred in MPI_Init ... on a NULL communicator', 'Local abort before MPI_INIT completed'); absent when not said"),
]

_TAG = r"^\s*(?:\[[^\]]{1,80}\]\s*)?"
_SIGNAL = re.compile(_TAG + r"Signal: (.(?:.*\S)?)\s*$")
_FRAME = re.compile(_TAG + r"\[\s*\d+\]\s+(\S+?)\(([^)+]*)(?:\+0x[0-9a-f]+)?\)")
_CMA = re.compile(_TAG + r"(?:Read|Write) -1, expected \d+, errno = (\d+)")
# Open MPI's own words and ompi_info; Cray MPICH asked for GPU support (MPICH_GPU_SUPPORT_ENABLED=1) in a program not
# linked with its GPU transport layer (libmpi_gtl_cuda): "MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is requested, but GTL
# library is not linked"
_NO_CUDA = re.compile(r"but the library was not compiled with any support|mpi_built_with_cuda_support:value:false|"
                      r"GPU_SUPPORT_ENABLED is requested, but GTL library is not linked")
# Open MPI 5 started by srun without PMIx (srun's default --mpi=none or pmi2): each rank comes up as a singleton;
# older releases: "OMPI was not built with SLURM's PMI support" / "...direct launched using \"srun\""
_NO_PMIX = re.compile(r"No PMIx server was reachable, but a PMI1/2 was detected|"
                      r"OMPI was not built with SLURM's PMI support|application appears to have been direct launched using \"srun\"")
# Open MPI's openib BTL (help-mpi-btl-openib.txt, Open MPI 1.2 to 4.x): "init-fail-no-mem" and "reg mem limit low"
_LOCKED = re.compile(r"(?:OpenIB|OpenFabrics \(openib\)) BTL failed to initialize while trying to allocate some")
_LOCKED_FIELD = re.compile(r"^\W{0,4}\s*(Function|Device|Memlock limit):\s+(.(?:.*\S)?)\s*$")
_REG_LOW = re.compile(r"OpenFabrics subsystem is configured to only")
_REG_FIELD = re.compile(r"^\W{0,4}\s*(Registerable|Total) memory:\s+(\d+)\s*MiB")
# yaksa (MPICH's datatype engine), src/backend/cuda/hooks: a GPU not in the Default compute mode and no
# CUDA_VISIBLE_DEVICES: every rank would open every GPU, so it drops CUDA
_YAKSA_EXCL = re.compile(r"\[yaksa\] CUDA is setup in exclusive compute mode, but CUDA_VISIBLE_DEVICES is not set")
# MPICH's launcher (Hydra) when a process ends the job, and MPICH's fatal-error abort with its error stack
# (\s: a web page's copy has no-break spaces between the words)
_BAD_TERM = re.compile(r"BAD\s+TERMINATION\s+OF\s+ONE\s+OF\s+YOUR\s+APPLICATION\s+PROCESSES")
_EXIT_CODE = re.compile(r"^=\s+EXIT\s+CODE:\s*(\d+)")
_EXIT_STRING = re.compile(r"TERMINATED\s+WITH\s+THE\s+EXIT\s+STRING:\s*(.(?:.*\S)?)\s*$")
_ABORT = re.compile(r"Abort\(\d+\) on node \d+ \(rank \d+ in comm \d+\): Fatal error in (\w+): (.+?), error stack:")
_STACK = re.compile(r"^(\w+)\(\d+\)\.*:\s*(.*\S|)\s*$")
_WITH_CUDA = re.compile(r"mpi_built_with_cuda_support:value:true")
_NOTICED = re.compile(r"mpirun noticed that process rank (\d+) .*?exited on signal (\d+)(?: \(([^)]+)\))?")


# btl/tcp/btl_tcp_endpoint.c: a peer's connect ack names another process than the endpoint's, when ranks reach each
# other through an interface whose address is not the peer's (docker0/virbr0 172.17.0.1 on every node, ...)
_BTL_TCP_PEER = re.compile(r"mca_btl_tcp_endpoint_recv_connect_ack\]\s*received unexpected process identifier")
# the MCA base's show_help (Open MPI, PMIx and PRRTE print the same block): "A requested component was not found, or
# was unable to be opened ... Host: gpu1 / Framework: psec / Component: munge"; then, when it was PMIx's security
# framework in a rank, "It looks like pmix_init failed for some reason" and "pmix_psec_base_open failed"
_COMPONENT_HEAD = re.compile(r"A\s+requested\s+component\s+was\s+not\s+found")
_COMPONENT_FIELD = re.compile(r"^\W{0,4}\s*(Framework|Component):\s+([\w.-]+)\s*$")
_PMIX_INIT_FAILED = re.compile(r"It\s+looks\s+like\s+pmix_init\s+failed|pmix_psec_base_open\s+failed")
# IBM Spectrum MPI's libpami_cudahook, which jsrun preloads with GPU support on (olcf/olcf-user-docs#78)
_CUDA_HOOK = re.compile(r"CUDA Hook Library: Failed to find symbol \S+?, .*?: undefined symbol: (\S+)")
# the show_help aggregation (Open MPI 1.x-4.x, PRRTE): "[host:pid] 3 more processes have sent help message
# help-mpi-btl-openib-cpc-base.txt / no cpcs for port" (or "1 more process has sent ..."): which help text the other
# ranks printed, file / topic; a wrap inside it is joined
_HELP_AGG = re.compile(r"(?<!\d)\d+ more process(?:es have| has) sent help message\s+(help-[\w.-]+?(?:\.txt)?)\s*/\s*+([^\n\[]*[^\s\[])\s*$",
                       re.MULTILINE)
# the runtime's own error log (orte/mca/errmgr: "ORTE_ERROR_LOG: MESSAGE in file F at line N", Open MPI 1.x-4.x; PMIx's
# and OPAL's "PMIX ERROR: CODE in file F at line N"), a wrap between the message and "file" joined; and ORTE's
# "FORCE-TERMINATE AT MESSAGE:CODE - error F(N)". "Data unpack would read past end of buffer" there is one side
# unpacking what another side packed differently: Open MPI (or PMIx, hwloc) builds that differ between the nodes
# (the message ends on a non-space: a lazy group before \s+ tried the whole run of spaces again at each of its places)
_RUNTIME_ERR = re.compile(r"\b(?:ORTE_ERROR_LOG|PMIX ERROR|OPAL ERROR|PRTE ERROR):[ \t]+([^\n]*?\S)\s+in\s+file\s+(\S+)\s+"
                          r"at\s+line\s+(\d+)")
_FORCE_TERM = re.compile(r"\bFORCE-TERMINATE AT ([^\n]+?):-?\d+ - error (\S+?)\((\d+)\)")
# ompi/errhandler (Open MPI 1.x-4.x): the abort of a rank whose MPI_Init failed, before any communicator existed
_MPI_INIT_FAILED = re.compile(r"\*\*\* An error occurred in MPI_Init(?:_thread)?\b|Local abort before MPI_INIT completed")


def _detect(text: str) -> float:
    head = text[:65536]
    if "*** Process received signal ***" in head or _NOTICED.search(head) or _NO_CUDA.search(head) or \
            _WITH_CUDA.search(head) or _NO_PMIX.search(head) or _LOCKED.search(head) or _REG_LOW.search(head) or \
            _YAKSA_EXCL.search(head) or _BAD_TERM.search(head) or _ABORT.search(head) or _BTL_TCP_PEER.search(head) or \
            _COMPONENT_HEAD.search(head) or _PMIX_INIT_FAILED.search(head) or _MPI_INIT_FAILED.search(head) or \
            _CUDA_HOOK.search(head) or _HELP_AGG.search(head) or _RUNTIME_ERR.search(head) or _FORCE_TERM.search(head):
        return 0.75
    if len(re.findall(r"(?:Read|Write) -1, expected \d+, errno = \d+", head)) >= 1:
        return 0.7
    return 0.0


@parser(
    "openmpi",
    detect=_detect,
    summary="MPI reports (Open MPI, Cray MPICH, PMIx): a rank's crash, CMA failures, CUDA/GPU support, PMIx under srun, "
            "components that could not be opened (psec/munge)",
    facts=FACTS,
    command="<your mpirun command> 2>&1 | tail -50",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "Open MPI output")
    signal = None
    frames: list[str] = []
    noticed: list[str] = []
    cma = 0
    errnos: set[int] = set()
    lines = text.split("\n")
    for line in lines:
        if "Signal:" in line and signal is None:
            m = _SIGNAL.match(line)
            if m and "Signal code" not in line:
                signal = m.group(1)
                continue
        if "(" in line and "[" in line:
            f = _FRAME.match(line)
            if f:
                lib = f.group(1).rsplit("/", 1)[-1]
                item = f"{lib}({f.group(2)})" if f.group(2) else lib
                if len(frames) < MAX_FRAMES:
                    frames.append(item)
                continue
        if "errno = " in line:
            c = _CMA.match(line)
            if c:
                cma += 1
                errnos.add(int(c.group(1)))
                continue
        if "mpirun noticed" in line:
            n = _NOTICED.search(line)
            if n:
                noticed.append(f"rank {n.group(1)}: signal {n.group(2)}" + (f" ({n.group(3)})" if n.group(3) else ""))
    cuda = False if _NO_CUDA.search(text) else True if _WITH_CUDA.search(text) else None
    no_pmix = bool(_NO_PMIX.search(text))
    locked, limit, reg = _openib(lines)
    yaksa = bool(_YAKSA_EXCL.search(text))
    exit_code, exit_string, fatal = _mpich(text, lines)
    signal = signal or exit_string
    btl_peer = len(_BTL_TCP_PEER.findall(text))
    missing = _components_missing(lines) if _COMPONENT_HEAD.search(text) else []
    pmix_init = bool(_PMIX_INIT_FAILED.search(text))
    init_failed = bool(_MPI_INIT_FAILED.search(text))
    hooks = sorted(set(_CUDA_HOOK.findall(text))) if "CUDA Hook Library" in text else []
    topics = list(dict.fromkeys(f"{f} / {t}" for f, t in _HELP_AGG.findall(text))) if "sent help message" in text else []
    runtime = _runtime_errors(text) if "ERROR" in text or "FORCE-TERMINATE" in text else []
    if signal is None and not frames and not cma and not noticed and cuda is None and not no_pmix and not locked \
            and not reg and not yaksa and exit_code is None and not fatal and not btl_peer and not missing \
            and not pmix_init and not init_failed and not hooks and not topics and not runtime:
        raise ParseError("no Open MPI signal report, backtrace, 'mpirun noticed' line, CMA failure, CUDA-support answer, "
                         "missing component, PMIx complaint, runtime error log or MPI_Init abort")
    facts: dict[str, Any] = {}
    if runtime:
        facts["mpi.runtime_errors"] = runtime
    if topics:
        facts["mpi.help_topics"] = topics
    if missing:
        facts["mpi.components_missing"] = missing
    if pmix_init:
        facts["mpi.pmix_init_failed"] = True
    if init_failed:
        facts["mpi.init_failed"] = True
    if hooks:
        facts["mpi.cuda_hook_missing_symbols"] = hooks
    if exit_code is not None:
        facts["mpi.exit_code"] = exit_code
    if fatal:
        facts["mpi.fatal_errors"] = fatal
    if locked:
        facts["mpi.locked_memory_failed"] = locked
        if limit:
            facts["mpi.memlock_limit"] = limit
    if reg:
        facts["mpi.registerable_memory_mib"], facts["mpi.total_memory_mib"] = reg
    if yaksa:
        facts["mpi.gpu_support_disabled"] = "exclusive-mode-all-gpus-visible"
    if no_pmix:
        facts["mpi.pmix_missing"] = True
        facts["mpi.pmi_message"] = ("no-pmix-server" if "No PMIx server was reachable" in text
                                    else "not-built-with-slurm-pmi")
    if cuda is not None:
        facts["mpi.cuda_aware"] = cuda
    if signal is not None:
        facts["mpi.crash_signal"] = signal
    if frames:
        facts["mpi.crash_frames"] = frames
    if noticed:
        facts["mpi.exited_on_signal"] = noticed
    if btl_peer:
        facts["mpi.btl_tcp_unexpected_peer"] = btl_peer
    if cma:
        facts["mpi.cma_errors"] = cma
        facts["mpi.cma_errnos"] = sorted(errnos)
    return facts


def _openib(lines: list[str]) -> tuple[list[str], str, tuple[int, int] | None]:
    """The openib BTL's locked-memory failures ('ibv_create_cq() on mthca0') with the memlock limit printed, and
    its registerable-memory warning (registerable, total MiB; the smallest registerable one when several nodes say)."""
    locked: list[str] = []
    limit = ""
    reg: tuple[int, int] | None = None
    for i, line in enumerate(lines):
        if _LOCKED.search(line):
            fields: dict[str, str] = {}
            for nxt in lines[i + 1:i + 16]:
                m = _LOCKED_FIELD.match(nxt)
                if m:
                    fields[m.group(1)] = m.group(2)
            item = fields.get("Function", "locked memory")
            if fields.get("Device") and not fields["Device"].lower().startswith("out of"):
                item += f" on {fields['Device']}"
            if item not in locked:
                locked.append(item)
            limit = limit or fields.get("Memlock limit", "")
        elif _REG_LOW.search(line):
            got: dict[str, int] = {}
            for nxt in lines[i + 1:i + 24]:
                m = _REG_FIELD.match(nxt)
                if m:
                    got[m.group(1)] = int(m.group(2))
            if len(got) == 2 and (reg is None or got["Registerable"] < reg[0]):
                reg = (got["Registerable"], got["Total"])
    return locked, limit, reg


def _mpich(text: str, lines: list[str]) -> tuple[int | None, str | None, list[str]]:
    """Hydra's bad-termination banner (its exit code and exit string) and MPICH's fatal errors with the innermost
    message of each error stack."""
    code: int | None = None
    string: str | None = None
    fatal: list[str] = []
    banner = bool(_BAD_TERM.search(text[:1 << 22]))
    for i, line in enumerate(lines):
        if len(line) > 4000:
            continue
        if banner:
            m = _EXIT_CODE.match(line.strip()) if "EXIT" in line else None
            if m and code is None:
                code = int(m.group(1))
            m = _EXIT_STRING.search(line) if "STRING" in line else None
            if m and string is None:
                string = " ".join(m.group(1).split())
        a = _ABORT.search(line) if "Fatal error in" in line else None
        if a:
            inner = ""
            for nxt in lines[i + 1:i + 40]:
                f = _STACK.match(nxt.strip())
                if not f:
                    break
                inner = f.group(2) or inner
            item = f"{a.group(1)}: {a.group(2)}" + (f" ({inner})" if inner else "")
            if item not in fatal and len(fatal) < 10:
                fatal.append(item)
    return code, string, fatal


def _components_missing(lines: list[str]) -> list[str]:
    """'FRAMEWORK/COMPONENT' of each 'A requested component was not found' block (its Framework: and Component: lines
    follow within a dozen lines: the explanation, then Host:), sorted."""
    out: set[str] = set()
    for i, line in enumerate(lines):
        if "requested" not in line or not _COMPONENT_HEAD.search(line):
            continue
        got: dict[str, str] = {}
        for nxt in lines[i + 1:i + 16]:
            if _COMPONENT_HEAD.search(nxt):
                break
            m = _COMPONENT_FIELD.match(nxt)
            if m:
                got[m.group(1)] = m.group(2)
        if "Framework" in got and "Component" in got:
            out.add(f"{got['Framework']}/{got['Component']}")
    return sorted(out)


def _runtime_errors(text: str) -> list[str]:
    """The runtime's error log lines and FORCE-TERMINATE reasons as 'MESSAGE (FILE:LINE)', the file's directory
    dropped, distinct, in the order they appear."""
    found: list[tuple[int, str]] = []
    for m in _RUNTIME_ERR.finditer(text):
        found.append((m.start(), f"{' '.join(m.group(1).split())} ({m.group(2).rsplit('/', 1)[-1]}:{m.group(3)})"))
    for m in _FORCE_TERM.finditer(text):
        found.append((m.start(), f"FORCE-TERMINATE: {' '.join(m.group(1).split())} ({m.group(2)}:{m.group(3)})"))
    return list(dict.fromkeys(item for _, item in sorted(found)))[:MAX_RUNTIME_ERRORS]
