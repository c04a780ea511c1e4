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
        for bid in ("app.home", "app.quit", "walk.back", "results.copy", "start.open", "glossary.back",
                    "start.attach", "list.search", "attach.refresh", "filter.clear"):
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


def _ids(ol) -> list:
    return [ol.get_option_at_index(i).id for i in range(ol.option_count)]


@pytest.mark.asyncio
async def test_slash_searches_the_symptom_list_and_esc_clears():
    from textual.widgets import Input, OptionList

    app = make_app("case1")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        ol = app.screen.query_one("#symptoms", OptionList)
        everything = _ids(ol)
        await pilot.press("slash", *"inside contain")
        await settle(app, pilot)
        assert isinstance(app.focused, Input) and app.focused.value == "inside contain"
        assert _ids(ol) == ["symptom:host-ok-container-slow"]
        await pilot.press("enter", "enter")  # to the list, then pick the one left
        await settle(app, pilot)
        assert app.guide is not None and app.guide.symptom.id == "host-ok-container-slow"
        app.action_home()
        await settle(app, pilot)
        await pilot.press("slash", *"zzz")
        await settle(app, pilot)
        assert "nothing matches" in str(ol.get_option_at_index(0).prompt)
        await pilot.press("escape")
        await settle(app, pilot)
        assert not app.screen.query_one("#filter", Input).display and app.focused is ol
        assert _ids(ol) == ["action:walk", *everything]  # every option back, and "Back to the walk"


@pytest.mark.asyncio
async def test_slash_searches_sessions_and_the_glossary_without_global_keys():
    from textual.widgets import OptionList

    from troubleshooter.tui.screens.dialogs import GlossaryScreen
    from troubleshooter.tui.screens.sessions import SessionsScreen

    app = make_app("case1")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("g")
        await settle(app, pilot)
        assert isinstance(app.screen, GlossaryScreen)
        theme, learn = app.theme, app.learn
        await pilot.press("slash", *"steal")
        await settle(app, pilot)
        ol = app.screen.query_one("#terms", OptionList)
        names = [str(ol.get_option_at_index(i).prompt).lower() for i in range(ol.option_count)]
        assert names and all("steal" in n for n in names)
        assert (app.theme, app.learn) == (theme, learn), "typing in the search ran global keys"
        await pilot.press("escape", "escape")  # clear the search, then close the glossary
        await settle(app, pilot)
        await start(app, pilot, "moe-only-slowdown")
        app.action_home()
        await settle(app, pilot)
        await pilot.press("s")
        await settle(app, pilot)
        assert isinstance(app.screen, SessionsScreen)
        ol = app.screen.query_one("#sessions", OptionList)
        assert ol.option_count == 1
        await pilot.press("slash", *"nothing-like-it")
        await settle(app, pilot)
        assert "nothing matches" in str(ol.get_option_at_index(0).prompt)
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("slash", *"moe")
        await settle(app, pilot)
        assert ol.get_option_at_index(0).id and ol.option_count == 1
