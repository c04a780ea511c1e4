"""The preflight sweep's results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from troubleshooter.output.safe import escape_controls as esc


if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.tui.app import TroubleshooterApp

class ChecksScreen(Screen[None]):
    # esc: the app's "Symptoms" (back to the symptom list), as on every screen

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("[dim]running the preflight sweep…[/]", id="checks-status")
        from textual.widgets import DataTable

        yield DataTable(id="checks", cursor_type="row", zebra_stripes=True)
        yield Static("", id="check-detail")
        yield Footer()

    def on_mount(self) -> None:
        from textual.widgets import DataTable

        t = self.query_one("#checks", DataTable)
        t.add_columns("verdict", "check", "why")
        self.run_checks()

    @work(thread=True, exclusive=True, group="checks", exit_on_error=False)
    def run_checks(self) -> None:
        from troubleshooter.service.check import run_check

        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        try:
            run = run_check(app.guide_target(), app.spec.params(), profile_id=app.settings.profile or None)
        except Exception as exc:  # noqa: BLE001 - said in the status line; the sweep never spins for good
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.app.call_from_thread(self.query_one("#checks-status", Static).update,
                                      Text(f"the preflight could not run: {msg}  (esc: the symptom list)", style="bold red"))
            return
        self.run = run
        self.app.call_from_thread(self.show, run.results, run.wall_s, run.profile.id, run.problem)

    def show(self, results, wall_s: float, profile_id: str = "", problem: str = "") -> None:
        from textual.widgets import DataTable

        from troubleshooter.output.report import ICON, STYLE

        self.results = results
        t = self.query_one("#checks", DataTable)
        rows = [(Text(ICON[r.verdict], style=STYLE[r.verdict]), Text(esc(r.title, one_line=True)),
                 Text(esc(r.reason, one_line=True)), r.id) for r in results]
        # columns sized from the rows themselves: auto widths follow the rows only on the table's next idle, and a
        # paint before it (the start screen's discovery still running) kept the label widths ("GPUs", "nvm") until
        # a key was pressed
        t.clear(columns=True)
        for i, label in enumerate(("verdict", "check", "why")):
            t.add_column(label, width=max([len(label)] + [row[i].cell_len for row in rows]))
        for verdict, title, reason, key in rows:
            t.add_row(verdict, title, reason, key=key)
        counts = {k: sum(r.verdict == k for r in results) for k in ICON}
        self.query_one("#checks-status", Static).update(
            f"preflight in {wall_s:.1f}s (profile {escape(profile_id)}): [red]{counts['fail']} fail[/] · "
            f"[yellow]{counts['warn']} warn[/] · [green]{counts['pass']} pass[/] · "
            f"[cyan]{counts['n/a']} n/a[/] · [magenta]{counts['unknown']} unknown[/]  (enter: details)"
            + (f"\n[bold red]{escape(esc(problem))}[/]" if problem else ""))
        t.focus()

    def on_data_table_row_highlighted(self, event) -> None:  # DataTable.RowHighlighted (DataTable imported late)
        if event.control is None or event.control.id != "checks":
            return
        self.detail(event)

    def detail(self, event) -> None:
        r = next((r for r in getattr(self, "results", []) if r.id == event.row_key.value), None)
        if r is None:
            return
        facts = "  ".join(f"{k}={v}" for k, v in r.as_dict()["facts"].items() if v is not None)
        self.query_one("#check-detail", Static).update(Text(esc(f"{r.area}: {r.title}\n{r.reason}\n{facts}"), style="dim"))


