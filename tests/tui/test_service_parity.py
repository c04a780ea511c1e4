"""One core, two faces: the app's preflight and `troubleshooter check` stand on the same use case
(troubleshooter.service.check), so on the same bundle they pick the same reference profile and give the same
verdicts. Before the service layer the app always judged with the generic profile."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from troubleshooter.tui.screens.checks import ChecksScreen

from .conftest import make_app, practice_spec, settle


@pytest.mark.asyncio
@pytest.mark.parametrize("case", ["case2", "case4", "healthy"])
async def test_app_preflight_equals_check(case):
    bundle = practice_spec(case).bundle
    cli = subprocess.run([sys.executable, "-m", "troubleshooter", "check", "--bundle", bundle, "--json"],
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode in (0, 1), cli.stderr
    doc = json.loads(cli.stdout)
    cli_verdicts = {r["id"]: r["verdict"] for r in doc["checks"]}
    app = make_app(case)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.push_screen(ChecksScreen())
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, ChecksScreen)
        run = screen.run
        assert run.profile.id == doc["profile"]
        assert {r.id: r.verdict for r in run.results} == cli_verdicts
        # the profile is the GPUs' (a B200 bundle is judged by b200's thresholds, not generic's)
        if case == "case4":
            assert run.profile.id == "b200"


@pytest.mark.asyncio
async def test_preflight_columns_fit_their_rows_before_any_idle():
    """The table's columns are as wide as their longest cell as soon as the rows are in (auto widths waited for
    an idle the busy start screen did not give: 'GPUs'/'nvm' in a tmux run until a key was pressed)."""
    from textual.widgets import DataTable

    app = make_app("case4")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.push_screen(ChecksScreen())
        await settle(app, pilot)
        screen = app.screen
        t = screen.query_one("#checks", DataTable)
        longest = max(len(r.title) for r in screen.run.results)
        check = [c for c in t.columns.values() if c.label.plain == "check"][0]
        assert (check.auto_width, check.width) == (False, longest)
