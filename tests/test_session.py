"""The session journal and the guided session over it: append-only JSON lines that survive a torn write, a
full or unwritable disk, and a process killed mid-walk (a real SIGKILL); listing, opening by id, part or
'latest'; the Guide's walk, back, exports, verify on a replayed bundle, and resume."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from troubleshooter import session as smod
from troubleshooter.probe.bundle import Bundle
from troubleshooter.service.guide import Guide, TargetSpec
from troubleshooter.session import Session, SessionError, list_sessions

ROOT = Path(__file__).resolve().parents[1]
CASE4 = ROOT / "decision_trees" / "practice" / "case4" / "bundle"


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(d))
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG", str(tmp_path / "no-config.yaml"))
    return d


@pytest.fixture
def ids(monkeypatch: pytest.MonkeyPatch):
    """Deterministic, increasing session ids."""
    seq = iter(f"20260101-0000{i:02d}-node17-{i:04x}" for i in range(100))
    monkeypatch.setattr(smod, "new_id", lambda host=None: next(seq))


def _case4() -> Path:
    if not (CASE4 / "manifest.json").exists():
        pytest.skip("practice case4 bundle not built")
    return CASE4


# ---------------------------------------------------------------------------- journal
def test_create_append_events(tmp_path: Path, ids) -> None:
    s = Session.create({"symptom": "below-reference", "target_label": "node17"}, tmp_path / "s")
    assert s.path == tmp_path / "s" / "20260101-000000-node17-0000.jsonl" and s.id == s.path.stem
    assert s.append({"event": "answer", "node": "t.q", "choice": "yes", "answers": [["t.q", "yes"]]})
    assert s.append({"event": "step", "step": {"node": "p", "obj": object()}})  # not JSON-able: default=str
    evs, lost = s.events()
    assert lost == 0 and [e["event"] for e in evs] == ["start", "answer", "step"]
    assert evs[0]["symptom"] == "below-reference" and "tool" in evs[0] and "host" in evs[0]
    assert all(isinstance(e["at"], float) for e in evs)
    assert s.answers() == [("t.q", "yes")]
    assert s.last("step")["step"]["node"] == "p" and s.last("verify") is None
    # one line per event, each a complete JSON object
    lines = s.path.read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line) for line in lines)
    assert oct(s.path.stat().st_mode & 0o777) == "0o600"
    info = s.info()
    assert (info.symptom, info.target, info.status, info.events, info.lost_lines) == ("below-reference", "node17", "open", 3, 0)


def test_torn_last_line_is_skipped_and_counted(tmp_path: Path, ids) -> None:
    s = Session.create({"symptom": "x"}, tmp_path)
    s.append({"event": "answer", "answers": [["t.q", "no"]]})
    whole = json.dumps({"event": "answer", "answers": [["t.q", "yes"]]})
    with open(s.path, "a") as f:
        f.write(whole[: len(whole) // 2])  # the write in flight when the process died
    evs, lost = s.events()
    assert [e["event"] for e in evs] == ["start", "answer"] and lost == 1
    assert s.answers() == [("t.q", "no")]
    assert s.info().lost_lines == 1
    # the journal goes on after the torn line: the next event starts a line of its own, it is not glued to
    # the fragment (a resumed session's first event would be lost otherwise)
    assert s.append({"event": "resume", "answers": [["t.q", "no"]]})
    s.append({"event": "end"})
    evs, lost = s.events()
    assert [e["event"] for e in evs] == ["start", "answer", "resume", "end"] and lost == 1


def test_not_a_session(tmp_path: Path) -> None:
    p = tmp_path / "junk.jsonl"
    p.write_text('{"event": "answer"}\n')
    with pytest.raises(SessionError, match="not a troubleshooter session"):
        Session(p).events()
    p.write_text("")
    with pytest.raises(SessionError, match="no start event"):
        Session(p).events()
    with pytest.raises(SessionError, match="cannot read"):
        Session(tmp_path / "absent.jsonl").events()


def test_list_sessions_newest_first_and_skips_junk(tmp_path: Path, ids) -> None:
    made = [Session.create({"symptom": f"s{i}", "target_label": "n"}, tmp_path) for i in range(3)]
    (tmp_path / "zzzz-not-a-session.jsonl").write_text("garbage\n")
    (tmp_path / "notes.txt").write_text("x")
    made[1].append({"event": "snapshot", "doc": {"conclusions": [{"cause": "numa-remote"}]}})
    made[2].append({"event": "end"})
    infos = list_sessions(tmp_path)
    assert [i.id for i in infos] == [m.id for m in reversed(made)]
    assert [i.status for i in infos] == ["ended", "concluded", "open"]
    assert infos[1].conclusions == ["numa-remote"]
    assert list_sessions(tmp_path / "nope") == []
    json.dumps([i.as_dict() for i in infos])  # the --json listing


def test_open_by_id_part_and_latest(tmp_path: Path, ids) -> None:
    a = Session.create({"symptom": "a"}, tmp_path)
    b = Session.create({"symptom": "b"}, tmp_path)
    assert Session.open(a.id, tmp_path).path == a.path
    assert Session.open("latest", tmp_path).path == b.path
    assert Session.open(None, tmp_path).path == b.path
    assert Session.open("0001", tmp_path).path == b.path  # a unique part
    with pytest.raises(SessionError, match=r"\(2 match\)"):
        Session.open("node17", tmp_path)
    with pytest.raises(SessionError, match="no session 'nope'"):
        Session.open("nope", tmp_path)
    with pytest.raises(SessionError, match="no sessions in"):
        Session.open("latest", tmp_path / "empty")


def test_append_to_an_unwritable_journal_returns_false(tmp_path: Path, ids) -> None:
    s = Session.create({"symptom": "x"}, tmp_path)
    before = s.path.read_bytes()
    # the journal path is a directory: open() fails the way a read-only mount does
    blocked = Session(tmp_path / "blocked.jsonl")
    blocked.path.mkdir()
    assert blocked.append({"event": "answer"}) is False
    assert blocked.write_error.startswith(f"cannot write the session journal {blocked.path}: ")
    assert "directory" in blocked.write_error.lower()
    assert s.path.read_bytes() == before


def test_disk_full_keeps_what_was_written(tmp_path: Path, ids, monkeypatch: pytest.MonkeyPatch) -> None:
    s = Session.create({"symptom": "x"}, tmp_path)
    before = s.path.read_bytes()

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    assert s.append({"event": "answer"}) is False
    assert "No space left on device" in s.write_error and str(s.path) in s.write_error
    monkeypatch.undo()
    assert s.path.read_bytes() == before
    # space again: the next append works and clears the error
    assert s.append({"event": "end"}) is True and s.write_error == ""
    assert [e["event"] for e in s.events()[0]] == ["start", "end"]


def test_create_where_the_directory_cannot_be_made(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(SessionError, match="cannot create the sessions directory"):
        Session.create({"symptom": "x"}, tmp_path / "file" / "sessions")


# ---------------------------------------------------------------------------- the guided session
def _guide() -> Guide:
    return Guide.for_target(TargetSpec(bundle=str(_case4())), "b200")


def test_guide_walk_answer_back_and_journal(tmp_path: Path, data_dir: Path) -> None:
    g = _guide()
    g.begin("below-reference")
    assert g.session is not None and g.session.path.parent == data_dir / "sessions"
    g.run_to_question()
    tree, nid, node = g.current()
    assert (tree.id, nid, node["kind"]) == ("below-reference", "intro", "ask")
    g.answer("yes")
    assert g.answers() == [("below-reference.intro", "yes")]
    steps: list[str] = []
    g.run_to_question(on_step=lambda s: steps.append(s.node))
    assert g.done and steps
    assert [c.cause for c in g.walk.conclusions] == ["topo-not-in-container"]
    evs, _ = g.session.events()
    kinds = [e["event"] for e in evs]
    assert kinds[:3] == ["start", "answer", "step"] and kinds[-1] == "end" and "snapshot" in kinds
    assert evs[0]["target"]["bundle"] == str(CASE4) and evs[0]["profile"] == "b200"
    assert g.session.info().status == "ended" and g.session.info().conclusions == ["topo-not-in-container"]
    # back to the question: conclusions undone, journaled with the answers left
    assert g.back() is True
    assert g.current()[1] == "intro" and g.walk.conclusions == [] and g.answers() == []
    assert g.session.last("back")["answers"] == [] and g.session.answers() == []
    g.answer("no")
    g.run_to_question()
    assert g.done and g.session.answers() == [("below-reference.intro", "no")]


def test_guide_doc_exports_and_verify(tmp_path: Path) -> None:
    g = _guide()
    g.begin("host-ok-container-slow")
    g.run_to_question()
    assert g.done
    doc = g.doc()
    assert doc["session"] == g.session.id and doc["symptom"]["id"] == "host-ok-container-slow"
    assert [c["cause"] for c in doc["conclusions"]] == ["topo-not-in-container"]
    assert set(doc["evidence"]) == {"target", "host"}
    concl = g.walk.conclusions[0]
    v = g.verify(concl)
    # a bundle replays the same capture: the fix cannot have happened, and the result says it is a replay
    assert v.replay is True and v.passed is False
    assert v.before == v.after == {"nccl.topo_file.visible": "no"}
    assert g.session.last("verify")["passed"] is False
    out = tmp_path / "exports"
    md = g.export("md", out)
    js = g.export("json", out)
    bd = g.export("bundle", out)
    assert md.name == f"{g.session.id}-host-ok-container-slow.md"
    text = md.read_text()
    assert "topo-not-in-container" in text or "topology file" in text.lower()
    data = json.loads(js.read_text())
    assert data["verifications"][0]["passed"] is False and data["session"] == g.session.id
    b = Bundle.open(bd)
    assert b.sides == ["host", "target"] and "env-self" in b.source_ids("host")
    assert f"session {g.session.id}" == b.manifest["note"]
    assert not list(out.glob("*.partial"))
    exports = [e for e in g.session.events()[0] if e["event"] == "export"]
    assert [e["format"] for e in exports] == ["md", "json", "bundle"]
    with pytest.raises(ValueError, match="unknown export format"):
        g.export("pdf", out)


def test_guide_without_session_does_not_journal(tmp_path: Path, data_dir: Path) -> None:
    g = _guide()
    g.begin("host-ok-container-slow", record=False)
    g.run_to_question()
    assert g.done and g.session is None and not (data_dir / "sessions").exists()
    assert "session" not in g.doc()


def test_guide_resume_replays_answers(tmp_path: Path) -> None:
    g = _guide()
    g.begin("below-reference")
    g.run_to_question()
    g.answer("yes")
    g.advance()  # one step further, then the user's SSH connection drops
    s = Session.open("latest")
    assert s.path == g.session.path
    r = Guide.resume(s)
    assert r.answers() == [("below-reference.intro", "yes")]
    assert r.done and [c.cause for c in r.walk.conclusions] == ["topo-not-in-container"]
    assert r.session is s and s.last("resume")["answers"] == [["below-reference.intro", "yes"]]


KILL_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from troubleshooter.service.guide import Guide, TargetSpec

    g = Guide.for_target(TargetSpec(bundle=sys.argv[1]), "b200")
    g.begin("below-reference")
    g.run_to_question()
    g.answer("yes")
    for _ in range(3):
        g.advance()
    print(g.session.id, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    print("not reached", flush=True)
""")


def test_killed_mid_walk_journal_is_readable_and_exports(tmp_path: Path, data_dir: Path) -> None:
    bundle = _case4()
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-c", KILL_SCRIPT, str(bundle)], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == -signal.SIGKILL, r.stderr
    sid = r.stdout.split()[0]
    assert "not reached" not in r.stdout
    s = Session.open("latest", data_dir / "sessions")
    assert s.id == sid
    evs, lost = s.events()
    assert lost == 0
    assert [e["event"] for e in evs][:2] == ["start", "answer"] and "end" not in [e["event"] for e in evs]
    assert s.answers() == [("below-reference.intro", "yes")] and s.info().status == "open"
    # the in-flight write of a killed process: a torn last line
    with open(s.path, "ab") as f:
        f.write(b'{"event": "step", "step": {"tree": "below-re')

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "troubleshooter", *args], capture_output=True, text=True, env=env,
                              stdin=subprocess.DEVNULL, timeout=120)

    md = cli("export", sid)
    assert md.returncode == 0, md.stderr
    assert "Traceback" not in md.stderr and md.stdout.strip()
    js = cli("export", sid[-4:], "--format", "json")  # a unique part
    assert js.returncode == 0, js.stderr
    doc = json.loads(js.stdout)
    assert doc["session"] == sid and doc["journal_lost_lines"] == 1
    assert doc["symptom"]["id"] == "below-reference" and doc["path"]
    assert Session.open(sid).append({"event": "copy", "command": "true"})
    assert Session.open(sid).last("copy")["command"] == "true"  # not glued to the torn line
    listing = cli("sessions", "--json")
    assert listing.returncode == 0 and json.loads(listing.stdout)[0]["id"] == sid
    # and the walk resumes where it was
    g = Guide.resume(Session.open(sid))
    assert g.done and [c.cause for c in g.walk.conclusions] == ["topo-not-in-container"]


def test_a_replayed_bundle_names_the_session_and_its_exports_after_the_bundles_host(tmp_path):
    """Issue 13: a ticket made on a laptop from node17's bundle is named after node17, not the laptop."""
    import json
    import shutil

    from troubleshooter.service.guide import Guide, TargetSpec
    from troubleshooter.service.practice import practice_bundle_path, practice_case

    b = tmp_path / "node17.bundle"
    shutil.copytree(practice_bundle_path(practice_case("case4")), b)
    m = json.loads((b / "manifest.json").read_text())
    m["host"] = "gpu017.cluster.example"
    (b / "manifest.json").write_text(json.dumps(m))
    g = Guide.for_target(TargetSpec(bundle=str(b)))
    g.begin("host-ok-container-slow", session_dir=tmp_path / "sessions")
    assert "-gpu017-" in g.session.id
