"""troubleshooter.probe.runner.run_command against real subprocesses: how each way a probe can go is classified,
and that no probe can hang the tool or flood its memory."""

from __future__ import annotations

import os
import time
from pathlib import Path

from troubleshooter.model.evidence import Status
from troubleshooter.probe.runner import TRUNCATION_MARKER, run_command


def _gone(pid: int, within: float = 3.0) -> bool:
    """The process no longer runs (gone, or a zombie waiting for its reaper)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_ok() -> None:
    ev = run_command(["echo", "hello"], source_id="t", timeout=10)
    assert ev.status is Status.OK and ev.rc == 0
    assert ev.stdout == b"hello\n" and ev.text == "hello\n"
    assert ev.stdout_bytes == 6 and not ev.truncated
    assert ev.argv == ["echo", "hello"] and ev.source_id == "t" and ev.duration_s >= 0


def test_missing_binary_is_not_installed_127() -> None:
    ev = run_command(["ts-no-such-binary-xyz"], timeout=10)
    assert ev.status is Status.NOT_INSTALLED and ev.rc == 127
    assert "ts-no-such-binary-xyz" in ev.reason
    # the same, reported by a wrapper (a shell) rather than by exec
    ev = run_command(["sh", "-c", "ts-no-such-binary-xyz"], timeout=10)
    assert ev.status is Status.NOT_INSTALLED and ev.rc == 127


def test_non_executable_file_is_cannot_run_126(tmp_path: Path) -> None:
    f = tmp_path / "tool"
    f.write_text("#!/bin/sh\necho hi\n")
    f.chmod(0o644)  # no x bit: even root cannot exec it
    ev = run_command([str(f)], timeout=10)
    assert ev.status is Status.CANNOT_RUN and ev.rc == 126
    ev = run_command(["sh", "-c", f"exec {f}"], timeout=10)
    assert ev.status is Status.CANNOT_RUN and ev.rc == 126


def test_timeout_kills_the_whole_group_even_children_ignoring_sigterm(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = (
        "trap '' TERM; "
        f"(trap '' TERM; echo $$ > /dev/null; sleep 60) & echo $! >> {pids}; "
        f"echo $$ >> {pids}; sleep 60"
    )
    t0 = time.monotonic()
    ev = run_command(["sh", "-c", script], timeout=1.0)
    elapsed = time.monotonic() - t0
    assert ev.status is Status.TIMED_OUT and ev.rc == 124
    assert "1s timeout" in ev.reason
    assert elapsed < 1.0 + 3.0, elapsed
    listed = [int(p) for p in pids.read_text().split()]
    assert len(listed) == 2
    for pid in listed:
        assert _gone(pid), f"process {pid} survived the timeout"


def test_output_flood_is_capped_and_counted() -> None:
    cap = 100_000
    total = 3_000_000
    ev = run_command(["head", "-c", str(total), "/dev/zero"], timeout=20, max_bytes=cap)
    assert ev.status is Status.OK
    assert ev.truncated and ev.stdout_bytes == total
    marker = TRUNCATION_MARKER % (cap, total)
    assert ev.stdout.endswith(marker) and len(ev.stdout) == cap + len(marker)
    assert "output truncated" in ev.describe()
    small = run_command(["head", "-c", "100", "/dev/zero"], timeout=10, max_bytes=cap)
    assert not small.truncated and small.stdout_bytes == 100 and len(small.stdout) == 100


def test_non_utf8_output_does_not_break_text() -> None:
    ev = run_command(["printf", "ok \\377\\376 caf\\303\\251 \\200end\\n"], timeout=10)
    assert ev.ok
    assert ev.stdout == b"ok \xff\xfe caf\xc3\xa9 \x80end\n"
    text = ev.text
    assert text.startswith("ok ") and "café" in text and text.endswith("end\n") and "\ufffd" in text
    err = run_command(["sh", "-c", "printf '\\377 bad\\n' >&2; exit 3"], timeout=10)
    assert err.status is Status.ERROR and "bad" in err.reason and "\ufffd" in err.stderr_text


def test_daemon_child_keeping_stdout_open_does_not_hang(tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon"
    t0 = time.monotonic()
    ev = run_command(["sh", "-c", f"sleep 60 & echo $! > {pidfile}; echo started"], timeout=30)
    elapsed = time.monotonic() - t0
    assert ev.status is Status.OK and ev.rc == 0 and ev.stdout == b"started\n"
    assert elapsed < 8, elapsed  # not the child's 60 s, nor the 30 s timeout
    assert _gone(int(pidfile.read_text()))


def test_operation_not_permitted_is_permission_denied() -> None:
    ev = run_command(["sh", "-c", "echo 'turbostat: Failed to set rlimit: Operation not permitted' >&2; exit 1"],
                     timeout=10)
    assert ev.status is Status.PERMISSION_DENIED and ev.rc == 1
    assert "Operation not permitted" in ev.reason


def test_accepted_nonzero_exit_is_ok_and_env_is_passed() -> None:
    ev = run_command(["sh", "-c", 'echo "$TS_RUNNER_TEST"; exit 1'], timeout=10, accept_rc=(0, 1),
                     env={"TS_RUNNER_TEST": "x1"})
    assert ev.status is Status.OK and ev.rc == 1 and ev.stdout == b"x1\n"
    assert "TS_RUNNER_TEST" not in os.environ
