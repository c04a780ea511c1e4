"""Attaching to the real context (issue 13 item 5), with nothing faked: `squeue --me` finds a real running job and
the target it names runs a probe inside that job; a real bubblewrap sandbox is found in the process table and the
target it names sees the sandbox's files, not the host's."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from troubleshooter.model.evidence import Status
from troubleshooter.probe import discover
from troubleshooter.probe.runner import run_command
from troubleshooter.probe.targetspec import TargetSpec, from_args
from troubleshooter.sources.base import Params, Source


@pytest.mark.slurm
def test_squeue_finds_the_running_job_and_its_target_runs_inside(slurm_job: str) -> None:
    found = discover.slurm_jobs()
    ctx = next((c for c in found.contexts if c.args[:2] == ("--job", slurm_job)), None)
    assert ctx is not None, f"job {slurm_job} not offered: {found}"
    spec = from_args(ctx.args, TargetSpec())
    target = spec.make()
    ev = target.run(Source(id="job-id", parser="env", summary="", argv=("printenv", "SLURM_JOB_ID")), Params())
    assert ev.status is Status.OK and ev.text.strip() == slurm_job


@pytest.mark.bwrap
def test_a_bubblewrap_sandbox_is_found_and_entered(bwrap: str, tmp_path: Path) -> None:
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "host-only").write_text("the host sees this file\n")
    proc = subprocess.Popen([bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", str(hidden),
                             "--unshare-pid", "sleep", "60"], stdin=subprocess.DEVNULL)
    try:
        ctx = None
        for _ in range(50):  # the sandbox's command starts a moment after bwrap
            found = discover.containers()
            ctx = next((c for c in found.contexts if "sleep 60" in c.label), None)
            if ctx:
                break
            time.sleep(0.1)
        assert ctx is not None, f"the sandbox was not found: {found}"
        target = from_args(ctx.args, TargetSpec()).make()
        ev = run_command([*target.prefix, "ls", "-A", str(hidden)], timeout=10)
        if ev.status is not Status.OK and "Operation not permitted" in ev.stderr_text:
            pytest.skip("nsenter needs root (CAP_SYS_ADMIN) to enter a mount namespace")
        assert ev.status is Status.OK, ev.describe()
        assert ev.text.strip() == "", "inside the sandbox the directory is its own empty tmpfs"
        assert (hidden / "host-only").exists()
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _running(text: str) -> bool:
    import os

    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and text in Path(f"/proc/{p}/cmdline").read_bytes().decode(errors="replace"):
                return True
        except OSError:  # gone meanwhile
            continue
    return False


@pytest.mark.tmux
def test_quitting_does_not_wait_for_a_hung_squeue(tmp_path: Path) -> None:
    """The start screen looks for jobs in a worker; q while squeue hangs (a controller that does not answer)
    quits at once: the running command is killed instead of waited for until its timeout."""
    import importlib.util
    import os
    import shutil

    from .conftest import unavailable

    if not shutil.which("tmux"):
        unavailable("tmux is not installed (apt-get install tmux)")
    spec = importlib.util.spec_from_file_location("bench_ttc", Path(__file__).resolve().parents[2] / "bench" / "timetocause.py")
    ttc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ttc)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "squeue").write_text("#!/bin/sh\nsleep 30\n")
    (fake / "squeue").chmod(0o755)
    term = ttc.Terminal(tmp_path)
    term.env["PATH"] = f"{fake}:{os.environ['PATH']}"
    subprocess.run(["tmux", "-S", term.sock, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "100", "-y", "30",
                    f"{ttc.ENTRY}; echo EXITED; sleep 60"], env=term.env, check=True, timeout=30)
    try:
        term.wait_for("What do you see?")
        assert "looking for running jobs" in term.screen()
        deadline = time.monotonic() + 10  # until the search runs the (hanging) squeue
        while time.monotonic() < deadline and not _running(str(fake)):
            time.sleep(0.05)
        t0 = time.monotonic()
        term.key("q")
        term.wait_for("EXITED", timeout=30)
        assert time.monotonic() - t0 < 3.0, "q waited for squeue"
    finally:
        term.close()
