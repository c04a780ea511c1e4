"""End-to-end: the real CLI and targets against a real Slurm job and a real bubblewrap container.

Nothing here is faked: ``troubleshooter`` runs as a subprocess (``python -m troubleshooter``), probes go
through ``srun --jobid J --overlap`` into a running ``sbatch`` job and through ``bwrap`` into a sandbox that
models a job container (case 4: the host's NCCL topology file and NCCL_TOPO_FILE not reaching it).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from troubleshooter.probe import collect
from troubleshooter import sources
from troubleshooter.probe.bundle import Bundle
from troubleshooter.model.evidence import Status
from troubleshooter.sources.base import Params, Source
from troubleshooter.probe.targets import ExecTarget, LocalTarget, SlurmTarget

ROOT = Path(__file__).resolve().parents[2]
TOPO_SAMPLE = ROOT / "tests" / "data" / "nccl-topo" / "azure-ndv5-h100-topo.xml.txt"
CLI_TIMEOUT_S = 120

# Sources whose output changes from one run to the next (a CPU-time sample, free memory, the kernel log):
# a live run and a replay of an earlier capture may legitimately disagree on the checks that read them.
VOLATILE_SOURCES = {"procstat", "meminfo", "numastat", "numactl-hardware", "dmesg", "proc-status-self"}


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop("NCCL_TOPO_FILE", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "troubleshooter", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=full_env, stdin=subprocess.DEVNULL)


def check_json(*args: str, env: dict[str, str] | None = None) -> dict:
    res = cli("check", *args, "--json", env=env)
    assert res.returncode in (0, 1), f"exit {res.returncode}\nstderr:\n{res.stderr}"
    assert "Traceback" not in res.stderr, res.stderr
    return json.loads(res.stdout)


def check_by_id(doc: dict, check_id: str) -> dict:
    found = [c for c in doc["checks"] if c["id"] == check_id]
    assert found, f"no check {check_id!r} in {[c['id'] for c in doc['checks']]}"
    return found[0]


def env_of(stdout: bytes) -> dict[str, str]:
    return dict(e.split("=", 1) for e in stdout.decode(errors="replace").split("\0") if "=" in e)


def bwrap_prefix(bwrap: str, hide: str) -> str:
    return shlex.join([bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", hide,
                       "--unshare-pid", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin"])


# etc_nccl_lock and host_topo are shared fixtures in conftest.py


# ------------------------------------------------------------------ Slurm job step
@pytest.mark.slurm
def test_check_in_real_job_runs_inside_the_step(slurm_job: str, tmp_path: Path) -> None:
    doc = check_json("--job", slurm_job)
    assert doc["target"]["kind"] == "slurm"
    assert doc["target"]["job"] == slurm_job
    assert doc["target"]["label"].startswith(f"slurm job {slurm_job}")
    ev = doc["evidence"]
    # the probes really ran: the basics are ok, not errors of srun
    for sid in ("cmdline", "env-self", "lscpu", "meminfo"):
        assert ev[sid]["status"] == "ok", (sid, ev[sid])
    # the job's own record, from scontrol with the job id filled in
    assert ev["scontrol-job"]["status"] == "ok", ev["scontrol-job"]
    assert any(line.startswith(f"slurm: job {slurm_job}") for line in doc["context"]), doc["context"]

    # the raw evidence (through a capture of the same target): argv went through srun into job J, and
    # the environment the probes saw is the job step's
    bundle_path = tmp_path / "job.bundle.tar.gz"
    res = cli("capture", "--job", slurm_job, "-o", str(bundle_path))
    assert res.returncode == 0, res.stderr
    b = Bundle.open(bundle_path)
    assert b.target_info()["kind"] == "slurm" and b.target_info()["job"] == slurm_job
    cmdline = b.evidence("cmdline")
    assert cmdline.ok and cmdline.argv[:3] == ["srun", f"--jobid={slurm_job}", "--overlap"], cmdline.argv
    assert cmdline.text.strip(), "empty /proc/cmdline from the job step"
    env = env_of(b.evidence("env-self").stdout)
    assert env.get("SLURM_JOB_ID") == slurm_job, sorted(k for k in env if k.startswith("SLURM"))
    assert env.get("SLURM_STEP_ID", "").isdigit()  # a real step, not the batch script
    assert env.get("PATH", "").startswith("/usr/local/sbin")  # --export=NONE + our fixed PATH


@pytest.mark.slurm
def test_slurm_target_facts_come_from_the_step(slurm_job: str) -> None:
    target = SlurmTarget(slurm_job)
    coll = collect.collect(target, ids=["env-self", "cmdline"], params=Params(extra={"job": slurm_job}))
    assert coll.evidence["cmdline"].argv[:3] == ["srun", f"--jobid={slurm_job}", "--overlap"]
    assert coll.facts.get_value("slurm.job_id") == slurm_job
    assert coll.facts.get_value("slurm.in_step") is True
    assert coll.facts["slurm.job_id"].target == target.label


@pytest.mark.slurm
def test_missing_command_in_job_step_is_not_installed(slurm_job: str) -> None:
    src = Source(id="ts-test-missing", parser="cmdline", summary="throwaway", needs="ts-no-such-tool",
                 argv=("ts-no-such-tool-xyz", "--version"), timeout_s=10)
    ev = SlurmTarget(slurm_job).run(src, Params())
    assert ev.status is Status.NOT_INSTALLED, (ev.status, ev.reason, ev.stderr)
    assert "ts-no-such-tool" in ev.reason and f"slurm job {slurm_job}" in ev.reason


@pytest.mark.slurm
def test_job_that_does_not_exist_is_a_clear_error_not_a_hang(slurm: str) -> None:
    # a source that accepts rc 1 from its own command must still see srun's failure as an error
    src = Source(id="ts-test-true", parser="cmdline", summary="throwaway", argv=("true",), accept_rc=(0, 1, 2),
                 timeout_s=10)
    t0 = time.monotonic()
    ev = SlurmTarget("999999").run(src, Params())
    assert time.monotonic() - t0 < 10 + SlurmTarget.extra_timeout + 3
    assert ev.status is Status.ERROR, (ev.status, ev.reason)
    assert "999999" in ev.reason or "Invalid job id" in ev.reason, ev.reason

    t0 = time.monotonic()
    res = cli("check", "--job", "999999")
    assert time.monotonic() - t0 < 60
    assert res.returncode == 2, (res.returncode, res.stderr)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("troubleshooter: ") and "Invalid job id" in lines[0], lines[0]
    assert "Traceback" not in res.stderr
    res = cli("check", "--job", "999999", "--json")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert json.loads(res.stdout)["target"]["job"] == "999999"


@pytest.mark.slurm
def test_capture_inside_job_names_the_job_in_the_manifest(slurm_job: str, tmp_path: Path) -> None:
    out = tmp_path / "in-job"  # a directory bundle this time
    res = cli("capture", "--job", slurm_job, "--json", "-o", str(out))
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    assert Path(info["bundle"]) == out and info["status"].get("ok", 0) > 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["targets"]["target"]["kind"] == "slurm"
    assert manifest["targets"]["target"]["job"] == slurm_job
    assert manifest["params"].get("job") == slurm_job
    recs = {r["source"]: r for r in manifest["evidence"]}
    assert recs["cmdline"]["target"].startswith(f"slurm job {slurm_job}")
    assert recs["cmdline"]["argv"][:3] == ["srun", f"--jobid={slurm_job}", "--overlap"]


# ------------------------------------------------------------------ bubblewrap container
def _topo(doc: dict) -> dict:
    return check_by_id(doc, "topo-file")["facts"]


@pytest.mark.bwrap
def test_exec_bwrap_hides_topo_file_and_variable(bwrap: str, host_topo: tuple[str, str]) -> None:
    hide, topo = host_topo
    host = check_json(env={"NCCL_TOPO_FILE": topo})
    assert host["target"]["kind"] == "local"
    assert _topo(host)["nccl.topo_file.from_env"] is True
    assert _topo(host)["nccl.topo_file.visible"] is True
    assert _topo(host)["nccl.topo_file.path"] == topo

    prefix = bwrap_prefix(bwrap, hide)
    doc = check_json("--exec", prefix, env={"NCCL_TOPO_FILE": topo})
    assert doc["target"]["kind"] == "exec" and doc["target"]["runtime"] == "bubblewrap"
    assert doc["target"]["prefix"][0] == bwrap
    assert doc["evidence"]["nccl-topo-file"]["status"] == "ok"
    facts = _topo(doc)
    assert facts["nccl.topo_file.from_env"] is False  # --clearenv: the host's variable did not reach it
    assert facts["nccl.topo_file.visible"] is False  # --tmpfs over the directory: the file did not either
    assert check_by_id(doc, "topo-file")["verdict"] != "pass"

    # the same, raw, through the target API
    src = Source(id="ts-test-topo", parser="cmdline", summary="throwaway", env=(), argv=(
        "sh", "-c", 'if [ -n "$NCCL_TOPO_FILE" ]; then echo "$NCCL_TOPO_FILE"; else echo unset; fi; '
        f"test -e {shlex.quote(topo)} && echo present || echo absent"))  # (no braces: {x} is a placeholder)
    inside = ExecTarget(prefix).run(src, Params())
    assert inside.ok and inside.text.split() == ["unset", "absent"], inside.describe()


@pytest.mark.slurm
@pytest.mark.bwrap
def test_job_and_exec_compose(slurm_job: str, bwrap: str, host_topo: tuple[str, str]) -> None:
    hide, topo = host_topo
    prefix = bwrap_prefix(bwrap, hide)
    # without the container, the job step sees the host's file (NCCL_TOPO_FILE is not set in the job)
    plain = check_json("--job", slurm_job)
    if hide == "/etc/nccl":
        assert _topo(plain)["nccl.etc_topo.visible"] is True
    doc = check_json("--job", slurm_job, "--exec", prefix, env={"NCCL_TOPO_FILE": topo})
    t = doc["target"]
    assert t["kind"] == "slurm" and t["job"] == slurm_job and t["wrapper"][0] == bwrap
    facts = _topo(doc)
    assert facts["nccl.topo_file.from_env"] is False and facts["nccl.topo_file.visible"] is False
    if hide == "/etc/nccl":  # hidden by the container only when the test made it (a machine's own /etc/nccl is not)
        assert facts["nccl.etc_topo.visible"] is False

    target = SlurmTarget(slurm_job, wrapper=prefix)
    ev = target.run(sources.get("env-self"), Params())
    assert ev.ok, ev.describe()
    # srun ... /usr/bin/env PATH=... bwrap ... cat /proc/self/environ
    i = ev.argv.index(bwrap)
    assert ev.argv[:3] == ["srun", f"--jobid={slurm_job}", "--overlap"] and ev.argv[i - 1].startswith("PATH=")
    assert ev.argv[-2:] == ["cat", "/proc/self/environ"]
    env = env_of(ev.stdout)
    assert "SLURM_JOB_ID" not in env and env.get("PATH") == "/usr/bin:/bin"  # --clearenv inside the step


# ------------------------------------------------------------------ capture / replay
def test_capture_replay_gives_same_verdicts(tmp_path: Path, etc_nccl_lock) -> None:
    # in-process, exactly: the same evidence gives the same facts live and replayed
    from troubleshooter.probe import bundle as bmod

    live = collect.collect(LocalTarget())
    manifest, files = bmod.build_manifest({"target": (LocalTarget().describe(), live.evidence.values())})
    path = bmod.write(tmp_path / "inproc.tar.gz", manifest, files)
    from troubleshooter.probe.targets import BundleTarget

    replay = collect.collect(BundleTarget(Bundle.open(path)))
    assert {k: v for k, v in live.facts.as_dict().items()} == replay.facts.as_dict()
    for sid, ev in live.evidence.items():
        r = replay.evidence[sid]
        assert (r.status, r.rc, r.stdout, r.truncated) == (ev.status, ev.rc, ev.stdout, ev.truncated), sid

    # through the CLI: a live check and a check of a capture taken right after agree on every check that
    # does not read a volatile source
    out = tmp_path / "cli.bundle.tar.gz"
    live_doc = check_json()
    res = cli("capture", "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert tarfile.is_tarfile(out)
    replay_doc = check_json("--bundle", str(out))
    assert replay_doc["target"]["kind"] == "bundle"
    assert [c["id"] for c in live_doc["checks"]] == [c["id"] for c in replay_doc["checks"]]
    assert live_doc["evidence"].keys() == replay_doc["evidence"].keys()
    for a, b in zip(live_doc["checks"], replay_doc["checks"]):
        if set(a["evidence"]) & VOLATILE_SOURCES:
            continue
        assert (a["id"], a["verdict"]) == (b["id"], b["verdict"]), (a, b)
    for sid, e in live_doc["evidence"].items():
        if sid not in VOLATILE_SOURCES:
            assert e["status"] == replay_doc["evidence"][sid]["status"], sid
