"""Hostile inputs and faults (issue 7): XML and YAML bombs, shell metacharacters in fix templates, bundle
archives with escaping members, a hanging probe, a flooding probe, a vanishing target, a full disk, kill -9."""

from __future__ import annotations

import io
import json
import os
import random
import shlex
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from troubleshooter import parsers, yamlio
from troubleshooter.model.evidence import Status
from troubleshooter.parsers import ParseError
from troubleshooter.probe.runner import run_command

BOMB = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>
<system version="1"><cpu numaid="0" affinity="ff" arch="x86_64">&lol9;</cpu></system>"""
XXE = """<?xml version="1.0"?>
<!DOCTYPE system [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<system version="1"><cpu numaid="0" affinity="ff" arch="x86_64" vendor="&xxe;"/></system>"""


@pytest.mark.parametrize("kind", ["nccl-topo", "topo-file-probe"])
@pytest.mark.parametrize("doc", [BOMB, XXE], ids=["billion-laughs", "external-entity"])
def test_xml_bombs_refused(kind: str, doc: str) -> None:
    if kind not in parsers.kinds():
        pytest.skip(f"no {kind} parser")
    t0 = time.monotonic()
    try:
        out = parsers.get(kind).func(doc)
    except ParseError:
        out = {}
    assert time.monotonic() - t0 < 2
    assert "root:" not in json.dumps(out, default=str)  # /etc/passwd never read into facts
    assert "lollol" not in json.dumps(out, default=str)


YAML_HOSTILE = {
    "anchor-bomb": "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
    "python-tag": "x: !!python/object/apply:os.system ['touch {marker}']\n",
    "custom-tag": "x: !include /etc/passwd\n",
}


@pytest.mark.parametrize("case", sorted(YAML_HOSTILE))
def test_yaml_bombs_and_tags_refused_with_file_and_line(case: str, tmp_path: Path, monkeypatch) -> None:
    marker = tmp_path / "executed"
    text = YAML_HOSTILE[case].format(marker=marker)
    # a tree, a profile and the settings file all load through yamlio
    tree = tmp_path / "trees" / "bad.yaml"
    tree.parent.mkdir()
    tree.write_text("id: bad\n" + text)
    with pytest.raises(yamlio.YamlError) as exc:
        yamlio.load(tree)
    assert str(tree) in str(exc.value) and exc.value.line
    from troubleshooter.diagnosis import engine
    from troubleshooter import settings

    with pytest.raises(engine.TreeError) as texc:
        engine.load_trees(tree.parent)
    assert "bad.yaml:" in str(texc.value)
    cfg = tmp_path / "settings.yaml"
    cfg.write_text(text)
    try:
        s = settings.load(cfg)
    except Exception as e:  # noqa: BLE001 - either a clear error ...
        assert "settings.yaml" in str(e)
    else:  # ... or a warning naming the file, and defaults
        assert any("settings.yaml" in w for w in s.warnings)
    assert not marker.exists()


HOSTILE_VALUES = ["/data/my dir/topo.xml", "x; rm -rf /", "$(touch /tmp/pwned)", "`id`", "a'b\"c", "a\nb", "*", "&& reboot", "|cat", "-rf"]


@pytest.mark.parametrize("value", HOSTILE_VALUES)
def test_fix_template_values_stay_one_token(value: str) -> None:
    from troubleshooter.diagnosis.engine import fill

    cmd, missing = fill("export NCCL_TOPO_FILE={nccl.topo_file_used} && ls -l {nccl.topo_file_used}",
                        lambda name, side: value)
    assert not missing
    tokens = shlex.split(cmd)
    assert tokens == ["export", f"NCCL_TOPO_FILE={value}", "&&", "ls", "-l", value]
    assert subprocess.run(["sh", "-n", "-c", cmd]).returncode == 0


def _tar(path: Path, members: list[tarfile.TarInfo], data: bytes = b"x") -> None:
    with tarfile.open(path, "w:gz") as tar:
        for m in members:
            tar.addfile(m, io.BytesIO(data) if m.isfile() else None)


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    m = tarfile.TarInfo(name)
    m.type = kind
    m.size = 1 if kind == tarfile.REGTYPE else 0
    m.linkname = link
    return m


@pytest.mark.parametrize("bad", [
    _member("../evil"), _member("b/../../evil"), _member("/tmp/evil-abs"),
    _member("b/link", tarfile.SYMTYPE, "/etc/passwd"), _member("b/hard", tarfile.LNKTYPE, "/etc/passwd"),
    _member("b/dev", tarfile.CHRTYPE), _member("b/fifo", tarfile.FIFOTYPE),
], ids=["dotdot", "nested-dotdot", "absolute", "symlink", "hardlink", "device", "fifo"])
def test_bundle_archive_escapes_refused(bad: tarfile.TarInfo, tmp_path: Path) -> None:
    from troubleshooter.probe.bundle import Bundle, BundleError

    arc = tmp_path / "evil.tar.gz"
    _tar(arc, [_member("b/manifest.json"), bad])
    before = set(tmp_path.parent.iterdir())
    with pytest.raises(BundleError, match="refused"):
        Bundle.open(arc)
    assert set(tmp_path.parent.iterdir()) == before
    assert not Path("/tmp/evil-abs").exists()


# ---------------------------------------------------------------- faults
def test_hanging_probe_killed_at_timeout() -> None:
    t0 = time.monotonic()
    ev = run_command(["sh", "-c", "sleep 600 & sleep 600"], timeout=0.5)
    assert ev.status == Status.TIMED_OUT and ev.rc == 124
    assert time.monotonic() - t0 < 6


def test_flooding_probe_capped() -> None:
    ev = run_command(["sh", "-c", "yes flood | head -c 50000000"], timeout=30, max_bytes=1 << 20)
    assert ev.truncated and ev.stdout_bytes == 50_000_000
    assert len(ev.stdout) < (1 << 20) + 200 and b"truncated" in ev.stdout


def test_target_disappears_mid_run() -> None:
    """An exec wrapper that dies under the probe (container stopped, job cancelled): an error, no hang."""
    from troubleshooter import sources
    from troubleshooter.probe.targets import ExecTarget

    src = sources.load_all()["lscpu"] if "lscpu" in sources.load_all() else next(iter(sources.load_all().values()))
    target = ExecTarget(["sh", "-c", "kill -9 $$", "wrapper"])
    t0 = time.monotonic()
    ev = target.run(src, sources.Params())
    assert not ev.ok and ev.reason
    assert time.monotonic() - t0 < 15


def test_full_disk_journal_keeps_complete_lines(tmp_path: Path, monkeypatch) -> None:
    from troubleshooter.session import Session

    s = Session.create({"symptom": "slow"}, tmp_path)
    assert s.append({"event": "step", "n": 1})
    real = os.write

    def enospc(fd, data):  # half the line reaches the disk, then ENOSPC
        real(fd, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", enospc)
    assert s.append({"event": "step", "n": 2}) is False
    assert "No space left" in s.write_error
    monkeypatch.setattr(os, "write", real)
    assert s.append({"event": "step", "n": 3})
    events, lost = s.events()
    assert [e.get("n") for e in events[1:]] == [1, 3] and lost == 1


def test_full_disk_export_clear_error(tmp_path: Path, monkeypatch) -> None:
    from troubleshooter.service.guide import Guide, TargetSpec

    bundle = Path(__file__).parents[1] / "decision_trees" / "practice" / "healthy" / "bundle"
    g = Guide.for_target(TargetSpec(bundle=str(bundle)), None)
    symptom = g.engine.symptoms()[0].id
    g.begin(symptom, session_dir=tmp_path / "sessions")
    out = tmp_path / "out"
    real = os.fsync

    def enospc(fd):  # the data written so far does not fit: the disk is full when it is flushed
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", enospc)
    with pytest.raises(OSError, match="cannot write the export .*No space left"):
        g.export("md", out)
    assert list(out.iterdir()) == []  # no partial file left
    monkeypatch.setattr(os, "fsync", real)
    assert g.export("md", out).read_text()


KILL_SCRIPT = r"""
import os, sys, time
from pathlib import Path
from troubleshooter.session import Session
s = Session.create({"symptom": "slow"}, Path(sys.argv[1]))
print(s.path, flush=True)
i = 0
while True:
    i += 1
    s.append({"event": "step", "n": i, "pad": "x" * (i % 5000)})
"""


def test_kill_9_mid_session_journal_always_parses(tmp_path: Path) -> None:
    from troubleshooter.session import Session

    rnd = random.Random(7)
    for run in range(5):
        d = tmp_path / str(run)
        p = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(d)], stdout=subprocess.PIPE, text=True)
        path = Path(p.stdout.readline().strip())
        time.sleep(rnd.uniform(0.05, 0.4))
        p.send_signal(signal.SIGKILL)
        p.wait()
        events, lost = Session(path).events()
        assert lost <= 1 and events[0]["event"] == "start"
        ns = [e["n"] for e in events[1:]]
        assert ns == list(range(1, len(ns) + 1))  # nothing lost but (at most) the event in flight


# ---------------------------------------------------------------- secrets
SECRETS_DIR = Path(__file__).parent / "data" / "secrets"
SECRETS = [s for s in (SECRETS_DIR / "SECRETS").read_text().splitlines() if s]


def test_redaction_corpus_never_survives() -> None:
    from troubleshooter.output.redact import Redactor

    red = Redactor()
    for f in ("env.txt", "argv.txt"):
        text = (SECRETS_DIR / f).read_text()
        out = red.text(text)
        leaked = [s for s in SECRETS if s in out]
        assert not leaked, f"{f}: {leaked}"
        assert "mlx5_0,mlx5_1" in red.text((SECRETS_DIR / "env.txt").read_text())  # non-secrets kept
    assert Redactor(enabled=False).text("HF_TOKEN=" + SECRETS[0]).endswith(SECRETS[0])


@pytest.mark.parametrize("fmt", ["--md", "--json"])
def test_diagnose_export_redacts_unless_asked(fmt: str, tmp_path: Path) -> None:
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path))
    argv = [sys.executable, "-m", "troubleshooter", "diagnose", "--evidence", f"env={SECRETS_DIR / 'env.txt'}", fmt]
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode in (0, 1), out.stderr
    text = out.stdout + out.stderr
    assert not [s for s in SECRETS if s in text]
    raw = subprocess.run(argv + ["--no-redact"], capture_output=True, text=True, env=env, timeout=60)
    assert raw.returncode in (0, 1), raw.stderr
