"""The raw output behind a step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static

from troubleshooter.output.safe import escape_controls as esc
from textual.widgets.option_list import Option

from troubleshooter.diagnosis import engine as eng

if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.service.guide import Guide

def captured(render, width: int) -> Text:
    """Run a Rich printer (the CLI's own) into a Text for a Static."""
    import io

    from rich.console import Console

    buf = io.StringIO()
    con = Console(file=buf, width=max(40, width), force_terminal=True, color_system="truecolor", highlight=False)
    render(con)
    return Text.from_ansi(buf.getvalue())


class EvidenceScreen(Screen[None]):
    """The raw output of the probes behind a step: what the tool read, exactly as printed."""

    BINDINGS = [Binding("b", "app.pop_screen", "Back", id="evidence.back", tooltip="Back (esc: the symptom list)")]

    def __init__(self, guide: Guide, step: eng.Step | None) -> None:
        super().__init__()
        self.guide, self.step = guide, step

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            yield OptionList(id="evidence-list")
            with VerticalScroll(id="evidence-detail"):
                yield Static("", id="evidence-text")
        yield Footer()

    def _items(self) -> list[tuple[str, str, Any]]:
        """Every source's evidence in this session, the last step's first."""
        evs = getattr(self.guide.facts, "evidence", {}) or {}
        wanted = set(self.step.evidence) if self.step is not None else set()
        out = []
        for side, items in evs.items():
            for sid, ev in sorted(items.items()):
                key = sid if side == "target" else f"{side}:{sid}"
                out.append((key, ev.describe(), ev))
        out.sort(key=lambda item: item[0] not in wanted)
        return out

    def on_mount(self) -> None:
        ol = self.query_one("#evidence-list", OptionList)
        for key, status, ev in self._items():
            ol.add_option(Option(Text.assemble((esc(key, one_line=True), "bold"), "\n  ", (esc(status[:60], one_line=True), "dim")), id=key))
        if not ol.option_count:
            ol.add_option(Option("no raw evidence (pasted outputs or canned facts)", id="", disabled=True))
        else:
            ol.highlighted = 0
        ol.focus()

    @on(OptionList.OptionHighlighted, "#evidence-list")
    def show(self, event: OptionList.OptionHighlighted) -> None:
        for key, status, ev in self._items():
            if key == event.option.id:
                head = Text.assemble((f"$ {esc(' '.join(ev.argv)[:400], one_line=True)}\n", "bold"), (f"{esc(status)}\n\n", "dim"))
                body = ev.text[-20000:] if len(ev.text) > 20000 else ev.text
                err = ev.stderr_text.strip()
                tail = Text(f"\n--- stderr ---\n{esc(err[-4000:])}", style="magenta") if err else Text("")
                self.query_one("#evidence-text", Static).update(head + Text(esc(body)) + tail)


