"""A Slurm job that ends while `troubleshooter check --job J` runs, and one that has just ended: the check
finishes within its bound with clear error statuses and exits 2 (results incomplete), never 0, never a
traceback. Real Slurm (tests/integration/conftest.py), the CLI as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.conftest import JOB_TIMEOUT_S, _job_state, unavailable

pytestmark = pytest.mark.slurm

ROOT = Path(__file__).resolve().parents[2]
CHECK_BOUND_S = 25.0  # the in-flight probe would otherwise wait for its timeout (15 s + 15 s for srun)


@pytest.fixture
def short_job(slurm: str, tmp_path: Path):
    """A real running job (``sbatch --wrap 'sleep 120'``) that each test ends itself with scancel: long enough
    that it never ends on its own first on a loaded machine (with 'sleep 5' it sometimes did, and the probe
    in flight then saw a completed job, not a cancelled one)."""
    res = subprocess.run(["sbatch", "--parsable", "--job-name=ts-job-ends", "--time=3", "--ntasks=1",
                          "--cpus-per-task=1", f"--output={tmp_path}/job.out", f"--chdir={tmp_path}",
                          "--wrap", "sleep 120"], capture_output=True, text=True, timeout=30)
    if res.returncode != 0:
        unavailable(f"sbatch failed (exit {res.returncode}): {res.stderr.strip()}")
    job = res.stdout.strip().split(";")[0]
    try:
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while _job_state(job) != "RUNNING":
            if time.monotonic() > deadline:
                pytest.fail(f"job {job} not RUNNING after {JOB_TIMEOUT_S:.0f}s", pytrace=False)
            time.sleep(0.1)
        yield job
    finally:
        subprocess.run(["scancel", job], capture_output=True, timeout=30)


def _start_check(job: str, *extra: str) -> subprocess.Popen:
    env = dict(os.environ)
    env.pop("NCCL_TOPO_FILE", None)
    return subprocess.Popen([sys.executable, "-m", "troubleshooter", "check", "--job", job, "--json", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
                            stdin=subprocess.DEVNULL)


def _wait_for_reader(fifo: Path, limit_s: float = 10.0) -> None:
    """Until the probe reading the FIFO runs inside the job step (the single-node Slurm runs it here)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        for d in Path("/proc").iterdir():
            try:
                cmd = (d / "cmdline").read_bytes() if d.name.isdigit() else b""
                if cmd.startswith(b"tail\0") and str(fifo).encode() in cmd:  # the step's, not srun's argv
                    time.sleep(0.2)  # the other probes are done or in flight by now
                    return
            except OSError:
                continue
        time.sleep(0.05)
    time.sleep(1.0)  # a node elsewhere: the probes have started by then


def _finish(proc: subprocess.Popen, t0: float) -> tuple[int, dict, str, float]:
    try:
        out, err = proc.communicate(timeout=CHECK_BOUND_S + 10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"check hung after the job ended:\n{err}")
    took = time.monotonic() - t0
    assert "Traceback" not in err and "internal error" not in err, err
    return proc.returncode, json.loads(out), err, took


def test_job_cancelled_while_check_runs(short_job: str, tmp_path: Path) -> None:
    # a probe reading a FIFO no one writes is certain to be in flight inside the job when it is cancelled
    fifo = tmp_path / "steps.fifo"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    proc = _start_check(short_job, "--steps-log", str(fifo))
    _wait_for_reader(fifo)
    subprocess.run(["scancel", short_job], capture_output=True, timeout=30)
    rc, doc, err, took = _finish(proc, t0)
    assert took < CHECK_BOUND_S, f"check took {took:.1f}s after the job ended"
    assert rc == 2, (f"exit {rc}: a check whose job vanished mid-run must not pass\n{err}\n"
                     f"step-times-log: {doc['evidence'].get('step-times-log')}")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "went away during the check" in lines[0] and f"job {short_job}" in lines[0], err
    ev = doc["evidence"]["step-times-log"]
    assert ev["status"] == "error", ev
    assert f"job {short_job} ended while this probe ran" in ev["reason"] and "CANCELLED" in ev["reason"], ev
    assert any("went away" in c for c in doc["context"])


def test_check_on_a_job_that_just_ended(short_job: str) -> None:
    subprocess.run(["scancel", short_job], capture_output=True, timeout=30)
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while _job_state(short_job) not in ("", "CANCELLED", "COMPLETED"):
        assert time.monotonic() < deadline, _job_state(short_job)
        time.sleep(0.1)
    t0 = time.monotonic()
    rc, doc, err, took = _finish(_start_check(short_job), t0)
    assert took < CHECK_BOUND_S
    assert rc == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("troubleshooter: could not run anything in this target"), err
    tried = {k: v for k, v in doc["evidence"].items() if v["status"] not in ("skipped", "not-captured")}
    assert tried
    # srun's "Slurm job J has expired" exits 1, which cpuidle/cpufreq accept from grep: still an error
    bad = {k: v for k, v in tried.items() if v["status"] != "error" or "srun: error:" not in v["reason"]}
    assert not bad, bad
