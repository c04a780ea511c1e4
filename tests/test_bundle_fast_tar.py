"""The fast .tar.gz reader of bundles (bundle._fast_members) reads what tarfile reads, or declines: every archive
below gives the same files, or the same refusal, with it and without it (bundle.FAST_TAR)."""

from __future__ import annotations

import gzip
import io
import random
import tarfile
from pathlib import Path

import pytest

from troubleshooter.probe import bundle as bmod

ROOT = Path(__file__).resolve().parents[1]


def _both(path: Path):
    out = []
    for fast in (False, True):
        old = bmod.FAST_TAR
        bmod.FAST_TAR = fast
        try:
            out.append(("ok", bmod._read_tar(path)))
        except bmod.BundleError as exc:
            out.append(("error", str(exc)))
        finally:
            bmod.FAST_TAR = old
    return out


def _tar(members, fmt=tarfile.USTAR_FORMAT) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
        for name, kind, data in members:
            ti = tarfile.TarInfo(name)
            ti.mtime = 1_700_000_000
            if kind == "dir":
                ti.type = tarfile.DIRTYPE
            elif kind == "sym":
                ti.type, ti.linkname = tarfile.SYMTYPE, "manifest.json"
            elif kind == "hard":
                ti.type, ti.linkname = tarfile.LNKTYPE, "manifest.json"
            else:
                ti.size = len(data)
            tar.addfile(ti, io.BytesIO(data) if kind == "file" else None)
    return buf.getvalue()


def _practice_tar() -> bytes:
    files = []
    src = ROOT / "decision_trees" / "practice" / "healthy" / "bundle"
    for p in sorted(src.rglob("*")):
        if p.is_file():
            files.append((p.relative_to(src).as_posix(), "file", p.read_bytes()))
    return _tar(files)


CASES = {
    "practice": lambda: gzip.compress(_practice_tar()),
    "pax": lambda: gzip.compress(_tar([("manifest.json", "file", b"{}"), ("é" * 3 + ".txt", "file", b"x")],
                                      tarfile.PAX_FORMAT)),
    "gnu": lambda: gzip.compress(_tar([("manifest.json", "file", b"{}"), ("a/" + "b" * 120, "file", b"x")],
                                      tarfile.GNU_FORMAT)),
    "long-ustar-prefix": lambda: gzip.compress(_tar([("d" * 90 + "/" + "e" * 90, "file", b"y"),
                                                     ("manifest.json", "file", b"{}")])),
    "dirs": lambda: gzip.compress(_tar([("top", "dir", b""), ("top/manifest.json", "file", b"{}"),
                                        ("top/outputs", "dir", b""), ("top/outputs/a.out", "file", b"a" * 1000)])),
    "symlink": lambda: gzip.compress(_tar([("manifest.json", "file", b"{}"), ("x", "sym", b"")])),
    "hardlink": lambda: gzip.compress(_tar([("manifest.json", "file", b"{}"), ("x", "hard", b"")])),
    "dotdot": lambda: gzip.compress(_tar([("manifest.json", "file", b"{}"), ("../x", "file", b"1")])),
    "empty": lambda: gzip.compress(_tar([])),
    "empty-gzip": lambda: gzip.compress(b""),
    "trailing-garbage": lambda: gzip.compress(_tar([("manifest.json", "file", b"{}")])) + b"garbage",
    "two-members": lambda: gzip.compress(_tar([("manifest.json", "file", b"{}")])) + gzip.compress(b"\0" * 1024),
    "plain-tar": lambda: _tar([("manifest.json", "file", b"{}")]),
    "truncated-gz": lambda: gzip.compress(_practice_tar())[:-100],
    "truncated-tar": lambda: gzip.compress(_practice_tar()[:-3000]),
    "no-end-blocks": lambda: gzip.compress(_tar([("manifest.json", "file", b"{}" * 300)])[:1024]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_as_tarfile(tmp_path, case) -> None:
    p = tmp_path / "n.bundle.tar.gz"
    p.write_bytes(CASES[case]())
    slow, fast = _both(p)
    assert slow == fast, case


def test_fast_path_is_taken_on_written_bundles(tmp_path) -> None:
    data = gzip.compress(_practice_tar())
    members = bmod._fast_members(data)
    assert members is not None and len(members) > 10
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        assert [(m.isdir(), m.name, tar.extractfile(m).read() if m.isfile() else b"") for m in tar] == members


def test_corrupted_headers_read_the_same(tmp_path) -> None:
    """Bytes changed at random in the inflated archive (headers and data), recompressed: 300 archives."""
    base = bytearray(_practice_tar())
    rng = random.Random(14)
    p = tmp_path / "n.bundle.tar.gz"
    taken = 0
    for i in range(300):
        tar = bytearray(base)
        for _ in range(rng.randint(1, 4)):
            block = rng.randrange(len(tar) // 512)
            pos = block * 512 + (rng.randrange(512) if rng.random() < 0.5 else rng.choice(
                [0, 5, 99, 100, 107, 124, 130, 135, 148, 150, 155, 156, 257, 263, 345, 400]))
            tar[pos] = rng.choice([0, 0x20, 0x2F, 0x30, 0x37, 0x38, 0x41, 0x80, 0xFF, rng.randrange(256)])
        p.write_bytes(gzip.compress(bytes(tar)))
        slow, fast = _both(p)
        assert slow == fast, i
        taken += bmod._fast_members(p.read_bytes()) is not None
    assert taken > 30  # the fast path read some of them (the rest it left to tarfile)
