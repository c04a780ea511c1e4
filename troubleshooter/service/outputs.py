"""Pasted outputs, read once: the app reads the same files for the open dialog's check, the start screen's context
and node count, the nodes screen and each walk, and a 100,000-line NCCL log takes seconds to read (the app froze
that long each time).

Each spec's files are kept with the size and modification time of every file it names: a file saved again (from
an editor, a second paste) is read again, anything else is the reading of before. :meth:`OutputsReader.read` gives
the reading of a set of specs, shared by its callers (a view, not to be added to); :meth:`OutputsReader.fresh` a
copy of it that a walk adds its facts to.
"""

from __future__ import annotations

import copy
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # pragma: no cover - imported when first read: the app starts without the parsers
    from troubleshooter.diagnosis.pasted import EvidenceFacts, PastedFile

MAX_SPECS = 32  # specs whose files are kept (the oldest go first); a session's pastes rarely reach ten


def stamp(spec: str) -> tuple:
    """What changes when a spec's files change: size and modification time of each file it names (a directory's
    files too), for each way the spec can be read (``host:a.txt`` is a side and a path, or a file of that name)."""
    from troubleshooter.diagnosis.pasted import SPEC

    m = SPEC.match(spec)
    out: list[tuple] = []
    for cand in dict.fromkeys((spec, m.group("path") if m else spec)):
        p = Path(cand)
        try:
            if p.is_dir():
                for f in sorted(p.rglob("*")):
                    st = f.stat()
                    out.append((str(f), st.st_size, st.st_mtime_ns))
            else:
                st = p.stat()
                out.append((cand, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((cand, None))
    return tuple(out)


def _key(specs: Iterable[str]) -> tuple:
    """A set of specs as read now: each with its files' :func:`stamp`."""
    return tuple((s, stamp(s)) for s in specs)


class OutputsReader:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # one reading at a time: a second caller waits for it, never reads again
        self._files: dict[str, tuple[tuple, list[PastedFile] | Exception]] = {}
        self._whole: tuple[tuple, EvidenceFacts | Exception] | None = None

    def _spec_files(self, spec: str, base: Path | None = None) -> list[PastedFile]:
        from troubleshooter.diagnosis.pasted import read_spec

        key = (stamp(spec), base)
        got = self._files.get(spec)
        if got is None or got[0] != key:
            try:
                got = (key, read_spec(spec, base))
            except Exception as exc:  # noqa: BLE001 - kept, and raised again to each caller, as reading raised it
                got = (key, exc)
            self._files.pop(spec, None)
            self._files[spec] = got
            while len(self._files) > MAX_SPECS:
                self._files.pop(next(iter(self._files)))
        if isinstance(got[1], Exception):
            raise got[1]
        return got[1]

    def ready(self, specs: Iterable[str]) -> bool:
        """The reading of these specs is at hand (:meth:`read` returns at once, or raises what reading raised)."""
        whole = self._whole
        return whole is not None and whole[0] == _key(specs)

    def read(self, specs: Iterable[str]) -> EvidenceFacts:
        """The specs read as ``diagnose --evidence`` reads them, shared: raises what reading them raises."""
        from troubleshooter.diagnosis.pasted import EvidenceFacts

        specs = list(specs)
        key = _key(specs)
        with self._lock:
            whole = self._whole
            if whole is None or whole[0] != key:
                try:
                    whole = (key, EvidenceFacts.from_specs(specs, read=self._spec_files))
                except Exception as exc:  # noqa: BLE001 - kept, and raised again to each caller
                    whole = (key, exc)
                self._whole = whole
        if isinstance(whole[1], Exception):
            raise whole[1]
        return whole[1]

    def fresh(self, specs: Iterable[str]) -> EvidenceFacts:
        """A copy of :meth:`read` of its own: a walk adds facts to what it reads."""
        return copy.deepcopy(self.read(specs))

