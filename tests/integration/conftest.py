"""Fixtures for the integration tests: a real Slurm (single node, started by .ci/start-slurm.sh), a real
running job, and bubblewrap as the container boundary.

On a developer machine without them the tests skip with the reason; with ``TS_REQUIRE_REAL=1`` (set by
``.ci/run``) a missing component fails the test instead, so CI can never pass by skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
START_SLURM = ROOT / ".ci" / "start-slurm.sh"
JOB_TIMEOUT_S = 30.0


def require_real() -> bool:
    return os.environ.get("TS_REQUIRE_REAL", "") not in ("", "0")


def unavailable(reason: str):
    """Skip on a developer machine; fail when TS_REQUIRE_REAL=1."""
    if require_real():
        pytest.fail(f"TS_REQUIRE_REAL=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def _sinfo_ok() -> bool:
    if not shutil.which("sinfo"):
        return False
    try:
        return subprocess.run(["sinfo", "-h"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="session")
def slurm() -> str:
    """A Slurm controller that answers ``sinfo``; started with .ci/start-slurm.sh when we are root."""
    if not _sinfo_ok():
        if not shutil.which("slurmctld") and not Path("/usr/sbin/slurmctld").exists():
            unavailable("Slurm is not installed (apt-get install slurmctld slurmd slurm-client munge)")
        if os.geteuid() != 0:
            unavailable("Slurm does not answer sinfo and starting it needs root (run .ci/start-slurm.sh as root)")
        # xdist workers may race here; the script is idempotent and the loser sees sinfo answer
        res = subprocess.run(["bash", str(START_SLURM)], capture_output=True, text=True, timeout=120)
        if res.returncode != 0 or not _sinfo_ok():
            unavailable(f".ci/start-slurm.sh failed (exit {res.returncode}):\n{res.stdout}\n{res.stderr}")
    return subprocess.run(["sinfo", "-h", "-N", "-o", "%N"], capture_output=True, text=True).stdout.split()[0]


def _job_state(job: str) -> str:
    res = subprocess.run(["squeue", "-h", "-j", job, "-o", "%T"], capture_output=True, text=True, timeout=10)
    return res.stdout.strip()


@pytest.fixture(scope="session")
def slurm_job(slurm: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The id of a real running job (``sbatch --wrap 'sleep 300'``); cancelled at the end of the session.

    One job per session (per xdist worker): every test that needs a job shares it, since each test only
    starts overlapping steps in it (``srun --overlap``) and a new job costs ~2 s.
    """
    out = tmp_path_factory.mktemp("slurm-job")
    res = subprocess.run(
        ["sbatch", "--parsable", "--job-name=ts-integration", "--time=5", "--ntasks=1", "--cpus-per-task=1",
         f"--output={out}/job.out", f"--chdir={out}", "--wrap", "sleep 300"],
        capture_output=True, text=True, timeout=30,
    )
    if res.returncode != 0:
        unavailable(f"sbatch failed (exit {res.returncode}): {res.stderr.strip()}")
    job = res.stdout.strip().split(";")[0]
    try:
        deadline = time.monotonic() + JOB_TIMEOUT_S
        state = ""
        while time.monotonic() < deadline:
            state = _job_state(job)
            if state == "RUNNING":
                break
            if state in ("", "FAILED", "CANCELLED", "COMPLETED", "TIMEOUT", "NODE_FAIL"):
                if state:
                    break
            time.sleep(0.2)
        if state != "RUNNING":
            detail = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True).stdout
            pytest.fail(f"job {job} not RUNNING after {JOB_TIMEOUT_S:.0f}s (state {state or 'gone'}):\n{detail}",
                        pytrace=False)
        yield job
    finally:
        subprocess.run(["scancel", job], capture_output=True, timeout=30)


@pytest.fixture(scope="session")
def bwrap() -> str:
    """The path of bubblewrap, checked to really build a sandbox here."""
    path = shutil.which("bwrap")
    if not path:
        unavailable("bubblewrap is not installed (apt-get install bubblewrap)")
    res = subprocess.run([path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
                          "true"], capture_output=True, text=True, timeout=30)
    if res.returncode != 0:
        unavailable(f"bubblewrap cannot create a sandbox here: {res.stderr.strip()}")
    return path


# ------------------------------------------------------------------ /etc/nccl, shared by the tests that use it
TOPO_SAMPLE = ROOT / "tests" / "data" / "nccl-topo" / "azure-ndv5-h100-topo.xml.txt"

# etc_nccl_lock is in tests/conftest.py: the parser tests that run bubblewrap take it too


@pytest.fixture
def host_topo(tmp_path: Path, etc_nccl_lock):
    """A topology file on the host, and NCCL_TOPO_FILE naming it: /etc/nccl/topo.xml when we may create
    /etc/nccl (root, and it does not exist yet: created here, removed after), else a private directory.
    Yields (directory to hide in the container, file path)."""
    import contextlib

    text = "".join(line for line in TOPO_SAMPLE.read_text().splitlines(keepends=True) if not line.startswith("#%"))
    assert "<system" in text
    etc = Path("/etc/nccl")
    mine = os.geteuid() == 0 and not etc.exists()
    d = etc if mine else tmp_path / "nccl"
    try:
        d.mkdir(parents=True, exist_ok=True)
        f = d / "topo.xml"
        f.write_text(text)
        yield str(d), str(f)
    finally:
        if mine:
            with contextlib.suppress(OSError):
                (etc / "topo.xml").unlink()
            with contextlib.suppress(OSError):
                etc.rmdir()
