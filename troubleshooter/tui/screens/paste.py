"""Paste a tool's output into the app: what ``diagnose --evidence FILE`` reads, without saving a file first.

The text is kept in a private file under the data folder (``pasted/``) and read as pasted outputs are (a
terminal transcript is cut at its prompts, each block routed by its command line; a pdsh paste of many nodes is
its nodes). Each paste adds to the outputs already pasted, so the host's env and the container's env, or ibstat
then nvidia-smi, can be given one after the other. A paste nothing in which can be read keeps the dialog open
with the reason, and the text stays in the box.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static, TextArea

from troubleshooter import locations
from troubleshooter.output.safe import markup


class PasteScreen(ModalScreen[str | None]):
    """A box to paste into, where it ran and what printed it (both optional), ctrl+s to read it. Dismissed with
    the evidence spec (``[SIDE:][KIND=]FILE``) of the kept paste, or None when cancelled."""

    BINDINGS = [Binding("ctrl+s", "read", "Read it", id="paste.read", tooltip="Read the pasted text"),
                Binding("escape", "cancel", "Cancel", id="paste.cancel", tooltip="Close; nothing is kept")]

    def compose(self) -> ComposeResult:
        with Vertical(id="paste-dialog"):
            yield Static("Paste a tool's output or a terminal transcript (ibstat, nvidia-smi -q, an NCCL_DEBUG=INFO "
                         "log, env, a pdsh paste of many nodes ...)", classes="dialog-title")
            yield TextArea(id="paste-text", soft_wrap=False, show_line_numbers=True)
            with Horizontal(id="paste-row"):
                yield Input(placeholder="ran on: host, container, node", id="paste-side")
                yield Input(placeholder="what printed it (optional)", id="paste-kind")
                yield Button("Read it (ctrl+s)", id="paste-read", variant="primary")
            yield Static("", id="paste-error")
            yield Static("[dim]where it ran and what printed it are optional (what printed it is detected); each paste "
                         "adds to those read before; secrets stay in a private file and are redacted in everything "
                         "shown or exported · esc cancels[/]")

    def on_mount(self) -> None:
        self.query_one("#paste-text", TextArea).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "paste-read":
            self.action_read()

    def problem(self, why: str) -> None:
        self.query_one("#paste-error", Static).update(Text(self.app.redacted(why), style="bold red"))  # type: ignore[attr-defined]

    reading = False  # a paste is being read (ctrl+s again does nothing)
    cancelled = False  # closed (esc): a read still running keeps nothing

    def action_read(self) -> None:
        if self.reading:
            return
        text = self.query_one("#paste-text", TextArea).text
        side = self.query_one("#paste-side", Input).value.strip()
        if not text.strip():
            self.problem("nothing pasted yet")
            return
        from troubleshooter.diagnosis.pasted import SPEC

        if side and SPEC.match(f"{side}:x")["side"] != side:  # type: ignore[index]  # what --evidence reads as SIDE:
            self.problem(f"{side!r} is not a side's name: host, container, or a node's name (letters, digits, . _ -)")
            return
        kind = self.query_one("#paste-kind", Input).value.strip()
        if kind:
            import difflib

            from troubleshooter import parsers

            if kind not in parsers.kinds():
                near = difflib.get_close_matches(kind, parsers.kinds(), n=3, cutoff=0.5)
                self.problem(f"no kind {kind!r}" + (f"; did you mean {', '.join(near)}?" if near else "")
                             + " (troubleshooter parse --list lists them)")
                return
        import secrets

        path = locations.pasted_dir() / f"paste-{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}.txt"
        try:
            locations.write_private(path, text.encode("utf-8", errors="replace"))  # a lone surrogate: "?", never a crash
        except OSError as exc:
            self.problem(str(exc))
            return
        spec = (f"{side}:" if side else "") + (f"{kind}=" if kind else "") + str(path)
        self.reading = True
        self.query_one("#paste-error", Static).update(Text("reading…", style="dim"))
        self.query_one("#paste-read", Button).disabled = True
        self.read_paste(spec, path)

    @work(thread=True, exclusive=True, group="paste", exit_on_error=False)
    def read_paste(self, spec: str, path: Path) -> None:
        """Read off the UI thread: a log of 100,000 lines takes seconds."""
        from troubleshooter.diagnosis.pasted import PastedError

        try:
            facts = self.app.outputs.read([spec])  # type: ignore[attr-defined]  # kept: the paste is read once
        except Exception as exc:  # noqa: BLE001 - PastedError: nothing in it read; said, the text stays in the box
            path.unlink(missing_ok=True)
            if isinstance(exc, PastedError):  # "none of the files could be read: PATH: why"
                why = "nothing in it could be read: " + str(exc).split(f"{path}: ", 1)[-1]
                if "name the kind" in why:
                    why += "; name it under 'what printed it'"
            else:
                why = f"cannot read it: {type(exc).__name__}: {exc}"
            self.app.call_from_thread(self.refused, why.replace(str(path), "the paste"))
            return
        if self.cancelled:  # closed while it was read: nothing kept
            path.unlink(missing_ok=True)
            return
        read = "\n".join(ln.replace(str(path), path.name) for ln in facts.report_lines())
        self.app.call_from_thread(self.read_ok, spec, read)

    def refused(self, why: str) -> None:
        self.reading = False
        if self.cancelled:
            return
        self.query_one("#paste-read", Button).disabled = False
        self.problem(why)

    def read_ok(self, spec: str, read: str) -> None:
        self.app.notify(markup(self.app.redacted(read)), title="pasted")  # type: ignore[attr-defined]
        self.dismiss(spec)

    def action_cancel(self) -> None:
        self.cancelled = True
        self.dismiss(None)
