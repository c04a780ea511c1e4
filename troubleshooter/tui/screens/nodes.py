"""Pasted outputs of several nodes (``gpu07:ibstat.txt gpu08:ibstat.txt``, or one pdsh/clush/dshbak paste): each
node diagnosed as one machine, how the nodes' outputs differ, and the node to walk step by step.

The same use case as ``troubleshooter diagnose --evidence`` on such outputs
(:func:`troubleshooter.service.diagnose.diagnose_nodes`): a walk over the outputs of all the nodes at once would
diagnose no machine (none of them is the job's own side) and say every hypothesis is untested.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from troubleshooter.tui.render import _markdown

if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.service.diagnose import NodesDiagnosis
    from troubleshooter.tui.app import TroubleshooterApp


class NodesScreen(Screen[None]):
    """Every pasted node's diagnosis, one per line (the nodes with a cause first); the highlighted node's in full
    beside the list, with how the nodes' outputs differ; enter walks that node step by step."""

    BINDINGS = [Binding("b", "app.pop_screen", "Back", id="nodes.back", tooltip="Back (esc: the symptom list)"),
                Binding("e", "export", "Export", id="nodes.export",
                        tooltip="Write the nodes' ticket (Markdown) and JSON, secrets redacted")]

    def __init__(self, symptom: str | None = None) -> None:
        super().__init__()
        self.symptom = symptom  # the symptom picked on the start screen; None: each node's outputs suggest one
        self.many: NodesDiagnosis | None = None
        self.read: Any = None  # the outputs' EvidenceFacts, read once by the worker

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("[dim]diagnosing each node's outputs…[/]", id="nodes-status")
        with Horizontal():
            yield OptionList(id="nodes-list")
            with VerticalScroll(id="nodes-detail"):
                yield _markdown("", id="nodes-md")
        yield Footer()

    def on_mount(self) -> None:
        self.run_nodes()

    @work(thread=True, exclusive=True, group="nodes", exit_on_error=False)
    def run_nodes(self) -> None:
        from troubleshooter.service.diagnose import diagnose_nodes

        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        try:  # None: the outputs are one machine's after all
            self.read = app.evidence_read()  # as read for the start screen's node count; a node's walk starts from it
            many = diagnose_nodes(self.symptom, self.read, answers={},
                                  profile_id=app.settings.profile or None, target_desc={"kind": "evidence"},
                                  extra=None if self.symptom else {"symptom_inferred": True})
        except Exception as exc:  # noqa: BLE001 - a tree that does not load, an unreadable file: said as what it is
            self.app.call_from_thread(self.failed, f"{type(exc).__name__}: {exc}")
            return
        self.app.call_from_thread(self.show, many)

    def failed(self, why: str) -> None:
        self.query_one("#nodes-status", Static).update(Text(self.shown(why), style="bold red"))

    def shown(self, s: Any) -> str:
        """Data from the pasted outputs, for the screen: redacted, control characters escaped."""
        return self.app.redacted(s)  # type: ignore[attr-defined]

    def show(self, many: NodesDiagnosis | None) -> None:
        status = self.query_one("#nodes-status", Static)
        if many is None:
            status.update("these outputs are one machine's: pick a symptom on the start screen (esc)")
            return
        self.many = many
        # nodes, not walks: a walk said of a group of nodes whose outputs gave the same facts counts them all
        found = sum(len(d.get("alike") or [n]) for n, w, d in many.runs if w.conclusions)
        total = many.comparison.get("nodes", len(many.runs))
        status.update(Text.assemble(
            (self.shown(many.heading()), "bold"), ": ",
            (f"a cause found on {found} of {total} nodes" if found else "no cause found on any", "bold red" if found else "green"),
            ("  (enter walks the highlighted one step by step)", "dim")))
        ol = self.query_one("#nodes-list", OptionList)
        ol.clear_options()
        for i, (name, line) in enumerate(many.summaries()):
            walked = i < len(many.runs)
            style = "bold red" if walked and many.runs[i][1].conclusions else "bold"
            ol.add_option(Option(Text.assemble((self.shown(name or "not diagnosed"), style), "\n  ",
                                               (self.shown(line), "dim")), id=f"run:{i}" if walked else None,
                                 disabled=not walked))
        ol.highlighted = 0
        ol.focus()
        self.detail(0)

    def differences(self) -> str:
        assert self.many is not None
        if not self.many.lines:
            return "The nodes' outputs differ in nothing they both show."
        return "## How the nodes' outputs differ\n\n" + "\n".join(f"- {ln}" for ln in self.many.lines)

    def detail(self, i: int) -> None:
        from troubleshooter.output import export

        assert self.many is not None
        name, _, doc = self.many.runs[i]
        md = f"# {'Nodes' if doc.get('alike') else 'Node'} {name}\n\n" + export.to_markdown(doc)
        self.query_one("#nodes-md").update(self.shown(md + "\n\n" + self.differences()))  # type: ignore[attr-defined]
        self.query_one("#nodes-detail", VerticalScroll).scroll_home(animate=False)

    @on(OptionList.OptionHighlighted, "#nodes-list")
    def highlighted(self, event: OptionList.OptionHighlighted) -> None:
        oid = event.option.id or ""
        if oid.startswith("run:") and self.many is not None:
            self.detail(int(oid[4:]))

    @on(OptionList.OptionSelected, "#nodes-list")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        oid = event.option.id or ""
        if not oid.startswith("run:") or self.many is None:
            return
        name, _, doc = self.many.runs[int(oid[4:])]
        node = self.many.walked_node(name, doc)
        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        # the outputs as read here: read again, a paste of 512 nodes held the screen for 2.5 s before the walk began
        app.start_walk(self.symptom or doc["symptom"]["id"], node=node, read=self.read)

    def action_export(self) -> None:
        """The ticket ``diagnose --evidence ... --md`` writes, and its ``--json``, into the exports folder."""
        import time

        from troubleshooter import locations
        from troubleshooter.output.emit import Emitter
        from troubleshooter.output.redact import Redactor
        from troubleshooter.output.safe import markup

        if self.many is None:
            self.app.notify("still diagnosing the nodes", title="export")
            return
        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        red = Redactor(app.settings.redact_extra)
        em = Emitter(redactor=red)  # what diagnose --md / --json write, redacted and escaped the same way
        stem = app.settings.exports_path() / f"nodes-{time.strftime('%Y%m%dT%H%M%S')}"
        try:
            for path, text in ((stem.with_suffix(".md"), em.safe(self.many.markdown(em.clean))),
                               (stem.with_suffix(".json"), em.json_text(self.many.doc()))):
                locations.write_private(path, (text.rstrip("\n") + "\n").encode())
        except OSError as exc:  # PrivateFileError: its message names the file
            self.app.notify(markup(red.text(str(exc))), title="could not export", severity="error")
            return
        self.app.notify(markup(red.text(f"wrote {stem}.md and {stem}.json")), title="export")
