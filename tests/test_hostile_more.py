"""More hostile inputs and faults (the gaps left by tests/test_hostile.py):

- a YAML anchor bomb, a Python tag and a custom tag in a user *profile*: a clear error naming the file and
  line, nothing executed, and `troubleshooter check --profile` exits 2 with one line;
- a probe that hangs inside a *walk*: the walk takes the probe's ``unknown`` branch, the step shows the
  timed-out status, and the walk reaches its end;
- the secrets corpus through the real export paths (Guide.export md/json/bundle, `troubleshooter export`),
  with a positive control for each so the tests can fail.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREES = ROOT / "decision_trees"
HEALTHY = TREES / "practice" / "healthy" / "bundle"
SECRETS_DIR = Path(__file__).parent / "data" / "secrets"
SECRETS = [s for s in (SECRETS_DIR / "SECRETS").read_text().splitlines() if s]
ARGV_LINES = [line for line in (SECRETS_DIR / "argv.txt").read_text().splitlines() if line]
ENV_LINES = [line for line in (SECRETS_DIR / "env.txt").read_text().splitlines() if line]
# a value with a space, unquoted as it is in /proc/PID/environ: the part after the space must go too
FRAGMENTS = ["p@ss"]


def leaks(text: str) -> list[str]:
    return [s for s in SECRETS + FRAGMENTS if s in text]


# ====================================================================== 1. hostile YAML in a profile
PROFILE_HOSTILE = {
    "anchor-bomb": ("id: bad\ntitle: bomb\nthresholds: {}\n"
                    "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n", 4),
    "python-tag": ("id: bad\ntitle: tag\nthresholds: {}\nmatch: !!python/object/apply:os.system ['touch {marker}']\n", 4),
    "custom-tag": ("id: bad\ntitle: include\nthresholds: !include /etc/passwd\n", 3),
}


@pytest.fixture
def bad_profile(request, tmp_path: Path, monkeypatch):
    text, line = PROFILE_HOSTILE[request.param]
    marker = tmp_path / "executed"
    cfg = tmp_path / "config"
    (cfg / "profiles").mkdir(parents=True)
    path = cfg / "profiles" / "bad.yaml"
    path.write_text(text.replace("{marker}", str(marker)))
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG_DIR", str(cfg))
    monkeypatch.delenv("TROUBLESHOOTER_TREES", raising=False)
    yield path, line, marker
    assert not marker.exists(), "a YAML tag ran a command"


@pytest.mark.parametrize("bad_profile", sorted(PROFILE_HOSTILE), indirect=True)
def test_hostile_profile_refused_with_file_and_line(bad_profile) -> None:
    from troubleshooter.diagnosis import profiles
    from troubleshooter import yamlio

    path, line, _ = bad_profile
    t0 = time.monotonic()
    for call in (profiles.load_all, lambda: profiles.get("bad"), lambda: profiles.guess(["NVIDIA H100"])):
        with pytest.raises(yamlio.YamlError) as exc:
            call()
        assert exc.value.path == str(path) and exc.value.line == line, str(exc.value)
        assert str(exc.value).startswith(f"{path}:{line}: ")
    assert time.monotonic() - t0 < 2  # the bomb is refused, not expanded


@pytest.mark.parametrize("bad_profile", sorted(PROFILE_HOSTILE), indirect=True)
def test_check_with_hostile_profile_exits_2_one_line(bad_profile, tmp_path: Path) -> None:
    import os

    path, line, _ = bad_profile
    env = dict(os.environ, TROUBLESHOOTER_DATA_DIR=str(tmp_path / "data"))
    res = subprocess.run([sys.executable, "-m", "troubleshooter", "check", "--bundle", str(HEALTHY), "--profile", "bad"],
                         capture_output=True, text=True, env=env, timeout=60, cwd=ROOT, stdin=subprocess.DEVNULL)
    assert res.returncode == 2, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"troubleshooter: {path}:{line}: "), lines[0]
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr
    assert res.stdout == ""


# ====================================================================== 2. a probe that hangs in a walk
HANG_TREE = """\
id: hang-walk
version: 1
kind: entry
title: A probe that hangs
start: first
hypotheses:
  - {id: stuck, title: the first probe could not tell}
nodes:
  first:
    kind: probe
    title: Run the probe that hangs
    sources: [ts-test-hang]
    show: [env.var.TS_HANG_PROBE]
    branches:
      - when: {fact: env.var.TS_HANG_PROBE, op: eq, value: "1"}
        next: wrong
    unknown: {next: second, because: the hanging probe gave no answer, rule_in: [stuck]}
    default: {next: wrong}
  second:
    kind: probe
    title: A probe that answers
    sources: [ts-test-fast]
    show: [env.var.TS_FAST_PROBE]
    branches:
      - when: {fact: env.var.TS_FAST_PROBE, op: eq, value: "1"}
        next: done
    default: {next: wrong}
  wrong: {kind: conclude, cause: wrong-branch, title: the walk took a branch it should not}
  done: {kind: end, title: reached the end}
"""


@pytest.fixture
def hang_sources():
    from troubleshooter import sources
    from troubleshooter.sources.base import SOURCES, source

    sources.load_all()
    made = [
        # ignores SIGTERM, so the runner must escalate to SIGKILL
        source(id="ts-test-hang", parser="env", family="test", argv=["sh", "-c", "trap '' TERM; sleep 60; echo late"],
               env=(), timeout_s=0.5, summary="hangs (test)"),
        source(id="ts-test-fast", parser="env", family="test", argv=["sh", "-c", "printf 'TS_FAST_PROBE=1\\000'"],
               env=(), timeout_s=5, summary="answers (test)"),
    ]
    try:
        yield made
    finally:
        for s in made:
            SOURCES.pop(s.id, None)


def test_hanging_probe_in_a_walk_takes_unknown_and_ends(hang_sources, tmp_path: Path, monkeypatch) -> None:
    from troubleshooter.diagnosis import engine, profiles
    from troubleshooter.probe.targets import LocalTarget
    from troubleshooter.diagnosis.workbench import LiveFacts

    trees = tmp_path / "trees"
    trees.mkdir()
    shutil.copytree(TREES / "profiles", trees / "profiles")
    shutil.copy(TREES / "glossary.yaml", trees / "glossary.yaml")
    (trees / "hang-walk.yaml").write_text(HANG_TREE)
    monkeypatch.setenv("TROUBLESHOOTER_TREES", str(trees))

    eng = engine.Engine(profile=profiles.get("generic").thresholds)
    assert list(eng.trees) == ["hang-walk"]
    facts = LiveFacts.for_target(LocalTarget())
    t0 = time.monotonic()
    walk = engine.auto_walk(eng, "hang-walk", facts)
    took = time.monotonic() - t0
    assert walk.done and not walk.conclusions
    assert [(s.node, s.kind) for s in walk.steps] == [("first", "probe"), ("second", "probe"), ("done", "end")]
    first = walk.steps[0]
    assert first.decision == "second" and first.because == "the hanging probe gave no answer"
    assert first.evidence["ts-test-hang"].startswith("timed-out: killed after 0.5s timeout"), first.evidence
    assert "timed-out" in first.facts["env.var.TS_HANG_PROBE"], first.facts  # not "(not set)"
    assert "?" in first.explain  # the leaf was undecided, not false
    assert walk.steps[1].evidence["ts-test-fast"].startswith("ok")
    assert {h.id: h.state for h in walk.hypotheses} == {"stuck": "ruled-in"}
    assert facts.all_evidence()["target"]["ts-test-hang"].rc == 124
    assert took < 8, f"the walk took {took:.1f}s"


# ====================================================================== 3. secrets through the real exports
def _environ() -> bytes:
    """/proc/self/environ as the kernel gives it: NUL-separated, values unquoted."""
    base = (HEALTHY / "evidence" / "target" / "env-self.out").read_bytes().rstrip(b"\0").split(b"\0")
    mine = []
    for line in ENV_LINES:
        name, _, value = line.partition("=")
        mine.append(f"{name}={value.strip(chr(34))}".encode())
    return b"\0".join(base + mine) + b"\0"


HF = ENV_LINES[0].partition("=")[2]
LABEL = f"exec: docker exec -e HF_TOKEN={HF} trainer"  # where the capture ran: its prefix carries a token
FAILED = "nccl-topo-file"  # the source that fails, with secrets in its argv, stderr and reason


@pytest.fixture
def secret_bundle(tmp_path: Path) -> Path:
    dst = tmp_path / "capture" / "bundle"
    shutil.copytree(HEALTHY, dst)
    man = json.loads((dst / "manifest.json").read_text())
    man["targets"]["target"]["label"] = LABEL
    env = _environ()
    (dst / "evidence" / "target" / "env-self.out").write_bytes(env)
    for rec in man["evidence"]:
        rec["target"] = LABEL
        if rec["source"] == "env-self":
            rec["stdout_bytes"] = len(env)
        if rec["source"] == FAILED:
            rec.update(status="error", rc=1, stdout_bytes=0, argv=shlex.split(ARGV_LINES[0]) + ["&&"] + shlex.split(ARGV_LINES[3]),
                       reason="exit 1: " + " | ".join(ARGV_LINES))
            (dst / rec["stdout_file"]).write_bytes(b"")
            (dst / rec["stderr_file"]).write_text("\n".join(ARGV_LINES) + "\n")
    (dst / "manifest.json").write_text(json.dumps(man, indent=2))
    return dst


def _guide(bundle: Path, data: Path, redactor=None):
    from troubleshooter.service.guide import Guide, TargetSpec

    g = Guide.for_target(TargetSpec(bundle=str(bundle)), redactor=redactor)
    g.begin("host-ok-container-slow", session_dir=data / "sessions")
    return g


def _walk_to_end(g) -> None:
    for _ in range(50):
        g.run_to_question()
        cur = g.current()
        if cur is None:
            break
        node = cur[2]
        g.answer(node.get("assume") or node["choices"][0]["id"])
    assert g.done


def _walk_past_failed_probe(g) -> None:
    """Stop right after the probe that ran the failing source: an interrupted session, no snapshot yet."""
    for _ in range(50):
        step = g.advance()
        assert step is not None and not g.done
        if FAILED in step.evidence:
            return
    raise AssertionError("the walk never ran " + FAILED)


def _read_export(path: Path) -> str:
    if path.name.endswith(".tar.gz"):
        parts = []
        with tarfile.open(path) as tar:
            for m in tar:
                assert m.isfile() or m.isdir(), m.name
                if m.isfile():
                    parts.append(m.name + "\n" + tar.extractfile(m).read().decode("utf-8", errors="replace"))
        return "\n".join(parts).replace("\0", "\n")
    return path.read_text()


def _cli_export(session_id: str, *extra: str, capsys) -> str:
    from troubleshooter import cli

    rc = cli.main(["export", session_id, *extra])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out + err


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(d))
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("TROUBLESHOOTER_CONFIG", raising=False)
    monkeypatch.delenv("TROUBLESHOOTER_TREES", raising=False)
    monkeypatch.delenv("TROUBLESHOOTER_REDACT_EXTRA", raising=False)
    return d


def test_secrets_never_leave_through_guide_and_cli_exports(secret_bundle: Path, data_dir: Path, tmp_path: Path, capsys) -> None:
    g = _guide(secret_bundle, data_dir)
    _walk_to_end(g)
    # the walk really read the secrets: the failing source ran on a step, the env facts hold the values
    assert any(FAILED in s.evidence for s in g.walk.steps)
    assert "hunter2secret" in g.facts.all_evidence()["target"][FAILED].reason
    assert g.facts.lookup("env.var.DB_PASSWORD", "target") == "s3cr3t p@ss"
    out = tmp_path / "exports"
    files = [g.export(fmt, out) for fmt in ("md", "json", "bundle")]
    for f in files:
        text = _read_export(f)
        assert not leaks(text), f"{f.name}: {leaks(text)}"
    bundle_text = _read_export(files[2])
    assert "NCCL_IB_HCA=mlx5_0,mlx5_1" in bundle_text  # non-secrets are kept
    assert "DB_PASSWORD=[REDACTED]" in bundle_text and "HF_TOKEN=[REDACTED]" in bundle_text
    doc = json.loads(files[1].read_text())
    assert FAILED in doc["evidence"]["target"] and "[REDACTED]" in doc["evidence"]["target"][FAILED]

    for fmt in ("md", "json"):
        text = _cli_export(g.session.id, "--format", fmt, capsys=capsys)
        assert "Host nccl-tests fine" in text and not leaks(text), leaks(text)
        assert fmt == "md" or json.loads(text)["session"] == g.session.id
    # --no-redact on a finished session: the journal keeps the raw snapshot (on the node, 0600), so the
    # explicit switch gives the raw values back (the control that the redaction above did the work)
    assert leaks(_cli_export(g.session.id, "--format", "json", "--no-redact", capsys=capsys))


def test_no_redact_restores_what_the_journal_holds(secret_bundle: Path, data_dir: Path, capsys) -> None:
    """An interrupted session (no snapshot): the ticket is rebuilt from the journal's steps, whose status
    lines hold the failing source's raw reason. Redacted by default; --no-redact keeps it (the control)."""
    g = _guide(secret_bundle, data_dir)
    _walk_past_failed_probe(g)
    for fmt in ("md", "json"):
        assert not leaks(_cli_export(g.session.id, "--format", fmt, capsys=capsys))
        raw = _cli_export(g.session.id, "--format", fmt, "--no-redact", capsys=capsys)
        carried = [s for s in SECRETS if s in " | ".join(ARGV_LINES)]
        assert [s for s in carried if s in raw] == carried, fmt  # every argv secret of the reason is back


def test_raw_guide_exports_carry_the_secrets(secret_bundle: Path, data_dir: Path, tmp_path: Path, capsys) -> None:
    """Control: with redaction off (Guide(redactor=Redactor(enabled=False))) the same exports do carry the
    values, so the checks above can fail; `troubleshooter export` still redacts such a session by default."""
    from troubleshooter.output.redact import Redactor

    g = _guide(secret_bundle, data_dir, redactor=Redactor(enabled=False))
    _walk_to_end(g)
    out = tmp_path / "raw"
    texts = {fmt: _read_export(g.export(fmt, out)) for fmt in ("md", "json", "bundle")}
    assert "tok_live_ABCDEF123456" in texts["md"]  # the failing source's status line in the evidence table
    assert "glpat-SECRETVALUE42" in texts["json"]
    assert set(SECRETS) <= set(leaks(texts["bundle"]))  # every corpus value is in the raw evidence
    assert not leaks(_cli_export(g.session.id, "--format", "md", capsys=capsys))
    assert "tok_live_ABCDEF123456" in _cli_export(g.session.id, "--format", "md", "--no-redact", capsys=capsys)


def test_environ_values_with_spaces_fully_redacted() -> None:
    from troubleshooter.output.redact import Redactor

    out = Redactor().bytes(_environ()).decode()
    assert not leaks(out), leaks(out)
    assert "DB_PASSWORD=[REDACTED]\0" in out and "NCCL_IB_HCA=mlx5_0,mlx5_1\0" in out
    assert Redactor(enabled=False).bytes(_environ()) == _environ()


def test_argv_secret_option_value_masked_by_position() -> None:
    from troubleshooter.output.redact import MASK, Redactor

    argv = shlex.split(ARGV_LINES[0]) + ["--token", "tok_live_ABCDEF123456", "-H", "Authorization: Bearer " + "x" * 20]
    out = Redactor().argv(argv)
    assert out == ["python", "train.py", "--password", MASK, "--batch", "8", "--token", MASK, "-H",
                   f"Authorization: Bearer {MASK}"]
    assert Redactor(enabled=False).argv(argv) == argv


def test_diagnose_honours_redact_extra(tmp_path: Path) -> None:
    """`diagnose` redacts the user's extra patterns (settings redact_extra) like `export` does."""
    import os

    env_file = tmp_path / "env.txt"
    env_file.write_text("NCCL_IB_HCA=mlx5_zebra4711\n")  # a value the fabric tree shows on its path
    env = dict(os.environ, TROUBLESHOOTER_DATA_DIR=str(tmp_path / "data"), TROUBLESHOOTER_CONFIG_DIR=str(tmp_path / "cfg"),
               TROUBLESHOOTER_REDACT_EXTRA=r"zebra\d+")
    argv = [sys.executable, "-m", "troubleshooter", "diagnose", "--evidence", f"env={env_file}", "--json"]
    res = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, cwd=ROOT, stdin=subprocess.DEVNULL)
    assert res.returncode in (0, 1), res.stderr
    assert "zebra4711" not in res.stdout and "mlx5_[REDACTED]" in res.stdout
    raw = subprocess.run(argv + ["--no-redact"], capture_output=True, text=True, env=env, timeout=60, cwd=ROOT,
                         stdin=subprocess.DEVNULL)
    assert "mlx5_zebra4711" in raw.stdout  # the value is in the document: the check above can fail


def test_slurm_job_end_is_an_error_of_the_target(monkeypatch) -> None:
    """Without Slurm: srun's words for a job that ended make the evidence an error and mark the target gone,
    even for a source that accepts exit 1 (cpuidle's grep)."""
    from troubleshooter import sources
    from troubleshooter.probe import targets
    from troubleshooter.model.evidence import Evidence, Status
    from troubleshooter.probe.runner import classify
    from troubleshooter.sources.base import Params

    cases = {
        "srun: error: Slurm job 42 has expired\n": "srun: error: Slurm job 42 has expired",
        "slurmstepd-vm: error: *** STEP 42.0 ON vm CANCELLED AT 2026-11-29T15:47:19 ***\nsrun: error: vm: task 0: Terminated\n":
            "job 42 ended while this probe ran (slurmstepd-vm: error: *** STEP 42.0 ON vm CANCELLED AT 2026-11-29T15:47:19 ***)",
    }
    for stderr, reason in cases.items():
        rc = 1 if "expired" in stderr else 143

        def fake(argv, **kw):
            return classify(Evidence(kw["source_id"], Status.OK, stderr=stderr.encode(), rc=rc, argv=list(argv)),
                            kw["accept_rc"])

        monkeypatch.setattr(targets, "run_command", fake)
        t = targets.SlurmTarget("42")
        ev = t.run(sources.get("cpuidle"), Params())
        assert ev.status is Status.ERROR and ev.reason == reason, (ev.status, ev.reason)
        assert t.gone.startswith("job 42 ") and t.lost == ["cpuidle"]
    assert targets.SlurmTarget("43").gone == "" and targets.SlurmTarget("43").lost == []  # per target


def test_slurm_step_killed_without_srun_saying_why_asks_slurm_for_the_job(monkeypatch) -> None:
    """A loaded srun killed with its step may print only "task 0: Terminated" (CI saw a check exit 0 after its
    job was cancelled): the job's state from scontrol decides whether the job ended or the probe failed."""
    from troubleshooter import sources
    from troubleshooter.probe import targets
    from troubleshooter.model.evidence import Evidence, Status
    from troubleshooter.probe.runner import classify
    from troubleshooter.sources.base import Params

    step_err = b"srun: error: vm: task 0: Terminated\n"
    answers = {  # scontrol's answer -> the reason, or None where the job runs and the failure is the probe's
        (0, b"JobId=42 JobName=wrap UserId=root(0) JobState=CANCELLED Reason=None Dependency=(null)\n", b""):
            "job 42 ended while this probe ran (JobState=CANCELLED)",
        (1, b"", b"slurm_load_jobs error: Invalid job id specified\n"): "job 42 ended while this probe ran (JobState=GONE)",
        (0, b"JobId=42 JobName=wrap UserId=root(0) JobState=RUNNING Reason=None\n", b""): None,
        (127, b"", b"scontrol: not found\n"): None,
    }
    for (src_rc, out, err), reason in answers.items():
        asked = []

        def fake(argv, **kw):
            if argv[0] == "scontrol":
                asked.append(list(argv))
                return classify(Evidence(kw["source_id"], Status.OK, stdout=out, stderr=err, rc=src_rc,
                                         argv=list(argv)), kw["accept_rc"])
            return classify(Evidence(kw["source_id"], Status.OK, stderr=step_err, rc=143, argv=list(argv)),
                            kw["accept_rc"])

        monkeypatch.setattr(targets, "run_command", fake)
        t = targets.SlurmTarget("42")
        ev = t.run(sources.get("cpuidle"), Params())
        assert asked == [["scontrol", "show", "job", "42", "-o"]]
        assert ev.status is Status.ERROR
        if reason is None:
            assert t.gone == "" and t.lost == [] and "ended while" not in (ev.reason or ""), ev.reason
        else:
            assert ev.reason == reason and t.gone == "job 42 ended during the run" and t.lost == ["cpuidle"]


def test_a_malformed_cause_catalogue_is_a_one_line_error_naming_the_file(tmp_path: Path) -> None:
    import os

    trees = tmp_path / "trees"
    shutil.copytree(ROOT / "decision_trees", trees)
    text = (trees / "causes.yaml").read_text()
    (trees / "causes.yaml").write_text(text.replace("        confidence: confirmed", "        confidence: sure", 1))
    env = dict(os.environ, TROUBLESHOOTER_TREES=str(trees), TROUBLESHOOTER_DATA_DIR=str(tmp_path / "data"))
    res = subprocess.run([sys.executable, "-m", "troubleshooter", "trees", "lint"], capture_output=True, text=True,
                         env=env, timeout=60, cwd=ROOT, stdin=subprocess.DEVNULL)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith(f"troubleshooter: {trees / 'causes.yaml'}: causes[0] (gpu-fallen-off-bus): confidence")
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr
