"""Attach to the real context: pick a running Slurm job, a container on this node or a training process (the start
screen's ``a``), and the dialogs a walk opens when a step needs what the target lacks (the job's context, a log).

Discovery runs in a thread worker with timeouts (service.attach); each search that found nothing says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from troubleshooter.output.safe import escape_controls as esc

if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.service.attach import Finding
    from troubleshooter.service.guide import Need

TITLES = {"jobs": "Slurm jobs of yours (squeue --me)", "containers": "Containers on this node",
          "processes": "Training processes (python with torch, deepspeed, megatron …)"}
SKIP = "skip"


def shown(app, text: str) -> str:
    """Data for the screen: secrets redacted (a training command line may carry a token), controls escaped."""
    from troubleshooter.output.redact import Redactor

    return esc(Redactor(app.settings.redact_extra).text(text), one_line=True)


def findings_line(findings: list[Finding]) -> str:
    """One line for the start screen: what runs here, or in short why a search found nothing."""
    return " · ".join(f.short() for f in findings)


class AttachScreen(ModalScreen[tuple[str, ...] | str | None]):
    """The running contexts; enter attaches (dismisses with the context's target options). Opened for a step's
    need, it says which step needs what and why, shows the command line that gives it from the start, and offers
    to go on without it (dismisses with ``"skip"``)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="attach.cancel"),
                Binding("r", "refresh", "Look again", id="attach.refresh"),
                Binding("q", "app.quit", "Quit", id="app.quit", show=False)]

    def __init__(self, need: Need | None = None) -> None:
        super().__init__()
        self.need = need
        self.contexts: dict[str, tuple[str, ...]] = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            if self.need is not None:
                yield Static(Text.assemble(("This step needs ", "bold"), (self.need.what, "bold yellow"),
                                           ("\n" + esc(self.need.step), "italic")), classes="dialog-title")
                yield Static(Text(self.need.why))
                yield Static(Text.assemble(("Same from a shell: ", "bold"), (self.need.rerun, "bold cyan")),
                             id="attach-hint")
            else:
                yield Static("Attach: run every probe where the training runs", classes="dialog-title")
            yield Static(Text("looking for Slurm jobs, containers and training processes…", style="dim"),
                         id="attach-state")
            yield OptionList(id="contexts")
            yield Static("[dim]enter attach · r look again · esc "
                         + ("go on without it" if self.need else "cancel") + "[/]")

    def on_mount(self) -> None:
        cached = getattr(self.app, "running", None)
        if cached:
            self.show(cached)
        self.query_one("#contexts", OptionList).focus()
        self.action_refresh()

    def action_refresh(self) -> None:
        self.query_one("#attach-state", Static).update(
            Text("looking for Slurm jobs, containers and training processes…", style="dim"))
        self.gather()

    @work(thread=True, exclusive=True, group="attach", exit_on_error=False)
    def gather(self) -> None:
        findings = self.app.discover_contexts()  # type: ignore[attr-defined]
        self.app.call_from_thread(self.show, findings)

    def show(self, findings: list[Finding]) -> None:
        self.app.running = findings  # type: ignore[attr-defined]
        wanted = ("jobs", "containers") if self.need is not None and self.need.kind == "job-context" else None
        # the list says why a search found nothing; the line above it is then only how many there are
        state = self.query_one("#attach-state", Static)
        state.update(Text(" · ".join(f"{TITLES[f.kind].split(' (')[0]}: {len(f.contexts)}" for f in findings
                                     if not wanted or f.kind in wanted), style="dim"))
        state.display = self.need is None  # asked by a step: room for the list and the keys instead
        ol = self.query_one("#contexts", OptionList)
        ol.clear_options()
        self.contexts.clear()
        for f in findings:
            if wanted and f.kind not in wanted:
                continue
            ol.add_option(Option(Text(TITLES[f.kind], style="bold"), disabled=True))
            if not f.contexts:
                ol.add_option(Option(Text("  " + shown(self.app, f.state), style="dim"), disabled=True))
            for i, c in enumerate(f.contexts):
                oid = f"{f.kind}:{i}"
                self.contexts[oid] = c.args
                ol.add_option(Option(Text.assemble("  " + shown(self.app, c.label),
                                                   ("\n    same as: " + shown(self.app, c.command_line), "dim")),
                                     id=oid))
        if self.need is not None:
            ol.add_option(None)
            ol.add_option(Option(Text("Go on without it (this step stays untested and says so)", style="cyan"), id=SKIP))
        first = next((i for i in range(ol.option_count) if not ol.get_option_at_index(i).disabled), None)
        if first is not None:
            ol.highlighted = first

    @on(OptionList.OptionSelected, "#contexts")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        oid = event.option.id or ""
        if oid == SKIP:
            self.dismiss(SKIP)
        elif oid in self.contexts:
            self.dismiss(self.contexts[oid])

    def action_cancel(self) -> None:
        self.dismiss(SKIP if self.need is not None else None)


class LogNeedScreen(ModalScreen[str | None]):
    """A step needs a log: its path (checked in place: it must be a readable file), or go on without it."""

    BINDINGS = [Binding("escape", "cancel", "Go on without it", id="need.skip")]

    def __init__(self, need: Need) -> None:
        super().__init__()
        self.need = need

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text.assemble(("This step needs ", "bold"), (self.need.what, "bold yellow"),
                                       ("\n" + esc(self.need.step), "italic")), classes="dialog-title")
            yield Static(Text(self.need.why))
            yield Static(Text.assemble(("Same from a shell: ", "bold"), (self.need.rerun, "bold cyan")), id="attach-hint")
            yield Input(placeholder="/path/to/the/log", id="path")
            yield Static("", id="input-error")
            yield Static("[dim]enter read this log · esc go on without it (this step stays untested and says so)[/]")

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if not value:
            self.dismiss(None)
            return
        p = Path(value).expanduser()
        problem = ""
        if not p.exists():
            problem = f"{p}: no such file"
        elif not p.is_file():
            problem = f"{p}: not a file"
        else:
            try:
                with p.open("rb") as fh:
                    fh.read(1)
            except OSError as exc:
                problem = f"{p}: {exc.strerror or exc}"
        if problem:
            self.query_one("#input-error", Static).update(Text(esc(problem, one_line=True), style="bold red"))
            return
        self.dismiss(str(p))

    def action_cancel(self) -> None:
        self.dismiss(None)
