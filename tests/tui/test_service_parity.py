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


@pytest.mark.parametrize("spec, symptom", [
    # a cause only a sufficient signature reaches (no tree path reads /proc/meminfo's CMA lines)
    ("host:tests/data/host/proc-meminfo-dspark259-cma-free-over-total-kho.txt", "nccl-fails"),
    # a cause the outputs only point at (nvidia-smi without a driver, somewhere the paste does not say)
    ("tests/data/nvidia-smi-status/no-driver-communication-rhel9-dkms-notes.txt", "below-reference"),
])
def test_the_apps_finished_walk_names_what_diagnose_names(spec, symptom):
    """The app's guided walk ended with the tree's conclusions only: causes a signature rules in, those the
    outputs point at, and what compare --host flags were the CLI's alone."""
    from troubleshooter.diagnosis import engine as eng
    from troubleshooter.diagnosis import profiles
    from troubleshooter.diagnosis.pasted import EvidenceFacts, EvidenceTarget
    from troubleshooter.service.diagnose import diagnose
    from troubleshooter.service.guide import Guide, TargetSpec

    cli_walk, _ = diagnose(symptom, EvidenceFacts.from_specs([spec]), answers={}, profile_id=None,
                           target_desc={"kind": "evidence"})
    facts = EvidenceFacts.from_specs([spec])
    prof = profiles.choose(None, facts.lookup("gpu.names", "target"))
    g = Guide(eng.Engine(profile=prof.thresholds), facts, EvidenceTarget(facts), TargetSpec(), prof.id)
    g.begin(symptom, record=False)
    for _ in range(200):
        if g.done:
            break
        if g.question() is not None:
            g.answer(g.question().choices[0].id)
        g.advance()
    assert g.done
    assert [c.cause for c in g.walk.conclusions] == [c.cause for c in cli_walk.conclusions]
    assert [(h.id, h.state) for h in g.walk.hypotheses if h.state == "suspected"] == \
        [(h.id, h.state) for h in cli_walk.hypotheses if h.state == "suspected"]
    assert cli_walk.conclusions or any(h.state == "suspected" for h in cli_walk.hypotheses)
