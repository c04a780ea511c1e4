"""The one way out: every verb prints and writes through an :class:`Emitter`, which redacts with the
configured :class:`~troubleshooter.output.redact.Redactor` and escapes for where the text goes.

- human text (lines, Markdown, Rich tables) : secrets masked, control characters escaped (``\\x1b``), Rich
  markup in data escaped (:meth:`Emitter.m`, :meth:`Emitter.cell`); the console itself escapes what any
  renderable still holds, so a table built from raw data cannot reach the terminal raw either;
- JSON: the document is redacted as data (keys named like secrets, values beside a secret fact, token
  formats), then ``json.dumps`` escapes every control character inside its strings;
- files (``--junit``, ``export -o``): redacted the same way, JUnit XML made valid whatever the facts hold.

A value seen next to a secret's name in anything emitted is remembered, so its later occurrences go too.
The settings' problems (a config file that does not parse loses its ``redact_extra``) are said on stderr
once, never silently.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from troubleshooter.output.redact import Redactor
from troubleshooter.output.safe import escape_controls, has_controls, markup


def _safe_console_class():
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        """A Rich console whose text segments are redacted and control-escaped before styling; Rich's own
        control segments (cursor moves) pass, a hyperlink whose target holds a control character is dropped."""

        emitter: Emitter | None = None

        def _render_buffer(self, buffer: Iterable[Segment]) -> str:  # type: ignore[override]
            em = self.emitter
            clean = []
            for text, style, control in buffer:
                if not control:
                    text = em.safe(text) if em is not None else escape_controls(text)
                    if style is not None and style.link and has_controls(style.link):
                        style = style.update_link(None)
                clean.append(Segment(text, style, control))
            return super()._render_buffer(clean)

    return SafeConsole


class Emitter:
    def __init__(self, *, redact: bool = True, redactor: Redactor | None = None, out: IO[str] | None = None,
                 err: IO[str] | None = None, warn_settings: bool = True) -> None:
        self._out, self._err = out, err
        self.known: set[str] = set()
        self._console = None
        warnings: list[str] = []
        if redactor is None:
            from troubleshooter import settings

            cfg = settings.load()
            warnings = cfg.warnings if warn_settings else []
            redactor = Redactor(cfg.redact_extra, enabled=redact)
        self.redactor = redactor
        for w in warnings:
            self.error(f"warning: settings: {w}")

    # ---- streams (looked up at each write: tests swap sys.stdout)
    @property
    def out(self) -> IO[str]:
        return self._out or sys.stdout

    @property
    def err(self) -> IO[str]:
        return self._err or sys.stderr

    # ---- making data safe
    def clean(self, o: Any, *, keep: Iterable[str] = ()) -> Any:
        """A redacted copy of a document or result object (dicts, lists, dataclasses); learns its secrets."""
        if not self.redactor.enabled:
            return o
        from troubleshooter.output.redact import OWN_KEYS

        keep = OWN_KEYS | frozenset(keep)
        self.known |= self.redactor.learn(o, keep=keep)
        return self.redactor.obj(o, known=self.known, keep=keep)

    def redact(self, s: str) -> str:
        return self.redactor.text(s, self.known) if self.redactor.enabled else s

    def safe(self, s: Any, *, one_line: bool = False) -> str:
        """Text for a human: redacted, control characters escaped."""
        return escape_controls(self.redact(str(s)), one_line=one_line)

    def m(self, s: Any) -> str:
        """Data inside a Rich markup string: redacted, escaped, its ``[`` not a tag."""
        return markup(self.redact(str(s)))

    def cell(self, s: Any, style: str = "") -> Any:
        """Data as a Rich Text (never read as markup): redacted, escaped."""
        from rich.text import Text

        return Text(self.safe(s), style=style)

    # ---- writing
    def line(self, s: Any = "", *, err: bool = False) -> None:
        stream = self.err if err else self.out
        stream.write(self.safe(s) + "\n")

    def error(self, msg: str) -> None:
        self.err.write(escape_controls(self.redact(f"troubleshooter: {msg}")) + "\n")

    def text(self, s: str) -> None:
        """A whole document (Markdown, Mermaid): redacted, escaped, ending with a newline."""
        s = self.safe(s)
        self.out.write(s if s.endswith("\n") else s + "\n")

    def json(self, doc: Any, *, indent: int | None = 2, keep: Iterable[str] = ()) -> None:
        self.out.write(self.json_text(doc, indent=indent, keep=keep) + "\n")

    def json_text(self, doc: Any, *, indent: int | None = 2, keep: Iterable[str] = ()) -> str:
        if isinstance(doc, str):  # already JSON: back to data, so that redaction cannot break its syntax
            doc = json.loads(doc)
        return json.dumps(self.clean(doc, keep=keep), indent=indent, default=str)

    @property
    def console(self):
        if self._console is None:
            con = _safe_console_class()(file=self._out, highlight=False)
            con.emitter = self
            self._console = con
        return self._console

    def rich(self, *renderables: Any) -> None:
        self.console.print(*renderables)

    def write_file(self, path: str | Path, data: str | bytes, *, clean: bool = False) -> Path:
        """A file that leaves the node (a ticket, a report): redacted, unless ``clean`` says it comes from
        :meth:`json_text` or :meth:`safe` already (redacting JSON as text could mask our own keys)."""
        p = Path(path)
        if isinstance(data, bytes):
            p.write_bytes(self.redactor.bytes(data) if self.redactor.enabled and not clean else data)
        else:
            p.write_text(data if clean else self.redact(data))
        return p
