"""Bad input is said where it was typed (issue 13, item 2): a path that does not open is an inline error in
the open dialog and the current target stays; a bad argument to the app is exit 2 and one line on stderr,
before the app starts."""

from __future__ import annotations

import subprocess
import sys

import pytest
from textual.widgets import Input, OptionList, Static

from troubleshooter.tui.screens.dialogs import ErrorScreen, InputScreen
from troubleshooter.tui.screens.start import StartScreen
from troubleshooter.tui.screens.walk import WalkScreen

from .conftest import PRACTICE_DIR, make_app, settle


async def open_dialog_with(app, pilot, path: str) -> None:
    await pilot.press("o")
    await settle(app, pilot)
    assert isinstance(app.screen, InputScreen)
    app.screen.query_one("#path", Input).value = path
    await pilot.press("enter")
    await settle(app, pilot)


@pytest.mark.asyncio
@pytest.mark.parametrize("path", ["/nosuch/node17.bundle.tar.gz", "/nosuch/folder", "/etc/hostname"])
async def test_open_a_path_that_does_not_open_is_an_inline_error(path):
    app = make_app("case4")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        spec, title = app.spec, app.sub_title
        context = str(app.screen.query_one("#context", Static).render())
        await open_dialog_with(app, pilot, path)
        # still the open dialog, with what is wrong under the field; no crash-style dialog
        assert isinstance(app.screen, InputScreen)
        assert not any(isinstance(s, ErrorScreen) for s in app.screen_stack)
        err = str(app.screen.query_one("#input-error", Static).render())
        assert "current target is kept" in err and ("no such" in err or "cannot" in err or "none of" in err), err
        await pilot.press("escape")
        await settle(app, pilot)
        # the target is as it was: header, context box, and every symptom still starts
        assert isinstance(app.screen, StartScreen)
        assert app.spec is spec and app.sub_title == title and "target error" not in app.sub_title
        assert str(app.screen.query_one("#context", Static).render()) == context
        ol = app.screen.query_one("#symptoms", OptionList)
        ol.highlighted = next(i for i in range(ol.option_count)
                              if ol.get_option_at_index(i).id == "symptom:host-ok-container-slow")
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.guide is not None and app.guide.walk.conclusions


@pytest.mark.asyncio
async def test_open_a_bundle_that_opens_switches_the_target():
    app = make_app("case4")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await open_dialog_with(app, pilot, str(PRACTICE_DIR / "case1" / "bundle"))
        assert isinstance(app.screen, StartScreen)
        assert "case1" in app.spec.bundle and "case1" in app.sub_title
        app.start_walk("moe-only-slowdown")
        await settle(app, pilot)
        assert isinstance(app.screen, WalkScreen)


def run_app(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "troubleshooter", *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args, says", [
    (("--resume", "nosuch"), "no session 'nosuch'"),
    (("--resume",), "no sessions"),
    (("--demo", "case9"), "unknown practice case 'case9'"),
    (("--symptom", "nosuch"), "unknown symptom 'nosuch'"),
    (("--bundle", "/nosuch/x.tar.gz"), "no such bundle"),
])
def test_bad_arguments_exit_2_with_one_line_before_the_app(args, says):
    r = run_app(*args)
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr[-500:])
    assert r.stdout == ""  # the app never drew a frame
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("troubleshooter: ") and says in lines[0], r.stderr


@pytest.mark.asyncio
async def test_a_preflight_that_cannot_run_says_so_and_never_spins(monkeypatch):
    from troubleshooter.service import check as check_mod
    from troubleshooter.tui.screens.checks import ChecksScreen

    def broken(*a, **kw):
        raise RuntimeError("the target went away\nsecond line")

    monkeypatch.setattr(check_mod, "run_check", broken)
    app = make_app("case4")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("p")
        await settle(app, pilot)
        assert isinstance(app.screen, ChecksScreen)
        assert not any(isinstance(s, ErrorScreen) for s in app.screen_stack)
        status = str(app.screen.query_one("#checks-status", Static).render())
        assert "could not run: the target went away" in status and "running" not in status
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, StartScreen)
