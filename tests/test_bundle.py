"""Bundles: a capture replays byte for byte, and a crafted or damaged bundle is refused with a message
that names the file (never extracted, never an exception other than BundleError)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from troubleshooter.probe import bundle as bmod
from troubleshooter.probe.bundle import Bundle, BundleError
from troubleshooter.model.evidence import Evidence, Status


def _evidence() -> list[Evidence]:
    return [
        Evidence("cmdline", Status.OK, stdout=b"BOOT_IMAGE=/vmlinuz ro\n", rc=0, duration_s=0.01,
                 argv=["cat", "/proc/cmdline"], stdout_bytes=23, target="local (n1)"),
        Evidence("lscpu", Status.OK, stdout=bytes(range(256)) * 3 + b"\xff\xfe not utf-8", stderr=b"warn\x80\n",
                 rc=0, stdout_bytes=781),
        Evidence("nvidia-smi", Status.NOT_INSTALLED, stderr=b"sh: nvidia-smi: not found\n", rc=127,
                 reason="nvidia-smi is not installed"),
        Evidence("turbostat", Status.PERMISSION_DENIED, rc=1,
                 stderr=b"turbostat: Failed to set rlimit: Operation not permitted\n", reason="needs root"),
        Evidence("perf-sample", Status.TIMED_OUT, rc=124, stdout=b"partial", reason="killed after 5s timeout"),
        Evidence("dmesg", Status.OK, stdout=b"x" * 1000 + b"\n[troubleshooter: output truncated]\n", rc=0,
                 truncated=True, stdout_bytes=10_000_000),
        Evidence("empty", Status.OK, rc=0),
    ]


@pytest.mark.parametrize("name", ["b.bundle", "b.bundle.tar.gz"])
def test_round_trip_preserves_everything(tmp_path: Path, name: str) -> None:
    evs = _evidence()
    manifest, files = bmod.build_manifest({"target": ({"kind": "local", "label": "local (n1)"}, evs)},
                                          params={"pid": 42}, note="round trip")
    path = bmod.write(tmp_path / name, manifest, files)
    b = Bundle.open(path)
    assert b.target_info() == {"kind": "local", "label": "local (n1)"}
    assert b.params == {"pid": 42} and b.manifest["note"] == "round trip"
    assert b.source_ids() == sorted(e.source_id for e in evs)
    for e in evs:
        r = b.evidence(e.source_id)
        assert r is not None
        assert (r.stdout, r.stderr) == (e.stdout, e.stderr), e.source_id
        assert (r.status, r.rc, r.reason, r.truncated, r.stdout_bytes) == \
            (e.status, e.rc, e.reason, e.truncated, e.stdout_bytes), e.source_id
        assert r.argv == e.argv
    assert b.evidence("not-there") is None


def test_tar_with_top_directory_and_directory_bundle_agree(tmp_path: Path) -> None:
    manifest, files = bmod.build_manifest({"target": ({"kind": "local"}, _evidence())})
    a = Bundle.open(bmod.write(tmp_path / "a.tar.gz", manifest, files))
    d = Bundle.open(bmod.write(tmp_path / "d", manifest, files))
    for sid in a.source_ids():
        assert a.evidence(sid) == d.evidence(sid)
    with pytest.raises(BundleError, match="not empty"):
        bmod.write(tmp_path / "d", manifest, files)


def _good_manifest() -> bytes:
    manifest, _ = bmod.build_manifest({"target": ({"kind": "local"}, [Evidence("cmdline", Status.OK, rc=0)])})
    return json.dumps(manifest).encode()


def _tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tar.addfile(m)
            else:
                info = tarfile.TarInfo(m[0])
                info.size = len(m[1])
                tar.addfile(info, io.BytesIO(m[1]))
    return path


def _link(name: str, kind: bytes, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


@pytest.mark.parametrize(
    "member, why",
    [
        (("b/../evil.txt", b"x"), "'..'"),
        (("../evil.txt", b"x"), "'..'"),
        (("/tmp/evil.txt", b"x"), "absolute"),
        (_link("b/evidence/target/cmdline.out", tarfile.SYMTYPE, "/etc/shadow"), "links"),
        (_link("b/evidence/target/cmdline.err", tarfile.LNKTYPE, "b/manifest.json"), "links"),
    ],
    ids=["dotdot-inside", "dotdot-top", "absolute", "symlink", "hardlink"],
)
def test_crafted_tar_is_refused(tmp_path: Path, member, why: str) -> None:
    path = _tar(tmp_path / "crafted.tar.gz", [("b/manifest.json", _good_manifest()), member])
    with pytest.raises(BundleError) as exc:
        Bundle.open(path)
    msg = str(exc.value)
    assert str(path) in msg and why in msg
    name = member.name if isinstance(member, tarfile.TarInfo) else member[0]
    assert name.lstrip("/") in msg
    assert not (tmp_path / "evil.txt").exists() and not Path("/tmp/evil.txt").exists()


def test_symlink_in_directory_bundle_is_refused(tmp_path: Path) -> None:
    manifest, files = bmod.build_manifest({"target": ({"kind": "local"}, _evidence())})
    d = bmod.write(tmp_path / "d", manifest, files)
    (d / "evidence" / "target" / "extra.out").symlink_to("/etc/passwd")
    with pytest.raises(BundleError, match=r"links are not allowed") as exc:
        Bundle.open(d)
    assert str(d) in str(exc.value) and "extra.out" in str(exc.value)


def test_newer_version_is_refused(tmp_path: Path) -> None:
    m = json.loads(_good_manifest())
    m["version"] = bmod.VERSION + 1
    path = _tar(tmp_path / "new.tar.gz", [("b/manifest.json", json.dumps(m).encode())])
    with pytest.raises(BundleError) as exc:
        Bundle.open(path)
    assert str(path) in str(exc.value) and "newer" in str(exc.value) and "upgrade" in str(exc.value)


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe\x00garbage", b"[1, 2]", b'{"format": "other"}'])
def test_garbage_manifest_is_refused(tmp_path: Path, content: bytes) -> None:
    path = _tar(tmp_path / "garbage.tar.gz", [("b/manifest.json", content)])
    with pytest.raises(BundleError) as exc:
        Bundle.open(path)
    assert f"{path}/manifest.json" in str(exc.value)


def test_bad_evidence_record_is_refused(tmp_path: Path) -> None:
    m = json.loads(_good_manifest())
    m["evidence"][0]["status"] = "exploded"
    path = _tar(tmp_path / "rec.tar.gz", [("b/manifest.json", json.dumps(m).encode())])
    with pytest.raises(BundleError, match=r"evidence\[0\] \(cmdline\)") as exc:
        Bundle.open(path)
    assert str(path) in str(exc.value)


def test_missing_manifest_is_refused(tmp_path: Path) -> None:
    path = _tar(tmp_path / "nomanifest.tar.gz", [("b/evidence/target/cmdline.out", b"x")])
    with pytest.raises(BundleError) as exc:
        Bundle.open(path)
    assert str(path) in str(exc.value) and "manifest.json" in str(exc.value)
    empty_dir = tmp_path / "emptydir"
    empty_dir.mkdir()
    with pytest.raises(BundleError, match="manifest.json") as exc:
        Bundle.open(empty_dir)
    assert str(empty_dir) in str(exc.value)


def test_not_a_bundle_at_all(tmp_path: Path) -> None:
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"\x1f\x8b this is not gzip")
    with pytest.raises(BundleError) as exc:
        Bundle.open(junk)
    assert str(junk) in str(exc.value)
    with pytest.raises(BundleError, match="no such bundle"):
        Bundle.open(tmp_path / "missing.tar.gz")
