"""Commands that survive being copied (issue 13, item 4): tab to Commands and c copies the first one; the
detail pane never wraps a command and never cuts one silently (it scrolls, with a scrollbar under it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import OptionList

from troubleshooter.tui.screens.results import ResultsScreen

from .conftest import make_app, settle, start


@pytest.mark.asyncio
async def test_tab_to_commands_and_c_copies_the_first_one():
    app = make_app("case4")
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot, "host-ok-container-slow")
        assert isinstance(app.screen, ResultsScreen)
        await pilot.press("tab")
        await settle(app, pilot)
        cmds = app.screen.query_one("#commands", OptionList)
        assert app.focused is cmds and cmds.highlighted == 0
        await pilot.press("c")
        await settle(app, pilot)
        assert "select a command first" not in str([n.message for n in app._notifications])
        f = Path(os.environ["TROUBLESHOOTER_DATA_DIR"]) / "exports" / "last-copied-command.sh"
        first = app.guide.walk.conclusions[0].fixes[0]["command"]
        assert f.read_text().endswith(first + "\n")


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_long_commands_scroll_in_the_detail_pane_never_wrap(size):
    app = make_app("case4")
    async with app.run_test(size=size) as pilot:
        await start(app, pilot, "host-ok-container-slow")
        c = app.guide.walk.conclusions[0]
        fences = list(app.screen.query("CommandFence"))
        commands = [fx["command"] for fx in c.fixes] + [c.verify["command"]]
        assert [f.code.rstrip("\n") for f in fences] == commands  # as they are: nothing wrapped or cut
        wide = [f for f in fences if max(len(ln) for ln in f.code.splitlines()) > f.size.width]
        assert wide, "case 4's enroot fix is wider than the pane at both sizes"
        for f in wide:
            # cut at the edge, but never silently: it scrolls, and the scrollbar under it says so
            assert f.virtual_size.width > f.size.width and f.show_horizontal_scrollbar
            assert f.styles.scrollbar_size_horizontal >= 1  # Textual's default fence hides it (size 0)
            assert f.max_scroll_x > 0
        # keyboard: focus it (tab from the list) and → scrolls it
        f = wide[0]
        f.focus()
        await settle(app, pilot)
        await pilot.press("right", "right")
        await settle(app, pilot)
        assert f.scroll_x > 0


@pytest.mark.asyncio
async def test_a_no_cause_result_offers_what_settles_the_open_hypotheses():
    app = make_app("healthy")
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot, "host-ok-container-slow")
        assert isinstance(app.screen, ResultsScreen) and not app.guide.walk.conclusions
        open_hyps = [h for h in app.guide.walk.hypotheses if h.state == "untested"]
        cmds = app.screen.query_one("#commands", OptionList)
        assert [cmds.get_option_at_index(i).id for i in range(cmds.option_count)] == [f"settle:{h.id}" for h in open_hyps]
        assert app.focused is cmds and cmds.highlighted == 0
        await pilot.press("c")
        await settle(app, pilot)
        f = Path(os.environ["TROUBLESHOOTER_DATA_DIR"]) / "exports" / "last-copied-command.sh"
        assert f.read_text().endswith(open_hyps[0].settle + "\n")
