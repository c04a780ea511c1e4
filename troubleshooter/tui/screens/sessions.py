"""Saved sessions: resume one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from troubleshooter.tui.screens.filter import Filterable


if TYPE_CHECKING:  # pragma: no cover
    pass

class SessionsScreen(Filterable, Screen[None]):
    FILTER_LIST = "sessions"
    BINDINGS = [Filterable.FILTER_BINDING]
    # esc: the app's "Symptoms" (back to the symptom list), as on every screen

    def compose(self) -> ComposeResult:
        from troubleshooter.session import list_sessions

        yield Header()
        yield Static("[b]Resume a session[/b] (newest first; / search)", id="prompt")
        ol = OptionList(id="sessions")
        for i in list_sessions(self.app.session_dir):  # type: ignore[attr-defined]
            label = Text.assemble((f"{i.created}  {i.symptom}", "bold"), f"  {i.status}",
                                  ("\n  " + (", ".join(i.conclusions) or "no cause yet") + f"  [{i.target}]", "dim"))
            ol.add_option(Option(label, id=i.id))
        if not ol.option_count:
            ol.add_option(Option("no saved sessions yet", id="", disabled=True))
        yield ol
        yield Footer()

    def on_mount(self) -> None:
        ol = self.query_one("#sessions", OptionList)
        ol.highlighted = 0
        ol.focus()

    @on(OptionList.OptionSelected, "#sessions")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.app.resume_session(event.option.id)  # type: ignore[attr-defined]


