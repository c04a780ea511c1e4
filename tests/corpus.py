"""Load real captured outputs from tests/data (copied from ../shared/corpus with their provenance header).

Lines starting with ``#% `` are our provenance header, not the tool's output: they are stripped here.
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parent / "data"


def strip_header(raw: str) -> str:
    lines = raw.splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].startswith("#%"):
        i += 1
    if i and i < len(lines) and not lines[i].strip():
        i += 1  # the blank line after the header
    return "".join(lines[i:])


def load(rel: str) -> str:
    """The output in tests/data/REL, header stripped (bytes that are not UTF-8 are replaced)."""
    return strip_header((DATA / rel).read_bytes().decode("utf-8", errors="replace"))


def files(kind_dir: str) -> list[Path]:
    return sorted((DATA / kind_dir).glob("*.txt"))
