"""SVG snapshots of each screen at 80x24 and 120x40, on practice bundles with clocks and context frozen.

Regenerate after an intended change: pytest tests/tui/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

import pytest

from troubleshooter.tui.screens.dialogs import ExportScreen
from troubleshooter.tui.screens.results import ResultsScreen
from troubleshooter.tui.screens.walk import WalkScreen

from .conftest import make_app, settle

SIZES = [(80, 24), (120, 40)]


def _ids(size):
    return f"{size[0]}x{size[1]}"


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_start_screen(snap_compare, size):
    assert snap_compare(make_app("case4"), terminal_size=size, run_before=lambda pilot: settle(pilot.app, pilot))


async def _walk_case4(pilot):
    app = pilot.app
    await settle(app, pilot)
    app.start_practice("case4")
    await settle(app, pilot)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_probe_step(snap_compare, size):
    async def run(pilot):
        await _walk_case4(pilot)
        if isinstance(pilot.app.screen, ResultsScreen):
            pilot.app.pop_screen()
        await settle(pilot.app, pilot)
        assert isinstance(pilot.app.screen, WalkScreen)

    assert snap_compare(make_app(None), terminal_size=size, run_before=run)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_question(snap_compare, size):
    async def run(pilot):
        app = pilot.app
        await settle(app, pilot)
        app.start_walk("moe-only-slowdown")
        await settle(app, pilot)
        assert app.guide.current()[1] == "dense"

    assert snap_compare(make_app("case1"), terminal_size=size, run_before=run)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_conclusion(snap_compare, size):
    async def run(pilot):
        await _walk_case4(pilot)
        assert isinstance(pilot.app.screen, WalkScreen)  # a practice walk keeps its steps on screen
        await pilot.press("r")
        await settle(pilot.app, pilot)
        assert isinstance(pilot.app.screen, ResultsScreen)

    assert snap_compare(make_app(None), terminal_size=size, run_before=run)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_export_preview(snap_compare, size):
    async def run(pilot):
        await _walk_case4(pilot)
        pilot.app.push_screen(ExportScreen(pilot.app.guide, pilot.app.settings.exports_path()))
        await settle(pilot.app, pilot)

    assert snap_compare(make_app(None), terminal_size=size, run_before=run)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_help(snap_compare, size):
    async def run(pilot):
        await settle(pilot.app, pilot)
        await pilot.press("question_mark")
        await settle(pilot.app, pilot)

    assert snap_compare(make_app("case4"), terminal_size=size, run_before=run)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_practice_feedback(snap_compare, size):
    """A practice round after a wrong pick: the chosen probe's output, the expert's probe and why."""
    async def run(pilot):
        from troubleshooter.tui.screens.quiz import QuizScreen

        app = pilot.app
        await settle(app, pilot)
        app.start_quiz("case1")
        await settle(app, pilot)
        assert isinstance(app.screen, QuizScreen)
        quiz = app.screen.quiz
        app.screen.query_one("#choices").highlighted = [o.id for o in quiz.current().options].index("ib-sysfs")
        await pilot.press("enter")
        await settle(app, pilot)

    assert snap_compare(make_app(None), terminal_size=size, run_before=run)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_glossary_search(snap_compare, size):
    async def run(pilot):
        from textual.widgets import Input

        await settle(pilot.app, pilot)
        await pilot.press("g")
        await settle(pilot.app, pilot)
        for field in pilot.app.screen.query(Input):
            field.cursor_blink = False  # a blinking cursor is drawn or not by the time the snapshot is taken (CI load)
        await pilot.press(*"steal")
        await settle(pilot.app, pilot)

    assert snap_compare(make_app("case4"), terminal_size=size, run_before=run)


@pytest.mark.parametrize("size", SIZES, ids=_ids)
def test_asks_for_the_job_context(snap_compare, size):
    """A host-only walk of "host nccl-tests fine, slow in the container": the dialog that asks for the job."""
    from troubleshooter.tui.screens.attach import AttachScreen

    async def run(pilot):
        app = pilot.app
        await settle(app, pilot)
        app.start_walk("host-ok-container-slow")
        await settle(app, pilot)
        assert isinstance(app.screen, AttachScreen)

    assert snap_compare(make_app(None), terminal_size=size, run_before=run)
