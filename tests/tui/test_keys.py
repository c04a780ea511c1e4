"""Conventions (issue 13, item 7): q quits on every screen; ? help holds the keymap as it is now."""

from __future__ import annotations

import pytest

from troubleshooter.settings import Settings
from troubleshooter.tui.screens.dialogs import MessageScreen

from .conftest import make_app, settle, start

# keys from the start screen to each screen (case 4 ends on Results)
ROUTES = {
    "start": (),
    "help": ("question_mark",),
    "glossary": ("g",),
    "preflight": ("p",),
    "practice": ("d",),
    "sessions": ("s",),
    "results": None,
    "walk": ("b",),
    "raw output": ("b", "o"),
    "export dialog": ("e",),
}


@pytest.mark.asyncio
@pytest.mark.parametrize("where", list(ROUTES))
async def test_q_quits_on_every_screen(where):
    app = make_app("case4")
    async with app.run_test(size=(120, 40)) as pilot:
        keys = ROUTES[where]
        if keys is None or where in ("walk", "raw output", "export dialog"):
            await start(app, pilot, "host-ok-container-slow")
        else:
            await settle(app, pilot)
        for k in keys or ():
            await pilot.press(k)
            await settle(app, pilot)
        screen = type(app.screen).__name__
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 0, f"q did not quit on {where} ({screen})"


@pytest.mark.asyncio
async def test_q_is_typed_in_a_text_field():
    from textual.widgets import Input

    app = make_app("case4")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("o")
        await settle(app, pilot)
        await pilot.press("q")
        await settle(app, pilot)
        assert app.return_code is None and app.screen.query_one("#path", Input).value == "q"


@pytest.mark.asyncio
async def test_help_holds_the_keymap_as_it_is_now():
    app = make_app("case4", settings=Settings(keymap={"walk.back": "left,b"}))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await settle(app, pilot)
        assert isinstance(app.screen, MessageScreen)
        body = app.screen.body
        for bid in ("app.home", "app.quit", "walk.back", "results.copy", "start.open", "glossary.back"):
            assert f"`{bid}`" in body
        assert "| `walk.back` | left, b (remapped) |" in body
        assert "TROUBLESHOOTER_KEYMAP=" in body and "keymap:" in body and "see the README" not in body
        assert "● | ruled in" in body  # the legend of the hypothesis marks


@pytest.mark.asyncio
async def test_j_and_k_move_in_lists():
    from textual.widgets import OptionList

    app = make_app("case1")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        ol = app.screen.query_one("#symptoms", OptionList)
        assert ol.highlighted == 0
        await pilot.press("j", "j")
        assert ol.highlighted == 2
        await pilot.press("k")
        assert ol.highlighted == 1
        await start(app, pilot, "moe-only-slowdown")
        await pilot.press("j", "enter")  # "no, dense is slow too"
        await settle(app, pilot)
        assert app.guide.answers() == [("moe-only-slowdown.dense", "no")]


@pytest.mark.asyncio
async def test_the_hypotheses_panel_has_a_legend():
    from textual.widgets import Static

    app = make_app("case1")
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot, "moe-only-slowdown")
        title = str(app.screen.query_one("#hyps-panel .panel-title", Static).render())
        assert "● ruled in" in title and "○ ruled out" in title and "· untested" in title
