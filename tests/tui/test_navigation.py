"""Pilot tests of getting around (issue 13, item 1): esc returns to the symptom list from every screen with
nothing lost; b at the first question (or on a tree that asks none) is the symptom list, never a blank walk;
a result with no cause says only what is true of the hypotheses."""

from __future__ import annotations


import pytest
from textual.widgets import OptionList

from troubleshooter.diagnosis.engine import Hypothesis
from troubleshooter.session import Session, list_sessions
from troubleshooter.tui.screens.results import ResultsScreen, no_cause_text
from troubleshooter.tui.screens.start import StartScreen
from troubleshooter.tui.screens.walk import WalkScreen

from .conftest import fake_turbostat, until_running, make_app, settle, start


def option_ids(screen) -> list[str]:
    ol = screen.query_one("#symptoms", OptionList)
    return [ol.get_option_at_index(i).id for i in range(ol.option_count)]


@pytest.mark.asyncio
async def test_esc_on_a_walk_returns_to_the_symptom_list_and_nothing_is_lost():
    app = make_app("case1")
    async with app.run_test(size=(100, 30)) as pilot:
        await start(app, pilot, "moe-only-slowdown")
        assert isinstance(app.screen, WalkScreen) and app.guide.current()[1] == "dense"
        sid = app.guide.session.id
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, StartScreen)
        # the walk is offered again, first, and the journal stays resumable
        assert option_ids(app.screen)[0] == "action:walk"
        assert any(i.id == sid for i in list_sessions())
        assert Session.open(sid).start_event()["symptom"] == "moe-only-slowdown"
        await pilot.press("enter")  # "Back to the walk" is highlighted
        await settle(app, pilot)
        assert isinstance(app.screen, WalkScreen) and app.guide.current()[1] == "dense"
        await pilot.press("enter")  # answer it: the walk goes on where it was
        await settle(app, pilot)
        assert isinstance(app.screen, ResultsScreen)
        assert "smmu-cmdq-contention" in [c.cause for c in app.guide.walk.conclusions]
        assert Session.open(sid).answers() == [("moe-only-slowdown.dense", "yes")]


@pytest.mark.asyncio
@pytest.mark.parametrize("keys", [
    (),  # results
    ("b",),  # results -> the walk
    ("b", "o"),  # the walk -> the raw evidence
    ("e",),  # the export dialog: esc closes the dialog first, a second esc leaves
])
async def test_esc_from_every_screen_of_a_walk(keys):
    app = make_app("case4")
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot, "host-ok-container-slow")
        assert isinstance(app.screen, ResultsScreen)
        for k in keys:
            await pilot.press(k)
            await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        if keys == ("e",):
            assert isinstance(app.screen, ResultsScreen)
            await pilot.press("escape")
            await settle(app, pilot)
        assert isinstance(app.screen, StartScreen)
        assert len(app.screen_stack) == 1
        assert app.guide.walk.done and [c.cause for c in app.guide.walk.conclusions] == ["topo-not-in-container"]


@pytest.mark.asyncio
@pytest.mark.parametrize("key", ["p", "s", "d"])
async def test_esc_from_the_start_screens_side_screens(key):
    app = make_app("case4")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press(key)
        await settle(app, pilot)
        assert not isinstance(app.screen, StartScreen)
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, StartScreen)


@pytest.mark.asyncio
async def test_esc_from_preflight_opened_in_a_walk():
    from troubleshooter.tui.screens.checks import ChecksScreen
    from troubleshooter.tui.screens.compare import CompareScreen

    app = make_app("case1")
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot, "moe-only-slowdown")
        for screen in (ChecksScreen, CompareScreen):
            app.push_screen(screen())
            await settle(app, pilot)
            await pilot.press("escape")
            await settle(app, pilot)
            assert isinstance(app.screen, StartScreen), screen
            app.reopen_walk()
            await settle(app, pilot)
            assert isinstance(app.screen, WalkScreen)


@pytest.mark.asyncio
async def test_b_at_the_first_question_is_the_symptom_list():
    app = make_app("case1")
    async with app.run_test(size=(100, 30)) as pilot:
        await start(app, pilot, "moe-only-slowdown")
        assert app.guide.current()[1] == "dense"
        await pilot.press("b")
        await settle(app, pilot)
        assert isinstance(app.screen, StartScreen)
        assert app.guide.current()[1] == "dense"  # the walk is as it was
        assert "already at the first question" not in str([n.message for n in app._notifications])


@pytest.mark.asyncio
async def test_b_after_a_tree_with_no_question_is_never_a_blank_walk():
    app = make_app("case4")
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot, "host-ok-container-slow")
        assert isinstance(app.screen, ResultsScreen)
        steps = len(app.guide.walk.steps)
        await pilot.press("b")  # results -> the walk
        await settle(app, pilot)
        assert isinstance(app.screen, WalkScreen)
        await pilot.press("b")  # no question to go back to
        await settle(app, pilot)
        assert isinstance(app.screen, StartScreen)
        # nothing was undone: the walk is still finished with its cause, and no blank question screen was shown
        assert app.guide.walk.done and len(app.guide.walk.steps) == steps
        assert [c.cause for c in app.guide.walk.conclusions] == ["topo-not-in-container"]


@pytest.mark.asyncio
async def test_esc_while_probes_run_and_reopen(monkeypatch, tmp_path):
    fake_turbostat(tmp_path, monkeypatch, 1)
    app = make_app(None)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.start_walk("uniformly-slow")
        await until_running(app, pilot, "turbostat")
        assert "turbostat" in app.screen.running
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, StartScreen)  # no results popped up over the symptom list
        app.reopen_walk()  # waits for the walk left running, then shows every step it took
        await settle(app, pilot)
        assert isinstance(app.screen, ResultsScreen)
        walk = next(s for s in app.screen_stack if isinstance(s, WalkScreen))
        assert app.guide.walk.done and walk.shown == len(app.guide.walk.steps)


def test_no_cause_text_says_only_what_is_true():
    assert "every hypothesis" not in no_cause_text([]).lower()
    assert "names no hypotheses" in no_cause_text([])
    mixed = [Hypothesis("a", "A down", "t", "ruled-out"), Hypothesis("b", "B broken", "t", "untested", settle="run b"),
             Hypothesis("c", "C in", "t", "ruled-in", evidence="answered 'yes'")]
    text = no_cause_text(mixed)
    assert "every hypothesis" not in text.lower()
    assert "`run b`" in text and "C in" in text and "Ruled out: A down" in text
    assert "Every hypothesis on this path (1) was ruled out" in no_cause_text(mixed[:1])
    assert "not finished" in no_cause_text(mixed, done=False)
