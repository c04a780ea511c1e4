"""Comparisons: host vs the job's container, and every node of a job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from troubleshooter.output.safe import escape_controls as esc

from troubleshooter.tui.screens.evidence import captured as _captured

if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.tui.app import TroubleshooterApp

class CompareScreen(Screen[None]):
    """Host vs the job's container (or step): what the job does not see."""

    # esc: the app's "Symptoms" (back to the symptom list), as on every screen

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("[dim]reading the runtime topology on the host and in the target…[/]", id="compare-status")
        with VerticalScroll():
            yield Static("", id="compare-body")
        yield Footer()

    def on_mount(self) -> None:
        self.run_compare()

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False)
    def run_compare(self) -> None:
        from troubleshooter.output.compare_text import print_host
        from troubleshooter.service.compare import CompareError, compare_host

        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        try:
            run = compare_host(app.spec.make(), app.spec.params())
        except CompareError as exc:
            self.app.call_from_thread(self.show, Text(esc(str(exc))), -1)
            return
        cmp = run.comparison
        width = self.size.width - 2
        text = _captured(lambda con: print_host(cmp, run.host_label, run.target_label, show_same=False, console=con),
                         width)
        self.app.call_from_thread(self.show, text, len(cmp.matters))

    def show(self, text: Text, matters: int) -> None:
        self.query_one("#compare-body", Static).update(text)
        self.query_one("#compare-status", Static).update(
            "[bold red]the target could not be read[/]" if matters < 0 else
            f"[bold red]{matters} difference(s) that matter[/]" if matters else "[green]nothing that matters differs[/]")


class FanoutScreen(Screen[None]):
    """Every node of the job captured in one srun step, and the nodes that stand out."""

    # esc: the app's "Symptoms" (back to the symptom list), as on every screen

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("[dim]capturing every node of the job (one srun step, bounded)…[/]", id="fanout-status")
        with VerticalScroll():
            yield Static("", id="fanout-body")
        yield Footer()

    def on_mount(self) -> None:
        self.run_fanout()

    @work(thread=True, exclusive=True, group="fanout", exit_on_error=False)
    def run_fanout(self) -> None:
        import time as _t

        from troubleshooter.diagnosis import compare
        from troubleshooter.probe import fanout
        from troubleshooter.output.compare_text import print_nodes

        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        out = app.settings.exports_path() / f"fanout-{app.spec.job}-{_t.strftime('%Y%m%dT%H%M%S')}"
        run = fanout.run(str(app.spec.job), out, timeout=180, wrapper=app.spec.exec_prefix or ())
        paths = [run.directory / f"{n}.bundle.tar.gz" for n in run.ok]
        if not paths:
            self.app.call_from_thread(self.show, Text("no node reported: " + "; ".join(f"{f['node']}: {f['reason']}" for f in run.failed)), run)
            return
        report = compare.compare_node_bundles(paths, failed=run.failed)
        text = _captured(lambda con: print_nodes(report, console=con), self.size.width - 2)
        self.app.call_from_thread(self.show, text, run)

    def show(self, text: Text, run) -> None:
        self.query_one("#fanout-body", Static).update(text)
        self.query_one("#fanout-status", Static).update(
            f"{len(run.ok)} node(s) captured in {run.wall_s:.1f}s into {run.directory}"
            + (f", [red]{len(run.failed)} failed[/]" if run.failed else ""))


