"""Evidence: the raw output of one source on one target, exactly as produced, with how the run went.

Evidence that is not ``ok`` is itself information: its ``status`` and ``reason`` are shown to the user.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any


class Status(str, enum.Enum):
    OK = "ok"
    NOT_INSTALLED = "not-installed"  # exit 127, or the wrapper could not find the binary
    CANNOT_RUN = "cannot-run"  # exit 126: found but not executable
    PERMISSION_DENIED = "permission-denied"  # needs root or a capability this context lacks
    TIMED_OUT = "timed-out"  # killed at its timeout (124)
    ERROR = "error"  # ran and failed for another reason
    NO_GPU = "no-gpu"  # NVML library not found, driver not loaded, no device
    NOT_CAPTURED = "not-captured"  # replaying a bundle that does not hold this source
    SKIPPED = "skipped"  # not run on purpose (an active measurement without --measure, say)
    CANCELLED = "cancelled"  # the user cancelled it while it ran

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


# What to tell the user to do about each state, when the source does not say better.
ADVICE = {
    Status.NOT_INSTALLED: "install the tool in this context (host, container or job image)",
    Status.CANNOT_RUN: "the binary exists but cannot be executed here",
    Status.PERMISSION_DENIED: "run as root, or grant the capability the tool needs",
    Status.TIMED_OUT: "the tool did not finish within its timeout; the node may be overloaded",
    Status.NO_GPU: "no NVIDIA GPU or driver is visible in this context",
    Status.NOT_CAPTURED: "the bundle does not contain this source; capture it again with a newer version",
}


@dataclasses.dataclass
class Evidence:
    source_id: str
    status: Status
    stdout: bytes = b""
    stderr: bytes = b""
    rc: int | None = None
    duration_s: float = 0.0
    started_at: float = 0.0  # unix time
    reason: str = ""  # one line for the user when status is not ok
    truncated: bool = False  # output went over the size cap and was cut
    stdout_bytes: int = 0  # bytes the tool printed before any cut
    argv: list[str] = dataclasses.field(default_factory=list)
    target: str = "local"

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def text(self) -> str:
        """The output as text; bytes that are not UTF-8 are replaced, never fatal."""
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")

    def describe(self) -> str:
        """A one-line, human summary of how the run went."""
        if self.ok:
            extra = " (output truncated)" if self.truncated else ""
            return f"ok in {self.duration_s:.2f}s{extra}"
        reason = self.reason or ADVICE.get(self.status, "")
        return f"{self.status.value}: {reason}" if reason else self.status.value

    def meta(self) -> dict[str, Any]:
        """Everything except the output bytes, JSON-ready (the bundle's per-source record)."""
        return {
            "source": self.source_id,
            "status": self.status.value,
            "rc": self.rc,
            "duration_s": round(self.duration_s, 4),
            "started_at": self.started_at,
            "reason": self.reason,
            "truncated": self.truncated,
            "stdout_bytes": self.stdout_bytes,
            "argv": list(self.argv),
            "target": self.target,
        }

    @classmethod
    def from_meta(cls, meta: dict[str, Any], stdout: bytes, stderr: bytes) -> "Evidence":
        return cls(
            source_id=str(meta["source"]),
            status=Status(meta["status"]),
            stdout=stdout,
            stderr=stderr,
            rc=meta.get("rc"),
            duration_s=float(meta.get("duration_s", 0.0)),
            started_at=float(meta.get("started_at", 0.0)),
            reason=str(meta.get("reason", "")),
            truncated=bool(meta.get("truncated", False)),
            stdout_bytes=int(meta.get("stdout_bytes", len(stdout))),
            argv=[str(a) for a in meta.get("argv", [])],
            target=str(meta.get("target", "bundle")),
        )
