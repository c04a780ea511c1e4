"""Issue 13 item 5: attaching to the real context from the app. The start screen says what runs here (or why
nothing was found) and `a` attaches; a step that needs the job's context or a log asks for it with a dialog that
shows the command line giving it from the start, instead of walking on to "no cause"."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, Static

from troubleshooter.probe.discover import Context, Finding
from troubleshooter.tui.screens.attach import AttachScreen, LogNeedScreen
from troubleshooter.tui.screens.start import StartScreen

from .conftest import make_app, settle

STEPS_LOG = Path(__file__).resolve().parents[1] / "data" / "steps" / \
    "megatron-lm-756-mixtral-8x7b-16xh100-elapsed-time-per-iteration.txt"


def _ids(ol: OptionList) -> list[str | None]:
    return [ol.get_option_at_index(i).id for i in range(ol.option_count)]


@pytest.mark.asyncio
async def test_start_screen_says_what_runs_here_and_a_attaches():
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        line = str(app.screen.query_one("#running", Static).render())
        assert "Slurm jobs: 1" in line and "containers: none" in line  # why: in the dialog
        assert "training processes: 1" in line and "a: attach" in line
        await pilot.press("a")
        await settle(app, pilot)
        assert isinstance(app.screen, AttachScreen)
        ol = app.screen.query_one("#contexts", OptionList)
        assert _ids(ol)[ol.highlighted] == "jobs:0"  # the first job, not a heading
        said = [str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count)]
        assert any("Cannot connect to the Docker daemon" in s for s in said)  # why no container, in full
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, StartScreen)
        assert (app.spec.job, app.spec.node) == ("4242", "gpu017")
        assert "slurm job 4242" in app.sub_title


@pytest.mark.asyncio
async def test_a_process_sets_the_pid_and_keeps_the_target():
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        ol = app.screen.query_one("#contexts", OptionList)
        ol.highlighted = _ids(ol).index("processes:0")
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.spec.pid == 31337 and app.spec.job is None


@pytest.mark.asyncio
async def test_a_token_in_a_command_line_is_not_shown():
    secret = "hf_abcdefghijklmnopqrstuvwxyz1234"
    procs = [Finding("processes", (Context("process", f"pid 7: python train.py --hf-token={secret}", ("--pid", "7")),))]
    app = make_app(None, discover=lambda: procs)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        ol = app.screen.query_one("#contexts", OptionList)
        said = " ".join(str(ol.get_option_at_index(i).prompt) for i in range(ol.option_count))
        assert "train.py --hf-token=" in said and secret not in said


@pytest.mark.asyncio
async def test_attach_errors_keep_the_target():
    bad = [Finding("jobs", (Context("job", "job x", ("--job", "not a job!")),))]
    app = make_app(None, discover=lambda: bad)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("a")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.spec.job is None and "local" in app.sub_title


@pytest.mark.asyncio
async def test_host_only_walk_asks_for_the_job_context_and_skipping_says_so():
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.start_walk("host-ok-container-slow")
        await settle(app, pilot)
        assert isinstance(app.screen, AttachScreen), "the compare step asks for the job's context"
        hint = str(app.screen.query_one("#attach-hint", Static).render())
        assert "troubleshooter --job J" in hint and "--exec" in hint
        ids = _ids(app.screen.query_one("#contexts", OptionList))
        assert "jobs:0" in ids and "skip" in ids and "processes:0" not in ids
        await pilot.press("escape")  # go on without it
        await settle(app, pilot)
        assert not isinstance(app.screen, AttachScreen)
        steps = app.guide.walk.steps
        assert any(s.node == "compare" for s in steps)
        assert "job-context" in app.guide.walk.waived
        assert any(e["event"] == "waive" for e in app.guide.session.events()[0])
        # the results say what was not given and how to give it, on screen and copyable
        from troubleshooter.tui.screens.results import ResultsScreen

        for _ in range(5):
            if isinstance(app.screen, ResultsScreen):
                break
            if isinstance(app.screen, LogNeedScreen):  # the fabric step asks for an NCCL log: go on without it
                await pilot.press("escape")
            await settle(app, pilot)
        assert isinstance(app.screen, ResultsScreen)
        said = " ".join(str(w.render()) for w in app.screen.query(".not-given"))
        assert "Not given: the job's own context" in said and "troubleshooter --job J" in said
        cmds = app.screen.query_one("#commands", OptionList)
        if not app.guide.walk.conclusions:
            assert _ids(cmds)[:2] == ["rerun:job-context:0", "rerun:job-context:1"]
            cmds.focus()
            cmds.highlighted = 0
            assert app.screen._command() == "troubleshooter --job J [--container-name C]"
            cmds.highlighted = 1
            assert app.screen._command() == "troubleshooter --exec 'docker exec NAME'"


@pytest.mark.asyncio
async def test_choosing_a_container_mid_walk_runs_the_step_on_both_sides():
    ctr = [Finding("containers", (Context("container", "a wrapper", ("--exec", "env")),))]
    app = make_app(None, discover=lambda: ctr)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.start_walk("host-ok-container-slow")
        await settle(app, pilot)
        assert isinstance(app.screen, AttachScreen)
        await pilot.press("enter")
        await settle(app, pilot)
        g = app.guide
        assert g.target.kind == "exec" and g.facts.has_side("host") and app.spec.exec_prefix == "env"
        compare = next(s for s in g.walk.steps if s.node == "compare")
        assert any(k.startswith("host:") for k in compare.evidence)
        assert any(e["event"] == "target" for e in g.session.events()[0])


@pytest.mark.asyncio
async def test_a_step_that_reads_the_step_times_asks_for_the_log():
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.start_walk("bimodal-step-time")
        await settle(app, pilot)
        assert isinstance(app.screen, LogNeedScreen)
        assert "--steps-log FILE" in str(app.screen.query_one("#attach-hint", Static).render())
        inp = app.screen.query_one(Input)
        inp.value = "/no/such/log"
        await pilot.press("enter")
        await settle(app, pilot)
        assert "no such file" in str(app.screen.query_one("#input-error", Static).render())
        inp.value = str(STEPS_LOG)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.guide.spec.extra["steps_log"] == str(STEPS_LOG)
        steps = next(s for s in app.guide.walk.steps if s.node == "steps")
        assert steps.facts["steps.count"] not in ("unknown", "")
        assert "unknown" not in steps.facts["steps.count"]


@pytest.mark.asyncio
async def test_a_bundle_has_what_it_captured_and_asks_nothing():
    app = make_app("case4")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.start_walk("host-ok-container-slow")
        await settle(app, pilot)
        assert not isinstance(app.screen, (AttachScreen, LogNeedScreen))
        assert app.guide.need() is None
