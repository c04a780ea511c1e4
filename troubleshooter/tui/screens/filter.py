"""``/`` searches a list: a field opens above it, and typing keeps the options that hold every word typed (symptoms,
sessions, glossary terms). Enter goes to the filtered list, esc clears the search and closes the field. Typing in
the field never reaches the app's one-key bindings (q, t, l ... are typed, not run).
"""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option


class FilterInput(Input):
    BINDINGS = [Binding("escape", "clear_filter", "Clear the search", id="filter.clear")]

    def action_clear_filter(self) -> None:
        self.screen.clear_filter()  # type: ignore[attr-defined]


def _plain(option: Option) -> str:
    prompt = option.prompt
    return (getattr(prompt, "plain", None) or str(prompt)).lower()


class Filterable:
    """Mixin for a screen with one list to search: set FILTER_LIST to its id and bind ``/`` to ``filter``."""

    FILTER_LIST = ""
    FILTER_BINDING = Binding("slash", "filter", "Search", id="list.search", show=False,
                             tooltip="Search this list (type to filter)")
    _filter_all: list[Option] | None = None

    def action_filter(self) -> None:
        ol = self.query_one(f"#{self.FILTER_LIST}", OptionList)  # type: ignore[attr-defined]
        found = self.query("#filter")  # type: ignore[attr-defined]
        if self._filter_all is None:
            self._filter_all = list(ol.options)
        if found:
            inp = found.first()
        else:
            inp = FilterInput(placeholder="search: type to filter · enter: the list · esc: clear", id="filter")
            ol.parent.mount(inp, before=ol)
        inp.display = True
        inp.focus()

    # named handlers, not @on: the decorator registers only on message-pump classes, and this is a mixin
    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.apply_filter(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            event.stop()
            self.query_one(f"#{self.FILTER_LIST}", OptionList).focus()  # type: ignore[attr-defined]

    def apply_filter(self, text: str) -> None:
        ol = self.query_one(f"#{self.FILTER_LIST}", OptionList)  # type: ignore[attr-defined]
        if self._filter_all is None:
            self._filter_all = list(ol.options)
        words = text.lower().split()
        keep = [o for o in self._filter_all if not words or (not o.disabled and all(w in _plain(o) for w in words))]
        ol.clear_options()
        if keep:
            ol.add_options(keep)
        else:
            ol.add_option(Option(f"nothing matches {text.strip()!r} (esc clears the search)", disabled=True))
        first = next((i for i, o in enumerate(keep) if not o.disabled), None)
        ol.highlighted = first

    def clear_filter(self) -> None:
        """Every option back, the field closed, the list focused."""
        if self._filter_all is not None:
            ol = self.query_one(f"#{self.FILTER_LIST}", OptionList)  # type: ignore[attr-defined]
            ol.clear_options()
            ol.add_options(self._filter_all)
            self._filter_all = None
            ol.highlighted = next((i for i, o in enumerate(ol.options) if not o.disabled), None)
            ol.focus()
        for inp in self.query("#filter"):  # type: ignore[attr-defined]
            inp.value = ""
            inp.display = False

    def forget_filter(self) -> None:
        """The list was rebuilt: the search starts again from it."""
        self._filter_all = None
        for inp in self.query("#filter"):  # type: ignore[attr-defined]
            inp.value = ""
            inp.display = False
