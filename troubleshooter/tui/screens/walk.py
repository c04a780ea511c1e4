"""The walk: the transcript of steps with their why, facts and branch; the question at hand; the hypotheses.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from troubleshooter.output.safe import escape_controls as esc
from textual.widgets.option_list import Option

from troubleshooter.diagnosis import engine as eng
from troubleshooter.tui.screens.dialogs import ExportScreen
from troubleshooter.tui.screens.evidence import EvidenceScreen
from troubleshooter.tui.messages import ProbeProgress, StepTaken, WalkPaused
from troubleshooter.tui.render import hypotheses_table, render_step
from troubleshooter.tui.screens.results import ResultsScreen

if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.tui.app import TroubleshooterApp
    from troubleshooter.service.guide import Guide

# ---------------------------------------------------------------------------- the walk
class WalkScreen(Screen[None]):
    BINDINGS = [
        Binding("b", "back", "Back", id="walk.back",
                tooltip="Back to the previous question (at the first one: the symptom list)"),
        Binding("c", "cancel", "Cancel probes", id="walk.cancel", tooltip="Cancel the probes running now"),
        Binding("w", "toggle_why", "Why", id="walk.why", tooltip="Show or hide the why of each step"),
        Binding("h", "toggle_hyps", "Hypotheses", id="walk.hyps", tooltip="Show or hide the hypotheses"),
        Binding("r", "results", "Results", id="walk.results", tooltip="Root causes found so far"),
        Binding("e", "export", "Export", id="walk.export", tooltip="Export the ticket"),
        Binding("o", "output", "Output", id="walk.output", tooltip="The raw output of the probes behind the last step"),
    ]

    def __init__(self, guide: Guide, story: str = "") -> None:
        super().__init__()
        self.guide = guide
        self.story = story
        self.running: set[str] = set()
        self.last_output: dict[str, str] = {}  # source -> the newest line it printed (streamed while it runs)
        self.run_started = 0.0
        self.busy = False
        self.shown = 0  # steps of the walk in the transcript
        self.terms_seen: list[str] = []  # glossary terms the steps marked, newest first (g opens the first)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="crumbs")
        with Horizontal(id="walk-body"):
            with Vertical(id="walk-main"):
                yield VerticalScroll(id="transcript")
                with Vertical(id="question"):
                    yield Static("", id="question-text")
                    yield OptionList(id="choices")
            with VerticalScroll(id="hyps-panel"):
                yield Static("[b]Hypotheses[/b]\n[dim]● ruled in  ◐ possible  ○ ruled out  · untested  – n/a[/]", classes="panel-title")
                yield Static("", id="hyps")
        yield Static("", id="status")
        yield Footer()

    def on_resize(self, event) -> None:
        # at 80 columns the transcript needs the room; h shows the hypotheses again
        if not getattr(self, "_hyps_user", False):
            self.query_one("#hyps-panel").display = event.size.width >= 100

    def on_mount(self) -> None:
        if self.story:
            self.query_one("#transcript", VerticalScroll).mount(Static(Text(self.story, style="italic"), classes="story"))
        self.rerender()
        self.set_interval(0.25, self.tick)
        self.continue_walk()

    # -- rendering
    def rerender(self) -> None:
        tr = self.query_one("#transcript", VerticalScroll)
        for w in list(tr.query(".step")):
            w.remove()
        self.shown = 0
        self.terms_seen = []
        for s in self.guide.walk.steps if self.guide.walk else []:
            self.add_step(s, scroll=False)
        tr.anchor()  # stays at the newest step, whenever the layout lands (a scroll_end here raced it)
        self.update_side()

    def add_step(self, step: eng.Step, scroll: bool = True) -> None:
        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        terms = self.guide.glossary_terms(step) if step.kind in ("probe", "ask") else []
        if terms:
            self.terms_seen = [k for k, _ in terms] + [k for k in self.terms_seen if k not in dict(terms)]
        r = render_step(step, show_why=app.show_why, learn=app.learn, terms=terms)
        self.shown += 1
        if step.kind == "end":
            return
        w = Static(r, classes=f"step step-{step.kind}")
        tr = self.query_one("#transcript", VerticalScroll)
        tr.mount(w)
        if scroll:
            tr.anchor()  # back to following the newest step, even if the user had scrolled up

    def update_side(self) -> None:
        walk = self.guide.walk
        if walk is None:
            return
        self.query_one("#hyps", Static).update(hypotheses_table(walk.hypotheses))
        titles = [s.title for s in walk.steps if s.kind in ("ask", "call", "conclude")][-4:]
        crumbs = " › ".join([self.guide.symptom.title if self.guide.symptom else ""] + titles)
        self.query_one("#crumbs", Static).update(Text(esc(crumbs, one_line=True), style="dim", overflow="ellipsis", no_wrap=True))
        self.show_question()

    def show_question(self) -> None:
        question = self.guide.question()
        q = self.query_one("#question", Vertical)
        if self.busy or question is None:
            q.display = False
            return
        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        text = Text.assemble(("? ", "bold yellow"), (question.text, "bold"))
        if app.show_why and question.why:
            text.append("\n" + question.why, style="italic dim")
        self.query_one("#question-text", Static).update(text)
        ol = self.query_one("#choices", OptionList)
        ol.clear_options()
        for c in question.choices:
            label = Text(c.label, style="bold")
            if c.explain:
                label.append("\n  " + c.explain, style="dim")
            ol.add_option(Option(label, id=c.id))
        q.display = True
        ol.highlighted = 0
        ol.focus()

    def tick(self) -> None:
        st = self.query_one("#status", Static)
        walk = self.guide.walk
        if self.busy:
            names = ", ".join(sorted(self.running)) or "thinking"
            line = f"⏳ running {names}  ({time.monotonic() - self.run_started:.1f}s)  c: cancel"
            live = [(sid, text) for sid, text in self.last_output.items() if sid in self.running]
            if live:
                line += f"   {live[-1][0]}> {esc(live[-1][1], one_line=True)}"  # a probe's live output
            st.update(Text(line, style="yellow", overflow="ellipsis", no_wrap=True))
        elif walk is not None and walk.done:
            n = len(walk.conclusions)
            msg = f"done: {n} root cause{'s' if n != 1 else ''} found" if n else "done: no root cause found on this path"
            st.update(Text(f"✔ {msg}   r: results · e: export · b: back · esc: symptoms",
                           style="bold green" if not n else "bold red"))
        elif self.guide.question() is not None:
            st.update(Text("answer the question (↑↓ enter) · b: back · esc: symptoms · ?: help", style="dim"))
        else:
            st.update(Text("esc: symptoms · ?: help", style="dim"))

    def newest_term(self) -> str:
        """The glossary term the newest marked step links (g opens the glossary there), or ""."""
        return self.terms_seen[0] if self.terms_seen else ""

    # -- driving
    def continue_walk(self) -> None:
        self.busy = True
        self.run_started = time.monotonic()
        self.show_question()
        self.walk_worker()

    @work(thread=True, exclusive=True, group="walk", exit_on_error=False)
    def walk_worker(self) -> None:
        self.guide.run_to_question(on_step=lambda s: self.post_message(StepTaken(s)))
        self.post_message(WalkPaused())

    def on_step_taken(self, message: StepTaken) -> None:
        self.add_step(message.step)
        self.update_side()

    def on_probe_progress(self, message: ProbeProgress) -> None:
        if message.kind == "start":
            self.running.add(message.name)
        elif message.kind == "output":
            lines = [ln for ln in message.status.splitlines() if ln.strip()]
            if lines:
                self.last_output.pop(message.name, None)
                self.last_output[message.name] = lines[-1].strip()[:120]  # newest last
        else:
            self.running.discard(message.name)

    def on_walk_paused(self, message: WalkPaused) -> None:
        if self not in self.app.screen_stack:
            return  # left with esc while probes ran: the walk went on, the screen opened again shows it
        if self.guide.walk is not None and self.shown != len(self.guide.walk.steps):
            self.rerender()  # steps taken while this screen was not there (a walk left mid-probe)
        self.busy = False
        self.running.clear()
        self.last_output.clear()
        facts = self.guide.facts
        if getattr(facts, "cancel", None) is not None:
            facts.cancel.clear()
        self.update_side()
        self.tick()
        if self.guide.session and self.guide.session.write_error:
            self.app.notify(esc(self.guide.session.write_error), severity="error", timeout=10, markup=False)
        need = self.guide.need()
        if need is not None:
            self.ask_need(need)
            return
        if self.guide.done:
            # learning (a practice walk, learn mode), the steps are the lesson: they stay on screen and the
            # status line says r opens the results; otherwise the results open
            if not getattr(self.app, "learn", False):
                self.app.push_screen(ResultsScreen(self.guide))

    # -- a step needs what the target lacks: ask for it here, instead of walking on to "untested"
    def ask_need(self, need) -> None:
        from troubleshooter.tui.screens.attach import AttachScreen, LogNeedScreen

        def given(result) -> None:
            self.need_given(need, result)

        screen = AttachScreen(need) if need.kind == "job-context" else LogNeedScreen(need)
        self.app.push_screen(screen, given)

    def need_given(self, need, result) -> None:
        from troubleshooter.service.attach import attach, with_log

        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        if result is None or isinstance(result, str) and need.kind == "job-context":
            self.guide.waive(need.kind)
            app.notify(f"going on without {need.what}: this step stays untested and says so. From a shell: "
                       f"{need.rerun}", title="not given", timeout=12, markup=False)
        else:
            try:
                spec = attach(result, self.guide.spec) if need.kind == "job-context" \
                    else with_log(self.guide.spec, need.kind, result)
                self.guide.provide(spec)
            except Exception as exc:  # noqa: BLE001 - said, and asked again
                app.notify(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, title="cannot use it",
                           severity="error", timeout=8, markup=False)
                self.ask_need(need)
                return
            app.spec = self.guide.spec
            app.sub_title = app._shown(self.guide.target.label)
        self.continue_walk()

    @on(OptionList.OptionSelected, "#choices")
    def answered(self, event: OptionList.OptionSelected) -> None:
        if self.busy or not event.option.id:
            return
        if self.guide.question() is None:
            return
        self.guide.answer(event.option.id)
        self.add_step(self.guide.walk.steps[-1])
        self.continue_walk()

    def action_back(self) -> None:
        if self.busy:
            self.app.notify("wait for the probes to finish (c cancels them)")
            return
        if not self.guide.back():
            # no question answered yet (the first one, or a tree that asks none): back is the symptom list
            self.app.action_home("no earlier question: back at the symptom list; the walk is saved "  # type: ignore[attr-defined]
                                 "(\"Back to the walk\" reopens it)")
            return
        self.rerender()

    def action_cancel(self) -> None:
        facts = self.guide.facts
        if self.busy and getattr(facts, "cancel", None) is not None:
            facts.cancel.set()
            self.app.notify("cancelling: running probes are stopped, their facts become unknown")

    def action_toggle_why(self) -> None:
        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        app.show_why = not app.show_why
        self.rerender()

    def action_toggle_hyps(self) -> None:
        p = self.query_one("#hyps-panel")
        p.display = not p.display
        self._hyps_user = True

    def action_results(self) -> None:
        self.app.push_screen(ResultsScreen(self.guide))

    def action_output(self) -> None:
        steps = [s for s in (self.guide.walk.steps if self.guide.walk else []) if s.kind == "probe"]
        self.app.push_screen(EvidenceScreen(self.guide, steps[-1] if steps else None))

    def action_export(self) -> None:
        if self.guide.walk is None:
            return
        self.app.push_screen(ExportScreen(self.guide, self.app.settings.exports_path()))  # type: ignore[attr-defined]


