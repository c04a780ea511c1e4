"""Inputs that exhausted memory or hung (issue 12, item 3): every read is bounded by bytes before it is
parsed, anything that is not a regular file is refused, and redaction stays linear.

Sizes are small enough to run fast; the time bounds are a few seconds on inputs that took minutes before.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from troubleshooter import parsers
from troubleshooter.model.facts import MAX_DISPLAY_CHARS, format_value
from troubleshooter.output import redact
from troubleshooter.parsers import ParseError
from troubleshooter.probe import bundle as bundlemod
from troubleshooter.probe.bundle import Bundle, BundleError
from tests.clihelp import main

@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG", str(tmp_path / "no-config.yaml"))




def _in_thread(fn, timeout: float = 10.0):
    """Run ``fn`` in a thread; fail (instead of hanging the suite) if it does not return in time."""
    box: dict = {}

    def go():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), f"still running after {timeout}s (it would hang)"
    if "error" in box:
        raise box["error"]
    return box.get("value")


# ------------------------------------------------------------------ bundles: archives
def _header(name: str, typ: bytes, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.type = typ
    info.size = size
    return info.tobuf(format=tarfile.USTAR_FORMAT)


def _bomb(tmp_path: Path, typ: bytes, declared: int, actual: int = 4 << 20) -> Path:
    """A small .tar.gz whose first header declares ``declared`` bytes of extended header (zeros follow,
    ``actual`` of them: they compress to almost nothing)."""
    p = tmp_path / "bomb.bundle.tar.gz"
    with gzip.open(p, "wb", compresslevel=1) as gz:
        gz.write(_header("././@PaxHeader" if typ in (tarfile.XHDTYPE, tarfile.XGLTYPE) else "././@LongLink", typ, declared))
        zeros = b"\0" * (1 << 20)
        for _ in range(actual >> 20):
            gz.write(zeros)
    return p


@pytest.mark.parametrize("typ", [tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK],
                         ids=["pax", "pax-global", "gnu-longname", "gnu-longlink"])
def test_huge_extended_tar_header_is_refused_before_it_is_read(tmp_path: Path, typ: bytes) -> None:
    p = _bomb(tmp_path, typ, declared=1 << 30)
    assert p.stat().st_size < 1 << 20
    tracemalloc.start()
    try:
        with pytest.raises(BundleError, match=r"refused: an extended tar header of 1073741824 bytes"):
            Bundle.open(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"{peak >> 20} MiB held before refusing"


def test_sparse_members_are_refused(tmp_path: Path) -> None:
    p = tmp_path / "sparse.tar"
    p.write_bytes(_header("manifest.json", tarfile.GNUTYPE_SPARSE, 0) + b"\0" * 1024)
    with pytest.raises(BundleError, match="sparse"):
        Bundle.open(p)


def test_small_extended_headers_still_read(tmp_path: Path) -> None:
    """A PAX archive (long names, as GNU tar and Python write them) is still a bundle."""
    files = {"manifest.json": b'{"format": "troubleshooter-bundle", "version": 1, "evidence": []}'}
    p = tmp_path / "pax.tar.gz"
    with tarfile.open(p, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(("d" * 120) + "/" + name)
            info.size = len(data)
            info.pax_headers = {"comment": "x" * 1000}
            tar.addfile(info, io.BytesIO(data))
    b = Bundle.open(p)
    assert b.manifest["format"] == "troubleshooter-bundle"


def test_bundle_path_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "x.bundle.tar.gz"
    os.mkfifo(fifo)
    with pytest.raises(BundleError, match="not a regular file"):
        _in_thread(lambda: Bundle.open(fifo))


# ------------------------------------------------------------------ bundles: directories
def _dir_bundle(tmp_path: Path) -> Path:
    d = tmp_path / "node.bundle"
    (d / "evidence" / "target").mkdir(parents=True)
    (d / "manifest.json").write_text('{"format": "troubleshooter-bundle", "version": 1, "evidence": []}')
    return d


def test_fifo_in_a_directory_bundle_is_refused_without_blocking(tmp_path: Path) -> None:
    d = _dir_bundle(tmp_path)
    os.mkfifo(d / "evidence" / "target" / "dmesg.out")
    with pytest.raises(BundleError, match=r"dmesg.out.*not a regular file"):
        _in_thread(lambda: Bundle.open(d))


def test_device_node_in_a_directory_bundle_is_refused(tmp_path: Path) -> None:
    d = _dir_bundle(tmp_path)
    node = d / "evidence" / "target" / "zero.out"
    try:
        os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # what /dev/zero is
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    with pytest.raises(BundleError, match=r"zero.out.*not a regular file"):
        _in_thread(lambda: Bundle.open(d))


def test_socket_in_a_directory_bundle_is_refused(tmp_path: Path) -> None:
    import socket

    d = _dir_bundle(tmp_path)
    path = d / "evidence" / "s.out"
    s = socket.socket(socket.AF_UNIX)
    try:
        try:
            s.bind(str(path))
        except OSError as exc:  # a path too long for AF_UNIX
            pytest.skip(str(exc))
        with pytest.raises(BundleError, match="not a regular file"):
            Bundle.open(d)
    finally:
        s.close()


def test_linked_directory_in_a_bundle_is_refused(tmp_path: Path) -> None:
    d = _dir_bundle(tmp_path)
    os.symlink("/etc", d / "evidence" / "host")
    with pytest.raises(BundleError, match="links are not allowed"):
        Bundle.open(d)


def test_directory_bundle_total_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = _dir_bundle(tmp_path)
    (d / "evidence" / "target" / "big.out").write_bytes(b"x" * 5000)
    monkeypatch.setattr(bundlemod, "MAX_BUNDLE_BYTES", 4096)
    with pytest.raises(BundleError, match="larger than"):
        Bundle.open(d)


# ------------------------------------------------------------------ parse: one huge line, endless input
def test_parse_refuses_a_huge_single_line_in_bounded_memory(tmp_path: Path, capsys) -> None:
    """A single line past the limit (1 GB in the report, 3 GB of RAM) is a clear error, read in chunks."""
    p = tmp_path / "one-line.log"
    with p.open("wb") as f:
        f.write(b"node1:1:1 [0] NCCL INFO ")
        chunk = b"x" * (1 << 20)
        for _ in range((parsers.MAX_LINE_CHARS >> 20) + 12):  # past the streaming threshold too
            f.write(chunk)
        f.write(b"\n")
    for kind in ("nccl-debug", "dmesg"):  # streamed, and read whole
        tracemalloc.start()
        try:
            rc, out, err = main(capsys, "parse", kind, str(p))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert rc == 2, (kind, err)
        assert f"line 1 is longer than {parsers.MAX_LINE_CHARS >> 20} MiB" in err, err
        assert "Traceback" not in err
        assert peak < 3 * parsers.MAX_LINE_CHARS, f"{kind}: {peak >> 20} MiB"


def test_stream_reader_refuses_a_long_line_after_good_ones(tmp_path: Path) -> None:
    p = tmp_path / "x.log"
    p.write_text("a\nb\n" + "y" * (parsers.MAX_LINE_CHARS + 10) + "\nz\n")
    lines = parsers.iter_lines(p)
    assert next(lines) == "a" and next(lines) == "b"
    with pytest.raises(ParseError, match="line 3 is longer"):
        next(lines)


def test_line_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    p = tmp_path / "x.log"
    p.write_text("y" * parsers.MAX_LINE_CHARS + "\n" + "z" * parsers.MAX_LINE_CHARS)
    assert [len(x) for x in parsers.iter_lines(p)] == [parsers.MAX_LINE_CHARS] * 2
    assert len(parsers.read_file(p)) == 2 * parsers.MAX_LINE_CHARS + 1


@pytest.mark.parametrize("sep", [b"\n", b"\r\n", b"\r"])
def test_read_text_bounds_lines_across_chunks(sep: bytes) -> None:
    ok = (b"a" * 1500 + sep) * 3000  # many lines, chunk boundaries fall inside them
    assert len(parsers.read_text(io.BytesIO(ok), max_line=1500)) > 0
    bad = ok + b"b" * 1501 + sep + ok
    with pytest.raises(ParseError, match="longer than"):
        parsers.read_text(io.BytesIO(bad), max_line=1500)
    with pytest.raises(ParseError, match="larger than"):
        parsers.read_text(io.BytesIO(ok), max_bytes=len(ok) - 1)


def test_parse_of_an_endless_device_stops(capsys) -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    rc, _, err = _in_thread(lambda: main(capsys, "parse", "dmesg", "/dev/zero"), timeout=30)
    assert rc == 2 and "longer than" in err, err


def test_parse_stdin_is_bounded(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    class Endless(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, b) -> int:
            b[:] = b"\0" * len(b)
            return len(b)

    class Stdin:
        buffer = io.BufferedReader(Endless())

        def isatty(self) -> bool:
            return False

    monkeypatch.setattr("sys.stdin", Stdin())
    rc, _, err = _in_thread(lambda: main(capsys, "parse", "dmesg", "-"), timeout=30)
    assert rc == 2 and "<stdin>: line 1 is longer than" in err, err


# ------------------------------------------------------------------ human display of a huge value
def test_format_value_is_clipped() -> None:
    big = "a" * (20 << 20)
    t0 = time.monotonic()
    text = format_value(big)
    assert time.monotonic() - t0 < 1
    assert text.startswith("a" * MAX_DISPLAY_CHARS) and len(text) < MAX_DISPLAY_CHARS + 60
    assert text.endswith(f"(+{(20 << 20) - MAX_DISPLAY_CHARS} characters)")
    assert format_value(["b" * 10_000, "c"]).count("b") == MAX_DISPLAY_CHARS
    assert format_value("short") == "short"


def test_parse_prints_a_huge_value_quickly_and_json_keeps_it(tmp_path: Path, capsys) -> None:
    """A 4 MB environment value: the table took ~45 s to lay out (20 MB: 200 s); now it is clipped."""
    p = tmp_path / "env.txt"
    value = "a" * (4 << 20)
    p.write_text(f"NCCL_TOPO_FILE={value}\nPATH=/usr/bin\n")
    t0 = time.monotonic()
    rc, out, err = main(capsys, "parse", "env", str(p))
    took = time.monotonic() - t0
    assert rc == 0, err
    assert took < 10, f"{took:.1f}s"
    assert "characters)" in out
    rc, out, err = main(capsys, "parse", "--json", "env", str(p))
    assert rc == 0 and value in out  # JSON keeps the whole value


# ------------------------------------------------------------------ redaction stays linear
ADVERSARIAL = ["a.", "TOKEN", "a_TOKEN", "sk-", "xoxa-", "eyJaaaaaaaaa.", "-----BEGIN RSA PRIVATE KEY-----",
               "a://b", "x://a:", "password=", "--password ", 'TOKEN="', "Bearer ", "a"]


def test_redaction_of_the_reported_input_is_fast() -> None:
    """``NCCL_TOPO_FILE=`` and 60,000 ``a.`` took 77 s (the URL-credentials rule was quadratic)."""
    s = "NCCL_TOPO_FILE=" + "a." * 60_000
    t0 = time.monotonic()
    out = redact.DEFAULT.bytes(s.encode())
    assert time.monotonic() - t0 < 3
    assert out == s.encode()


@pytest.mark.parametrize("unit", ADVERSARIAL)
def test_redaction_is_linear(unit: str) -> None:
    """Each input took tens of seconds at 120 kB before (quadratic); now well under a second or two, and
    doubling the input does not quadruple the time."""
    def took(n: int) -> float:
        s = "NCCL_TOPO_FILE=" + unit * (n // len(unit) + 1)
        best = float("inf")
        for _ in range(2):
            t0 = time.perf_counter()
            redact.DEFAULT.bytes(s.encode())
            redact.DEFAULT.text(s)
            best = min(best, time.perf_counter() - t0)
        return best

    small, big = took(60_000), took(120_000)
    assert big < 5, f"{big:.2f}s for 120 kB"
    assert big < 3.2 * small + 0.25, f"{small:.3f}s -> {big:.3f}s when the input doubled"


def test_linear_rules_still_redact() -> None:
    r = redact.DEFAULT
    assert r.text("HF_TOKEN=hf_abc") == f"HF_TOKEN={redact.MASK}"
    assert r.text("x " + "Q" * 200 + "_TOKEN=s3cret y").endswith(f"_TOKEN={redact.MASK} y")
    assert r.text("git clone https://oauth2:pw@host/x") == f"git clone https://oauth2:{redact.MASK}@host/x"
    assert r.text("u " + "a." * 50 + "b+svn://me:pw@h") .endswith(f"b+svn://me:{redact.MASK}@h")
    long_scheme = "z" * 100 + "://me:pw@h"
    assert "pw" not in r.text(long_scheme)
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"
    assert r.text("a " + pem + " b") == f"a {redact.MASK} b"
    assert r.text("-----BEGIN RSA PRIVATE KEY----- " * 3 + pem) .endswith(redact.MASK)
    assert r.bytes(b"A=1\x00DB_PASSWORD=s3cr3t p@ss\x00B=2") == f"A=1\x00DB_PASSWORD={redact.MASK}\x00B=2".encode()
    assert r.obj({"api_key": "x", "x.github_token": "y", "name": "z"}) == {"api_key": redact.MASK,
                                                                           "x.github_token": redact.MASK, "name": "z"}
    assert redact.secret_name("MY_SESSION_ID") and not redact.secret_name("PATH")
    assert not redact.secret_name("TOKEN-X")


def test_pasted_evidence_from_an_endless_device_stops(capsys) -> None:
    """``diagnose --evidence`` read a pasted file whole after a size check that a device passes (size 0)."""
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    rc, _, err = _in_thread(lambda: main(capsys, "diagnose", "--symptom", "uniformly-slow", "--evidence",
                                         "dmesg=/dev/zero"), timeout=30)
    assert rc == 2 and "/dev/zero: line 1 is longer than" in err, err
