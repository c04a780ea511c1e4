"""Modal dialogs and small screens: message, error, input, export, glossary, help text.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from rich.text import Text

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header, Input, OptionList, Static
from textual.widgets.option_list import Option

from troubleshooter.output.safe import escape_controls as esc, markup
from troubleshooter.diagnosis import engine as eng
from troubleshooter.tui.render import _markdown

if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.service.guide import Guide

# ---------------------------------------------------------------------------- modal screens
class MessageScreen(ModalScreen[None]):
    # q quits, as on every screen (a modal screen does not reach the app's bindings, so it is said again here,
    # with the app's id: a keymap that moves app.quit moves this one too)
    BINDINGS = [Binding("escape,enter", "dismiss", "Close", id="close"),
                Binding("q", "app.quit", "Quit", id="app.quit", show=False)]

    def __init__(self, title: str, body: str, *, markdown: bool = False) -> None:
        super().__init__()
        self.title_text, self.body, self.markdown = title, body, markdown

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.title_text, classes="dialog-title")
            with VerticalScroll():
                yield _markdown(self.body) if self.markdown else Static(self.body)
            yield Static("[dim]enter or esc to close[/]")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)


class ErrorScreen(MessageScreen):
    pass


class InputScreen(ModalScreen[str | None]):
    """One line of input. ``check`` (value -> what is wrong, "" if nothing) keeps the dialog open with the
    problem shown under the field, so a typo is fixed in place instead of ending in an error dialog."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="cancel")]

    def __init__(self, prompt: str, placeholder: str = "", check: Callable[[str], str] | None = None) -> None:
        super().__init__()
        self.prompt, self.placeholder, self.check = prompt, placeholder, check

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.prompt, classes="dialog-title")
            yield Input(placeholder=self.placeholder, id="path")
            yield Static("", id="input-error")
            yield Static("[dim]enter to open, esc to cancel[/]")

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if not (self.check and value):
            self.dismiss(value or None)
            return
        # the check may read what the value names (a 100,000-line log takes seconds): off the UI thread, the
        # field held until it answers; esc still cancels
        self.query_one("#input-error", Static).update(Text("checking…", style="dim"))
        self.query_one(Input).disabled = True
        self._run_check(value)

    @work(thread=True, exclusive=True, group="input-check", exit_on_error=False)
    def _run_check(self, value: str) -> None:
        assert self.check is not None
        try:
            problem = self.check(value)
        except Exception as exc:  # noqa: BLE001 - a check that fails says why, in the dialog
            problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        self.app.call_from_thread(self._checked, value, problem)

    def _checked(self, value: str, problem: str) -> None:
        if self.app.screen is not self:  # cancelled while it was checked
            return
        field = self.query_one(Input)
        field.disabled = False
        if problem:
            self.query_one("#input-error", Static).update(Text(problem, style="bold red"))
            field.focus()
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ExportScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("m", "write('md')", "Write Markdown", id="export.md"),
        Binding("j", "write('json')", "Write JSON", id="export.json"),
        Binding("b", "write('bundle')", "Write bundle", id="export.bundle"),
        Binding("escape", "dismiss", "Close", id="export.close"),
        Binding("q", "app.quit", "Quit", id="app.quit", show=False),  # as on every screen
    ]

    def __init__(self, guide: Guide, directory: Path) -> None:
        super().__init__()
        self.guide, self.directory = guide, directory
        self.written: list[str] = []

    def compose(self) -> ComposeResult:
        from troubleshooter.output import export

        with Vertical(id="export"):
            yield Static("Export: the ticket preview (secrets redacted). m Markdown · j JSON · b bundle · esc close",
                         classes="dialog-title")
            with VerticalScroll(id="preview"):
                yield _markdown(esc(export.to_markdown(self.guide.doc())))
            yield Static("", id="written")

    def action_write(self, fmt: str) -> None:
        try:
            path = self.guide.export(fmt, self.directory)
        except (OSError, ValueError) as exc:
            self.query_one("#written", Static).update(f"[red]could not write {fmt}: {markup(exc)}[/]")
            return
        self.written.append(str(path))
        self.query_one("#written", Static).update("\n".join(f"[green]wrote[/] {markup(p)}" for p in self.written))
        self.app.notify(f"wrote {markup(path)}", title="export")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)


class GlossaryScreen(Screen[None]):
    """The glossary: a search box, the terms that match, the term's entry. ``term`` opens it at that term (a
    term marked in a step). It opens on the terms, where q quits as on every screen; / (or any letter that is
    no key of the app, such as the s of "steal") starts the search, and what is typed in the search box is
    text, never a key of the app."""

    # esc closes it like help (back where g was pressed); q quits, as on every screen
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="glossary.back"),
                Binding("slash", "search", "Search", id="glossary.search", tooltip="Search the glossary"),
                Binding("down", "to_terms", "Terms", id="glossary.terms", show=False,
                        tooltip="From the search box down to the terms")]

    def __init__(self, term: str = "") -> None:
        super().__init__()
        self.terms = eng.load_glossary()
        self.start_term = term.lower()

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="terms-side"):
                yield Input(placeholder="/ to search", id="glossary-search", select_on_focus=False)
                yield OptionList(id="terms")
            with VerticalScroll(id="term-detail"):
                yield _markdown("Pick a term.", id="term-md")
        yield Footer()

    def on_mount(self) -> None:
        self.fill("")
        ol = self.query_one("#terms", OptionList)
        if self.start_term in self.terms:
            ids = [ol.get_option_at_index(i).id for i in range(ol.option_count)]
            ol.highlighted = ids.index(self.start_term)
            self.show_term(self.start_term)
        ol.focus()

    def action_search(self) -> None:
        self.query_one("#glossary-search", Input).focus()

    def on_key(self, event) -> None:
        """A letter typed on the terms that is no key of the app starts the search with it (the event stops
        here, so the app never sees it); in the search box the Input takes every printable key itself."""
        search = self.query_one("#glossary-search", Input)
        if self.focused is search or not event.character or not event.is_printable:
            return
        if not event.character.isalnum() or event.key in self.active_bindings:
            return
        event.stop()
        event.prevent_default()
        search.focus()
        search.insert_text_at_cursor(event.character)

    def matches(self, query: str) -> list[str]:
        """Term keys whose name matches ``query`` first, then those whose text does (case-insensitive)."""
        q = query.strip().lower()
        keys = sorted(self.terms, key=lambda k: self.terms[k]["term"].lower())
        if not q:
            return keys
        by_name = [k for k in keys if q in k]
        by_text = [k for k in keys if k not in by_name and
                   q in f"{self.terms[k].get('short', '')} {self.terms[k].get('long', '')}".lower()]
        return by_name + by_text

    def fill(self, query: str) -> None:
        ol = self.query_one("#terms", OptionList)
        ol.clear_options()
        found = self.matches(query)
        ol.add_options([Option(esc(self.terms[k]["term"]), id=k) for k in found])
        if found:
            ol.highlighted = 0
            self.show_term(found[0])
        else:
            self.query_one("#term-md").update(f"No term matches “{esc(query)}”.")  # type: ignore[attr-defined]

    @on(Input.Changed, "#glossary-search")
    def searched(self, event: Input.Changed) -> None:
        self.fill(event.value)

    @on(Input.Submitted, "#glossary-search")
    def search_done(self, event: Input.Submitted) -> None:
        self.action_to_terms()

    def action_to_terms(self) -> None:
        self.query_one("#terms", OptionList).focus()

    @on(OptionList.OptionHighlighted, "#terms")
    def show(self, event: OptionList.OptionHighlighted) -> None:
        self.show_term(event.option.id or "")

    def show_term(self, key: str) -> None:
        from textual.widgets import Markdown

        t = self.terms.get(key, {})
        body = f"# {t.get('term', '')}\n\n{t.get('short', '')}\n\n{t.get('long', '')}"
        self.query_one("#term-md", Markdown).update(esc(body))


HELP = """\
# Keys

| key | where | what |
|---|---|---|
| ↑ ↓ (j k) enter | lists | choose |
| tab | anywhere | the next list or pane (a command block too: ← → scroll it) |
| esc | anywhere | back to the symptom list; the walk is saved ("Back to the walk" on the list reopens it). In a dialog, help or the glossary: close it |
| b | a walk | back to the previous question, to take another branch; at the first question, the symptom list |
| b | results, raw output | back to the walk |
| c | a walk | cancel the probes running now (their facts become unknown; the walk goes on) |
| w | a walk | show or hide the *why* of each step |
| l | anywhere | learn mode: explain every branch in full |
| h | a walk | show or hide the hypotheses panel |
| o | a walk | the raw output of the probes behind the last step, exactly as printed |
| r | a walk | results: the root causes found so far |
| c / enter | results | copy the selected command (OSC 52 clipboard, and written to a file) |
| v | results | verify: re-run the probes of the selected cause and compare before / after |
| m | results | record the step time after a fix: the ticket shows where the gap went, fix by fix |
| e | walk, results | export the ticket (Markdown, JSON, bundle) |
| / | symptom list, sessions, glossary | search the list: type to filter, enter to the list, esc clears |
| a | symptom list | attach: run the probes in a running Slurm job, container or training process |
| p s d o | symptom list | preflight, resume a session, practise, open a bundle |
| enter / w | practice cases | the quiz (you choose each probe, read its output, then the expert's choice, a score, a debrief) / watch the expert walk it |
| o / d | a practice round | the whole output of the probe you chose / the expert walk of this case |
| g | anywhere | glossary: at the newest term a step underlined (a click on a term opens it too); / searches it (typing there is text, never a key) |
| ? | anywhere | this help |
| ctrl+p | anywhere | command palette (every action) |
| t | anywhere | light / dark theme |
| q | every screen | quit (the session is saved as you go; `troubleshooter --resume` picks it up). In a text field q is typed |

Fix commands are shown and copied, **never run** by this tool.

# Marks

| mark | hypothesis |
|---|---|
| ● | ruled in: the evidence points at it |
| ○ | ruled out: the evidence clears it |
| · | untested: nothing on this path settled it yet |
"""


def keymap_markdown(rows: list[tuple[str, str, str]], remapped: dict[str, str]) -> str:
    """The keymap as it is now: every binding's id, its keys (after the user's ``keymap``), what it does,
    and how to change it."""
    out = ["# Keymap", "",
           "Every key has an id. Remap any of them in the config file (`troubleshooter locate` prints its path):",
           "", "```yaml", "keymap: {walk.back: \"left,b\", app.quit: \"ctrl+q\"}", "```", "",
           "or for one run: `TROUBLESHOOTER_KEYMAP='walk.back=left,b;app.quit=ctrl+q'`. "
           "Several keys are separated by commas.", "",
           "| id | keys now | what |", "|---|---|---|"]
    for bid, keys, what in rows:
        now = remapped.get(bid, keys)
        mark = " (remapped)" if bid in remapped else ""
        out.append(f"| `{bid}` | {now.replace('question_mark', '?').replace(',', ', ')}{mark} | {what.replace('|', '/')} |")
    return "\n".join(out) + "\n"
