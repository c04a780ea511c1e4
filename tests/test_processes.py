"""Processes and hostile identifiers (issue 12, item 5): a probe's whole tree dies on timeout, cancel and
Ctrl-C (a descendant that called setsid too); an ``ssh`` exec prefix quotes for the remote shell; one
malformed manifest does not stop ``fanout --bundles``; session ids are an id, not a path or a pattern."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest

from troubleshooter.probe import runner
from troubleshooter.probe.runner import run_command
from troubleshooter.probe.targets import ExecTarget, SlurmTarget
from tests.clihelp import main

ROOT = Path(__file__).resolve().parents[1]
HEALTHY = ROOT / "decision_trees" / "practice" / "healthy" / "bundle"

# a probe that leaves a grandchild in a session of its own (as a daemonising tool does), then hangs
ESCAPER = r"""#!/bin/sh
{python} -c 'import os, sys, time
if os.fork() == 0:
    os.setsid()
    open(sys.argv[1] + ".tmp", "w").write(str(os.getpid()))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(300)
' "{pidfile}" </dev/null >/dev/null 2>&1
echo started
exec sleep 300
"""


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG", str(tmp_path / "no-config.yaml"))




def _escaper(tmp_path: Path, name: str = "escaper") -> tuple[Path, Path]:
    pidfile = tmp_path / f"{name}.pid"
    script = tmp_path / name
    script.write_text(ESCAPER.format(python=sys.executable, pidfile=pidfile))
    script.chmod(0o755)
    return script, pidfile


def _wait_for(path: Path, limit: float = 10.0) -> int:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if path.exists():
            return int(path.read_text())
        time.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")


def _gone(pid: int, limit: float = 5.0) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def reap():
    """Kill, by id, whatever a failing test left running."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


# ------------------------------------------------------------------ the probe's whole tree
def test_timeout_kills_a_descendant_that_called_setsid(tmp_path: Path, reap) -> None:
    script, pidfile = _escaper(tmp_path)
    t0 = time.monotonic()
    ev = run_command([str(script)], timeout=2.0)
    assert ev.status.value == "timed-out"
    assert time.monotonic() - t0 < 10
    pid = _wait_for(pidfile)
    reap.append(pid)
    assert _gone(pid), f"the setsid grandchild {pid} survived the probe's timeout"


def test_cancel_kills_a_descendant_that_called_setsid(tmp_path: Path, reap) -> None:
    script, pidfile = _escaper(tmp_path)
    cancel = threading.Event()
    threading.Thread(target=lambda: (_wait_for(pidfile), cancel.set()), daemon=True).start()
    t0 = time.monotonic()
    ev = run_command([str(script)], timeout=120.0, cancel=cancel)
    assert ev.status.value == "cancelled"
    assert time.monotonic() - t0 < 15
    pid = _wait_for(pidfile)
    reap.append(pid)
    assert _gone(pid), f"the setsid grandchild {pid} survived the cancel"


def test_the_tag_is_the_probes_own(tmp_path: Path) -> None:
    ev = run_command(["sh", "-c", f'echo "${runner.TAG_VAR}"'], timeout=10)
    tag = ev.text.strip()
    assert tag and tag.startswith(f"{os.getpid()}-")
    ev2 = run_command(["sh", "-c", f'echo "${runner.TAG_VAR}"'], timeout=10)
    assert ev2.text.strip() != tag  # each probe has its own: killing one never touches another


def _sigint_deliverable() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(sys.platform != "linux", reason="/proc")
def test_ctrl_c_stops_check_promptly_and_kills_the_probes(tmp_path: Path, reap) -> None:
    """Ctrl-C during ``check``: it ends in seconds (it waited ~60 s for running probes) with exit 130,
    and the probes' trees are gone, setsid descendants included."""
    fake = tmp_path / "bin"
    fake.mkdir()
    _, pidfile = _escaper(fake, "turbostat")
    env = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}", TROUBLESHOOTER_DATA_DIR=str(tmp_path / "data"),
               TROUBLESHOOTER_CONFIG=str(tmp_path / "no-config.yaml"))
    # Ctrl-C as a terminal delivers it: a test worker that ran other tests before can hand its children SIGINT
    # blocked or ignored (seen in full-suite runs: check ran on to turbostat's 20 s timeout and exited 0)
    proc = subprocess.Popen([sys.executable, "-m", "troubleshooter", "check"], env=env, cwd=ROOT,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_sigint_deliverable)
    reap.append(proc.pid)
    try:
        pid = _wait_for(pidfile, 60)
        reap.append(pid)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert took < 10, f"Ctrl-C took {took:.1f}s"
    assert _gone(pid), f"the probe's setsid grandchild {pid} survived Ctrl-C"


# ------------------------------------------------------------------ ssh: the remote shell re-parses
HOSTILE = "/nonexistent.log; touch {marker}; echo $(id -u) `id -u` & true"


def _fake_ssh(tmp_path: Path) -> Path:
    """An ``ssh`` that does what ssh does with a command: joins its arguments with spaces and has a shell
    parse the line (here, locally)."""
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    ssh = fake / "ssh"
    ssh.write_text('#!/bin/sh\nshift\nexec sh -c "$*"\n')
    ssh.chmod(0o755)
    return fake


def test_ssh_prefix_quotes_every_argument_for_the_remote_shell() -> None:
    t = ExecTarget("ssh -o BatchMode=yes node1")
    src = types.SimpleNamespace(env=())  # wrap() reads only the source's environment
    argv = t.wrap(["tail", "-c", "16", "a b; rm -rf x"], src)
    assert argv[:4] == ["ssh", "-o", "BatchMode=yes", "node1"] and len(argv) == 5
    assert argv[4] == "tail -c 16 'a b; rm -rf x'"
    # argv-passing prefixes are left alone
    assert ExecTarget("docker exec t").wrap(["cat", "a b"], src)[-2:] == ["cat", "a b"]
    s = SlurmTarget("42", wrapper="ssh node1")
    assert s.wrap(["cat", "a;b"], src)[-1] == "cat 'a;b'"


def test_ssh_exec_does_not_run_a_parameter_as_a_command(tmp_path: Path, capsys, monkeypatch) -> None:
    fake = _fake_ssh(tmp_path)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    marker = tmp_path / "pwned"
    rc, out, err = main(capsys, "check", "--json", "--exec", "ssh node1", "--steps-log", HOSTILE.format(marker=marker))
    assert rc in (0, 1, 2), err
    assert not marker.exists(), "a --steps-log value ran as a command on the remote side"


# ------------------------------------------------------------------ fanout --bundles: one bad manifest
MUTATIONS = {
    "side-list": lambda m: m["evidence"][0].__setitem__("side", ["x"]),
    "targets-list": lambda m: m.__setitem__("targets", ["target"]),
    "target-desc-str": lambda m: m.__setitem__("targets", {"target": "local"}),
    "params-str": lambda m: m.__setitem__("params", "x"),
    "record-str": lambda m: m["evidence"].__setitem__(0, "cmdline"),
    "status-int": lambda m: m["evidence"][0].__setitem__("status", 5),
    "stdout-file-list": lambda m: m["evidence"][0].__setitem__("stdout_file", ["a"]),
    "duration-str": lambda m: m["evidence"][0].__setitem__("duration_s", "slow"),
    "rc-str": lambda m: m["evidence"][0].__setitem__("rc", "zero"),
    "argv-int": lambda m: m["evidence"][0].__setitem__("argv", 5),
    "evidence-dict": lambda m: m.__setitem__("evidence", {"a": 1}),
    "version-str": lambda m: m.__setitem__("version", "1"),
    "manifest-list": None,
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_one_malformed_manifest_skips_that_node_only(tmp_path: Path, capsys, mutation: str) -> None:
    d = tmp_path / "fleet"
    d.mkdir()
    for n in ("node1", "node2", "node3"):
        shutil.copytree(HEALTHY, d / f"{n}.bundle")
    mp = d / "node2.bundle" / "manifest.json"
    m = json.loads(mp.read_text())
    if MUTATIONS[mutation] is None:
        m = [m]
    else:
        MUTATIONS[mutation](m)
    mp.write_text(json.dumps(m))
    rc, out, err = main(capsys, "fanout", "--bundles", str(d))
    assert "internal error" not in err, err
    assert rc == 1, (out, err)
    assert "failed node2: " in out, out
    assert "node[1,3]" in out, out
    rc, out, err = main(capsys, "fanout", "--bundles", str(d), "--json")
    assert "internal error" not in err, err
    doc = json.loads(out)
    assert [f["node"] for f in doc["failed"]] == ["node2"] and doc["failed"][0]["reason"]
    assert doc["node_names"] == "node[1,3]" and doc["exit"] == 1


# ------------------------------------------------------------------ session ids
@pytest.mark.parametrize("bad", ["*", "../../x", "../sessions/x", "/etc/passwd", "a/b", "..", "[ab]", "x?", ".hidden"])
def test_export_refuses_what_is_not_a_session_id(tmp_path: Path, capsys, bad: str) -> None:
    sessions = tmp_path / "data" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "20260101-120000-host-ab12.jsonl").write_text('{"event":"start","symptom":"x"}\n')
    outside = tmp_path / "x.jsonl"
    outside.write_text('{"event":"start","symptom":"secret outside the sessions directory"}\n')
    rc, out, err = main(capsys, "export", bad)
    assert rc == 2, (out, err)
    assert "internal error" not in err and "secret outside" not in out
    assert "not a session id" in err, err


def test_export_finds_a_session_by_a_unique_part(tmp_path: Path, capsys) -> None:
    sessions = tmp_path / "data" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "20260101-120000-host-ab12.jsonl").write_text('{"event":"start","symptom":"x"}\n')
    rc, out, err = main(capsys, "export", "host-ab12", "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["session"] == "20260101-120000-host-ab12"


def test_kill_running_ends_every_probe_tree(tmp_path: Path, reap) -> None:
    """What the app does when it ends mid-sweep: every running probe's tree is killed at once, so the exit
    does not wait for each to finish or time out."""
    script, pidfile = _escaper(tmp_path)
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("ev", run_command([str(script)], timeout=120.0)), daemon=True)
    t.start()
    pid = _wait_for(pidfile)
    reap.append(pid)
    t0 = time.monotonic()
    assert runner.kill_running() == 1
    t.join(15)
    assert not t.is_alive() and time.monotonic() - t0 < 15
    assert box["ev"].status.value != "ok"
    assert _gone(pid)
    assert runner.kill_running() == 0
