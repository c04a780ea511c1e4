"""The start screen: where am I, what do you see (symptoms, preflight, practice, resume, open a bundle).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static

from troubleshooter.output.safe import escape_controls as esc
from textual.widgets.option_list import Option

from troubleshooter.tui.screens.checks import ChecksScreen
from troubleshooter.tui.screens.compare import CompareScreen, FanoutScreen
from troubleshooter.tui.screens.dialogs import InputScreen
from troubleshooter.tui.screens.filter import Filterable
from troubleshooter.tui.messages import ContextReady
from troubleshooter.tui.screens.practice import PracticeScreen
from troubleshooter.tui.screens.sessions import SessionsScreen

if TYPE_CHECKING:  # pragma: no cover
    pass

# ---------------------------------------------------------------------------- start
class StartScreen(Filterable, Screen[None]):
    FILTER_LIST = "symptoms"
    BINDINGS = [
        Filterable.FILTER_BINDING,
        Binding("p", "preflight", "Preflight", id="start.preflight", tooltip="Run every preflight check here"),
        Binding("s", "resume", "Resume", id="start.resume", tooltip="Resume a saved session"),
        Binding("d", "practice", "Practise", id="start.practice", tooltip="Practise on a reference case"),
        Binding("o", "open", "Open bundle", id="start.open", tooltip="Open a bundle or a folder of tool outputs"),
        Binding("v", "paste", "Paste", id="start.paste", tooltip="Paste a tool's output or a terminal transcript"),
        Binding("a", "attach", "Attach", id="start.attach",
                tooltip="Run the probes in a running Slurm job, container or training process"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="start"):
            yield Static("[dim]probing where we are…[/]", id="context")
            yield Static("[dim]looking for running jobs, containers and training processes…[/]", id="running")
            yield Static("[b]What do you see?[/b]  pick a symptom (enter, / search), or a attach · p preflight · s resume · d practise · o open · v paste",
                         id="prompt")
            yield OptionList(id="symptoms")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_symptoms()
        self.call_after_refresh(self.app.gather_context)  # type: ignore[attr-defined]  # probes after the first frame
        self.call_after_refresh(self.app.gather_running)  # type: ignore[attr-defined]

    def on_screen_resume(self) -> None:
        # back from a walk (esc) or a side screen: offer the walk again; the highlight stays where it was
        if not hasattr(self, "_walk_offered"):
            return  # not mounted yet
        ol = self.query_one("#symptoms", OptionList)
        had, offered_before = ol.highlighted, self._walk_offered
        self.refresh_symptoms()
        if had is not None and offered_before == self._walk_offered:
            ol.highlighted = min(had, ol.option_count - 1)

    def refresh_symptoms(self) -> None:
        ol = self.query_one("#symptoms", OptionList)
        self.forget_filter()
        ol.clear_options()
        guide = self.app.guide  # type: ignore[attr-defined]
        self._walk_offered = guide is not None and guide.walk is not None and guide.symptom is not None
        if self._walk_offered:
            state = "ended" if guide.done else "in progress"
            ol.add_option(Option(Text.assemble(("Back to the walk: ", "bold cyan"), (guide.symptom.title, "bold"),
                                               (f"  ({state}; saved)", "dim")), id="action:walk"))
            ol.add_option(None)
        nodes = self.app.evidence_nodes() if self.app.evidence else []  # type: ignore[attr-defined]
        if nodes:
            from troubleshooter.diagnosis.compare import hostlist

            ol.add_option(Option(Text.assemble(("Pasted nodes: ", "bold cyan"), (f"{len(nodes)} nodes", "bold"),
                                               (f"  {self.app.redacted(hostlist(nodes))}: each node's diagnosis and "  # type: ignore[attr-defined]
                                                "what differs between them", "dim")), id="action:nodes"))
            ol.add_option(None)
        for t in self.app.engine.symptoms():  # type: ignore[attr-defined]
            ol.add_option(Option(Text.assemble((t.title, "bold"), "\n  ", (t.summary, "dim")), id=f"symptom:{t.id}"))
        ol.add_option(None)
        spec = self.app.spec  # type: ignore[attr-defined]
        extra = []
        if spec.exec_prefix or spec.job:
            extra.append(("action:compare", "Compare the host with the job's container / step"))
        if spec.job:
            extra.append(("action:fanout", "Compare every node of the job (fan-out)"))
        for oid, label in (("action:attach", "Attach to a running Slurm job, container or training process"),
                           ("action:preflight", "Run the preflight sweep here"), *extra,
                           ("action:resume", "Resume a session"),
                           ("action:practice", "Practise on a reference case (learn mode)"),
                           ("action:open", "Open a bundle or a folder of tool outputs"),
                           ("action:paste", "Paste a tool's output or a terminal transcript")):
            ol.add_option(Option(Text(label, style="cyan"), id=oid))
        ol.highlighted = 0
        ol.focus()

    def show_running(self, found) -> None:
        """What runs here, in one line (or why a search found nothing), with the key that attaches."""
        from troubleshooter.tui.screens.attach import findings_line

        if isinstance(found, Exception):
            line = f"cannot look for running jobs: {found}"
        else:
            line = findings_line(found)
        from troubleshooter.tui.screens.attach import shown

        text = Text.assemble(("Running here: ", "bold"), shown(self.app, line), ("  a: attach", "bold cyan"))
        self.query_one("#running", Static).update(text)

    def on_context_ready(self, message: ContextReady) -> None:
        self.query_one("#context", Static).update(Text(esc("\n".join(message.lines)), style="dim"))

    @on(OptionList.OptionSelected, "#symptoms")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        oid = event.option.id or ""
        kind, _, value = oid.partition(":")
        if kind == "symptom":
            self.app.start_walk(value)  # type: ignore[attr-defined]
        elif kind == "action":
            getattr(self, f"action_{value}")()

    def action_walk(self) -> None:
        self.app.reopen_walk()  # type: ignore[attr-defined]

    def action_attach(self) -> None:
        from troubleshooter.tui.screens.attach import AttachScreen

        def chosen(args) -> None:
            if args and not isinstance(args, str):
                self.app.attach_to(args)  # type: ignore[attr-defined]

        self.app.push_screen(AttachScreen(), chosen)

    def action_nodes(self) -> None:
        from troubleshooter.tui.screens.nodes import NodesScreen

        self.app.push_screen(NodesScreen())

    def action_preflight(self) -> None:
        self.app.push_screen(ChecksScreen())

    def action_compare(self) -> None:
        self.app.push_screen(CompareScreen())

    def action_fanout(self) -> None:
        self.app.push_screen(FanoutScreen())

    def action_resume(self) -> None:
        self.app.push_screen(SessionsScreen())

    def action_practice(self) -> None:
        self.app.push_screen(PracticeScreen())

    def action_open(self) -> None:
        def opened(path: str | None) -> None:
            if path:
                self.app.open_path(path)  # type: ignore[attr-defined]

        self.app.push_screen(InputScreen("Open a bundle (directory or .tar.gz), or a folder / file of tool outputs",
                                         "/path/to/node17.bundle.tar.gz",
                                         check=self.app.open_problem), opened)  # type: ignore[attr-defined]

    def action_paste(self) -> None:
        from troubleshooter.tui.screens.paste import PasteScreen

        def pasted(spec: str | None) -> None:
            if spec:  # added to the outputs pasted before (a bundle or a live target gives way to them)
                app = self.app
                app.use(None, [*(app.evidence or []), spec])  # type: ignore[attr-defined]

        self.app.push_screen(PasteScreen(), pasted)
