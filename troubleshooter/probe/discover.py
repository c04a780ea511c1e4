"""What is running here that a diagnosis could attach to: this user's Slurm jobs, the containers on this node and
the training processes (the app's start screen offers them; choosing one sets the target as ``--job``,
``--exec`` or ``--pid`` would).

Read-only: ``squeue --me``, ``docker ps``, ``podman ps``, ``enroot list`` and the process table. Every command has a
timeout, and a tool that is absent, denied, slow or failing is a :class:`Finding` that says so in words, never an
exception. Each context carries its target as command-line options (``["--job", "4242"]``): the app turns them into
a TargetSpec with the same parser the command line uses, so there is one syntax for targets.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import shutil
from typing import Callable, Sequence

from troubleshooter.model.evidence import Evidence, Status
from troubleshooter.probe.runner import run_command

TIMEOUT_S = 5.0
#: the marks of a training process in its command line (python running torch, a launcher, a framework)
TRAINING = re.compile(r"(?i)\b(torchrun|torch\.distributed|deepspeed|megatron|nemo|accelerate|lightning|"
                      r"pretrain\w*|train\w*|finetun\w*|fsdp|colossalai|horovodrun|mpirun)\b")
_PY = re.compile(r"(?:^|/)(python[\d.]*|torchrun|deepspeed|accelerate|horovodrun)$")

Runner = Callable[..., Evidence]


@dataclasses.dataclass(frozen=True)
class Context:
    """One thing a diagnosis can run in."""

    kind: str  # job | container | process
    label: str  # one line for a person
    args: tuple[str, ...]  # the target as command-line options: ("--job", "4242") ...
    detail: str = ""

    @property
    def command_line(self) -> str:
        """The same target from a shell: ``troubleshooter --job 4242``."""
        return shlex.join(["troubleshooter", *self.args])


@dataclasses.dataclass(frozen=True)
class Finding:
    """What one kind of search found: its contexts, or in words why it found none."""

    kind: str  # jobs | containers | processes
    contexts: tuple[Context, ...] = ()
    state: str = ""  # "" (found some) or why none: "Slurm is not installed (no squeue)", "no jobs of yours" ...

    def line(self) -> str:
        name = {"jobs": "Slurm jobs", "containers": "containers", "processes": "training processes"}[self.kind]
        if self.contexts:
            return f"{name}: {len(self.contexts)}"
        return f"{name}: {self.state}"

    def short(self) -> str:
        """The line, with a long reason cut to "none" (the attach dialog says it whole)."""
        if self.contexts or len(self.state) <= 40:
            return self.line()
        name = {"jobs": "Slurm jobs", "containers": "containers", "processes": "training processes"}[self.kind]
        return f"{name}: none"


def _why_not(ev: Evidence, tool: str) -> str:
    """Why ``tool`` gave nothing usable, in words."""
    if ev.status is Status.NOT_INSTALLED:
        return f"{tool} is not installed"
    if ev.status is Status.TIMED_OUT:
        return f"{tool} did not answer within {TIMEOUT_S:g}s"
    if ev.status is Status.PERMISSION_DENIED:
        return f"{tool}: permission denied"
    first = next((ln.strip() for ln in (ev.stderr_text or ev.text).splitlines() if ln.strip()), "")
    return f"{tool} failed: {first[:160]}" if first else f"{tool} failed ({ev.describe()})"


def _run(run: Runner, argv: Sequence[str], tool: str) -> tuple[str | None, str]:
    """(stdout, "") when the command ran, (None, why not) otherwise."""
    if shutil.which(argv[0]) is None and run is run_command:
        return None, f"{tool} is not installed"
    ev = run(list(argv), source_id=f"discover-{tool}", timeout=TIMEOUT_S, max_bytes=1 << 20)
    if ev.status is not Status.OK:
        return None, _why_not(ev, tool)
    return ev.text, ""


# ------------------------------------------------------------------ Slurm
SQUEUE = ["squeue", "--me", "--noheader", "--format=%i|%j|%T|%N|%M"]


def slurm_jobs(run: Runner = run_command) -> Finding:
    if shutil.which("squeue") is None and run is run_command:
        return Finding("jobs", state="Slurm is not installed here (no squeue)")
    out, why = _run(run, SQUEUE, "squeue")
    if out is None:
        if "not installed" in why:
            why = "Slurm is not installed here (no squeue)"
        return Finding("jobs", state=why)
    running, waiting = [], 0
    for line in out.splitlines():
        parts = line.strip().split("|")
        if len(parts) < 5 or not parts[0]:
            continue
        job, name, state, nodes, elapsed = parts[:5]
        if state != "RUNNING":
            waiting += 1
            continue
        first_node = _first_host(nodes)
        args: tuple[str, ...] = ("--job", job)
        if nodes and ("," in nodes or "[" in nodes) and first_node:
            args += ("--node", first_node)
        running.append(Context("job", f"job {job} {name} on {nodes or '?'} (running {elapsed})", args,
                               detail=f"probes run as an overlapping step: srun --jobid {job} --overlap"))
    if running:
        return Finding("jobs", tuple(running))
    return Finding("jobs", state=f"none running of yours ({waiting} pending)" if waiting else "no jobs of yours")


def _first_host(nodes: str) -> str:
    """The first host of a Slurm hostlist: ``gpu[017-018,020],cpu1`` -> ``gpu017``."""
    m = re.match(r"([^\[,]*)(?:\[([^\]]*)\])?", nodes or "")
    if not m or not m.group(1):
        return ""
    first = re.split(r"[,-]", m.group(2))[0] if m.group(2) else ""
    return m.group(1) + first


# ------------------------------------------------------------------ containers
_FORMAT = "{{.Names}}\t{{.Image}}\t{{.Status}}"


def _ps(run: Runner, tool: str) -> tuple[list[Context], str]:
    out, why = _run(run, [tool, "ps", "--format", _FORMAT], tool)
    if out is None:
        return [], why
    found = []
    for line in out.splitlines():
        bits = line.split("\t")
        if not bits[0].strip():
            continue
        name, image = bits[0].strip(), (bits[1].strip() if len(bits) > 1 else "?")
        found.append(Context("container", f"{tool} {name} ({image})", ("--exec", f"{tool} exec {name}")))
    return found, "" if found else f"{tool}: none running"


def _enroot(run: Runner) -> tuple[list[Context], str]:
    out, why = _run(run, ["enroot", "list", "--fancy"], "enroot")
    if out is None:
        return [], why
    found = []
    for line in out.splitlines()[1:]:  # NAME PID COMM STATE STARTED TIME MNTNS USERNS COMMAND
        bits = line.split()
        if len(bits) >= 2 and bits[1].isdigit():
            found.append(Context("container", f"enroot {bits[0]} (pid {bits[1]})", ("--exec", f"enroot exec {bits[1]}")))
    return found, "" if found else "enroot: none running"


def _cmdline(p) -> list[str]:
    try:
        return list(p.info.get("cmdline") or [])
    except Exception:  # noqa: BLE001 - a process that went away
        return []


def _is_bwrap(argv: list[str]) -> bool:
    return bool(argv) and os.path.basename(argv[0]) == "bwrap"


def _sandboxes(procs: list) -> list[Context]:
    """bubblewrap sandboxes, entered with nsenter into the mount namespace of the command each one runs (its files
    as it sees them). One per sandbox: a bwrap started by another bwrap (its pid-1 helper) is the same sandbox.
    The probes' environment there is nsenter's, not the sandbox's: the detail says so."""
    pids = {p.info["pid"] for p in procs if _is_bwrap(_cmdline(p))}
    found = []
    for p in procs:
        argv = _cmdline(p)
        if not _is_bwrap(argv) or _ppid(p) in pids:
            continue
        leaf = next((c for c in _children(p, recursive=True) if not _is_bwrap(_cmd_of(c))), None)
        pid = leaf.pid if leaf is not None else p.info["pid"]
        inner = " ".join(_cmd_of(leaf)) if leaf is not None else " ".join(argv[-3:])
        found.append(Context("container", f"bwrap sandbox, pid {pid}: {inner[:60] or '?'}",
                             ("--exec", f"nsenter --target {pid} --mount"),
                             detail="its files as the sandbox sees them (its mount namespace); the environment "
                                    "the probes get there is nsenter's"))
    return found


def _ppid(p) -> int | None:
    try:
        return p.ppid()
    except Exception:  # noqa: BLE001 - gone meanwhile
        return None


def _cmd_of(p) -> list[str]:
    try:
        return list(p.cmdline())
    except Exception:  # noqa: BLE001 - gone meanwhile, or not ours to read
        return []


def _children(p, recursive: bool = False) -> list:
    try:
        return p.children(recursive=recursive)
    except Exception:  # noqa: BLE001 - gone, or not ours to read
        return []


def containers(run: Runner = run_command, procs: list | None = None) -> Finding:
    found: list[Context] = []
    states = []
    for tool in ("docker", "podman"):
        got, why = _ps(run, tool)
        found += got
        if why:
            states.append(why)
    got, why = _enroot(run)
    found += got
    if why:
        states.append(why)
    found += _sandboxes(procs if procs is not None else _processes())
    if found:
        return Finding("containers", tuple(found))
    return Finding("containers", state="none found (" + "; ".join(states + ["no bwrap sandbox"]) + ")")


# ------------------------------------------------------------------ training processes
def _processes() -> list:
    try:
        import psutil
    except ImportError:  # pragma: no cover - a dependency
        return []
    try:
        return list(psutil.process_iter(["pid", "name", "cmdline", "username"]))
    except Exception:  # noqa: BLE001 - /proc unreadable
        return []


def training_processes(procs: list | None = None) -> Finding:
    procs = procs if procs is not None else _processes()
    found = []
    me = os.getpid()
    for p in procs:
        argv = _cmdline(p)
        if not argv or p.info.get("pid") == me or not _PY.search(argv[0]):
            continue
        text = " ".join(argv)
        if "troubleshooter" in text or not TRAINING.search(text):
            continue
        pid = int(p.info["pid"])
        found.append(Context("process", f"pid {pid}: {text[:70]}", ("--pid", str(pid)),
                             detail=f"user {p.info.get('username') or '?'}"))
    if found:
        return Finding("processes", tuple(found[:20]))
    return Finding("processes", state="no python process running torch, deepspeed, megatron or a train script")


def everything(run: Runner = run_command) -> list[Finding]:
    """The three searches at once (each bounded by its timeouts): jobs, containers, training processes."""
    from concurrent.futures import ThreadPoolExecutor

    procs = _processes()
    with ThreadPoolExecutor(3) as pool:
        jobs = pool.submit(slurm_jobs, run)
        ctrs = pool.submit(containers, run, procs)
        return [jobs.result(), ctrs.result(), training_processes(procs)]
