"""The interactive app: a guided troubleshooting session over SSH.

Screens: start (where am I, pick a symptom, preflight, resume, practise, open a bundle), the walk (the
transcript of steps with their *why*, facts and branch, the question at hand, the hypotheses), results
(root causes, copyable fixes, verify), export, glossary, help. Probes run in thread workers that call the
core (:mod:`troubleshooter.service.guide`) and post messages; one handler turns worker errors into an error dialog.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from troubleshooter.output.safe import escape_controls as esc, markup
from troubleshooter import locations
from troubleshooter.diagnosis import engine as eng
from troubleshooter.settings import Settings
from troubleshooter.service.outputs import OutputsReader
from troubleshooter.probe.targetspec import TargetSpec
from troubleshooter.tui.screens.checks import ChecksScreen
from troubleshooter.tui.screens.dialogs import ErrorScreen, ExportScreen, GlossaryScreen, HELP, MessageScreen
from troubleshooter.tui.messages import ContextReady, ProbeProgress
from troubleshooter.tui.screens.practice import PracticeScreen
from troubleshooter.tui.render import CONTEXT_SOURCES
from troubleshooter.tui.screens.results import ResultsScreen
from troubleshooter.tui.screens.sessions import SessionsScreen
from troubleshooter.tui.screens.start import StartScreen
from troubleshooter.tui.screens.walk import WalkScreen

if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.service.guide import Guide

# ---------------------------------------------------------------------------- the app
class TroubleshooterApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "troubleshooter"
    BINDINGS = [
        Binding("escape", "home", "Symptoms", id="app.home",
                tooltip="Back to the symptom list; the walk is saved and stays resumable"),
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Quit; the session is saved as you go"),
        Binding("question_mark", "help", "Help", id="app.help", tooltip="Keys and what they do"),
        Binding("g", "glossary", "Glossary", id="app.glossary", tooltip="Terms used by the steps"),
        Binding("l", "toggle_learn", "Learn", id="app.learn", tooltip="Learn mode: explain every branch"),
        Binding("t", "toggle_theme", "Theme", id="app.theme", show=False, tooltip="Light or dark theme"),
        Binding("j", "move(1)", "Down", id="app.down", show=False, tooltip="Down a list (as ↓); typed in a text field"),
        Binding("k", "move(-1)", "Up", id="app.up", show=False, tooltip="Up a list (as ↑); typed in a text field"),
    ]

    def __init__(self, spec: TargetSpec | None = None, *, settings: Settings | None = None,
                 evidence: list[str] | None = None, session_dir: Path | None = None,
                 symptom: str | None = None, resume: str | None = None, practice: str | None = None,
                 context_lines: list[str] | None = None, discover: Callable[[], list] | None = None) -> None:
        super().__init__()
        from troubleshooter.diagnosis import profiles

        self.settings = settings or Settings()
        self.spec = spec or TargetSpec()
        self.evidence = evidence
        self.outputs = OutputsReader()  # pasted outputs, read once per set of them (and again when a file changes)
        self.session_dir = session_dir
        self.initial = (symptom, resume, practice)
        self.fixed_context = context_lines  # tests freeze the start screen's context
        self._discover = discover  # tests give canned running contexts; None: look (service.attach)
        self.running: list | None = None  # what runs here (jobs, containers, processes), once looked for
        self.learn = self.settings.learn_mode
        self.show_why = self.settings.show_why or self.learn
        prof = profiles.choose(self.settings.profile or None)
        self.engine = eng.Engine(profile=prof.thresholds)
        self.guide: Guide | None = None
        self.walk_story = ""  # the practice intro shown above the walk, again when it is reopened
        if self.settings.theme:
            self.theme = self.settings.theme
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)

    # -- targets
    def guide_target(self):
        return self.spec.make()

    def new_guide(self, spec: TargetSpec | None = None, practice: bool = False, node: str | None = None,
                  read: Any = None) -> Guide:
        from troubleshooter.output.redact import Redactor

        red = Redactor(self.settings.redact_extra)
        if self.evidence and not practice:
            from troubleshooter.diagnosis.pasted import EvidenceTarget

            facts = read if read is not None else self.outputs.fresh(self.evidence)  # a copy: the walk adds to it
            if node:  # one node of several pasted: its outputs are the machine walked (as diagnose --evidence does)
                from troubleshooter.diagnosis import pasted_nodes

                facts = pasted_nodes.for_node(facts, node)
            from troubleshooter.diagnosis import profiles

            prof = profiles.choose(self.settings.profile or None, facts.lookup("gpu.names", "target"))
            from troubleshooter.service.guide import Guide

            target = EvidenceTarget(facts)
            if node:
                target.label = f"node {node} of {len(self.evidence_nodes())} pasted: {target.label}"
            return Guide(eng.Engine(profile=prof.thresholds), facts, target, TargetSpec(), prof.id, None, red,
                         profile_explicit=bool(self.settings.profile))
        from troubleshooter.service.guide import Guide

        g = Guide.for_target(spec or self.spec, self.settings.profile or None, redactor=red,
                             on_event=self._probe_event)
        g.engine.practice = practice  # a practice walk keeps its "(case N)" references; a real one never shows them
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
        self.sub_title = self._shown(self._target_label())
        for w in self.settings.warnings:
            self.notify(markup(w), severity="warning", timeout=8)
        symptom, resume, practice = self.initial
        if resume:
            self.resume_session(resume)
        elif practice:
            self.start_practice(practice)
        elif symptom:
            self.start_walk(symptom)

    def on_unmount(self) -> None:
        # the app is closing: commands still running in thread workers (a walk's probes, squeue or docker ps
        # looking for what runs here) are killed now, or the exit would wait for each to finish or time out
        from troubleshooter.probe import runner

        runner.kill_running()

    def evidence_read(self) -> Any:
        """The opened outputs' EvidenceFacts (None without any), read once per set of them, shared by the start
        screen's node count and the nodes screen (a walk gets a copy); raises what reading them raised."""
        return self.outputs.read(self.evidence) if self.evidence else None

    def evidence_nodes(self) -> list[str]:
        """The nodes the opened outputs name (two or more, none of them the job's own side), else []."""
        from troubleshooter.diagnosis import pasted_nodes

        try:
            return pasted_nodes.node_names(read) if (read := self.evidence_read()) is not None else []
        except Exception:  # noqa: BLE001 - unreadable outputs: the walk says so when it starts
            return []

    def redacted(self, s: object, one_line: bool = False) -> str:
        """Data for a screen: secrets redacted (screenshots travel), control characters escaped."""
        from troubleshooter.output.redact import Redactor

        return esc(Redactor(self.settings.redact_extra).text(str(s)), one_line=one_line)

    def _shown(self, label: str) -> str:  # a label for the header, on one line
        return self.redacted(label, one_line=True)

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
            nodes = self.evidence_nodes()
            if nodes:
                from troubleshooter.diagnosis.compare import hostlist

                lines.append(f"outputs of {len(nodes)} nodes ({hostlist(nodes)}), each diagnosed as one machine: "
                             "'Pasted nodes' lists them; a symptom asks which node to walk")
        else:
            from troubleshooter.probe import collect
            from troubleshooter.output import report

            try:
                target = self.spec.make()
                coll = collect.collect(target, ids=CONTEXT_SOURCES, params=self.spec.params())
                lines = report.context_lines(coll.facts, target.describe())
            except Exception as exc:  # noqa: BLE001 - in the target box, not a crash dialog
                lines = [f"target: {self._target_label()}", f"cannot read it: {str(exc).splitlines()[0] if str(exc) else exc!r}"]
        self.call_from_thread(self._context_ready, lines)

    def discover_contexts(self) -> list:
        """What runs here to attach to (call from a worker: it runs squeue, docker ps ... with timeouts)."""
        if self._discover is not None:
            return self._discover()
        from troubleshooter.service.attach import running_contexts

        return running_contexts()

    @work(thread=True, exclusive=True, group="running", exit_on_error=False)
    def gather_running(self) -> None:
        try:
            found = self.discover_contexts()
        except Exception as exc:  # noqa: BLE001 - said on the start screen, never a crash dialog
            found = exc
        self.call_from_thread(self._running_ready, found)

    def _running_ready(self, found: Any) -> None:
        if not isinstance(found, Exception):
            self.running = found
        for screen in self.screen_stack:
            if isinstance(screen, StartScreen):
                screen.show_running(found)

    def attach_to(self, args: tuple[str, ...]) -> bool:
        """Run every probe in the chosen context from now on (as ``troubleshooter ARGS`` would); a problem is a
        notice and the current target stays."""
        from troubleshooter.service.attach import attach

        try:
            spec = attach(args, self.spec)
        except Exception as exc:  # noqa: BLE001 - said as what it is; the current target is kept
            self.notify(markup(str(exc).splitlines()[0] if str(exc) else type(exc).__name__),
                        title="cannot attach; the current target is kept", severity="error", timeout=8)
            return False
        self.spec, self.evidence, self.fixed_context = spec, None, None
        self.sub_title = self._shown(self._target_label())
        import shlex

        self.notify(markup(self._shown(f"probes now run in: {self._target_label()}  "
                                       f"(same as: {shlex.join(['troubleshooter', *args])})")), title="attached")
        start = next((s for s in self.screen_stack if isinstance(s, StartScreen)), None)
        if start is not None:
            start.query_one("#context", Static).update("[dim]reading…[/]")
            start.refresh_symptoms()
        self.gather_context()
        return True

    def _context_ready(self, lines: list[str]) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, StartScreen):
                screen.post_message(ContextReady(lines))
                if self.evidence_nodes():  # the list offers them
                    screen.refresh_symptoms()

    # -- starting walks
    def start_walk(self, symptom: str, spec: TargetSpec | None = None, story: str = "", practice: bool = False,
                   node: str | None = None, read: Any = None) -> None:
        if spec is None and not practice and read is None and self.evidence and not self.outputs.ready(self.evidence):
            self._read_then_walk(symptom, story, node)  # seconds for a long log: never on the UI thread
            return
        if node is None and spec is None and not practice and self.evidence and self.evidence_nodes():
            from troubleshooter.tui.screens.nodes import NodesScreen

            self.push_screen(NodesScreen(symptom))  # which node: all of them at once would be no machine
            return
        try:
            g = self.new_guide(spec, practice=practice, node=node, read=read)
            g.ask_needs = True  # a step that needs the job's context or a log asks for it (a dialog)
            g.begin(symptom, session_dir=self.session_dir)
        except Exception as exc:  # noqa: BLE001 - a bad bundle, a bad tree: shown as what it is
            self.show_error("cannot start", str(exc))
            return
        self.guide = g
        self.walk_story = story
        self.sub_title = self._shown(g.target.label)
        self.push_screen(WalkScreen(g, story))
        if g.record_problem:
            self.notify(g.record_problem, title="not recorded", severity="warning", timeout=20)

    @work(thread=True, exclusive=True, group="read", exit_on_error=False)
    def _read_then_walk(self, symptom: str, story: str, node: str | None) -> None:
        with contextlib.suppress(Exception):  # what reading raised, the walk's start says (from the kept reading)
            self.outputs.read(self.evidence or [])
        self.call_from_thread(self.start_walk, symptom, None, story, False, node)

    def start_practice(self, case_id: str) -> None:
        from troubleshooter.service.practice import case_intro, practice_bundle_path, practice_case

        try:
            case = practice_case(case_id)
        except Exception as exc:  # noqa: BLE001
            self.show_error("no such practice case", str(exc))
            return
        self.learn = True
        self.show_why = True
        spec = TargetSpec(bundle=str(practice_bundle_path(case)))
        story = f"Practice: {case['title']}\n{case_intro(case)}"
        before = self.guide
        self.start_walk(case["symptom"], spec, story=story, practice=True)
        if self.guide is not None and self.guide is not before:  # started (a bad bundle leaves the old one)
            self.guide.practice_case = case

    def start_quiz(self, case_id: str) -> None:
        """Practice that teaches: choose each probe, read its output, then the expert's choice (service.quiz)."""
        self._quiz_worker(case_id)

    @work(thread=True, exclusive=True, group="quiz", exit_on_error=False)
    def _quiz_worker(self, case_id: str) -> None:
        from troubleshooter.output.redact import Redactor
        from troubleshooter.service.quiz import Quiz

        try:
            quiz = Quiz(case_id, redactor=Redactor(self.settings.redact_extra))
        except Exception as exc:  # noqa: BLE001 - an unknown case, a broken bundle: said as what it is
            self.call_from_thread(self.show_error, "cannot start the practice case", str(exc))
            return
        self.call_from_thread(self._quiz_ready, quiz)

    def _quiz_ready(self, quiz) -> None:
        from troubleshooter.tui.screens.quiz import QuizScreen

        self.sub_title = self._shown(f"practice: {quiz.title}")
        self.push_screen(QuizScreen(quiz))

    def resume_session(self, session_id: str) -> None:
        self.notify("resuming: replaying the recorded answers (probes run again)…")
        self._resume_worker(session_id)

    @work(thread=True, exclusive=True, group="resume", exit_on_error=False)
    def _resume_worker(self, session_id: str) -> None:
        from troubleshooter.service.guide import Guide
        from troubleshooter.session import Session

        s = Session.open(session_id, self.session_dir)
        g = Guide.resume(s, on_event=self._probe_event, ask_needs=True)
        self.call_from_thread(self._resumed, g)

    def _resumed(self, g: Guide) -> None:
        self.guide = g
        self.walk_story = f"Resumed session {g.session.id if g.session else ''}"
        self.sub_title = self._shown(g.target.label)
        self.push_screen(WalkScreen(g, self.walk_story))

    def _resolve_open(self, path: str) -> tuple[TargetSpec | None, list[str] | None]:
        """The target a path opens, read once to be sure it can be (raises with what is wrong)."""
        p = Path(path).expanduser()
        if (p / "manifest.json").exists() or p.name.endswith((".tar.gz", ".tgz")):
            spec = TargetSpec(bundle=str(p))
            spec.make()  # BundleError: no such bundle, not a bundle archive ...
            return spec, None
        if not p.exists():
            raise FileNotFoundError(f"{p}: no such file or directory")
        self.outputs.read([str(p)])  # PastedError: nothing in it could be read (kept: the walk reads it from there)
        return None, [str(p)]

    def open_problem(self, path: str) -> str:
        """What keeps ``path`` from opening, in one line ("" if it opens): shown in the open dialog."""
        try:
            self._resolve_open(path)
        except Exception as exc:  # noqa: BLE001 - said as what it is; the current target stays
            lines = str(exc).splitlines()
            return (lines[0] if lines else type(exc).__name__) + "  (the current target is kept)"
        return ""

    def open_path(self, path: str) -> None:
        try:
            spec, evidence = self._resolve_open(path)
        except Exception as exc:  # noqa: BLE001 - a notice, and the current target stays as it was
            self.notify(markup(str(exc).splitlines()[0] if str(exc) else type(exc).__name__),
                        title="cannot open; the current target is kept", severity="error", timeout=8)
            return
        self.use(spec, evidence)

    def use(self, spec: TargetSpec | None, evidence: list[str] | None) -> None:
        """What the next walk reads: a bundle (``spec``) or pasted outputs (``evidence``); the start screen's
        context is read again."""
        if spec is not None:
            self.spec = spec
        self.evidence = evidence
        self.sub_title = self._shown(self._target_label())
        self.fixed_context = None
        start = next((s for s in self.screen_stack if isinstance(s, StartScreen)), None)
        if start is not None:
            start.query_one("#context", Static).update("[dim]reading…[/]")
        self.gather_context()

    # -- actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "home" and isinstance(self.screen, (StartScreen, ModalScreen)):
            return False  # already there, or a dialog whose esc closes it: not in the footer
        return True

    def action_move(self, step: int) -> None:
        """j / k: the focused list's cursor (or the focused pane's scroll) down / up, as ↓ / ↑."""
        w = self.focused
        if w is None:
            return
        for name in (("action_cursor_down", "action_scroll_down") if step > 0 else ("action_cursor_up", "action_scroll_up")):
            act = getattr(w, name, None)
            if act is not None:
                act()
                return

    def action_home(self, note: str = "") -> None:
        """Back to the symptom list from anywhere (dialogs close on esc first). Nothing is lost: the walk's
        journal is written as it goes, "Back to the walk" on the list reopens it, and s resumes it later."""
        if isinstance(self.screen, StartScreen):
            return
        left_walk = any(isinstance(s, (WalkScreen, ResultsScreen)) for s in self.screen_stack)
        while len(self.screen_stack) > 1 and not isinstance(self.screen, StartScreen):
            self.pop_screen()
        if left_walk and self.guide is not None:
            self.notify(note or "back at the symptom list; the walk is saved: \"Back to the walk\" reopens it, "
                        "s resumes it later", title="symptoms")

    def reopen_walk(self) -> None:
        """The walk left with esc, where it was (or its results if it had ended)."""
        if self.guide is None or self.guide.walk is None:
            return
        self.push_screen(WalkScreen(self.guide, self.walk_story))

    def copy_command(self, cmd: str) -> None:
        """OSC 52 through Textual's clipboard support, plus a file for terminals without it."""
        self.copy_to_clipboard(cmd)
        path = self.settings.exports_path() / "last-copied-command.sh"
        try:
            locations.write_private(path, ("# copied by troubleshooter; review before running\n" + cmd + "\n").encode())
            where = f"; also written to {path}"
        except OSError as exc:
            where = f" (could not write {path}: {exc.strerror})"
        self.notify(f"copied to the clipboard{markup(where)}", title="copied, not run")

    def show_error(self, title: str, body: str) -> None:
        self.push_screen(ErrorScreen(markup(title), markup(body)))  # data: its markup and controls escaped

    def keymap_rows(self) -> list[tuple[str, str, str]]:
        """(id, default keys, what) of every binding with an id, app first, then screen by screen."""
        from troubleshooter.tui.screens.attach import AttachScreen, LogNeedScreen
        from troubleshooter.tui.screens.evidence import EvidenceScreen
        from troubleshooter.tui.screens.filter import FilterInput
        from troubleshooter.tui.screens.nodes import NodesScreen
        from troubleshooter.tui.screens.paste import PasteScreen
        from troubleshooter.tui.screens.quiz import QuizScreen

        rows, seen = [], set()
        for cls in (TroubleshooterApp, StartScreen, WalkScreen, ResultsScreen, EvidenceScreen, ExportScreen, NodesScreen,
                    PasteScreen, GlossaryScreen, MessageScreen, PracticeScreen, QuizScreen, AttachScreen, LogNeedScreen, FilterInput):
            for b in cls.BINDINGS:
                if isinstance(b, Binding) and b.id and b.id not in seen:
                    seen.add(b.id)
                    rows.append((b.id, b.key, b.tooltip or b.description))
        return rows

    def action_help(self) -> None:
        from troubleshooter.tui.screens.dialogs import keymap_markdown

        body = HELP + "\n" + keymap_markdown(self.keymap_rows(), dict(self.settings.keymap or {}))
        self.push_screen(MessageScreen("Help", body, markdown=True))

    def action_glossary(self, term: str = "") -> None:
        """The glossary; at ``term`` (a term clicked in a step), else at the newest term the walk marked."""
        if isinstance(self.screen, GlossaryScreen):
            return
        if not term and isinstance(self.screen, WalkScreen):
            term = self.screen.newest_term()
        self.push_screen(GlossaryScreen(term))

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


def argument_error(args: argparse.Namespace, spec: TargetSpec, session_dir: Path | None = None) -> str:
    """What is wrong with the command line, in one line ("" if nothing): checked before the app starts, so a
    bad argument is exit 2 and a message, never the app opening on an error dialog."""
    try:
        spec.make()
    except Exception as exc:  # noqa: BLE001 - a bad bundle, job, container: said as what it is
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if getattr(args, "demo", None):
        from troubleshooter.service.practice import PracticeError, practice_bundle_path, practice_case

        try:
            practice_bundle_path(practice_case(args.demo))
        except PracticeError as exc:
            return f"--demo: {exc}"
    if getattr(args, "resume", None):
        from troubleshooter.session import Session, SessionError

        try:
            Session.open(args.resume, session_dir).start_event()
        except (SessionError, OSError, ValueError, KeyError, IndexError) as exc:
            return f"--resume: {exc} (`troubleshooter sessions` lists them)"
    if getattr(args, "symptom", None):
        try:
            tree = eng.Engine().tree(args.symptom)
        except Exception:  # noqa: BLE001 - TreeError: no such tree
            tree = None
        if tree is None or tree.kind != "entry":
            ids = ", ".join(t.id for t in eng.Engine().symptoms())
            return f"--symptom: unknown symptom {args.symptom!r}; symptoms: {ids}"
    return ""


def main(args: argparse.Namespace) -> int:
    from troubleshooter import settings as settings_mod

    cfg = settings_mod.load()
    from troubleshooter.probe.targetspec import from_namespace

    spec = from_namespace(args)
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
    problem = argument_error(args, spec)
    if problem:
        from troubleshooter.output.redact import Redactor

        print(f"troubleshooter: {esc(Redactor(cfg.redact_extra).text(problem))}", file=sys.stderr)
        return 2
    app = TroubleshooterApp(spec, settings=cfg, symptom=args.symptom, resume=args.resume, practice=args.demo,
                            evidence=getattr(args, "evidence", None))
    app.outputs = getattr(args, "outputs", None) or app.outputs  # --evidence as read before the app started
    # What is loaded by now (modules, the trees, the settings) lives as long as the process: out of the cyclic
    # collector's sight, the full collection that start-up's allocations set off before the first frame takes
    # ~1 ms instead of ~12 ms (docs/benchmarks.md). Nothing is freed later that would have been freed otherwise
    # but import-time cycles, which no code can reach.
    import gc

    gc.freeze()
    try:
        app.run()
    finally:
        # probes still running when the app ends (a walk's, the preflight screen's) would hold the exit until
        # each finished or timed out: their process trees are killed now
        from troubleshooter.probe import runner

        runner.kill_running()
    return 0
