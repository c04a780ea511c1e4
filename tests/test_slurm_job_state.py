"""A job that ended while a probe ran is reported with the state it ended in. Right after scancel, slurmctld shows
the job COMPLETING (its steps and epilog still being cleaned up) before CANCELLED; the state is waited on for a few
seconds so that the reason says why the job ended. Under a loaded CI run the real Slurm test
(tests/integration/test_job_ends.py) once saw 'JobState=COMPLETING' where it wanted CANCELLED.

The transitional state cannot be produced on demand with a real slurmctld, so an scontrol on PATH prints what
slurmctld prints in turn (the `scontrol show job -o` line, cut to the fields read)."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from troubleshooter.probe.targets import SlurmTarget


def _scontrol(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, states: list[str]) -> Path:
    """An scontrol answering each `show job` with the next of ``states`` (the last one again after that)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "states").write_text("\n".join(states) + "\n")
    script = bin_dir / "scontrol"
    script.write_text(f"""#!/bin/sh
n=$(cat {tmp_path}/n 2>/dev/null || echo 0)
echo $((n + 1)) > {tmp_path}/n
total=$(wc -l < {tmp_path}/states)
i=$((n + 1)); [ $i -gt $total ] && i=$total
state=$(sed -n "${{i}}p" {tmp_path}/states)
echo "JobId=4242 JobName=train UserId=sre(1000) JobState=$state Reason=None Partition=gpu NodeList=gpu07"
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return tmp_path / "n"


def test_a_job_seen_completing_is_reported_with_the_state_it_ends_in(tmp_path, monkeypatch):
    calls = _scontrol(tmp_path, monkeypatch, ["COMPLETING", "COMPLETING", "CANCELLED"])
    assert SlurmTarget("4242")._ended_state() == "CANCELLED"
    assert calls.read_text().strip() == "3"


def test_a_job_still_completing_after_the_wait_says_so(tmp_path, monkeypatch):
    _scontrol(tmp_path, monkeypatch, ["COMPLETING"])
    t0 = time.monotonic()
    assert SlurmTarget("4242")._ended_state(settle_s=0.6) == "COMPLETING"
    assert time.monotonic() - t0 < 3.0  # bounded: an epilog that runs for minutes does not hold the check


def test_a_running_job_is_not_ended_and_is_asked_once(tmp_path, monkeypatch):
    calls = _scontrol(tmp_path, monkeypatch, ["RUNNING", "CANCELLED"])
    assert SlurmTarget("4242")._ended_state() == ""
    assert calls.read_text().strip() == "1"
