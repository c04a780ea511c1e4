"""Pilot tests of the app's flows: symptom -> steps -> conclusion -> export; back and change a branch;
cancel a probe; a failing probe shown as what it is; resume a saved session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

from troubleshooter.session import Session, list_sessions
from troubleshooter.tui.screens.dialogs import ExportScreen
from troubleshooter.tui.screens.results import ResultsScreen
from troubleshooter.tui.screens.start import StartScreen
from troubleshooter.tui.screens.walk import WalkScreen

from .conftest import fake_turbostat, until_running, make_app, settle, start


def _nvml_library_loads() -> bool:
    """Whether this machine has the driver's NVML library (a GPU node does; a CI container does not)."""
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


def transcript_text(app) -> str:
    """What the walk screen shows, as plain text (the same renderer, printed by Rich)."""
    from rich.console import Console

    from troubleshooter.tui.render import render_step

    con = Console(record=True, width=100, file=open(os.devnull, "w"))
    for step in app.guide.walk.steps:
        con.print(render_step(step, show_why=True, learn=False))
    return con.export_text()


@pytest.mark.asyncio
async def test_case4_symptom_to_conclusion_to_export(tmp_path):
    app = make_app("case4")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, StartScreen)
        # pick the symptom from the list, as a user would
        ol = app.screen.query_one("#symptoms", OptionList)
        ids = [ol.get_option_at_index(i).id for i in range(ol.option_count)]
        ol.highlighted = ids.index("symptom:host-ok-container-slow")
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ResultsScreen)
        assert [c.cause for c in app.guide.walk.conclusions] == ["topo-not-in-container"]
        await pilot.press("e")
        await settle(app, pilot)
        assert isinstance(app.screen, ExportScreen)
        await pilot.press("m")
        await pilot.press("j")
        await settle(app, pilot)
        exports = sorted((Path(os.environ["TROUBLESHOOTER_DATA_DIR"]) / "exports").glob("*"))
        md = next(p for p in exports if p.suffix == ".md")
        assert "topo-not-in-container" in md.read_text()
        assert "--container-mounts=/etc/nccl/topo.xml:/etc/nccl/topo.xml:ro" in md.read_text()
        assert any(p.suffix == ".json" for p in exports)


@pytest.mark.asyncio
async def test_back_and_take_the_other_branch():
    app = make_app("case1")
    async with app.run_test(size=(100, 30)) as pilot:
        await start(app, pilot, "moe-only-slowdown")
        walk = app.screen
        assert isinstance(walk, WalkScreen)
        assert app.guide.current()[1] == "dense"
        await pilot.press("enter")  # "yes": dense is fine -> the SMMU path
        await settle(app, pilot)
        assert "smmu-cmdq-contention" in [c.cause for c in app.guide.walk.conclusions]
        app.pop_screen()  # results -> walk
        await settle(app, pilot)
        await pilot.press("b")
        await settle(app, pilot)
        assert app.guide.current()[1] == "dense"
        assert app.guide.walk.conclusions == []
        await pilot.press("down", "enter")  # "no": sweep every layer instead
        await settle(app, pilot)
        nodes = [f"{s.tree}.{s.node}" for s in app.guide.walk.steps]
        assert "moe-only-slowdown.sweep" in nodes and "moe-only-slowdown.smmu" not in nodes
        # the journal recorded the change of answer
        answers = Session.open("latest").answers()
        assert answers == [("moe-only-slowdown.dense", "no")]


@pytest.mark.asyncio
async def test_failing_probes_are_shown_as_what_they_are(monkeypatch, tmp_path):
    # a live local target: nvidia-smi is not installed here (a fake that exits 127), turbostat needs a
    # capability, NVML says why it cannot run (or works, on a GPU node)
    fake = tmp_path / "bin"
    fake.mkdir()
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    (fake / "nvidia-smi").write_text("#!/bin/sh\necho 'nvidia-smi: command not found' >&2\nexit 127\n")
    (fake / "nvidia-smi").chmod(0o755)
    app = make_app(None)
    async with app.run_test(size=(100, 30)) as pilot:
        await start(app, pilot, "uniformly-slow")
        if isinstance(app.screen, ResultsScreen):
            app.pop_screen()
            await settle(app, pilot)
        text = transcript_text(app)
        assert "nvidia-smi-q: not-installed" in text
        seen = [step.evidence["nvml"] for step in app.guide.walk.steps if "nvml" in step.evidence]
        assert seen, "the walk ran the nvml source"
        if not _nvml_library_loads():
            assert "nvml: no-gpu" in text
        # a GPU node: NVML works (not a failure, so not listed) or fails in one of its explained states
        for line in seen:
            if line.startswith("ok"):
                assert f"nvml: {line}" not in text
            else:
                assert line.startswith(("no-gpu: NVML", "permission-denied: NVML", "error: NVML")), line
                assert f"nvml: {line[:40]}" in text


@pytest.mark.asyncio
async def test_cancel_a_hanging_probe(monkeypatch, tmp_path):
    fake_turbostat(tmp_path, monkeypatch, 60)
    app = make_app(None)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.start_walk("uniformly-slow")
        await until_running(app, pilot, "turbostat")
        assert "turbostat" in app.screen.running
        # its output streams to the status line while it runs
        for _ in range(100):
            await pilot.pause(0.05)
            if "turbostat" in app.screen.last_output:
                break
        assert app.screen.last_output["turbostat"] == "turbostat version 2025.01.01 - fake"
        await pilot.press("c")
        await settle(app, pilot)
        ev = app.guide.facts.evidence["target"]["turbostat"]
        assert ev.status.value == "cancelled"
        assert app.guide.walk.done  # the walk went on without it


@pytest.mark.asyncio
async def test_resume_replays_the_recorded_answers():
    app = make_app("case1")
    async with app.run_test(size=(100, 30)) as pilot:
        await start(app, pilot, "moe-only-slowdown")
        await pilot.press("enter")
        await settle(app, pilot)
        sid = app.guide.session.id
    app2 = make_app(None, resume=sid)
    async with app2.run_test(size=(100, 30)) as pilot:
        await settle(app2, pilot)
        assert app2.guide is not None
        assert app2.guide.answers() == [("moe-only-slowdown.dense", "yes")]
        assert "smmu-cmdq-contention" in [c.cause for c in app2.guide.walk.conclusions]
    assert any(i.id == sid for i in list_sessions())


@pytest.mark.asyncio
async def test_copy_writes_the_command_file_and_journals_it():
    app = make_app("case4")
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot, "host-ok-container-slow")
        assert isinstance(app.screen, ResultsScreen)
        cmds = app.screen.query_one("#commands", OptionList)
        cmds.focus()
        cmds.highlighted = 0
        await pilot.press("c")
        await settle(app, pilot)
        f = Path(os.environ["TROUBLESHOOTER_DATA_DIR"]) / "exports" / "last-copied-command.sh"
        assert "NCCL_TOPO_FILE=/etc/nccl/topo.xml" in f.read_text()
        evs, _ = app.guide.session.events()
        assert any(e["event"] == "copy" for e in evs)


@pytest.mark.asyncio
async def test_verify_on_a_replayed_capture_says_still_failing():
    app = make_app("case4")
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot, "host-ok-container-slow")
        await pilot.press("v")
        await settle(app, pilot)
        text = str(app.screen.query_one("#verify-result", Static).render())
        assert "still failing" in text and "replayed" in text


@pytest.mark.asyncio
async def test_measurements_show_where_the_gap_went(tmp_path):
    app = make_app("case2")
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot, "bimodal-step-time")
        assert isinstance(app.screen, ResultsScreen)
        await pilot.press("m")
        await settle(app, pilot)
        for text in ("1220", "1090"):
            await pilot.press(*text, "enter")
            await settle(app, pilot)
        await pilot.press(*"1170", "enter")  # after the first cause's fix
        await settle(app, pilot)
        waterfall = str(app.screen.query_one("#verify-result", Static).render())
        assert "where the gap went" in waterfall and "38% of the gap" in waterfall
        md = app.guide.export("md", tmp_path)
        assert "Where the gap went, fix by fix" in md.read_text()
        evs, _ = app.guide.session.events()
        assert [e["event"] for e in evs if e["event"] in ("metric", "measurement")] == ["metric", "measurement"]


@pytest.mark.asyncio
async def test_raw_probe_output_behind_a_step():
    from troubleshooter.tui.screens.evidence import EvidenceScreen

    app = make_app("case4")
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot, "host-ok-container-slow")
        app.pop_screen()  # results -> walk
        await settle(app, pilot)
        await pilot.press("o")
        await settle(app, pilot)
        assert isinstance(app.screen, EvidenceScreen)
        ol = app.screen.query_one("#evidence-list", OptionList)
        ids = [ol.get_option_at_index(i).id for i in range(ol.option_count)]
        assert "nccl-topo-file" in ids and "host:nccl-topo-file" in ids
        ol.highlighted = ids.index("host:nccl-topo-file")
        await settle(app, pilot)
        text = str(app.screen.query_one("#evidence-text", Static).render())
        assert "#@ nccl-topo-file" in text and "/etc/nccl/topo.xml" in text


@pytest.mark.asyncio
async def test_a_folder_of_pasted_outputs_opens_like_a_bundle():
    from .conftest import PRACTICE_DIR

    app = make_app(None, evidence=[str(PRACTICE_DIR / "case4" / "outputs")], context_lines=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert "pasted" in str(app.screen.query_one("#context", Static).render())
        app.start_walk("host-ok-container-slow")
        await settle(app, pilot)
        assert [c.cause for c in app.guide.walk.conclusions] == ["topo-not-in-container"]
