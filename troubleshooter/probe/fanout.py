"""Capture every node of a running Slurm job at once, then compare the nodes (docs/comparisons.md).

One ``srun --jobid J --overlap --nodes=N --ntasks-per-node=1 --kill-on-bad-exit=0`` step: each task runs
``python -m troubleshooter capture -o DIR/<node>.bundle.tar.gz`` with this very interpreter
(``sys.executable``: the package must be importable on every node, e.g. a venv on a shared filesystem, and
DIR must be shared too), then writes ``DIR/<node>.facts.json`` (the bundle's facts, parsed on the node, so
the comparison reads small files). The step is bounded by ``timeout``: when it expires srun is terminated
and the nodes that did not report are listed, never hanging the whole run. Slurm reaches the nodes; there
is no SSH loop.

Test-only mode (``simulate`` = K): K tasks with ``--ntasks=K`` and no per-node constraint, each named
``<node>-t<SLURM_PROCID>``, so a single-node Slurm plays K nodes.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from troubleshooter import locations
from troubleshooter.probe.targets import STEP_PATH

# Fixed text; values arrive as positional arguments ($0 python, $1 directory, $2 naming mode).
TASK_SCRIPT = r"""
name=$SLURMD_NODENAME
[ -n "$name" ] || name=$(hostname)
if [ "$2" = procid ]; then name=$name-t$SLURM_PROCID; fi
out=$1/$name.bundle.tar.gz
"$0" -m troubleshooter capture -o "$out" >/dev/null 2>"$1/$name.capture.err"
rc=$?
if [ "$rc" = 0 ]; then
  "$0" -m troubleshooter.service.fanout --facts "$out" >/dev/null 2>>"$1/$name.capture.err" || true
fi
printf 'ts-fanout node=%s rc=%s\n' "$name" "$rc"
exit "$rc"
"""

_REPORT = re.compile(r"^(?:\d+: )?ts-fanout node=(\S+) rc=(\d+)\s*$", re.MULTILINE)


class FanoutError(Exception):
    """The fan-out could not run at all (no such job, srun missing)."""


@dataclasses.dataclass
class FanoutRun:
    job: str
    directory: Path
    expected: list[str]  # node names (empty in simulate mode: unknown in advance)
    ok: list[str]
    failed: list[dict[str, str]]
    wall_s: float
    timed_out: bool
    argv: list[str]
    stderr_tail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"job": self.job, "directory": str(self.directory), "expected": self.expected, "ok": self.ok,
                "failed": self.failed, "wall_s": round(self.wall_s, 2), "timed_out": self.timed_out,
                "argv": self.argv}


def _run(argv: list[str], timeout: float = 15) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except FileNotFoundError as exc:
        raise FanoutError(f"{argv[0]} is not installed here (Slurm client commands are needed)") from exc
    except subprocess.TimeoutExpired as exc:
        raise FanoutError(f"{shlex.join(argv)} did not answer in {timeout:.0f}s") from exc


def job_nodes(job: str) -> list[str]:
    """The nodes of a running job, expanded (squeue, then scontrol show hostnames)."""
    if not re.fullmatch(r"[0-9]+(_[0-9]+)?", str(job)):
        raise FanoutError(f"not a Slurm job id: {job!r}")
    res = _run(["squeue", "-h", "-j", str(job), "-o", "%T %N"])
    line = res.stdout.strip().splitlines()[0] if res.stdout.strip() else ""
    if res.returncode != 0 or not line:
        why = res.stderr.strip() or "not in squeue (finished, or never existed)"
        raise FanoutError(f"job {job}: {why}")
    state, _, nodelist = line.partition(" ")
    if state != "RUNNING" or not nodelist.strip():
        raise FanoutError(f"job {job} is {state or 'not running'}: fanout needs a running allocation")
    res = _run(["scontrol", "show", "hostnames", nodelist.strip()])
    nodes = res.stdout.split()
    if res.returncode != 0 or not nodes:
        raise FanoutError(f"cannot expand the node list {nodelist!r}: {res.stderr.strip()}")
    return nodes


def srun_argv(job: str, nodes: Sequence[str], directory: Path, *, timeout: float, wrapper: Sequence[str] = (),
              simulate: int = 0, python: str | None = None) -> list[str]:
    minutes = max(1, int(timeout // 60) + 1)  # Slurm's own backstop if this process dies
    argv = ["srun", f"--jobid={job}", "--overlap", "--kill-on-bad-exit=0", "--quiet", "--export=NONE",
            f"--time={minutes}"]
    if simulate:
        argv += [f"--ntasks={simulate}", "--overcommit"]  # more tasks than the job has CPUs
    else:
        argv += [f"--nodes={len(nodes)}", f"--ntasks={len(nodes)}", "--ntasks-per-node=1",
                 f"--nodelist={','.join(nodes)}"]
    argv += ["/usr/bin/env", f"PATH={STEP_PATH}", *wrapper,
             "sh", "-c", TASK_SCRIPT, python or sys.executable, str(directory), "procid" if simulate else "node"]
    return argv


def run(job: str, directory: str | os.PathLike[str], *, timeout: float = 180.0, wrapper: str | Sequence[str] = (),
        simulate: int = 0) -> FanoutRun:
    """Capture every node of ``job`` into ``directory`` in one srun step, bounded by ``timeout`` seconds."""
    d = Path(directory).resolve()
    locations.private_dir(d)  # raw node captures: 0700 (the nodes write as the same user)
    nodes = job_nodes(job)
    wrap = shlex.split(wrapper) if isinstance(wrapper, str) else list(wrapper)
    argv = srun_argv(job, nodes, d, timeout=timeout, wrapper=wrap, simulate=simulate)
    t0 = time.monotonic()
    timed_out = False
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                text=True, start_new_session=True)
    except FileNotFoundError as exc:
        raise FanoutError("srun is not installed here") from exc
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        # srun forwards SIGTERM to the tasks and ends the step; then make sure nothing is left behind
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                out, err = proc.communicate(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            out, err = "", ""
    wall = time.monotonic() - t0
    reports = {m.group(1): int(m.group(2)) for m in _REPORT.finditer(out or "")}
    ok, failed = [], []
    for name, rc in sorted(reports.items()):
        bundle = d / f"{name}.bundle.tar.gz"
        if rc == 0 and bundle.exists():
            ok.append(name)
        else:
            failed.append({"node": name, "reason": _task_reason(d, name, rc)})
    launch = [ln for ln in (err or "").splitlines() if ln.startswith("srun: error")]
    if not reports and launch:
        raise FanoutError(launch[0].strip())
    if simulate:
        for i in range(len(reports), simulate):
            failed.append({"node": f"task {i}", "reason": "timed out (no report)" if timed_out else "no report"})
    else:
        for n in nodes:
            if n not in reports:
                failed.append({"node": n, "reason": "timed out before it reported" if timed_out else
                               _srun_reason(err or "", n) or "no report (the task never started or was killed)"})
    return FanoutRun(str(job), d, [] if simulate else nodes, ok, failed, wall, timed_out, argv,
                     "\n".join((err or "").splitlines()[-20:]))


def _task_reason(d: Path, name: str, rc: int) -> str:
    errf = d / f"{name}.capture.err"
    tail = ""
    try:
        lines = [ln for ln in errf.read_text(errors="replace").splitlines() if ln.strip()]
        tail = lines[-1] if lines else ""
    except OSError:
        pass
    return f"capture exited {rc}" + (f": {tail}" if tail else "") if rc else "capture reported success but wrote no bundle"


def _srun_reason(err: str, node: str) -> str:
    for ln in err.splitlines():
        if node in ln and "error" in ln:
            return ln.strip()
    return ""
