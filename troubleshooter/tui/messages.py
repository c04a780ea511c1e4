"""Messages the app's workers post (attributes down, messages up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

from troubleshooter.diagnosis import engine as eng

if TYPE_CHECKING:  # pragma: no cover
    pass

# ---------------------------------------------------------------------------- messages
class StepTaken(Message):
    def __init__(self, step: eng.Step) -> None:
        self.step = step
        super().__init__()


class ProbeProgress(Message):
    def __init__(self, kind: str, name: str, status: str = "") -> None:
        self.kind, self.name, self.status = kind, name, status
        super().__init__()


class WalkPaused(Message):
    """The walk reached a question or its end."""


class ContextReady(Message):
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        super().__init__()


