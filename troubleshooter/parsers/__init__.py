"""Parsers, one module per tool family; each registers itself in :data:`PARSERS` on import.

:func:`load_all` imports every module of this package (so a new file is picked up with no list to edit),
:func:`get` returns a parser by kind, :func:`detect` tells the kind of pasted output, and :func:`run`
parses without ever letting anything but :class:`ParseError` escape.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from typing import Any, BinaryIO, Iterator

from troubleshooter.parsers.base import PARSERS, STREAMS, ParseError, Parser

__all__ = ["PARSERS", "STREAMS", "ParseError", "Parser", "load_all", "get", "kinds", "detect", "run", "run_file"]

_loaded = False

# Detection confidence needed to name a kind, and the margin by which it must beat the runner-up.
DETECT_MIN = 0.5
DETECT_MARGIN = 0.1
# The last resort: a claim below DETECT_MIN that names the kind only when no kind reaches it (a Python exception's
# line pasted without its traceback is the program's error, a known-harmless warning is read as one, unless some
# tool's own kind reads the paste)
FALLBACK_MIN = 0.4
FALLBACK_KINDS = frozenset({"python-traceback", "benign-messages"})


def fallbacks(ranked: list[tuple[float, str]]) -> list[str]:
    """The fallback kinds that claim a paste no kind claims (``ranked`` from :func:`scores`), best first; none when
    some kind reaches DETECT_MIN."""
    if ranked and ranked[0][0] >= DETECT_MIN:
        return []
    return [kd for sc, kd in ranked if kd in FALLBACK_KINDS and sc >= FALLBACK_MIN]


def fallback(ranked: list[tuple[float, str]]) -> str | None:
    """The best fallback kind of a paste no kind claims, if one claims it at all."""
    return next(iter(fallbacks(ranked)), None)


def load_all() -> dict[str, Parser]:
    global _loaded
    if not _loaded:
        for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            if mod.name != "base" and not mod.name.startswith("_"):
                importlib.import_module(f"{__name__}.{mod.name}")
        _loaded = True
    return PARSERS


def kinds() -> list[str]:
    return sorted(load_all())


def get(kind: str) -> Parser:
    """The parser of ``kind``, importing its module only (named after the kind, ``-`` as ``_``) when it is;
    every module otherwise. A sweep needs ~35 of the ~80 kinds, and importing a parser compiles its regular
    expressions: all of them was ~70 ms of `check`'s ~290 on a 2-core VM."""
    if kind not in PARSERS and not _loaded:
        name = kind.replace("-", "_")
        if name.isidentifier() and name != "base" and not name.startswith("_"):
            try:
                importlib.import_module(f"{__name__}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.{name}":
                    raise
    parsers = PARSERS if kind in PARSERS else load_all()
    if kind not in parsers:
        raise KeyError(f"unknown kind {kind!r}; known kinds: {', '.join(sorted(parsers))}")
    return parsers[kind]


def scores(text: str) -> list[tuple[float, str]]:
    out = []
    sample = text[:262144]  # detection looks at the head of the text only
    for kind, p in load_all().items():
        try:
            score = float(p.detect(sample))
        except Exception:  # a detector must never break detection of the others
            score = 0.0
        if score > 0:
            out.append((score, kind))
    out.sort(reverse=True)
    return out


def detect(text: str) -> str:
    """The kind of this output, or :class:`ParseError` saying why it cannot be told."""
    ranked = scores(text)
    last = fallback(ranked)
    if last:
        return last
    if not ranked or ranked[0][0] < DETECT_MIN:
        raise ParseError("cannot tell what tool printed this; name the kind (see `troubleshooter parse --list`)")
    if len(ranked) > 1 and ranked[0][0] - ranked[1][0] < DETECT_MARGIN:
        raise ParseError(
            f"ambiguous: looks like {ranked[0][1]} or {ranked[1][1]}; name the kind explicitly"
        )
    return ranked[0][1]


def run(kind: str, text: str) -> dict[str, Any]:
    """Parse ``text`` as ``kind``. Only :class:`ParseError` escapes, whatever the input."""
    p = get(kind)
    try:
        return p.func(text)
    except ParseError:
        raise
    except RecursionError as exc:  # pragma: no cover - defensive
        raise ParseError(f"input too deeply nested: {exc}") from exc
    except Exception as exc:  # a parser bug must not become a traceback for the user
        raise ParseError(f"{kind} parser failed on this input ({type(exc).__name__}: {exc})") from exc


def streams(kind: str) -> bool:
    """``kind`` can read a file line by line, in memory that does not grow with the file."""
    load_all()
    return kind in STREAMS


#: the longest line a parser is given (a 1 GB single line took 3 GB to parse): longer is a ParseError
MAX_LINE_CHARS = 8 * 1024 * 1024
MAX_LINE = MAX_LINE_CHARS  # the name the streaming benchmarks use
#: the most a file (or stdin) is read whole before it is parsed; bigger is a ParseError
MAX_READ_BYTES = 512 * 1024 * 1024


def _line_too_long(lineno: int) -> ParseError:
    return ParseError(f"line {lineno} is longer than {MAX_LINE_CHARS >> 20} MiB; this is not a tool's output "
                      "(cut the relevant part out first)")


def read_text(f: BinaryIO, *, max_bytes: int | None = None,
              max_line: int | None = None) -> str:
    """Read a binary stream whole, decoded with replacement, refusing more than ``max_bytes`` or a line longer
    than ``max_line`` bytes *while reading* (so neither a 1 GB line nor ``/dev/zero`` is ever held)."""
    max_bytes = MAX_READ_BYTES if max_bytes is None else max_bytes
    max_line = MAX_LINE_CHARS if max_line is None else max_line
    chunks: list[bytes] = []
    total = 0
    run = 0  # bytes since the last line break
    lineno = 1
    # one read of the underlying stream at a time (read1): a terminal gives a line per read and an empty read at
    # Ctrl-D, which ends the text; read() would go on reading past that first Ctrl-D, and a second one was needed
    read = getattr(f, "read1", f.read)
    while True:
        chunk = read(1 << 20)
        if not chunk:
            break
        total += len(chunk)
        if total > max_bytes:
            raise ParseError(f"larger than {max_bytes >> 20} MiB; cut the relevant part out first")
        last = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if last < 0:
            run += len(chunk)
        else:
            first = min(i for i in (chunk.find(b"\n"), chunk.find(b"\r")) if i >= 0)
            if run + first > max_line:
                raise _line_too_long(lineno)
            longest = max((len(x) for x in chunk[first + 1:last].replace(b"\r", b"\n").split(b"\n")), default=0)
            if longest > max_line:
                raise _line_too_long(lineno)
            lineno += chunk.count(b"\n")
            run = len(chunk) - last - 1
        if run > max_line:
            raise _line_too_long(lineno)
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def read_file(path: str | os.PathLike[str], max_bytes: int | None = None) -> str:
    """The text of a file, bounded as :func:`read_text` bounds it; only :class:`ParseError` escapes (its
    message does not name the file: the caller does)."""
    try:
        with open(path, "rb") as f:
            limit = MAX_READ_BYTES if max_bytes is None else max_bytes
            if os.fstat(f.fileno()).st_size > limit:  # a regular file says its size: refuse before reading it
                raise ParseError(f"larger than {limit >> 20} MiB; cut the relevant part out first")
            return read_text(f, max_bytes=limit)
    except OSError as exc:
        raise ParseError(f"{exc.strerror or exc}") from exc


def iter_lines(path: str | os.PathLike[str], max_line: int | None = None) -> Iterator[str]:
    """The lines of a file as the str path sees them: decoded with replacement, CR/CRLF as newlines, no NULs.

    Memory is bounded by the longest line accepted, whatever the file holds. By default a line longer than
    :data:`MAX_LINE_CHARS` is a :class:`ParseError` (no tool prints such a line: this is not its output).
    With ``max_line``, a longer line yields its first ``max_line`` characters and the rest is read in pieces
    and dropped (for a log whose one odd line must not stop the reading of the rest)."""
    limit = MAX_LINE_CHARS if max_line is None else max_line
    with open(path, encoding="utf-8", errors="replace", newline=None) as f:
        lineno = 0
        while True:
            line = f.readline(limit + 1)
            if not line:
                return
            lineno += 1
            if len(line) > limit and not (len(line) == limit + 1 and line.endswith("\n")):
                if max_line is None:
                    raise _line_too_long(lineno)
                rest = line
                while rest and not rest.endswith("\n"):
                    rest = f.readline(limit)
                line = line[:limit]
            if "\x00" in line:
                line = line.replace("\x00", "")
            yield line[:-1] if line.endswith("\n") else line


def run_file(kind: str, path: str | os.PathLike[str]) -> dict[str, Any]:
    """Parse the file at ``path`` as ``kind``: streamed when the kind can (any size, bounded memory), else
    read whole. Only :class:`ParseError` escapes (an unreadable file is one too)."""
    p = get(kind)
    try:
        if kind in STREAMS:
            return STREAMS[kind](iter_lines(path))
        text = read_file(path)
    except ParseError:
        raise
    except OSError as exc:
        raise ParseError(f"{path}: {exc.strerror or exc}") from exc
    except RecursionError as exc:  # pragma: no cover - defensive
        raise ParseError(f"input too deeply nested: {exc}") from exc
    except Exception as exc:  # a parser bug must not become a traceback for the user
        raise ParseError(f"{kind} parser failed on this input ({type(exc).__name__}: {exc})") from exc
    return run(p.kind, text)
