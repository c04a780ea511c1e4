"""Every path the tool uses, in one place (XDG through platformdirs, overridable by environment)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import BinaryIO, Iterator

import platformdirs

APP = "troubleshooter"


def trees_dir() -> Path:
    """The decision trees shipped with the package (TROUBLESHOOTER_TREES overrides, for tree authors)."""
    env = os.environ.get("TROUBLESHOOTER_TREES")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    for candidate in (here / "decision_trees", here.parent / "decision_trees"):
        if candidate.is_dir():
            return candidate
    return here.parent / "decision_trees"


def data_dir() -> Path:
    """Sessions and exports (TROUBLESHOOTER_DATA_DIR overrides)."""
    env = os.environ.get("TROUBLESHOOTER_DATA_DIR")
    return Path(env) if env else Path(platformdirs.user_data_dir(APP))


def sessions_dir() -> Path:
    return data_dir() / "sessions"


def exports_dir() -> Path:
    return data_dir() / "exports"


def pasted_dir() -> Path:
    """Outputs pasted into the app (they may hold secrets: private, as sessions are)."""
    return data_dir() / "pasted"


def cache_dir() -> Path:
    """What can be rebuilt at any time: the checked decision trees (TROUBLESHOOTER_CACHE_DIR overrides)."""
    env = os.environ.get("TROUBLESHOOTER_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir(APP))


def config_dir() -> Path:
    env = os.environ.get("TROUBLESHOOTER_CONFIG_DIR")
    return Path(env) if env else Path(platformdirs.user_config_dir(APP))


def config_file() -> Path:
    env = os.environ.get("TROUBLESHOOTER_CONFIG")
    return Path(env) if env else config_dir() / "config.yaml"


def user_profiles_dir() -> Path:
    return config_dir() / "profiles"


def all_paths() -> dict[str, Path]:
    return {
        "trees": trees_dir(),
        "config": config_file(),
        "profiles (user)": user_profiles_dir(),
        "sessions": sessions_dir(),
        "exports": exports_dir(),
        "pasted": pasted_dir(),
        "cache": cache_dir(),
    }


# ------------------------------------------------------------------ private files
# Bundles, exports, tickets and journals hold raw environments (tokens, the file NCCL_TOPO_FILE names):
# they are written 0600 in directories created 0700, through a temporary file created exclusively
# (O_EXCL|O_NOFOLLOW: a link planted at a predictable path is never followed) beside the target and
# renamed over it, so a failure (a full disk) leaves neither a half-written file nor an emptied old one.

class PrivateFileError(OSError):
    """A private file or directory could not be written; the message names the path and why."""

    def __init__(self, errno: int | None, message: str, reason: str = "") -> None:
        super().__init__(errno, message)
        self.reason = reason or message  #: why, without the path ("No space left on device")

    def __str__(self) -> str:  # the message alone, without OSError's "[Errno N]"
        return str(self.strerror)


def private_dir(path: str | os.PathLike[str]) -> Path:
    """``mkdir -p`` with mode 0700 for each directory it creates (existing ones are left as they are)."""
    d = Path(path)
    try:
        missing = []
        p = d
        while not p.exists() and p != p.parent:
            missing.append(p)
            p = p.parent
        for m in reversed(missing):
            try:
                os.mkdir(m, 0o700)
            except FileExistsError:
                pass
        if not d.is_dir():
            raise NotADirectoryError(20, "not a directory")
    except OSError as exc:
        raise PrivateFileError(exc.errno, f"cannot create the directory {d}: {exc.strerror or exc}",
                               f"cannot create the directory {d}: {exc.strerror or exc}") from exc
    return d


@contextlib.contextmanager
def private_file(path: str | os.PathLike[str], mode: int = 0o600) -> Iterator[BinaryIO]:
    """Write ``path`` whole or not at all: yields a binary file open on a new temporary file beside it
    (created ``O_EXCL|O_NOFOLLOW``, ``mode``), fsyncs it and renames it over ``path`` when the block ends;
    on any error the temporary file is removed and ``path`` is untouched. A link at ``path`` is replaced,
    never followed. Errors are :class:`PrivateFileError` naming the path."""
    target = Path(path)
    directory = target.parent
    private_dir(directory)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    import secrets  # here: its import (hmac, _hashlib) was ~5 ms of every start-up

    tmp = directory / f".{target.name}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(tmp, flags, mode)
    except OSError as exc:
        raise PrivateFileError(exc.errno, f"cannot write {target}: {exc.strerror or exc}", exc.strerror or str(exc)) from exc
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, PrivateFileError):
            raise PrivateFileError(exc.errno, f"cannot write {target}: {exc.strerror or exc}",
                                   exc.strerror or str(exc)) from exc
        raise


def write_private(path: str | os.PathLike[str], data: bytes, mode: int = 0o600) -> Path:
    """Write ``data`` to ``path`` as :func:`private_file` does. Returns the path."""
    with private_file(path, mode) as f:
        f.write(data)
    return Path(path)
