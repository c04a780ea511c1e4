"""Files that hold raw environments (issue 12, item 4): bundles, exports, JUnit reports and journals are
0600 in 0700 directories; a link planted at the path (or at a predictable temporary path) is never
followed; a failure (a full disk) leaves neither a temporary file nor an emptied old file; a read-only HOME
gives a clear message naming the directory instead of blocking the app."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from troubleshooter import locations
from troubleshooter.probe import bundle as bmod
from tests.clihelp import main

ROOT = Path(__file__).resolve().parents[1]
HEALTHY = ROOT / "decision_trees" / "practice" / "healthy" / "bundle"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(d))
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG", str(tmp_path / "no-config.yaml"))
    monkeypatch.chdir(tmp_path)
    return d




def mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


def leftovers(d: Path) -> list[str]:
    return sorted(n for n in os.listdir(d) if n.endswith((".tmp", ".partial")))


def _session(tmp_path: Path):
    from troubleshooter.service.guide import Guide, TargetSpec

    g = Guide.for_target(TargetSpec(bundle=str(HEALTHY)), None)
    g.begin(g.engine.symptoms()[0].id)
    return g


# ------------------------------------------------------------------ modes
def test_capture_bundle_is_private(tmp_path: Path, capsys) -> None:
    out = tmp_path / "new" / "dir" / "node.bundle.tar.gz"
    rc, stdout, err = main(capsys, "capture", "-o", str(out))
    assert rc == 0, err
    assert mode(out) == 0o600
    assert mode(out.parent) == 0o700 and mode(out.parent.parent) == 0o700
    assert leftovers(out.parent) == []
    import tarfile

    with tarfile.open(out) as tar:
        assert {m.mode for m in tar.getmembers()} == {0o600}


def test_directory_bundle_is_private(tmp_path: Path) -> None:
    manifest, files = bmod.build_manifest({"target": ({"kind": "local"}, [])})
    d = bmod.write(tmp_path / "node.bundle", manifest, {"evidence/target/x.out": b"HF_TOKEN=x"})
    assert mode(d) == 0o700 and mode(d / "evidence") == 0o700 and mode(d / "evidence" / "target") == 0o700
    assert mode(d / "manifest.json") == 0o600 and mode(d / "evidence" / "target" / "x.out") == 0o600
    assert bmod.Bundle.open(d).manifest["format"] == bmod.FORMAT


def test_exports_sessions_and_junit_are_private(tmp_path: Path, capsys, isolated: Path) -> None:
    g = _session(tmp_path)
    assert mode(g.session.path) == 0o600 and mode(g.session.path.parent) == 0o700
    for fmt in ("md", "json", "bundle"):
        p = g.export(fmt, tmp_path / "exports")
        assert mode(p) == 0o600, fmt
    assert mode(tmp_path / "exports") == 0o700
    ticket = tmp_path / "ticket.md"
    rc, _, err = main(capsys, "export", g.session.id, "-o", str(ticket))
    assert rc == 0, err
    assert mode(ticket) == 0o600
    junit = tmp_path / "report.xml"
    rc, _, err = main(capsys, "check", "--bundle", str(HEALTHY), "--junit", str(junit))
    assert rc in (0, 1), err
    assert mode(junit) == 0o600 and junit.read_bytes().startswith(b"<?xml")
    assert leftovers(tmp_path) == []


# ------------------------------------------------------------------ links planted at the path
@pytest.mark.parametrize("verb", ["capture", "export", "junit"])
def test_a_link_at_the_path_is_replaced_not_followed(tmp_path: Path, capsys, verb: str) -> None:
    victim = tmp_path / "victim"
    victim.write_text("root's 0600 file")
    victim.chmod(0o600)
    names = {"capture": "x.bundle.tar.gz", "export": "ticket.md", "junit": "report.xml"}
    target = tmp_path / names[verb]
    target.symlink_to(victim)
    # the old predictable temporary path, too
    (tmp_path / (target.name + ".partial")).symlink_to(victim)
    if verb == "capture":
        rc, _, err = main(capsys, "capture", "-o", str(target))
    elif verb == "export":
        g = _session(tmp_path)
        rc, _, err = main(capsys, "export", g.session.id, "-o", str(target))
    else:
        rc, _, err = main(capsys, "check", "--bundle", str(HEALTHY), "--junit", str(target))
    assert rc in (0, 1), err
    assert victim.read_text() == "root's 0600 file"
    assert not target.is_symlink() and target.stat().st_size > 0 and mode(target) == 0o600


def test_private_file_never_opens_through_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The temporary file is created O_EXCL|O_NOFOLLOW: a link raced in at its name makes it fail, never
    write through."""
    victim = tmp_path / "victim"
    victim.write_text("keep")
    import secrets  # locations imports it where it writes (start-up)

    monkeypatch.setattr(secrets, "token_hex", lambda n: "fixed")
    (tmp_path / ".out.txt.fixed.tmp").symlink_to(victim)
    with pytest.raises(OSError, match="cannot write .*out.txt"):
        locations.write_private(tmp_path / "out.txt", b"new")
    assert victim.read_text() == "keep" and not (tmp_path / "out.txt").exists()


# ------------------------------------------------------------------ a full disk
def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    def enospc(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", enospc)


def test_full_disk_keeps_an_existing_ticket(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    g = _session(tmp_path)
    ticket = tmp_path / "ticket.md"
    ticket.write_text("the ticket as sent yesterday\n")
    _full_disk(monkeypatch)
    rc, _, err = main(capsys, "export", g.session.id, "-o", str(ticket))
    assert rc == 2 and f"cannot write {ticket}: No space left on device" in err, err
    assert ticket.read_text() == "the ticket as sent yesterday\n"
    assert leftovers(tmp_path) == []


def test_full_disk_capture_leaves_nothing(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    _full_disk(monkeypatch)
    out = tmp_path / "x.bundle.tar.gz"
    rc, _, err = main(capsys, "capture", "-o", str(out))
    assert rc != 0 and "No space left on device" in err, err
    assert "Traceback" not in err
    assert not out.exists() and leftovers(tmp_path) == []


def test_full_disk_junit_leaves_nothing(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    _full_disk(monkeypatch)
    out = tmp_path / "report.xml"
    rc, _, err = main(capsys, "check", "--bundle", str(HEALTHY), "--junit", str(out))
    assert rc == 2 and "No space left on device" in err, err
    assert not out.exists() and leftovers(tmp_path) == []


# ------------------------------------------------------------------ a read-only HOME
def _read_only(monkeypatch: pytest.MonkeyPatch, under: Path) -> None:
    real = os.mkdir

    def mkdir(path, *args, **kwargs):
        if str(path).startswith(str(under)):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)


def test_read_only_home_walks_unrecorded_and_says_where(tmp_path: Path, isolated: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from troubleshooter.service.guide import Guide, TargetSpec

    _read_only(monkeypatch, isolated)
    g = Guide.for_target(TargetSpec(bundle=str(HEALTHY)), None)
    g.begin(g.engine.symptoms()[0].id)
    assert g.session is None and g.walk is not None
    assert str(isolated / "sessions") in g.record_problem
    assert "Read-only file system" in g.record_problem and "TROUBLESHOOTER_DATA_DIR" in g.record_problem


@pytest.mark.parametrize("verb", ["capture", "junit", "export"])
def test_an_unwritable_path_is_one_clear_line(tmp_path: Path, capsys, verb: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    target = blocker / "sub" / ("x.bundle.tar.gz" if verb == "capture" else "out.txt")
    if verb == "capture":
        rc, _, err = main(capsys, "capture", "-o", str(target))
    elif verb == "junit":
        rc, _, err = main(capsys, "check", "--bundle", str(HEALTHY), "--junit", str(target))
    else:
        g = _session(tmp_path)
        rc, _, err = main(capsys, "export", g.session.id, "-o", str(target))
    assert rc == 2
    assert err.strip() == f"troubleshooter: cannot create the directory {blocker / 'sub'}: Not a directory", err
