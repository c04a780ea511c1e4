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
import tarfile
import time
from pathlib import Path
from typing import Any, Iterable

from troubleshooter import __version__
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
        for i, rec in enumerate(evidence):
            if not isinstance(rec, dict) or not isinstance(rec.get("source"), str) or "status" not in rec:
                raise BundleError(f"{p}/manifest.json: evidence[{i}] lacks 'source' or 'status'")
            try:
                Evidence.from_meta(rec, b"", b"")
            except (ValueError, TypeError, KeyError) as exc:
                raise BundleError(f"{p}/manifest.json: evidence[{i}] ({rec.get('source')}): {exc}") from exc
        return cls(p, manifest, files)


def _check_name(bundle: Path, name: str) -> str:
    name = name[2:] if name.startswith("./") else name
    parts = name.split("/")
    if name.startswith("/") or ".." in parts or not _SAFE_NAME.match(name):
        raise BundleError(f"{bundle}: refused member {name!r} (absolute path, '..' or unexpected characters)")
    return name


def _read_tar(path: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    total = 0
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
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
                data = f.read() if f else b""
                # a bundle packed with its top directory: "node17.bundle/manifest.json"
                files[name] = data
    except (tarfile.TarError, EOFError, OSError) as exc:
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
    files: dict[str, bytes] = {}
    total = 0
    root = path.resolve()
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        for fn in filenames:
            full = Path(dirpath) / fn
            rel = full.relative_to(path).as_posix()
            if full.is_symlink():
                raise BundleError(f"{path}: refused {rel!r}: links are not allowed in a bundle")
            if not full.resolve().is_relative_to(root):
                raise BundleError(f"{path}: refused {rel!r}: outside the bundle")
            _check_name(path, rel)
            total += full.stat().st_size
            if total > MAX_BUNDLE_BYTES:
                raise BundleError(f"{path}: bundle larger than {MAX_BUNDLE_BYTES >> 20} MiB, refused")
            files[rel] = full.read_bytes()
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
    if p.name.endswith((".tar.gz", ".tgz")):
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".partial")
        top = p.name.removesuffix(".tar.gz").removesuffix(".tgz")
        with tarfile.open(tmp, "w:gz") as tar:
            for name, data in sorted(payload.items()):
                info = tarfile.TarInfo(f"{top}/{name}")
                info.size = len(data)
                info.mtime = int(time.time())
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(data))
        os.replace(tmp, p)
        return p
    if p.exists() and any(p.iterdir()):
        raise BundleError(f"{p}: exists and is not empty; choose a new path")
    for name, data in payload.items():
        f = p / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(data)
    return p
