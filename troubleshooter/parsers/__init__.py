"""Parsers, one module per tool family; each registers itself in :data:`PARSERS` on import.

:func:`load_all` imports every module of this package (so a new file is picked up with no list to edit),
:func:`get` returns a parser by kind, :func:`detect` tells the kind of pasted output, and :func:`run`
parses without ever letting anything but :class:`ParseError` escape.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from typing import Any, Iterator

from troubleshooter.parsers.base import PARSERS, STREAMS, ParseError, Parser

__all__ = ["PARSERS", "STREAMS", "ParseError", "Parser", "load_all", "get", "kinds", "detect", "run", "run_file"]

_loaded = False

# Detection confidence needed to name a kind, and the margin by which it must beat the runner-up.
DETECT_MIN = 0.5
DETECT_MARGIN = 0.1


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
    parsers = load_all()
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


MAX_LINE = 1 << 20  # characters of one line a streamed parse reads; the rest of a longer line is skipped


def iter_lines(path: str | os.PathLike[str], max_line: int = MAX_LINE) -> Iterator[str]:
    """The lines of a file as the str path sees them: decoded with replacement, CR/CRLF as newlines, no NULs.

    A line longer than ``max_line`` characters yields its first ``max_line`` only (the rest is read in pieces
    of that size and dropped), so memory is bounded by ``max_line`` whatever the file holds: no tool prints a
    meaningful line of a megabyte, and a file of one 1 GB line must not take gigabytes to refuse."""
    with open(path, encoding="utf-8", errors="replace", newline=None) as f:
        readline = f.readline
        while True:
            line = readline(max_line)
            if not line:
                return
            if len(line) == max_line and not line.endswith("\n"):
                rest = readline(max_line)
                while rest and not rest.endswith("\n"):
                    rest = readline(max_line)
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
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
    except ParseError:
        raise
    except OSError as exc:
        raise ParseError(f"{path}: {exc.strerror or exc}") from exc
    except RecursionError as exc:  # pragma: no cover - defensive
        raise ParseError(f"input too deeply nested: {exc}") from exc
    except Exception as exc:  # a parser bug must not become a traceback for the user
        raise ParseError(f"{kind} parser failed on this input ({type(exc).__name__}: {exc})") from exc
    return run(p.kind, text)
