"""The interactive app: a guided troubleshooting session over SSH.

Screens: start (where am I, pick a symptom, preflight, resume, practise, open a bundle), the walk (the
transcript of steps with their *why*, facts and branch, the question at hand, the hypotheses), results
(root causes, copyable fixes, verify), export, glossary, help. Probes run in thread workers that call the
core (:mod:`troubleshooter.guide`) and post messages; one handler turns worker errors into an error dialog.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header, Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from troubleshooter import engine as eng
from troubleshooter.settings import Settings
from troubleshooter.targetspec import TargetSpec

if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.guide import Guide

# Imported where a screen needs them, not here: the start screen shows neither, and they cost the first frame
# ~35 ms (Markdown pulls markdown-it) -- docs/benchmarks.md. So does the guide (the walk, exports, sessions).


def _markdown(*args: Any, **kw: Any):
    from textual.widgets import Markdown

    return Markdown(*args, **kw)

STATE_STYLE = {"ruled-in": ("●", "bold red"), "ruled-out": ("○", "green"), "untested": ("·", "dim")}
CONTEXT_SOURCES = ["env-self", "container-markers", "virt", "nvml", "nvidia-smi-q"]


# ---------------------------------------------------------------------------- messages
class StepTaken(Message):
    def __init__(self, step: eng.Step) -> None:
        self.step = step
        super().__init__()


class ProbeProgress(Message):
    def __init__(self, kind: str, name: str, status: str = "") -> None:
        self.kind, self.name, self.status = kind, name, status
        super().__init__()


class WalkPaused(Message):
    """The walk reached a question or its end."""


class ContextReady(Message):
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        super().__init__()


# ---------------------------------------------------------------------------- rendering (pure)
def render_step(step: eng.Step, *, show_why: bool, learn: bool) -> Any:
    parts: list[Any] = []
    if step.kind == "call":
        return Text(f"── {step.title} ──", style="bold cyan")
    if step.kind == "end":
        return Text("")
    if step.kind == "ask":
        parts.append(Text.assemble(("? ", "bold yellow"), (step.title, "bold")))
        if show_why and step.why:
            parts.append(Text(f"  {step.why}", style="italic dim"))
        parts.append(Text(f"  → {step.because}", style="yellow"))
        return Group(*parts)
    if step.kind == "conclude":
        parts.append(Text.assemble(("ROOT CAUSE ", "bold white on red"), (" " + step.title, "bold red")))
        if step.because:
            parts.append(Text(f"  {step.because}"))
        return Group(*parts)
    # probe
    parts.append(Text.assemble(("● ", "bold cyan"), (step.title, "bold")))
    if show_why and step.why:
        parts.append(Text(f"  {step.why}", style="italic dim"))
    if step.facts:
        t = Table.grid(padding=(0, 1))
        t.add_column(style="dim", no_wrap=True)
        t.add_column(overflow="fold")
        for k, v in step.facts.items():
            if v.startswith("unknown"):
                t.add_row(f"  {k}", Text("unknown", style="magenta"))
            else:
                t.add_row(f"  {k}", Text(v))
        parts.append(t)
    bad = [f"{k}: {v}" for k, v in step.evidence.items() if not v.startswith(("ok", "from", "canned"))]
    for line in bad[:4]:
        parts.append(Text(f"  ! {line}", style="magenta"))
    parts.append(Text(f"  → {step.because or step.decision}", style="green"))
    if learn and step.explain:
        parts.append(Text(f"    {step.explain}", style="dim"))
    return Group(*parts)


def hypotheses_table(hyps: Iterable[eng.Hypothesis]) -> Table:
    t = Table.grid(padding=(0, 1))
    t.add_column(no_wrap=True)
    t.add_column(overflow="fold")
    for h in hyps:
        mark, style = STATE_STYLE.get(h.state, ("?", ""))
        t.add_row(Text(mark, style=style), Text(h.title, style=style if h.state != "untested" else ""))
    return t


def conclusion_markdown(c: eng.Conclusion) -> str:
    from troubleshooter.export import NEEDS_TEXT

    lines = [f"## {c.title}", "", c.summary or "", ""]
    if c.evidence:
        lines += ["**Evidence**", ""]
        lines += [f"- `{k}` = {v}" for k, v in c.evidence.items()]
        lines.append("")
    for i, fx in enumerate(c.fixes, 1):
        needs = ", ".join(NEEDS_TEXT.get(n, n) for n in fx.get("needs", []))
        ctx = f" [{fx['context']}]" if fx.get("context") not in (None, "any") else ""
        lines += [f"**Fix {i}{ctx}: {fx['title']}**" + (f" (needs {needs})" if needs else ""), "",
                  "```sh", fx["command"], "```", ""]
    if c.verify.get("command"):
        lines += ["**Verify:**", "", "```sh", c.verify["command"], "```", c.verify.get("explain", ""), ""]
    if c.caution:
        lines += [f"> **Caution:** {c.caution}", ""]
    if c.recovered:
        lines += [f"Reference recovery: {c.recovered}", ""]
    if c.references:
        lines += ["References: " + "; ".join(c.references), ""]
    if c.missing_facts:
        lines += [f"_Placeholders to fill by hand: {', '.join(c.missing_facts)}_", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- modal screens
class MessageScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter,q", "dismiss", "Close", id="close")]

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
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="cancel")]

    def __init__(self, prompt: str, placeholder: str = "") -> None:
        super().__init__()
        self.prompt, self.placeholder = prompt, placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.prompt, classes="dialog-title")
            yield Input(placeholder=self.placeholder, id="path")
            yield Static("[dim]enter to open, esc to cancel[/]")

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ExportScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("m", "write('md')", "Write Markdown", id="export.md"),
        Binding("j", "write('json')", "Write JSON", id="export.json"),
        Binding("b", "write('bundle')", "Write bundle", id="export.bundle"),
        Binding("escape", "dismiss", "Close", id="export.close"),
    ]

    def __init__(self, guide: Guide, directory: Path) -> None:
        super().__init__()
        self.guide, self.directory = guide, directory
        self.written: list[str] = []

    def compose(self) -> ComposeResult:
        from troubleshooter import export

        with Vertical(id="export"):
            yield Static("Export: the ticket preview (secrets redacted). m Markdown · j JSON · b bundle · esc close",
                         classes="dialog-title")
            with VerticalScroll(id="preview"):
                yield _markdown(export.to_markdown(self.guide.doc()))
            yield Static("", id="written")

    def action_write(self, fmt: str) -> None:
        try:
            path = self.guide.export(fmt, self.directory)
        except (OSError, ValueError) as exc:
            self.query_one("#written", Static).update(f"[red]could not write {fmt}: {exc}[/]")
            return
        self.written.append(str(path))
        self.query_one("#written", Static).update("\n".join(f"[green]wrote[/] {p}" for p in self.written))
        self.app.notify(f"wrote {path}", title="export")

    def action_dismiss(self) -> None:  # type: ignore[override]
        self.dismiss(None)


class GlossaryScreen(Screen[None]):
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back", id="glossary.back")]

    def compose(self) -> ComposeResult:
        yield Header()
        terms = eng.load_glossary()
        with Horizontal():
            yield OptionList(*[Option(t["term"], id=k) for k, t in sorted(terms.items())], id="terms")
            with VerticalScroll(id="term-detail"):
                yield _markdown("Pick a term.", id="term-md")
        yield Footer()

    @on(OptionList.OptionHighlighted, "#terms")
    def show(self, event: OptionList.OptionHighlighted) -> None:
        from textual.widgets import Markdown

        t = eng.load_glossary().get(event.option.id or "", {})
        body = f"# {t.get('term', '')}\n\n{t.get('short', '')}\n\n{t.get('long', '')}"
        self.query_one("#term-md", Markdown).update(body)


HELP = """\
# Keys

| key | where | what |
|---|---|---|
| ↑ ↓ enter | lists | choose |
| b | a walk | back to the previous question, to take another branch |
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
| g | anywhere | glossary |
| ? | anywhere | this help |
| ctrl+p | anywhere | command palette (every action) |
| t | anywhere | light / dark theme |
| q | anywhere | quit (the session is saved as you go; `troubleshooter --resume` picks it up) |

Fix commands are shown and copied, **never run** by this tool.
Keys can be remapped: see the README (keymap in the config file).
"""


# ---------------------------------------------------------------------------- start
class StartScreen(Screen[None]):
    BINDINGS = [
        Binding("p", "preflight", "Preflight", id="start.preflight", tooltip="Run every preflight check here"),
        Binding("s", "resume", "Resume", id="start.resume", tooltip="Resume a saved session"),
        Binding("d", "practice", "Practise", id="start.practice", tooltip="Practise on a reference case"),
        Binding("o", "open", "Open bundle", id="start.open", tooltip="Open a bundle or a folder of tool outputs"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="start"):
            yield Static("[dim]probing where we are…[/]", id="context")
            yield Static("[b]What do you see?[/b]  pick a symptom (enter), or p preflight · s resume · d practise · o open",
                         id="prompt")
            yield OptionList(id="symptoms")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_symptoms()
        self.call_after_refresh(self.app.gather_context)  # type: ignore[attr-defined]  # probes after the first frame

    def refresh_symptoms(self) -> None:
        ol = self.query_one("#symptoms", OptionList)
        ol.clear_options()
        for t in self.app.engine.symptoms():  # type: ignore[attr-defined]
            ol.add_option(Option(Text.assemble((t.title, "bold"), "\n  ", (t.summary, "dim")), id=f"symptom:{t.id}"))
        ol.add_option(None)
        spec = self.app.spec  # type: ignore[attr-defined]
        extra = []
        if spec.exec_prefix or spec.job:
            extra.append(("action:compare", "Compare the host with the job's container / step"))
        if spec.job:
            extra.append(("action:fanout", "Compare every node of the job (fan-out)"))
        for oid, label in (("action:preflight", "Run the preflight sweep here"), *extra,
                           ("action:resume", "Resume a session"),
                           ("action:practice", "Practise on a reference case (learn mode)"),
                           ("action:open", "Open a bundle or a folder of tool outputs")):
            ol.add_option(Option(Text(label, style="cyan"), id=oid))
        ol.highlighted = 0
        ol.focus()

    def on_context_ready(self, message: ContextReady) -> None:
        self.query_one("#context", Static).update(Text("\n".join(message.lines), style="dim"))

    @on(OptionList.OptionSelected, "#symptoms")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        oid = event.option.id or ""
        kind, _, value = oid.partition(":")
        if kind == "symptom":
            self.app.start_walk(value)  # type: ignore[attr-defined]
        elif kind == "action":
            getattr(self, f"action_{value}")()

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
                                         "/path/to/node17.bundle.tar.gz"), opened)


class PracticeScreen(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="practice.back")]

    def compose(self) -> ComposeResult:
        from troubleshooter.cli_diagnose import practice_cases

        yield Header()
        yield Static("[b]Practise on a reference case[/b]: a capture built from NVIDIA's case studies. "
                     "Walk it as you would a real node; learn mode explains every step.", id="prompt")
        ol = OptionList(id="cases")
        for c in practice_cases():
            ol.add_option(Option(Text.assemble((c["title"], "bold"), "\n  ", (f"symptom: {c['symptom']}", "dim")), id=c["id"]))
        yield ol
        yield Footer()

    def on_mount(self) -> None:
        ol = self.query_one("#cases", OptionList)
        if ol.option_count:
            ol.highlighted = 0
        ol.focus()

    @on(OptionList.OptionSelected, "#cases")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.app.start_practice(event.option.id or "")  # type: ignore[attr-defined]


class SessionsScreen(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="sessions.back")]

    def compose(self) -> ComposeResult:
        from troubleshooter.session import list_sessions

        yield Header()
        yield Static("[b]Resume a session[/b] (newest first)", id="prompt")
        ol = OptionList(id="sessions")
        for i in list_sessions(self.app.session_dir):  # type: ignore[attr-defined]
            label = Text.assemble((f"{i.created}  {i.symptom}", "bold"), f"  {i.status}",
                                  ("\n  " + (", ".join(i.conclusions) or "no cause yet") + f"  [{i.target}]", "dim"))
            ol.add_option(Option(label, id=i.id))
        if not ol.option_count:
            ol.add_option(Option("no saved sessions yet", id="", disabled=True))
        yield ol
        yield Footer()

    def on_mount(self) -> None:
        ol = self.query_one("#sessions", OptionList)
        ol.highlighted = 0
        ol.focus()

    @on(OptionList.OptionSelected, "#sessions")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.app.resume_session(event.option.id)  # type: ignore[attr-defined]


class ChecksScreen(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="checks.back")]

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
        from troubleshooter import checks, collect

        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        coll = collect.collect(app.guide_target(), params=app.spec.params())
        status = {sid: ev.describe() for sid, ev in coll.evidence.items()}
        from troubleshooter import profiles

        prof = profiles.get(app.settings.profile or "generic")
        results = checks.run_checks(coll.facts, prof.thresholds, status)
        self.app.call_from_thread(self.show, results, coll.wall_s)

    def show(self, results, wall_s: float) -> None:
        from textual.widgets import DataTable

        from troubleshooter.report import ICON, STYLE

        self.results = results
        t = self.query_one("#checks", DataTable)
        for r in results:
            t.add_row(Text(ICON[r.verdict], style=STYLE[r.verdict]), r.title, r.reason, key=r.id)
        counts = {k: sum(r.verdict == k for r in results) for k in ICON}
        self.query_one("#checks-status", Static).update(
            f"preflight in {wall_s:.1f}s: [red]{counts['fail']} fail[/] · [yellow]{counts['warn']} warn[/] · "
            f"[green]{counts['pass']} pass[/] · [magenta]{counts['unknown']} unknown[/]  (enter: details)")
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
        self.query_one("#check-detail", Static).update(Text(f"{r.area}: {r.title}\n{r.reason}\n{facts}", style="dim"))


def _captured(render, width: int) -> Text:
    """Run a Rich printer (the CLI's own) into a Text for a Static."""
    import io

    from rich.console import Console

    buf = io.StringIO()
    con = Console(file=buf, width=max(40, width), force_terminal=True, color_system="truecolor", highlight=False)
    render(con)
    return Text.from_ansi(buf.getvalue())


class EvidenceScreen(Screen[None]):
    """The raw output of the probes behind a step: what the tool read, exactly as printed."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="evidence.back")]

    def __init__(self, guide: Guide, step: eng.Step | None) -> None:
        super().__init__()
        self.guide, self.step = guide, step

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            yield OptionList(id="evidence-list")
            with VerticalScroll(id="evidence-detail"):
                yield Static("", id="evidence-text")
        yield Footer()

    def _items(self) -> list[tuple[str, str, Any]]:
        """Every source's evidence in this session, the last step's first."""
        evs = getattr(self.guide.facts, "evidence", {}) or {}
        wanted = set(self.step.evidence) if self.step is not None else set()
        out = []
        for side, items in evs.items():
            for sid, ev in sorted(items.items()):
                key = sid if side == "target" else f"{side}:{sid}"
                out.append((key, ev.describe(), ev))
        out.sort(key=lambda item: item[0] not in wanted)
        return out

    def on_mount(self) -> None:
        ol = self.query_one("#evidence-list", OptionList)
        for key, status, ev in self._items():
            ol.add_option(Option(Text.assemble((key, "bold"), "\n  ", (status[:60], "dim")), id=key))
        if not ol.option_count:
            ol.add_option(Option("no raw evidence (pasted outputs or canned facts)", id="", disabled=True))
        else:
            ol.highlighted = 0
        ol.focus()

    @on(OptionList.OptionHighlighted, "#evidence-list")
    def show(self, event: OptionList.OptionHighlighted) -> None:
        for key, status, ev in self._items():
            if key == event.option.id:
                head = Text.assemble((f"$ {' '.join(ev.argv)[:400]}\n", "bold"), (f"{status}\n\n", "dim"))
                body = ev.text[-20000:] if len(ev.text) > 20000 else ev.text
                err = ev.stderr_text.strip()
                tail = Text(f"\n--- stderr ---\n{err[-4000:]}", style="magenta") if err else Text("")
                self.query_one("#evidence-text", Static).update(head + Text(body) + tail)


class CompareScreen(Screen[None]):
    """Host vs the job's container (or step): what the job does not see."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="compare.back")]

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
        from troubleshooter import collect, compare
        from troubleshooter.cli_compare import _print_host
        from troubleshooter.targets import LocalTarget

        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        target = app.spec.make()
        host = LocalTarget()
        hc = collect.collect(host, ids=compare.HOST_SOURCES, params=app.spec.params(), side="host")
        tc = collect.collect(target, ids=compare.HOST_SOURCES, params=app.spec.params(), side="target")
        cmp = compare.host_vs_target(hc.facts, tc.facts, same_host=target.kind != "slurm")
        width = self.size.width - 2
        text = _captured(lambda con: _print_host(cmp, host.label, target.label, show_same=False, console=con), width)
        self.app.call_from_thread(self.show, text, len(cmp.matters))

    def show(self, text: Text, matters: int) -> None:
        self.query_one("#compare-body", Static).update(text)
        self.query_one("#compare-status", Static).update(
            f"[bold red]{matters} difference(s) that matter[/]" if matters else "[green]nothing that matters differs[/]")


class FanoutScreen(Screen[None]):
    """Every node of the job captured in one srun step, and the nodes that stand out."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="fanout.back")]

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

        from troubleshooter import compare, fanout
        from troubleshooter.cli_compare import print_nodes

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


# ---------------------------------------------------------------------------- the walk
class WalkScreen(Screen[None]):
    BINDINGS = [
        Binding("b", "back", "Back", id="walk.back", tooltip="Back to the previous question"),
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
                yield Static("[b]Hypotheses[/b]", classes="panel-title")
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
        for s in self.guide.walk.steps if self.guide.walk else []:
            self.add_step(s, scroll=False)
        tr.anchor()  # stays at the newest step, whenever the layout lands (a scroll_end here raced it)
        self.update_side()

    def add_step(self, step: eng.Step, scroll: bool = True) -> None:
        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        r = render_step(step, show_why=app.show_why, learn=app.learn)
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
        self.query_one("#crumbs", Static).update(Text(crumbs, style="dim", overflow="ellipsis", no_wrap=True))
        self.show_question()

    def show_question(self) -> None:
        cur = self.guide.current()
        q = self.query_one("#question", Vertical)
        if self.busy or cur is None or cur[2]["kind"] != "ask":
            q.display = False
            return
        tree, nid, node = cur
        app: TroubleshooterApp = self.app  # type: ignore[assignment]
        text = Text.assemble(("? ", "bold yellow"), (eng.strip_links(node.get("question", nid)), "bold"))
        if app.show_why and node.get("why"):
            text.append("\n" + eng.strip_links(node["why"]), style="italic dim")
        self.query_one("#question-text", Static).update(text)
        ol = self.query_one("#choices", OptionList)
        ol.clear_options()
        for c in node["choices"]:
            label = Text(c["label"], style="bold")
            if c.get("explain"):
                label.append("\n  " + eng.strip_links(c["explain"]), style="dim")
            ol.add_option(Option(label, id=c["id"]))
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
                line += f"   {live[-1][0]}> {live[-1][1]}"
            st.update(Text(line, style="yellow", overflow="ellipsis", no_wrap=True))
        elif walk is not None and walk.done:
            n = len(walk.conclusions)
            msg = f"done: {n} root cause{'s' if n != 1 else ''} found" if n else "done: no root cause found on this path"
            st.update(Text(f"✔ {msg}   r: results · e: export · b: back", style="bold green" if not n else "bold red"))
        else:
            st.update(Text("answer the question (↑↓ enter) · b: back · w: why · ?: help", style="dim"))

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
        self.busy = False
        self.running.clear()
        self.last_output.clear()
        facts = self.guide.facts
        if getattr(facts, "cancel", None) is not None:
            facts.cancel.clear()
        self.update_side()
        self.tick()
        if self.guide.session and self.guide.session.write_error:
            self.app.notify(self.guide.session.write_error, severity="error", timeout=10)
        if self.guide.done:
            self.app.push_screen(ResultsScreen(self.guide))

    @on(OptionList.OptionSelected, "#choices")
    def answered(self, event: OptionList.OptionSelected) -> None:
        if self.busy or not event.option.id:
            return
        cur = self.guide.current()
        if cur is None or cur[2]["kind"] != "ask":
            return
        self.guide.answer(event.option.id)
        self.add_step(self.guide.walk.steps[-1])
        self.continue_walk()

    def action_back(self) -> None:
        if self.busy:
            self.app.notify("wait for the probes to finish (c cancels them)")
            return
        if not self.guide.back():
            self.app.notify("already at the first question")
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


class ResultsScreen(Screen[None]):
    BINDINGS = [
        Binding("c", "copy", "Copy", id="results.copy", tooltip="Copy the selected command"),
        Binding("v", "verify", "Verify", id="results.verify", tooltip="Re-run the probes of this cause"),
        Binding("e", "export", "Export", id="results.export", tooltip="Export the ticket"),
        Binding("m", "measure", "Record a measurement", id="results.measure",
                tooltip="Record the step time (or throughput) after a fix: the ticket shows where the gap went"),
        Binding("escape", "app.pop_screen", "Back to walk", id="results.back"),
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
                yield Static(f"[b]{len(conc)} root cause{'s' if len(conc) != 1 else ''}[/b]" if conc
                             else "[b]No root cause found[/b] on this path", classes="panel-title")
                yield OptionList(*[Option(Text(c.title, style="bold red"), id=c.cause) for c in conc], id="causes")
                yield Static("[b]Commands[/b] (enter/c copies, never runs)", classes="panel-title")
                yield OptionList(id="commands")
            with VerticalScroll(id="results-detail"):
                yield _markdown(self._empty_text(conc), id="cause-md")
        yield Static("", id="verify-result")
        yield Footer()

    def _empty_text(self, conc) -> str:
        if conc:
            return "Pick a cause."
        hyps = [h for h in (self.guide.walk.hypotheses if self.guide.walk else []) if h.state == "untested"]
        lines = ["No cause was ruled in. What is still untested, and what would settle it:", ""]
        lines += [f"- **{h.title}**: `{h.settle}`" for h in hyps] or ["- nothing: every hypothesis was ruled out"]
        return "\n".join(lines)

    def on_mount(self) -> None:
        causes = self.query_one("#causes", OptionList)
        if causes.option_count:
            causes.highlighted = 0
            self.show(self.guide.walk.conclusions[0])
            causes.focus()

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
            cmds.add_option(Option(Text.assemble((f"fix {i}{ctx}: ", "bold"), fx["command"].splitlines()[0][:200]), id=f"fix:{i - 1}"))
        if c.verify.get("command"):
            cmds.add_option(Option(Text.assemble(("verify: ", "bold"), c.verify["command"][:200]), id="verify"))

    def _command(self) -> str | None:
        cmds = self.query_one("#commands", OptionList)
        if self.selected is None or cmds.highlighted is None:
            return None
        oid = cmds.get_option_at_index(cmds.highlighted).id or ""
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
        self.query_one("#verify-result", Static).update(f"verify {r.cause}: {verdict}{note}\n[dim]{changes}[/]")

    def action_export(self) -> None:
        self.app.push_screen(ExportScreen(self.guide, self.app.settings.exports_path()))  # type: ignore[attr-defined]

    def action_measure(self) -> None:
        """Where the gap went: the metric before any fix and its reference once, then the value after each fix."""
        def number(raw: str | None) -> float | None:
            try:
                return float(raw.split()[0]) if raw else None
            except ValueError:
                self.app.notify(f"not a number: {raw!r}", severity="warning")
                return None

        label = self.selected.title if self.selected else "fix"

        def after(raw: str | None) -> None:
            v = number(raw)
            if v is not None:
                self.guide.record_measurement(label[:40], v)
                self.query_one("#verify-result", Static).update(Text(self.guide.waterfall()))

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


# ---------------------------------------------------------------------------- the app
class TroubleshooterApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "troubleshooter"
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Quit; the session is saved as you go"),
        Binding("question_mark", "help", "Help", id="app.help", tooltip="Keys and what they do"),
        Binding("g", "glossary", "Glossary", id="app.glossary", tooltip="Terms used by the steps"),
        Binding("l", "toggle_learn", "Learn", id="app.learn", tooltip="Learn mode: explain every branch"),
        Binding("t", "toggle_theme", "Theme", id="app.theme", show=False, tooltip="Light or dark theme"),
    ]

    def __init__(self, spec: TargetSpec | None = None, *, settings: Settings | None = None,
                 evidence: list[str] | None = None, session_dir: Path | None = None,
                 symptom: str | None = None, resume: str | None = None, practice: str | None = None,
                 context_lines: list[str] | None = None) -> None:
        super().__init__()
        from troubleshooter import profiles

        self.settings = settings or Settings()
        self.spec = spec or TargetSpec()
        self.evidence = evidence
        self.session_dir = session_dir
        self.initial = (symptom, resume, practice)
        self.fixed_context = context_lines  # tests freeze the start screen's context
        self.learn = self.settings.learn_mode
        self.show_why = self.settings.show_why or self.learn
        prof = profiles.get(self.settings.profile or "generic")
        self.engine = eng.Engine(profile=prof.thresholds)
        self.guide: Guide | None = None
        if self.settings.theme:
            self.theme = self.settings.theme
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)

    # -- targets
    def guide_target(self):
        return self.spec.make()

    def new_guide(self, spec: TargetSpec | None = None, practice: bool = False) -> Guide:
        from troubleshooter.redact import Redactor

        red = Redactor(self.settings.redact_extra)
        if self.evidence and not practice:
            from troubleshooter.pasted import EvidenceFacts, EvidenceTarget

            facts = EvidenceFacts.from_specs(self.evidence)
            from troubleshooter import profiles

            prof = profiles.get(self.settings.profile or "generic")
            from troubleshooter.guide import Guide

            return Guide(eng.Engine(profile=prof.thresholds), facts, EvidenceTarget(facts), TargetSpec(), prof.id, None, red,
                         profile_explicit=bool(self.settings.profile))
        from troubleshooter.guide import Guide

        g = Guide.for_target(spec or self.spec, self.settings.profile or None, redactor=red,
                             on_event=self._probe_event)
        return g

    def _probe_event(self, kind: str, obj: Any) -> None:
        screen = self.screen
        if not isinstance(screen, WalkScreen):
            return
        if kind == "output":
            sid, chunk = obj
            screen.post_message(ProbeProgress("output", sid, chunk.decode("utf-8", errors="replace")))
            return
        screen.post_message(ProbeProgress(kind, getattr(obj, "id", None) or getattr(obj, "source_id", "")))

    # -- lifecycle
    def get_default_screen(self) -> Screen:
        # the start screen is the base of the stack (not pushed over Textual's blank default from on_mount): it is
        # then composed inside the app's start-up batch and its first render is the first frame, not thrown away
        return StartScreen()

    def on_mount(self) -> None:
        self.sub_title = self._target_label()
        for w in self.settings.warnings:
            self.notify(w, severity="warning", timeout=8)
        symptom, resume, practice = self.initial
        if resume:
            self.resume_session(resume)
        elif practice:
            self.start_practice(practice)
        elif symptom:
            self.start_walk(symptom)

    def _target_label(self) -> str:
        if self.evidence:
            return "pasted outputs: " + ", ".join(Path(e.split("=", 1)[-1].split(":", 1)[-1]).name for e in self.evidence[:3])
        try:
            return self.spec.make().label
        except Exception as exc:  # noqa: BLE001 - shown, not raised
            return f"target error: {exc}"

    @work(thread=True, exclusive=True, group="context", exit_on_error=False)
    def gather_context(self) -> None:
        if self.fixed_context is not None:
            lines = self.fixed_context
        elif self.evidence:
            lines = [f"target: {self._target_label()}", "reading pasted outputs: no live probes"]
        else:
            from troubleshooter import collect, report

            target = self.spec.make()
            coll = collect.collect(target, ids=CONTEXT_SOURCES, params=self.spec.params())
            lines = report.context_lines(coll.facts, target.describe())
        self.call_from_thread(self._context_ready, lines)

    def _context_ready(self, lines: list[str]) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, StartScreen):
                screen.post_message(ContextReady(lines))

    # -- starting walks
    def start_walk(self, symptom: str, spec: TargetSpec | None = None, story: str = "", practice: bool = False) -> None:
        try:
            g = self.new_guide(spec, practice=practice)
            g.begin(symptom, session_dir=self.session_dir)
        except Exception as exc:  # noqa: BLE001 - a bad bundle, a bad tree: shown as what it is
            self.show_error("cannot start", str(exc))
            return
        self.guide = g
        self.sub_title = g.target.label
        self.push_screen(WalkScreen(g, story))

    def start_practice(self, case_id: str) -> None:
        from troubleshooter.cli_diagnose import practice_bundle_path, practice_case

        try:
            case = practice_case(case_id)
        except Exception as exc:  # noqa: BLE001
            self.show_error("no such practice case", str(exc))
            return
        self.learn = True
        self.show_why = True
        spec = TargetSpec(bundle=str(practice_bundle_path(case)))
        story = f"Practice: {case['title']}\n{case.get('story', '').strip()}"
        self.start_walk(case["symptom"], spec, story=story, practice=True)

    def resume_session(self, session_id: str) -> None:
        self.notify("resuming: replaying the recorded answers (probes run again)…")
        self._resume_worker(session_id)

    @work(thread=True, exclusive=True, group="resume", exit_on_error=False)
    def _resume_worker(self, session_id: str) -> None:
        from troubleshooter.guide import Guide
        from troubleshooter.session import Session

        s = Session.open(session_id, self.session_dir)
        g = Guide.resume(s, on_event=self._probe_event)
        self.call_from_thread(self._resumed, g)

    def _resumed(self, g: Guide) -> None:
        self.guide = g
        self.sub_title = g.target.label
        self.push_screen(WalkScreen(g, f"Resumed session {g.session.id if g.session else ''}"))

    def open_path(self, path: str) -> None:
        p = Path(path).expanduser()
        if (p / "manifest.json").exists() or p.name.endswith((".tar.gz", ".tgz")):
            self.spec = TargetSpec(bundle=str(p))
            self.evidence = None
        elif p.exists():
            self.evidence = [str(p)]
        else:
            self.show_error("cannot open", f"{p}: no such file or directory")
            return
        self.sub_title = self._target_label()
        self.fixed_context = None
        start = next((s for s in self.screen_stack if isinstance(s, StartScreen)), None)
        if start is not None:
            start.query_one("#context", Static).update("[dim]reading…[/]")
        self.gather_context()

    # -- actions
    def copy_command(self, cmd: str) -> None:
        """OSC 52 through Textual's clipboard support, plus a file for terminals without it."""
        self.copy_to_clipboard(cmd)
        path = self.settings.exports_path() / "last-copied-command.sh"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("# copied by troubleshooter; review before running\n" + cmd + "\n")
            where = f"; also written to {path}"
        except OSError as exc:
            where = f" (could not write {path}: {exc.strerror})"
        self.notify(f"copied to the clipboard{where}", title="copied, not run")

    def show_error(self, title: str, body: str) -> None:
        self.push_screen(ErrorScreen(title, body))

    def action_help(self) -> None:
        self.push_screen(MessageScreen("Help", HELP, markdown=True))

    def action_glossary(self) -> None:
        self.push_screen(GlossaryScreen())

    def action_toggle_learn(self) -> None:
        self.learn = not self.learn
        if self.learn:
            self.show_why = True
        self.notify(f"learn mode {'on' if self.learn else 'off'}")
        if isinstance(self.screen, WalkScreen):
            self.screen.rerender()

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme != "textual-light" else "textual-dark"

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Preflight sweep", "Run every preflight check on this target", lambda: self.push_screen(ChecksScreen()))
        yield SystemCommand("Glossary", "Terms used by the steps", self.action_glossary)
        yield SystemCommand("Help", "Every key", self.action_help)
        yield SystemCommand("Learn mode", "Explain every step and branch", self.action_toggle_learn)
        yield SystemCommand("Resume a session", "Pick a saved session", lambda: self.push_screen(SessionsScreen()))
        yield SystemCommand("Practise", "Walk a reference case", lambda: self.push_screen(PracticeScreen()))
        for t in self.engine.symptoms():
            yield SystemCommand(f"Symptom: {t.title}", t.summary, lambda tid=t.id: self.start_walk(tid))
        if isinstance(screen, WalkScreen):
            yield SystemCommand("Back", "Back to the previous question", screen.action_back)
            yield SystemCommand("Cancel probes", "Stop the probes running now", screen.action_cancel)
            yield SystemCommand("Why", "Show or hide the why of each step", screen.action_toggle_why)
            yield SystemCommand("Hypotheses", "Show or hide the hypotheses panel", screen.action_toggle_hyps)
            yield SystemCommand("Probe output", "The raw output behind the last step", screen.action_output)
        if isinstance(screen, ResultsScreen):
            yield SystemCommand("Copy command", "Copy the selected fix or verify command", screen.action_copy)
            yield SystemCommand("Verify", "Re-run the probes of the selected cause", screen.action_verify)
            yield SystemCommand("Record a measurement", "Step time after a fix: where the gap went", screen.action_measure)
        if isinstance(screen, StartScreen) and (self.spec.exec_prefix or self.spec.job):
            yield SystemCommand("Compare host and container", "What the job does not see", screen.action_compare)
        if isinstance(screen, StartScreen) and self.spec.job:
            yield SystemCommand("Fan-out", "Compare every node of the job", screen.action_fanout)
        if self.guide is not None and self.guide.walk is not None:
            g = self.guide
            yield SystemCommand("Export", "Write the ticket (Markdown, JSON, bundle)",
                                lambda: self.push_screen(ExportScreen(g, self.settings.exports_path())))
            yield SystemCommand("Results", "Root causes found so far", lambda: self.push_screen(ResultsScreen(g)))

    # -- errors in workers: a dialog, never a traceback
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            err = event.worker.error
            self.show_error("something went wrong", f"{type(err).__name__}: {err}\n\nThe session journal keeps what happened so far.")


def main(args: argparse.Namespace) -> int:
    from troubleshooter import settings as settings_mod

    cfg = settings_mod.load()
    spec = TargetSpec(bundle=getattr(args, "bundle", None), job=args.job, node=args.node,
                      container_name=args.container_name, exec_prefix=args.exec_prefix, pid=args.pid)
    for opt in ("steps_log", "nccl_log", "nccl_tests_dir"):
        if getattr(args, opt, None):
            spec.extra[opt] = getattr(args, opt)
    if not any((spec.bundle, spec.job, spec.exec_prefix)) and cfg.default_target:
        kind, _, value = cfg.default_target.partition(":")
        if kind == "exec":
            spec.exec_prefix = value
        elif kind == "job":
            spec.job = value
        elif kind == "bundle":
            spec.bundle = value
    if args.profile:
        cfg.profile = args.profile
    if args.learn:
        cfg.learn_mode = True
    try:
        spec.make()
    except Exception as exc:  # noqa: BLE001
        print(f"troubleshooter: {exc}")
        return 2
    app = TroubleshooterApp(spec, settings=cfg, symptom=args.symptom, resume=args.resume, practice=args.demo,
                            evidence=getattr(args, "evidence", None))
    # What is loaded by now (modules, the trees, the settings) lives as long as the process: out of the cyclic
    # collector's sight, the full collection that start-up's allocations set off before the first frame takes
    # ~1 ms instead of ~12 ms (docs/benchmarks.md). Nothing is freed later that would have been freed otherwise
    # but import-time cycles, which no code can reach.
    import gc

    gc.freeze()
    app.run()
    return 0
