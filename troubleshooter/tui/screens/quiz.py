"""Practice that teaches: choose the next probe, read its output, see the expert's choice and why; name the
root cause; the debrief. The rounds, outputs and feedback come from :mod:`troubleshooter.service.quiz`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.panel import Panel
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from troubleshooter.output.safe import markup
from troubleshooter.tui.render import _markdown

if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.service.quiz import Feedback, Quiz, Round

NEXT = "__next__"
SHOWN_LINES = 12  # of a probe's output in the transcript; o opens the whole output


class QuizScreen(Screen[None]):
    # esc: the app's "Symptoms"; q quits (the app's bindings reach this screen)
    BINDINGS = [Binding("o", "output", "Whole output", id="quiz.output",
                        tooltip="The whole output of the probe you chose last"),
                Binding("d", "walk", "Expert walk", id="quiz.walk",
                        tooltip="Walk this case step by step as the expert does (learn mode)")]

    def __init__(self, quiz: Quiz) -> None:
        super().__init__()
        self.quiz = quiz
        self.last: Feedback | None = None
        self.waiting_next = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield VerticalScroll(id="transcript")
        with Vertical(id="question"):
            yield Static("", id="question-text")
            yield OptionList(id="choices")
        yield Static("", id="status")
        yield Footer()

    async def on_mount(self) -> None:
        intro = Text.assemble((f"Practice: {self.quiz.title}\n", "bold"), (self.quiz.intro, "italic"),
                              ("\n\nChoose the probe you would run next; read what it printed; then see the "
                               "expert's choice and why. At the end, name the root cause.", "dim"))
        self.query_one("#transcript", VerticalScroll).mount(Static(intro, classes="story"))
        await self.show_round()

    # -- rounds
    def _mount(self, renderable, classes: str = "step") -> None:
        tr = self.query_one("#transcript", VerticalScroll)
        tr.mount(Static(renderable, classes=classes))
        tr.anchor()

    async def show_round(self) -> None:
        self.waiting_next = False
        r = self.quiz.current()
        if r is None:
            await self.show_debrief()
            return
        for line in r.context:
            self._mount(Text(f"· {line}", style="dim"), "step step-call")
        total = len(self.quiz.rounds)
        what = "name the root cause" if r.is_diagnosis else "choose a probe"
        self.query_one("#question-text", Static).update(
            Text.assemble(("? ", "bold yellow"), (f"Round {r.index} of {total}: {r.prompt}", "bold"),
                          (f"   ({what}: ↑↓ enter)", "dim")))
        ol = self.query_one("#choices", OptionList)
        ol.clear_options()
        for o in r.options:
            label = Text(o.title, style="bold")
            if o.command:
                label.append(f"\n  $ {o.command}", style="dim")
            ol.add_option(Option(label, id=o.id))
        self.query_one("#question").display = True
        ol.highlighted = 0
        ol.focus()
        self.update_status()

    def update_status(self) -> None:
        got, most = self.quiz.score()
        answered = sum(1 for r in self.quiz.rounds if r.feedback)
        self.query_one("#status", Static).update(
            Text(f"score {got} of {most} possible · round {min(answered + 1, len(self.quiz.rounds))} of "
                 f"{len(self.quiz.rounds)} · o: whole output · esc: symptoms", style="dim"))

    @on(OptionList.OptionSelected, "#choices")
    async def chosen(self, event: OptionList.OptionSelected) -> None:
        if self.waiting_next:
            await self.show_round()
            return
        r = self.quiz.current()
        if r is None or not event.option.id:
            return
        fb = self.quiz.choose(event.option.id)
        self.last = fb
        self._mount(self.feedback(r, fb))
        self.waiting_next = True
        ol = self.query_one("#choices", OptionList)
        ol.clear_options()
        nxt = "See the debrief →" if self.quiz.done else (
            "Name the root cause →" if self.quiz.current() and self.quiz.current().is_diagnosis else "Next round →")
        ol.add_option(Option(Text(nxt, style="bold"), id=NEXT))
        ol.highlighted = 0
        self.query_one("#question-text", Static).update(Text.assemble(
            ("✓ right" if fb.correct else "✗ not the expert's choice", "bold green" if fb.correct else "bold yellow"),
            ("  · feedback above · enter: next", "dim")))
        self.update_status()

    def feedback(self, r: Round, fb: Feedback) -> Group:
        parts: list = []
        head = "Your diagnosis" if r.is_diagnosis else "You ran"
        parts.append(Text.assemble((f"Round {r.index} · {head}: ", "bold"), (fb.chosen.title, "bold cyan")))
        if fb.output_full:
            lines = fb.output_full.splitlines()
            shown = "\n".join(lines[:SHOWN_LINES])
            if len(lines) > SHOWN_LINES:
                shown += f"\n… {len(lines) - SHOWN_LINES} more lines (o shows them all)"
            parts.append(Panel(Text(shown), title="what it printed", title_align="left", border_style="dim",
                               expand=True))
        if fb.shows:
            parts.append(Text("It shows: " + "; ".join(fb.shows)))
        parts.append(Text(("✓ " if fb.correct else "✗ ") + fb.verdict,
                          style="bold green" if fb.correct else "bold yellow"))
        for w in fb.why:
            parts.append(Text(f"  {w}", style="italic"))
        return Group(*parts)

    async def show_debrief(self) -> None:
        self.query_one("#question").display = False
        tr = self.query_one("#transcript", VerticalScroll)
        md = _markdown(self.quiz.debrief_markdown(), id="debrief")
        await tr.mount(md)
        got, most = self.quiz.score()
        self.query_one("#status", Static).update(
            Text(f"✔ done: score {got} of {most} · d: walk it as the expert · esc: symptoms", style="bold green"))
        tr.anchor(False)  # the debrief is read from its top, not its end
        tr.focus()
        self.set_timer(0.1, lambda: tr.scroll_to_widget(md, top=True, animate=False))

    # -- actions
    def action_output(self) -> None:
        from troubleshooter.tui.screens.dialogs import MessageScreen

        if self.last is None or not self.last.output_full:
            self.app.notify("choose a probe first: its whole output opens here")
            return
        self.app.push_screen(MessageScreen(markup(f"{self.last.chosen.title}: the whole output"),
                                           Text(self.last.output_full)))  # type: ignore[arg-type]

    def action_walk(self) -> None:
        self.app.start_practice(self.quiz.case["id"])  # type: ignore[attr-defined]
