"""Pick a practice case.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option


if TYPE_CHECKING:  # pragma: no cover
    pass

class PracticeScreen(Screen[None]):
    # esc: the app's "Symptoms" (back to the symptom list), as on every screen
    BINDINGS = [Binding("w", "walk", "Expert walk", id="practice.walk",
                        tooltip="Walk the highlighted case as the expert does, every step explained")]

    def compose(self) -> ComposeResult:
        from troubleshooter.service.practice import load_cases as practice_cases

        yield Header()
        yield Static("[b]Practise on a reference case[/b]: a capture built from NVIDIA's case studies.\n"
                     "enter: you choose each probe and read its output, then see the expert's choice, a score and "
                     "a debrief · w: watch the expert walk it, every step explained", id="prompt")
        ol = OptionList(id="cases")
        for c in practice_cases():
            ol.add_option(Option(Text.assemble((c["title"], "bold"), "\n  ", (f"symptom: {c['symptom']}", "dim")), id=c["id"]))
        yield ol
        yield Footer()

    def on_mount(self) -> None:
        ol = self.query_one("#cases", OptionList)
        if ol.option_count:
            ol.highlighted = 0
        ol.focus()

    @on(OptionList.OptionSelected, "#cases")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.app.start_quiz(event.option.id or "")  # type: ignore[attr-defined]

    def action_walk(self) -> None:
        ol = self.query_one("#cases", OptionList)
        if ol.highlighted is None:
            return
        opt = ol.get_option_at_index(ol.highlighted)
        self.app.start_practice(opt.id or "")  # type: ignore[attr-defined]


