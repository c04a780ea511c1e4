"""Bundles: every source's raw evidence from one capture, replayable offline. Format: docs/bundle-format.md.

A bundle is a directory, or the same directory packed as ``.tar.gz``::

    manifest.json              {"format": "troubleshooter-bundle", "version": 1, ...}
    evidence/<side>/<id>.out   raw stdout bytes, exactly as produced (maybe truncated, see the record)
    evidence/<side>/<id>.err   raw stderr bytes

Reading an archive never extracts it: members are read in memory, and a member that is not a regular file,
has an absolute path, ``..``, or an odd name is refused (the whole bundle, with the member named).
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import stat
import tarfile
import time
import zlib
from pathlib import Path
from typing import Any, Iterable

from troubleshooter import __version__, locations
from troubleshooter.model.evidence import Evidence

FORMAT = "troubleshooter-bundle"
VERSION = 1
MAX_BUNDLE_BYTES = 1024 * 1024 * 1024  # a bundle larger than this is refused, not loaded
_SAFE_NAME = re.compile(r"^[A-Za-z0-9._@+-]+(/[A-Za-z0-9._@+-]+)*$")
_SAFE_ID = re.compile(r"^[A-Za-z0-9._@+-]+$")


class BundleError(Exception):
    """A bundle that cannot be read: the message names the file and what is wrong."""


class Bundle:
    def __init__(self, path: Path, manifest: dict[str, Any], files: dict[str, bytes]) -> None:
        self.path = path
        self.manifest = manifest
        self._files = files
        self._records: dict[tuple[str, str], dict[str, Any]] = {}
        for rec in manifest.get("evidence", []):
            self._records[(rec.get("side", "target"), rec["source"])] = rec

    @property
    def name(self) -> str:
        if self.path.name in ("bundle", "bundle.tar.gz"):  # practice/<case>/bundle
            return f"{self.path.parent.name}/{self.path.name}"
        return self.path.name

    @property
    def sides(self) -> list[str]:
        return sorted({side for side, _ in self._records} | set(self.manifest.get("targets", {})))

    def target_info(self, side: str = "target") -> dict[str, Any]:
        return dict(self.manifest.get("targets", {}).get(side, {}))

    def source_ids(self, side: str = "target") -> list[str]:
        return sorted(src for s, src in self._records if s == side)

    def evidence(self, source_id: str, side: str = "target") -> Evidence | None:
        rec = self._records.get((side, source_id))
        if rec is None:
            return None
        out = self._files.get(rec.get("stdout_file", ""), b"")
        err = self._files.get(rec.get("stderr_file", ""), b"")
        return Evidence.from_meta(rec, out, err)

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.manifest.get("params", {}))

    # ---- reading
    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> "Bundle":
        p = Path(path)
        if not p.exists():
            raise BundleError(f"{p}: no such bundle (a directory or a .tar.gz made by `troubleshooter capture`)")
        files = _read_dir(p) if p.is_dir() else _read_tar(p)
        if "manifest.json" not in files:
            raise BundleError(f"{p}: not a bundle (no manifest.json)")
        try:
            manifest = json.loads(files["manifest.json"].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BundleError(f"{p}/manifest.json: not valid JSON: {exc}") from exc
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise BundleError(f"{p}/manifest.json: not a {FORMAT} manifest")
        version = manifest.get("version")
        if not isinstance(version, int) or version > VERSION:
            raise BundleError(f"{p}: bundle format version {version!r} is newer than this tool reads ({VERSION}); upgrade troubleshooter")
        evidence = manifest.get("evidence")
        if not isinstance(evidence, list):
            raise BundleError(f"{p}/manifest.json: 'evidence' must be a list")
        _validate_manifest(p, manifest)
        for i, rec in enumerate(evidence):
            if not isinstance(rec, dict) or not isinstance(rec.get("source"), str) or "status" not in rec:
                raise BundleError(f"{p}/manifest.json: evidence[{i}] lacks 'source' or 'status'")
            for key in ("side", "stdout_file", "stderr_file"):
                if key in rec and not isinstance(rec[key], str):
                    raise BundleError(f"{p}/manifest.json: evidence[{i}] ({rec['source']}): '{key}' must be a string")
            if rec.get("rc") is not None and (not isinstance(rec["rc"], int) or isinstance(rec["rc"], bool)):
                raise BundleError(f"{p}/manifest.json: evidence[{i}] ({rec['source']}): 'rc' must be an exit code")
            try:
                Evidence.from_meta(rec, b"", b"")
            except (ValueError, TypeError, KeyError) as exc:
                raise BundleError(f"{p}/manifest.json: evidence[{i}] ({rec.get('source')}): {exc}") from exc
        return cls(p, manifest, files)


def _validate_manifest(p: Path, manifest: dict[str, Any]) -> None:
    """The shape every reader relies on, checked once: a bundle that breaks it is refused with the field
    named (it used to stop a whole ``fanout --bundles`` with an internal TypeError)."""
    where = f"{p}/manifest.json"
    targets = manifest.get("targets", {})
    if not isinstance(targets, dict) or not all(isinstance(k, str) and isinstance(v, dict) for k, v in targets.items()):
        raise BundleError(f"{where}: 'targets' must map each side's name to its description")
    if not isinstance(manifest.get("params", {}), dict):
        raise BundleError(f"{where}: 'params' must be a mapping")
    for key in ("note", "host", "tool", "created_at"):
        if key in manifest and not isinstance(manifest[key], (str, type(None))):
            raise BundleError(f"{where}: '{key}' must be a string")


def _check_name(bundle: Path, name: str) -> str:
    name = name[2:] if name.startswith("./") else name
    parts = name.split("/")
    if name.startswith("/") or ".." in parts or not _SAFE_NAME.match(name):
        raise BundleError(f"{bundle}: refused member {name!r} (absolute path, '..' or unexpected characters)")
    return name


MAX_HEADER_BYTES = 1024 * 1024  # a PAX or GNU long-name header larger than this is refused before it is read
MAX_MEMBERS = 100_000  # more members than this is not a bundle


class _BoundedTarInfo(tarfile.TarInfo):
    """A tar header that refuses, before ``tarfile`` reads it, an extended header (PAX, GNU long name/link,
    sparse map) larger than :data:`MAX_HEADER_BYTES`: ``tarfile`` loads such a header whole into memory, so a
    4 MB archive of 1 GiB PAX headers took 6 GB of RAM."""

    def _proc_member(self, tarfile_):  # the one place every header type passes through, its size known
        if self.type in (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME,
                         tarfile.GNUTYPE_LONGLINK) and self.size > MAX_HEADER_BYTES:
            raise _HeaderTooLarge(f"refused: an extended tar header of {self.size} bytes (over "
                                  f"{MAX_HEADER_BYTES >> 10} KiB) at offset {self.offset}")
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise _HeaderTooLarge(f"refused: a sparse member at offset {self.offset} (a bundle has none)")
        return super()._proc_member(tarfile_)

    def _refuse_sparse(self, *args, **kwargs):  # PAX-declared sparse maps are read without a bound
        raise _HeaderTooLarge(f"refused: a sparse member at offset {self.offset} (a bundle has none)")

    _proc_gnusparse_00 = _proc_gnusparse_01 = _proc_gnusparse_10 = _refuse_sparse


class _HeaderTooLarge(Exception):
    pass


def _open_regular(path: Path) -> int:
    """A read-only descriptor on ``path`` if it is a regular file (never blocks on a FIFO, never follows a
    link), else :class:`BundleError`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise BundleError(f"{path}: cannot open: {exc.strerror or exc} (a bundle is a regular file or a directory)") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BundleError(f"{path}: refused: not a regular file (a bundle is a .tar.gz or a directory)")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


FAST_TAR = True  # tests turn it off to compare with tarfile's reading
FAST_MAX_GZ = 2 << 20  # a .tar.gz up to this size is read by _fast_members (whole, in memory) ...
FAST_MAX_TAR = 4 << 20  # ... when it inflates to at most this (a bundle is ~0.3 MB); anything else: tarfile


def _octal(field: bytes) -> int | None:
    """tarfile's ``nti`` for a plain octal field (NUL-terminated, blanks around); None for anything else
    (base-256, garbage), which the fast path leaves to tarfile."""
    if field[:1] in (b"\x80", b"\xff"):
        return None
    s = field.split(b"\0", 1)[0].strip()
    if not s:
        return 0
    if s.translate(None, b"01234567"):  # a character that is not an octal digit
        return None
    return int(s, 8)


def _fast_members(data: bytes) -> list[tuple[bool, str, bytes]] | None:
    """(is a directory, name, content) of every member of a gzip-compressed ustar archive in ``data``, as
    ``tarfile`` reads them, or None when the archive holds anything but plain files and directories in one gzip
    member with valid headers (PAX/GNU headers, links, base-256 numbers, a bad checksum, a truncated member, a
    trailing gzip member or garbage, more than FAST_MAX_TAR inflated): then ``tarfile`` reads it, errors and all.
    tarfile's header parsing was ~1.6 ms of a bundle's ~7 ms in a fan-out."""
    if data[:2] != b"\x1f\x8b":
        return None
    d = zlib.decompressobj(wbits=31)
    try:
        tar = d.decompress(data, FAST_MAX_TAR + 1)
    except zlib.error:
        return None
    if len(tar) > FAST_MAX_TAR or not d.eof or d.unused_data or d.unconsumed_tail:
        return None
    out: list[tuple[bool, str, bytes]] = []
    off, n = 0, len(tar)
    while True:
        buf = tar[off:off + 512]
        if len(buf) < 512:
            return None  # no end-of-archive block: tarfile decides
        if buf.count(0) == 512:
            return out if off else None  # end of archive (an empty first block: tarfile's case)
        nums = [_octal(buf[a:b]) for a, b in ((100, 108), (108, 116), (116, 124), (124, 136), (136, 148),
                                              (329, 337), (337, 345))]
        chk = _octal(buf[148:156])
        if chk is None or None in nums or chk != 256 + sum(buf[:148]) + sum(buf[156:512]):
            return None
        size = nums[3]
        kind = buf[156:157]
        name = buf[0:100].split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        prefix = buf[345:500].split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        if kind == b"\0" and name.endswith("/"):
            kind = b"5"
        if kind == b"5":
            name = name.rstrip("/")
            if prefix:
                name = prefix + "/" + name
            out.append((True, name, b""))
            off += 512  # a directory's size is not skipped (tarfile)
            continue
        if kind not in (b"0", b"\0"):
            return None
        if prefix:
            name = prefix + "/" + name
        start = off + 512
        if start + size > n:
            return None
        out.append((False, name, tar[start:start + size]))
        off = start + ((size + 511) // 512) * 512


def _read_tar(path: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    total = 0
    fd = _open_regular(path)
    if os.fstat(fd).st_size > MAX_BUNDLE_BYTES:
        os.close(fd)
        raise BundleError(f"{path}: bundle larger than {MAX_BUNDLE_BYTES >> 20} MiB, refused")
    fast = None
    if FAST_TAR and os.fstat(fd).st_size <= FAST_MAX_GZ:
        try:
            with open(fd, "rb", closefd=False) as raw:
                fast = _fast_members(raw.read(FAST_MAX_GZ + 1))
        except OSError:
            fast = None
        finally:
            os.lseek(fd, 0, os.SEEK_SET)
        if fast is not None:
            os.close(fd)
            for count, (is_dir, mname, data) in enumerate(fast, 1):  # the checks of the loop below, in its order
                if count > MAX_MEMBERS:
                    raise BundleError(f"{path}: more than {MAX_MEMBERS} members, refused")
                if is_dir:
                    _check_name(path, mname.rstrip("/"))
                    continue
                name = _check_name(path, mname)
                total += len(data)
                if total > MAX_BUNDLE_BYTES:
                    raise BundleError(f"{path}: bundle larger than {MAX_BUNDLE_BYTES >> 20} MiB, refused")
                files[name] = data
            return _strip_top(files)
    try:
        with open(fd, "rb") as raw, tarfile.open(fileobj=raw, mode="r:*", tarinfo=_BoundedTarInfo) as tar:
            for count, member in enumerate(tar, 1):
                if count > MAX_MEMBERS:
                    raise BundleError(f"{path}: more than {MAX_MEMBERS} members, refused")
                if member.isdir():
                    _check_name(path, member.name.rstrip("/"))
                    continue
                if not member.isfile():
                    raise BundleError(f"{path}: refused member {member.name!r}: links and special files are not allowed in a bundle")
                name = _check_name(path, member.name)
                total += member.size
                if total > MAX_BUNDLE_BYTES:
                    raise BundleError(f"{path}: bundle larger than {MAX_BUNDLE_BYTES >> 20} MiB, refused")
                f = tar.extractfile(member)
                data = f.read(member.size) if f else b""
                # a bundle packed with its top directory: "node17.bundle/manifest.json"
                files[name] = data
    except _HeaderTooLarge as exc:
        raise BundleError(f"{path}: {exc}") from None
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise BundleError(f"{path}: not a readable bundle archive: {exc}") from exc
    return _strip_top(files)


def _strip_top(files: dict[str, bytes]) -> dict[str, bytes]:
    if "manifest.json" in files:
        return files
    tops = {n.split("/", 1)[0] for n in files}
    if len(tops) == 1:
        top = tops.pop() + "/"
        return {n[len(top):]: d for n, d in files.items() if n.startswith(top)}
    return files


def _read_dir(path: Path) -> dict[str, bytes]:
    """Every regular file under ``path``, read with the total bounded; anything else (a link, a FIFO, a
    device, a socket) refuses the bundle before it is opened, so nothing blocks or reads without end."""
    files: dict[str, bytes] = {}
    total = 0
    root = path.resolve()
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        for dn in dirnames:
            if (Path(dirpath) / dn).is_symlink():
                rel = (Path(dirpath) / dn).relative_to(path).as_posix()
                raise BundleError(f"{path}: refused {rel!r}: links are not allowed in a bundle")
        for fn in filenames:
            full = Path(dirpath) / fn
            rel = full.relative_to(path).as_posix()
            st = full.lstat()
            if stat.S_ISLNK(st.st_mode):
                raise BundleError(f"{path}: refused {rel!r}: links are not allowed in a bundle")
            if not stat.S_ISREG(st.st_mode):
                raise BundleError(f"{path}: refused {rel!r}: not a regular file (a FIFO, device or socket)")
            if not full.resolve().is_relative_to(root):
                raise BundleError(f"{path}: refused {rel!r}: outside the bundle")
            _check_name(path, rel)
            total += st.st_size
            if total > MAX_BUNDLE_BYTES:
                raise BundleError(f"{path}: bundle larger than {MAX_BUNDLE_BYTES >> 20} MiB, refused")
            fd = _open_regular(full)  # checked again on the open descriptor: it may have been swapped
            with open(fd, "rb") as f:
                data = f.read(MAX_BUNDLE_BYTES - total + st.st_size + 1)
            total += len(data) - st.st_size
            if total > MAX_BUNDLE_BYTES:
                raise BundleError(f"{path}: bundle larger than {MAX_BUNDLE_BYTES >> 20} MiB, refused")
            files[rel] = data
    return files


# ---- writing
def _file_id(source_id: str) -> str:
    if not _SAFE_ID.match(source_id):
        raise ValueError(f"source id {source_id!r} is not safe as a file name")
    return source_id


def build_manifest(
    sides: dict[str, tuple[dict[str, Any], Iterable[Evidence]]],
    params: dict[str, Any] | None = None,
    note: str = "",
) -> tuple[dict[str, Any], dict[str, bytes]]:
    files: dict[str, bytes] = {}
    records = []
    targets = {}
    for side, (target_desc, evidences) in sides.items():
        _file_id(side)
        targets[side] = target_desc
        for ev in evidences:
            fid = _file_id(ev.source_id)
            rec = ev.meta()
            rec["side"] = side
            rec["stdout_file"] = f"evidence/{side}/{fid}.out"
            rec["stderr_file"] = f"evidence/{side}/{fid}.err"
            files[rec["stdout_file"]] = ev.stdout
            files[rec["stderr_file"]] = ev.stderr
            records.append(rec)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": socket.gethostname(),
        "tool": f"troubleshooter {__version__}",
        "targets": targets,
        "params": params or {},
        "note": note,
        "evidence": records,
    }
    return manifest, files


def write(path: str | os.PathLike[str], manifest: dict[str, Any], files: dict[str, bytes]) -> Path:
    """Write a bundle: a directory, or a ``.tar.gz`` when the path ends so. Returns the path written."""
    p = Path(path)
    payload = dict(files)
    payload["manifest.json"] = (json.dumps(manifest, indent=2, sort_keys=False) + "\n").encode()
    # raw environments and the files they name: 0600 files in 0700 directories, written whole or not at all
    # through an exclusively created temporary file (locations.private_file); a link at the path is replaced,
    # never followed
    if p.name.endswith((".tar.gz", ".tgz")):
        top = p.name.removesuffix(".tar.gz").removesuffix(".tgz")
        with locations.private_file(p) as out, tarfile.open(fileobj=out, mode="w:gz") as tar:
            for name, data in sorted(payload.items()):
                info = tarfile.TarInfo(f"{top}/{name}")
                info.size = len(data)
                info.mtime = int(time.time())
                info.mode = 0o600
                tar.addfile(info, io.BytesIO(data))
        return p
    if p.is_symlink() or (p.exists() and not p.is_dir()):
        raise BundleError(f"{p}: exists and is not a directory; choose a new path")
    if p.exists() and any(p.iterdir()):
        raise BundleError(f"{p}: exists and is not empty; choose a new path")
    locations.private_dir(p)
    for name, data in payload.items():
        f = p / name
        locations.private_dir(f.parent)
        locations.write_private(f, data)
    return p
