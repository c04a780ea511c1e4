"""Results: root causes with evidence, copyable fixes, verify, what remains untested.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from troubleshooter.output.safe import escape_controls as esc, markup
from textual.widgets.option_list import Option

from troubleshooter.diagnosis import engine as eng
from troubleshooter.tui.screens.dialogs import ExportScreen, InputScreen
from troubleshooter.tui.render import _markdown, conclusion_markdown

if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.service.guide import Guide

def command_label(head: str, command: str) -> Text:
    """A command in the Commands list: one row, its first line cut with a visible "…" (the detail pane shows
    it whole, and c copies it whole); a command of several lines says how many."""
    lines = command.splitlines() or [""]
    count = f", {len(lines)} lines" if len(lines) > 1 else ""
    return Text.assemble((f"{head}{count}: ", "bold"), esc(lines[0], one_line=True), no_wrap=True, overflow="ellipsis")


def no_cause_text(hyps, *, done: bool = True) -> str:
    """What a result with no cause says: only what is true of the hypotheses (none named, some untested,
    some ruled in without a conclusion, or really every one ruled out)."""
    untested = [h for h in hyps if h.state == "untested"]
    suspected = [h for h in hyps if h.state == "suspected"]
    ruled_in = [h for h in hyps if h.state == "ruled-in"]
    ruled_out = [h for h in hyps if h.state == "ruled-out"]
    lines = ["No cause was ruled in." if done else "No cause ruled in yet: the walk is not finished."]
    if suspected:
        lines += ["", "The outputs point at these, without deciding them; what would settle each:", ""]
        lines += [f"- **{h.title}** ({h.evidence}): `{h.settle}`" for h in suspected]
    if untested:
        lines += ["", "Still untested, and what would settle it:", ""]
        lines += [f"- **{h.title}**: `{h.settle}`" if h.settle else f"- **{h.title}**: nothing on this path settles it"
                  for h in untested]
    if ruled_in:
        lines += ["", "Ruled in by an answer, but no cause concluded:", ""]
        lines += [f"- **{h.title}**: {h.evidence}" for h in ruled_in]
    if not hyps:
        lines += ["", "This path names no hypotheses, so none was tested or ruled out."]
    elif ruled_out and len(ruled_out) == len(hyps):
        lines += ["", f"Every hypothesis on this path ({len(hyps)}) was ruled out."]
    elif ruled_out:
        lines += ["", f"Ruled out: {', '.join(h.title for h in ruled_out)}."]
    return "\n".join(lines)


class ResultsScreen(Screen[None]):
    BINDINGS = [
        Binding("c", "copy", "Copy", id="results.copy", tooltip="Copy the selected command"),
        Binding("v", "verify", "Verify", id="results.verify", tooltip="Re-run the probes of this cause"),
        Binding("e", "export", "Export", id="results.export", tooltip="Export the ticket"),
        Binding("m", "measure", "Measure", id="results.measure",
                tooltip="Record the step time (or throughput) after a fix: the ticket shows where the gap went"),
        Binding("b", "app.pop_screen", "Walk", id="results.back", tooltip="The walk's steps (esc: the symptom list)"),
    ]

    def __init__(self, guide: Guide) -> None:
        super().__init__()
        self.guide = guide
        self.selected: eng.Conclusion | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        conc = self.guide.walk.conclusions if self.guide.walk else []
        with Horizontal(id="results-body"):
            with Vertical(id="results-left"):
                from troubleshooter.output.summary import counts, headline

                hyps = self.guide.walk.hypotheses if self.guide.walk else []
                head = headline(len(conc), counts(hyps)) if (conc or self.guide.done) else \
                    "No root cause found yet (the walk is not finished)"
                yield Static(Text(head, style="bold"), classes="panel-title")
                for note in self.guide.noted():  # what the outputs say that is no cluster fault (redacted)
                    yield Static(Text.assemble(("Noted: ", "bold"), esc(note)), classes="not-given")
                for need in self.guide.waived():  # said here, not buried: what was not given, and how to give it
                    yield Static(Text.assemble(("Not given: ", "bold yellow"), need.what, ("\n  rerun: ", "dim"),
                                               (need.rerun, "cyan")), classes="not-given")
                yield OptionList(*[Option(Text(esc(c.title, one_line=True), style="bold red"), id=c.cause) for c in conc], id="causes")
                yield Static("[b]Commands[/b] (enter/c copies, never runs)", classes="panel-title")
                yield OptionList(id="commands")
            with VerticalScroll(id="results-detail"):
                yield _markdown(self._empty_text(conc), id="cause-md")
        yield Static("", id="verify-result")
        yield Footer()

    def _empty_text(self, conc) -> str:
        lesson = self.guide.practice_missed()  # a practice walk that missed its case's cause says how to find it
        if conc:
            return (lesson + "\n" if lesson else "") + "Pick a cause."
        return lesson + no_cause_text(self.guide.walk.hypotheses if self.guide.walk else [], done=self.guide.done)

    def on_mount(self) -> None:
        causes = self.query_one("#causes", OptionList)
        if causes.option_count:
            causes.highlighted = 0
            self.show(self.guide.walk.conclusions[0])
            causes.focus()
            return
        # no cause: the Commands list holds what would settle each hypothesis still open (shown beside it), and the
        # command lines that give what the walk went on without
        cmds = self.query_one("#commands", OptionList)
        for need in self.guide.waived():
            for i, line in enumerate(need.reruns):
                cmds.add_option(Option(command_label(f"rerun with {need.kind}", line), id=f"rerun:{need.kind}:{i}"))
        for h in self._open_hypotheses():
            cmds.add_option(Option(command_label(f"settle: {h.title}", h.settle), id=f"settle:{h.id}"))
        if cmds.option_count:
            cmds.highlighted = 0
            cmds.focus()

    def _open_hypotheses(self):
        return [h for h in (self.guide.walk.hypotheses if self.guide.walk else [])
                if h.state in ("suspected", "untested") and h.settle]

    @on(OptionList.OptionHighlighted, "#causes")
    def highlighted(self, event: OptionList.OptionHighlighted) -> None:
        c = next((c for c in self.guide.walk.conclusions if c.cause == event.option.id), None)
        if c is not None:
            self.show(c)

    def show(self, c: eng.Conclusion) -> None:
        from textual.widgets import Markdown

        self.selected = c
        self.query_one("#cause-md", Markdown).update(conclusion_markdown(c))
        cmds = self.query_one("#commands", OptionList)
        cmds.clear_options()
        for i, fx in enumerate(c.fixes, 1):
            ctx = f" ({fx['context']})" if fx.get("context") not in (None, "any") else ""
            cmds.add_option(Option(command_label(f"fix {i}{ctx}", fx["command"]), id=f"fix:{i - 1}"))
        if c.verify.get("command"):
            cmds.add_option(Option(command_label("verify", c.verify["command"]), id="verify"))
        if cmds.has_focus and cmds.option_count:
            cmds.highlighted = 0

    def on_descendant_focus(self, event) -> None:
        # tab to Commands and c copies the first one: no "select a command first" until an arrow is pressed
        cmds = self.query_one("#commands", OptionList)
        if event.widget is cmds and cmds.highlighted is None and cmds.option_count:
            cmds.highlighted = 0

    def _command(self) -> str | None:
        cmds = self.query_one("#commands", OptionList)
        if cmds.highlighted is None or not cmds.option_count:
            return None
        oid = cmds.get_option_at_index(cmds.highlighted).id or ""
        if oid.startswith("settle:"):
            return next((h.settle for h in self._open_hypotheses() if h.id == oid[7:]), None)
        if oid.startswith("rerun:"):
            kind, _, i = oid[6:].rpartition(":")
            return next((n.reruns[int(i)] for n in self.guide.waived() if n.kind == kind), None)
        if self.selected is None:
            return None
        if oid == "verify":
            return self.selected.verify.get("command")
        if oid.startswith("fix:"):
            return self.selected.fixes[int(oid[4:])]["command"]
        return None

    @on(OptionList.OptionSelected, "#commands")
    def command_chosen(self, event: OptionList.OptionSelected) -> None:
        self.action_copy()

    def action_copy(self) -> None:
        cmd = self._command()
        if cmd is None:
            self.app.notify("select a command first (tab to the Commands list)")
            return
        self.app.copy_command(cmd)  # type: ignore[attr-defined]
        self.guide.copied(cmd)

    def action_verify(self) -> None:
        if self.selected is None:
            return
        self.query_one("#verify-result", Static).update("[yellow]verifying: re-running the probes…[/]")
        self.verify_worker(self.selected)

    @work(thread=True, exclusive=True, group="verify", exit_on_error=False)
    def verify_worker(self, c: eng.Conclusion) -> None:
        r = self.guide.verify(c)
        self.app.call_from_thread(self.show_verify, r)

    def show_verify(self, r) -> None:
        verdict = {True: "[green]fixed[/]", False: "[red]still failing[/]", None: "[magenta]could not tell[/]"}[r.passed]
        note = " (replayed the same capture: run on the live node after the fix)" if r.replay else ""
        changes = "  ".join(f"{k}: {r.before.get(k)} → {r.after.get(k)}" for k in r.after)
        self.query_one("#verify-result", Static).update(f"verify {markup(r.cause)}: {verdict}{note}\n[dim]{markup(changes)}[/]")

    def action_export(self) -> None:
        self.app.push_screen(ExportScreen(self.guide, self.app.settings.exports_path()))  # type: ignore[attr-defined]

    def action_measure(self) -> None:
        """Where the gap went: the metric before any fix and its reference once, then the value after each fix."""
        def number(raw: str | None) -> float | None:
            try:
                return float(raw.split()[0]) if raw else None
            except ValueError:
                self.app.notify(markup(f"not a number: {raw!r}"), severity="warning")
                return None

        label = self.selected.title if self.selected else "fix"

        def after(raw: str | None) -> None:
            v = number(raw)
            if v is not None:
                self.guide.record_measurement(label[:40], v)
                self.query_one("#verify-result", Static).update(Text(esc(self.guide.waterfall())))

        def with_reference(base: float):
            def got(raw: str | None) -> None:
                self.guide.set_metric("step time (ms)", base, number(raw), "ms")
                self.app.push_screen(InputScreen(f"Step time now, after: {label} (ms)", "e.g. 1150"), after)
            return got

        def got_base(raw: str | None) -> None:
            base = number(raw)
            if base is not None:
                self.app.push_screen(InputScreen("Reference step time (ms; empty if none)", "e.g. 1090"), with_reference(base))

        if not self.guide.metric:
            self.app.push_screen(InputScreen("Step time before any fix (ms)", "e.g. 1220"), got_base)
        else:
            self.app.push_screen(InputScreen(f"Step time now, after: {label} (ms)", "e.g. 1150"), after)


