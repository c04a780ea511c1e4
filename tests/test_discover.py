"""Discovery of what runs here (issue 13 item 5): Slurm jobs, containers, training processes. Every search that
finds nothing says why in words (not installed, no daemon, timed out, none running); nothing raises."""

from __future__ import annotations

import pytest

from troubleshooter.model.evidence import Evidence, Status
from troubleshooter.probe import discover
from troubleshooter.probe.targetspec import TargetSpec, from_args


def fake_run(outputs: dict[str, Evidence]):
    calls = []

    def run(argv, **kw):
        calls.append((argv, kw))
        assert kw.get("timeout") and kw["timeout"] <= 10, "every discovery command has a timeout"
        return outputs[argv[0]]
    run.calls = calls
    return run


def ev(status=Status.OK, out=b"", err=b"", rc=0):
    return Evidence("x", status, stdout=out, stderr=err, rc=rc)


def test_squeue_running_jobs_become_job_targets():
    out = b"4242|pretrain|RUNNING|gpu[017-018]|1:02:03\n4243|eval|PENDING||0:00\n77|tune|RUNNING|gpu001|5:00\n"
    run = fake_run({"squeue": ev(out=out)})
    f = discover.slurm_jobs(run)
    assert [c.args for c in f.contexts] == [("--job", "4242", "--node", "gpu017"), ("--job", "77")]
    assert f.contexts[0].command_line == "troubleshooter --job 4242 --node gpu017"
    assert run.calls[0][0][:2] == ["squeue", "--me"]


@pytest.mark.parametrize("evidence,said", [
    (ev(Status.NOT_INSTALLED, rc=127), "Slurm is not installed here (no squeue)"),
    (ev(Status.TIMED_OUT, rc=124), "squeue did not answer within 5s"),
    (ev(Status.ERROR, err=b"slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n", rc=1),
     "squeue failed: slurm_load_jobs error: Unable to contact slurm controller (connect failure)"),
    (ev(out=b""), "no jobs of yours"),
    (ev(out=b"5|x|PENDING||0:00\n"), "none running of yours (1 pending)"),
])
def test_squeue_states_are_words(evidence, said):
    f = discover.slurm_jobs(fake_run({"squeue": evidence}))
    assert f.contexts == () and f.state == said
    assert f.line() == f"Slurm jobs: {said}"


class P:
    def __init__(self, pid, cmdline, children=(), ppid=1):
        self.pid = pid
        self.info = {"pid": pid, "cmdline": cmdline, "username": "alice", "name": cmdline[0] if cmdline else ""}
        self._children = list(children)
        self._ppid = ppid

    def children(self, recursive=False):
        out = []
        for c in self._children:
            out.append(c)
            if recursive:
                out += c.children(True)
        return out

    def ppid(self):
        return self._ppid

    def cmdline(self):
        return self.info["cmdline"]


def test_containers_from_docker_enroot_and_bwrap_and_clear_states():
    leaf = P(12, ["python", "train.py"], ppid=11)
    helper = P(11, ["bwrap", "--ro-bind", "/", "/", "python", "train.py"], [leaf], ppid=10)  # its pid-1 helper
    procs = [P(10, ["/usr/bin/bwrap", "--ro-bind", "/", "/", "python", "train.py"], [helper]), helper, leaf]
    run = fake_run({
        "docker": ev(out=b"trainer\tnvcr.io/nvidia/pytorch:25.01\tUp 2 hours\n"),
        "podman": ev(Status.NOT_INSTALLED, rc=127),
        "enroot": ev(out=b"NAME PID COMM STATE STARTED TIME MNTNS USERNS COMMAND\npyxis_4242 31337 python S 10:00 1:00 1 2 python\n"),
    })
    f = discover.containers(run, procs)
    args = [c.args for c in f.contexts]
    assert ("--exec", "docker exec trainer") in args
    assert ("--exec", "enroot exec 31337") in args
    assert ("--exec", "nsenter --target 12 --mount") in args
    assert sum(a[1].startswith("nsenter") for a in args) == 1, "one sandbox, one context"
    none = discover.containers(fake_run({"docker": ev(Status.ERROR, err=b"Cannot connect to the Docker daemon\n", rc=1),
                                         "podman": ev(Status.NOT_INSTALLED, rc=127),
                                         "enroot": ev(Status.PERMISSION_DENIED, rc=1)}), [])
    assert none.contexts == ()
    assert "docker failed: Cannot connect to the Docker daemon" in none.state
    assert "podman is not installed" in none.state and "enroot: permission denied" in none.state


def test_training_processes_by_their_command_lines():
    procs = [P(1, ["/usr/bin/python3", "-m", "torch.distributed.run", "pretrain_gpt.py"]),
             P(2, ["python", "-c", "print(1)"]),
             P(3, ["bash", "train.sh"]),
             P(4, ["/opt/venv/bin/torchrun", "--nproc-per-node=8", "train.py"]),
             P(5, [".venv/bin/python", ".venv/bin/troubleshooter", "--demo", "case1"])]
    f = discover.training_processes(procs)
    assert [c.args for c in f.contexts] == [("--pid", "1"), ("--pid", "4")]
    assert "no python process" in discover.training_processes([procs[1]]).state


def test_a_context_is_applied_by_the_command_line_parser():
    base = TargetSpec(pid=7, extra={"steps_log": "/tmp/s.log"})
    job = from_args(["--job", "4242", "--node", "gpu017"], base)
    assert (job.job, job.node, job.pid, job.extra) == ("4242", "gpu017", 7, {"steps_log": "/tmp/s.log"})
    ctr = from_args(["--exec", "docker exec trainer"], job)
    assert (ctr.job, ctr.node, ctr.exec_prefix) == (None, None, "docker exec trainer")
    assert from_args(["--pid", "9"], ctr).exec_prefix == "docker exec trainer"
    with pytest.raises(ValueError):
        from_args(["--jobb", "1"], base)
    with pytest.raises(ValueError):
        from_args(["--pid", "notanumber"], base)


def test_discovery_here_never_raises():
    found = discover.everything()
    assert [f.kind for f in found] == ["jobs", "containers", "processes"]
    assert all(f.contexts or f.state for f in found)


def test_a_target_given_mid_walk_is_journaled_and_resumed(tmp_path, monkeypatch):
    """The job's context chosen when a step asked for it is where a resumed session runs too; a need the person
    went on without is not asked again on resume."""
    from troubleshooter.service.guide import Guide
    from troubleshooter.session import Session

    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(tmp_path / "data"))
    g = Guide.for_target(TargetSpec())
    g.ask_needs = True
    g.begin("host-ok-container-slow", session_dir=tmp_path)
    g.run_to_question()
    need = g.need()
    assert need is not None and need.kind == "job-context" and "--exec" in need.rerun
    assert g.walk.steps == [] or all(s.node != "compare" for s in g.walk.steps)
    g.provide(from_args(["--exec", "env"], g.spec))
    g.run_to_question()
    assert g.target.kind == "exec" and any(s.node == "compare" for s in g.walk.steps)
    r = Guide.resume(Session.open(g.session.id, tmp_path))
    assert r.target.kind == "exec" and r.spec.exec_prefix == "env"

    g2 = Guide.for_target(TargetSpec())
    g2.ask_needs = True
    g2.begin("bimodal-step-time", session_dir=tmp_path)
    g2.run_to_question()
    assert g2.need().kind == "steps-log"
    g2.waive("steps-log")
    g2.run_to_question()
    steps = next(s for s in g2.walk.steps if s.node == "steps")
    assert "no step-time log" in steps.because
    from troubleshooter.output import export

    md = export.to_markdown(g2.doc())
    assert "- **Not given:** a training log with step times (rerun: `troubleshooter --steps-log FILE`)" in md
    assert g2.doc()["not_given"] == [{"need": "steps-log", "what": "a training log with step times",
                                      "rerun": ["troubleshooter --steps-log FILE"]}]
    r2 = Guide.resume(Session.open(g2.session.id, tmp_path), ask_needs=True)
    assert "steps-log" in r2.walk.waived and r2.need() is None
