"""A long log opened in the app is read once and never on the UI thread (service.outputs): the open dialog's check
reads it in a worker, and the open, the start screen and the walk take that reading. Before, a 100,000-line NCCL
log was read four times, three of them on the UI thread (about 2.5 s of frozen app each)."""

from __future__ import annotations

import threading

import pytest
from textual.widgets import Input, Static

from tests.corpus import load
from troubleshooter.diagnosis import pasted
from troubleshooter.tui.screens.dialogs import InputScreen
from troubleshooter.tui.screens.results import ResultsScreen
from troubleshooter.tui.screens.start import StartScreen
from troubleshooter.tui.screens.walk import WalkScreen

from .conftest import hold_reads, make_app, settle


@pytest.fixture
def big_log(tmp_path):
    # one real NCCL INFO line of an 8-NIC RoCE node, 100,000 times (a long job's log), and the capture's own lines
    text = load("nccl-debug/roce-8nic-stale-aws-ofi-plugin-verbs-rxm-fallback-to-ib-nccl2.27.5.txt")
    line = next(ln for ln in text.splitlines(keepends=True) if "NCCL INFO" in ln)
    path = tmp_path / "job-1234.log"
    path.write_text(line * 100_000 + text)
    return str(path)


@pytest.fixture
def reads(monkeypatch):
    """(spec, on the UI thread) for each spec read from disk."""
    seen: list[tuple[str, bool]] = []
    real, ui = pasted.read_spec, threading.get_ident()
    monkeypatch.setattr(pasted, "read_spec",
                        lambda spec, base=None: seen.append((spec, threading.get_ident() == ui)) or real(spec, base))
    return seen


@pytest.mark.asyncio
async def test_a_long_log_opened_is_read_once_off_the_ui_thread_and_walked(big_log, reads):
    app = make_app(None, context_lines=None)
    gate = hold_reads(app)  # the reading ends when the test says
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        await pilot.press("o")
        await settle(app, pilot)
        app.screen.query_one("#path", Input).value = big_log
        await pilot.press("enter")
        # the dialog waits for its check, which reads the log in a worker: the app still answers meanwhile
        assert isinstance(app.screen, InputScreen)
        assert str(app.screen.query_one("#input-error", Static).render()) == "checking…"
        assert app.screen.query_one("#path", Input).disabled
        gate.set()
        await settle(app, pilot)
        assert isinstance(app.screen, StartScreen) and app.evidence == [big_log]
        app.start_walk("nccl-wrong-fabric")
        await settle(app, pilot)
        assert isinstance(app.screen, (WalkScreen, ResultsScreen)) and app.guide.walk.conclusions
        assert reads == [(big_log, False)]  # once, in a worker: the check's reading served the open and the walk


@pytest.mark.asyncio
async def test_esc_while_the_open_dialog_checks_keeps_the_target(big_log):
    app = make_app(None, context_lines=None)
    gate = hold_reads(app)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        spec = app.spec
        await pilot.press("o")
        await settle(app, pilot)
        app.screen.query_one("#path", Input).value = big_log
        await pilot.press("enter")
        await pilot.press("escape")
        gate.set()
        await settle(app, pilot)
        assert isinstance(app.screen, StartScreen) and app.evidence is None and app.spec is spec


@pytest.mark.asyncio
async def test_a_walk_on_outputs_not_yet_read_reads_them_in_a_worker(big_log, reads):
    # --evidence with --symptom: the walk starts as the app comes up, before the start screen's reading is done
    app = make_app(None, evidence=[big_log], symptom="nccl-wrong-fabric", context_lines=None)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, (WalkScreen, ResultsScreen)) and app.guide.walk.conclusions
        assert reads == [(big_log, False)]
