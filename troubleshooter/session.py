"""The session journal: append-only JSON lines, flushed and fsynced per event.

A dropped SSH connection or a killed process loses at most the event in flight. Each file is
``<data dir>/sessions/<id>.jsonl``; every line is one event object with ``event`` and ``at``. A truncated
last line (the event in flight when the process died) is skipped on reading, and counted.

Events: ``start`` (symptom, target spec to recreate it, profile, params), ``answer`` / ``back`` (with the
full list of effective answers after the change, so resuming needs only the last one), ``step``,
``snapshot`` (the diagnosis document so far, for export without re-running probes), ``copy``, ``verify``,
``export``, ``end``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import secrets
import socket
import time
from pathlib import Path
from typing import Any, Iterator

from troubleshooter import __version__, locations


class SessionError(Exception):
    pass


@dataclasses.dataclass
class SessionInfo:
    id: str
    path: Path
    created: str
    symptom: str
    target: str
    status: str  # open, concluded, ended
    conclusions: list[str]
    events: int
    lost_lines: int

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["path"] = str(self.path)
        return d


clock = time.time  # tests and screenshots freeze it


def new_id(host: str | None = None) -> str:
    """A session id: time, the host the evidence comes from (this node unless told: a bundle's own host), a
    random part. The ticket's file names start with it."""
    host = "".join(c for c in (host or socket.gethostname()).split(".")[0] if c.isalnum() or c == "-")[:24] or "host"
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime(clock())) + f"-{host}-{secrets.token_hex(2)}"


# what `export ID` and resume accept: an id, or a unique part of one; never a path or a glob pattern
_SESSION_QUERY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


class Session:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.id = path.stem
        self.write_error: str = ""

    @classmethod
    def create(cls, start: dict[str, Any], directory: Path | None = None, host: str | None = None) -> "Session":
        d = directory or locations.sessions_dir()
        try:
            locations.private_dir(d)
        except OSError as exc:
            raise SessionError(f"cannot create the sessions directory {d}: {exc.strerror or exc}") from exc
        s = cls(d / f"{new_id(host)}.jsonl")
        if not s.append({"event": "start", "tool": __version__, "host": socket.gethostname(), **start}):
            raise SessionError(s.write_error)  # a read-only or full sessions directory: say so now, once
        return s

    @classmethod
    def open(cls, session_id: str | None = None, directory: Path | None = None) -> "Session":
        d = directory or locations.sessions_dir()
        if session_id in (None, "", "latest"):
            infos = list_sessions(d)
            if not infos:
                raise SessionError(f"no sessions in {d}")
            return cls(infos[0].path)
        if not _SESSION_QUERY.fullmatch(session_id) or ".." in session_id:
            raise SessionError(f"not a session id: {session_id!r} (ids look like 20260101-120000-host-ab12, or a "
                               "unique part of one; `troubleshooter sessions` lists them)")
        p = d / f"{session_id}.jsonl"
        if not p.exists():
            matches = sorted(d.glob(f"*{session_id}*.jsonl")) if d.is_dir() else []
            if len(matches) == 1:
                return cls(matches[0])
            raise SessionError(f"no session {session_id!r} in {d}" + (f" ({len(matches)} match)" if matches else ""))
        return cls(p)

    def append(self, event: dict[str, Any]) -> bool:
        """Write one event durably. On failure (disk full, read-only) remember why and return False:
        the caller shows it; nothing already written is touched."""
        event = {"at": round(time.time(), 3), **event}
        line = json.dumps(event, default=str, separators=(",", ":")) + "\n"
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    line = "\n" + line  # a torn last line (killed mid-write): keep this event off it
                os.write(fd, line.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            self.write_error = f"cannot write the session journal {self.path}: {exc.strerror or exc}"
            return False
        self.write_error = ""
        return True

    def events(self) -> tuple[list[dict[str, Any]], int]:
        """All complete events, and how many lines were unreadable (a torn last write)."""
        out: list[dict[str, Any]] = []
        lost = 0
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise SessionError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        for raw in data.split(b"\n"):
            if not raw.strip():
                continue
            try:
                ev = json.loads(raw)
                if isinstance(ev, dict) and "event" in ev:
                    out.append(ev)
                else:
                    lost += 1
            except (json.JSONDecodeError, UnicodeDecodeError):
                lost += 1
        if not out or out[0].get("event") != "start":
            raise SessionError(f"{self.path}: not a troubleshooter session (no start event)")
        return out, lost

    def start_event(self) -> dict[str, Any]:
        return self.events()[0][0]

    def last(self, kind: str) -> dict[str, Any] | None:
        evs, _ = self.events()
        for ev in reversed(evs):
            if ev.get("event") == kind:
                return ev
        return None

    def answers(self) -> list[tuple[str, str]]:
        evs, _ = self.events()
        for ev in reversed(evs):
            if ev.get("event") in ("answer", "back"):
                return [(str(n), str(c)) for n, c in ev.get("answers", [])]
        return []

    def info(self) -> SessionInfo:
        evs, lost = self.events()
        start = evs[0]
        snap = next((e for e in reversed(evs) if e.get("event") == "snapshot"), None)
        ended = any(e.get("event") == "end" for e in evs)
        causes = [c.get("cause", "?") for c in (snap or {}).get("doc", {}).get("conclusions", [])]
        status = "ended" if ended else ("concluded" if causes else "open")
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(start.get("at", 0))))
        return SessionInfo(self.id, self.path, created, str(start.get("symptom", "?")),
                           str(start.get("target_label", "?")), status, causes, len(evs), lost)


def list_sessions(directory: Path | None = None) -> list[SessionInfo]:
    d = directory or locations.sessions_dir()
    if not d.is_dir():
        return []
    out = []
    for p in d.glob("*.jsonl"):
        try:
            out.append(Session(p).info())
        except SessionError:
            continue
    out.sort(key=lambda i: i.id, reverse=True)
    return out


def iter_events(path: Path) -> Iterator[dict[str, Any]]:
    yield from Session(path).events()[0]
