"""End to end in a real terminal: the installed `troubleshooter` entry point in tmux, driven with
send-keys and read with capture-pane, as a person at a terminal would. Plays the case-4 practice session
to the ticket, then kills a session with SIGKILL mid-walk and resumes it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import unavailable

ROOT = Path(__file__).resolve().parents[2]
ENTRY = Path(sys.executable).parent / "troubleshooter"


@pytest.fixture
def tmux(tmp_path):
    if not shutil.which("tmux"):
        unavailable("tmux is not installed (apt-get install tmux)")
    if not ENTRY.exists():
        unavailable(f"the troubleshooter entry point is not installed at {ENTRY} (pip install -e .)")
    sock = str(tmp_path / "tmux.sock")
    data = tmp_path / "data"
    env = dict(os.environ, TROUBLESHOOTER_DATA_DIR=str(data), TROUBLESHOOTER_CONFIG=str(tmp_path / "none.yaml"),
               TERM="xterm-256color")

    class T:
        data_dir = data

        def start(self, args: str, name: str = "t") -> None:
            cmd = f"{ENTRY} {args}; sleep 600"
            subprocess.run(["tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", name, "-x", "100", "-y", "30",
                            cmd], check=True, env=env, cwd=ROOT)

        def keys(self, *keys: str, name: str = "t") -> None:
            for k in keys:
                subprocess.run(["tmux", "-S", sock, "send-keys", "-t", name, k], check=True)
                time.sleep(0.15)

        def screen(self, name: str = "t") -> str:
            return subprocess.run(["tmux", "-S", sock, "capture-pane", "-p", "-t", name], capture_output=True,
                                  text=True).stdout

        def wait_for(self, text: str, timeout: float = 30.0, name: str = "t") -> str:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                s = self.screen(name)
                if text in s:
                    return s
                time.sleep(0.2)
            raise AssertionError(f"{text!r} did not appear within {timeout}s; screen:\n{self.screen(name)}")

        def pane_pid(self, name: str = "t") -> int:
            out = subprocess.run(["tmux", "-S", sock, "list-panes", "-t", name, "-F", "#{pane_pid}"],
                                 capture_output=True, text=True).stdout
            return int(out.split()[0])

    yield T()
    subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)


def _app_pid(shell_pid: int) -> int:
    """The troubleshooter process under the pane's shell."""
    out = subprocess.run(["pgrep", "-P", str(shell_pid)], capture_output=True, text=True).stdout.split()
    for pid in out:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        if b"troubleshooter" in cmd:
            return int(pid)
    raise AssertionError(f"no troubleshooter process under {shell_pid}: {out}")


def test_practice_case4_to_ticket(tmux):
    tmux.start("")
    tmux.wait_for("What do you see?")
    tmux.keys("d")  # practise
    tmux.wait_for("Case 4")
    # move the highlight to case 4 (the list is in cases.yaml order: case1..case4, healthy)
    # w: watch the expert walk it (Enter starts the quiz); a practice walk stays on its steps, r opens Results
    tmux.keys("Down", "Down", "Down", "w")
    tmux.wait_for("root cause", timeout=60)
    tmux.keys("r")
    s = tmux.wait_for("NCCL topology file and", timeout=10)
    assert "1 root cause" in s
    tmux.keys("e")
    tmux.wait_for("Export")
    tmux.keys("m")
    tmux.wait_for("wrote")
    md = list((tmux.data_dir / "exports").glob("*.md"))
    assert md, "no Markdown ticket written"
    text = md[0].read_text()
    assert "topo-not-in-container" in text and "--container-env=NCCL_TOPO_FILE" in text


def test_kill_9_mid_session_then_resume(tmux):
    bundle = ROOT / "decision_trees" / "practice" / "case1" / "bundle"
    tmux.start(f"--bundle {bundle}")
    tmux.wait_for("What do you see?")
    tmux.keys("Down", "Enter")  # MoE-only slowdown
    tmux.wait_for("Does a dense model")
    tmux.keys("Enter")  # yes
    tmux.wait_for("root cause", timeout=60)
    app_pid = _app_pid(tmux.pane_pid())
    os.kill(app_pid, signal.SIGKILL)
    time.sleep(0.5)
    sessions = list((tmux.data_dir / "sessions").glob("*.jsonl"))
    assert len(sessions) == 1
    # the journal survives the kill and is readable
    out = subprocess.run([str(ENTRY), "sessions"], capture_output=True, text=True,
                         env=dict(os.environ, TROUBLESHOOTER_DATA_DIR=str(tmux.data_dir)))
    assert "moe-only-slowdown" in out.stdout
    # resume it in a new terminal
    tmux.start("--resume", name="r")
    tmux.wait_for("root cause", timeout=60, name="r")
    s = tmux.wait_for("arm_smmu_cmdq_issue_cmdlist", timeout=20, name="r")
    assert "SMMU" in s
    ticket = subprocess.run([str(ENTRY), "export", "latest"], capture_output=True, text=True,
                            env=dict(os.environ, TROUBLESHOOTER_DATA_DIR=str(tmux.data_dir)))
    assert ticket.returncode == 0 and "smmu-cmdq-contention" in ticket.stdout
