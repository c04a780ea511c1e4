"""Shared fixtures for the app's tests: a frozen clock, a private data dir, practice bundles."""

from __future__ import annotations

import pytest

from troubleshooter.output import export
from troubleshooter import session
from troubleshooter.service.practice import practice_bundle_path, practice_case
from troubleshooter.service.guide import TargetSpec
from troubleshooter.settings import Settings

FROZEN = 1796000000.0
def running():
    """Canned running contexts (the start screen's "Running here" and the attach dialog): no squeue, no docker."""
    from troubleshooter.probe.discover import Context, Finding

    return [Finding("jobs", (Context("job", "job 4242 pretrain on gpu[017-018] (running 1:02:03)",
                                     ("--job", "4242", "--node", "gpu017")),)),
            Finding("containers", state="none found (docker: Cannot connect to the Docker daemon; podman is not "
                                        "installed; enroot is not installed; no bwrap sandbox)"),
            Finding("processes", (Context("process", "pid 31337: python train.py --moe", ("--pid", "31337")),))]


CONTEXT = ["target: local (gpu017)", "slurm: job 4242, step 0", "container: enroot",
           "gpus: 8 x NVIDIA B200, driver 580.105.08", "virtualization: kvm"]


@pytest.fixture(autouse=True)
def frozen(monkeypatch, tmp_path):
    monkeypatch.setattr(export, "clock", lambda: FROZEN)
    monkeypatch.setattr(session, "clock", lambda: FROZEN)
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG", str(tmp_path / "no-config.yaml"))
    yield


def practice_spec(case: str) -> TargetSpec:
    return TargetSpec(bundle=str(practice_bundle_path(practice_case(case))))


def make_app(case: str | None = None, **kw):
    from troubleshooter.tui.app import TroubleshooterApp

    spec = practice_spec(case) if case else kw.pop("spec", TargetSpec())
    # a practice bundle's context is read from the bundle (deterministic); a live target's is frozen
    ctx = kw.pop("context_lines", None if case else CONTEXT)
    kw.setdefault("discover", running)
    return TroubleshooterApp(spec, settings=kw.pop("settings", Settings()), context_lines=ctx, **kw)


async def start(app, pilot, symptom: str) -> None:
    """Let the app come up, start the walk for ``symptom``, and wait until it pauses or ends."""
    await settle(app, pilot)
    app.start_walk(symptom)
    await settle(app, pilot)


def hold_reads(app):
    """Hold the app's reading of pasted outputs until the returned event is set: a pilot's key press may wait for a
    busy worker, so a test that must act while a long log is read holds the reading instead of racing it."""
    import threading

    gate, real = threading.Event(), app.outputs.read

    def held(specs):
        assert gate.wait(30)
        return real(specs)

    app.outputs.read = held
    return gate


async def settle(app, pilot) -> None:
    """Wait until workers are done and messages are processed (no sleeps)."""
    for _ in range(5):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()

from pathlib import Path  # noqa: E402

PRACTICE_DIR = Path(__file__).resolve().parents[2] / "decision_trees" / "practice"


def fake_turbostat(tmp_path, monkeypatch, seconds: float) -> None:
    """A turbostat on PATH that prints its banner and then runs for ``seconds`` (a probe still running)."""
    import os

    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "turbostat").write_text(f"#!/bin/sh\necho 'turbostat version 2025.01.01 - fake'\nsleep {seconds:g}\n")
    (fake / "turbostat").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")


async def until_running(app, pilot, source_id: str) -> None:
    """Wait (bounded, no fixed sleep) until the walk screen shows ``source_id`` running."""
    from troubleshooter.tui.screens.walk import WalkScreen

    for _ in range(100):
        await pilot.pause(0.05)
        if isinstance(app.screen, WalkScreen) and source_id in app.screen.running:
            return

