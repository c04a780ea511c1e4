"""The comparisons inside the app, for real: host vs a bubblewrap container, and fan-out over a Slurm job."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from troubleshooter.service.guide import TargetSpec
from troubleshooter.settings import Settings
from troubleshooter.tui.screens.compare import CompareScreen, FanoutScreen
from troubleshooter.tui.app import TroubleshooterApp


async def _settle(app, pilot):
    for _ in range(5):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.asyncio
async def test_compare_screen_shows_what_the_container_does_not_see(bwrap, host_topo, monkeypatch, tmp_path):
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(tmp_path))
    directory, path = host_topo  # a topology file the host has, with NCCL_TOPO_FILE exported here
    monkeypatch.setenv("NCCL_TOPO_FILE", path)
    prefix = (f"{bwrap} --ro-bind / / --dev /dev --proc /proc --tmpfs {directory} --unshare-pid --clearenv "
              "--setenv PATH /usr/bin:/bin")
    app = TroubleshooterApp(TargetSpec(exec_prefix=prefix), settings=Settings(), context_lines=["test"])
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        app.push_screen(CompareScreen())
        await _settle(app, pilot)
        body = str(app.screen.query_one("#compare-body", Static).render())
        status = str(app.screen.query_one("#compare-status", Static).render())
        assert "NCCL_TOPO_FILE" in body
        assert "difference(s) that matter" in status


@pytest.mark.asyncio
async def test_fanout_screen_over_a_real_job(slurm_job, monkeypatch, tmp_path):
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(tmp_path))
    app = TroubleshooterApp(TargetSpec(job=slurm_job), settings=Settings(export_dir=str(tmp_path)), context_lines=["test"])
    async with app.run_test(size=(120, 40)) as pilot:
        await _settle(app, pilot)
        app.push_screen(FanoutScreen())
        await _settle(app, pilot)
        status = str(app.screen.query_one("#fanout-status", Static).render())
        body = str(app.screen.query_one("#fanout-body", Static).render())
        assert "1 node(s) captured" in status, status + body
        assert "node(s) compared" in body
