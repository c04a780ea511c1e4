"""Regenerate screenshots/ from the real app on the practice bundles.

    .venv/bin/python -m troubleshooter.tui.screenshots [--out screenshots] [--size 100x30]

Each screen is driven with Textual's Pilot (the same app a user runs), saved as SVG, and converted to PNG
with rsvg-convert when it is installed (Debian: librsvg2-bin). Clocks, session ids and the start screen's
context are frozen so the images only change when the app does.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

FROZEN = 1796000000.0  # 2026-11-30
CONTEXT = ["target: local (gpu017)", "slurm: job 4242, step 0", "container: enroot (pid namespace, enroot root mount)",
           "gpus: 8 x NVIDIA B200, driver 580.105.08", "virtualization: kvm"]


def running() -> list:
    """The start screen's "Running here", frozen (no squeue, no docker): one job, no container, one process."""
    from troubleshooter.service.attach import Context, Finding

    return [Finding("jobs", (Context("job", "job 4242 pretrain on gpu[017-018] (running 1:02:03)",
                                     ("--job", "4242", "--node", "gpu017")),)),
            Finding("containers", state="none found (docker: Cannot connect to the Docker daemon; podman is not "
                                        "installed; enroot is not installed; no bwrap sandbox)"),
            Finding("processes", (Context("process", "pid 31337: python pretrain_gpt.py --moe", ("--pid", "31337")),))]


def _freeze() -> None:
    from troubleshooter.output import export
    from troubleshooter import session

    export.clock = lambda: FROZEN
    session.clock = lambda: FROZEN
    session.secrets.token_hex = lambda n=2: "0000"[: n * 2]


def keep_spaces(svg: Path) -> None:
    """Mark the SVG's text as preformatted: without it librsvg drops the space that starts a text run (a styled
    word followed by plain text), and the PNGs read "Commands(enter", "^pp alette" where the terminal shows
    "Commands (enter" and "^p palette"."""
    text = svg.read_text()
    if 'xml:space="preserve"' not in text:
        svg.write_text(text.replace("<svg ", '<svg xml:space="preserve" ', 1))


async def _shots(out: Path, size: tuple[int, int]) -> list[Path]:
    from troubleshooter.service.practice import practice_bundle_path, practice_case
    from troubleshooter.service.guide import TargetSpec
    from troubleshooter.settings import Settings
    from troubleshooter.tui.app import ExportScreen, ResultsScreen, TroubleshooterApp

    written: list[Path] = []
    data = Path(tempfile.mkdtemp(prefix="ts-shots-"))
    os.environ["TROUBLESHOOTER_DATA_DIR"] = str(data)

    def app_for(case: str | None) -> TroubleshooterApp:
        spec = TargetSpec(bundle=str(practice_bundle_path(practice_case(case)))) if case else TargetSpec()
        # a bundle's context comes from the bundle (deterministic); a live one is frozen
        return TroubleshooterApp(spec, settings=Settings(), session_dir=data / "sessions",
                                 context_lines=None if case else CONTEXT, discover=running)

    async def until(app, pilot, done) -> None:
        """Let the app's workers run until ``done()`` (at most 5 s: the shot is taken either way)."""
        for _ in range(50):
            await pilot.pause(0.1)
            await app.workers.wait_for_complete()
            if done():
                return

    async def save(app, pilot, name: str) -> None:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        path = out / f"{name}.svg"
        app.save_screenshot(filename=path.name, path=str(out))
        keep_spaces(path)
        written.append(path)

    # 1. start screen
    app = app_for("case4")
    async with app.run_test(size=size) as pilot:
        await save(app, pilot, "01-start")
    # 2-5. the case-4 practice session: a probe step, the conclusion, export preview
    app = app_for(None)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        app.start_practice("case4")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        # a practice walk keeps its steps on screen when it ends (learn mode); r opens the results
        if isinstance(app.screen, ResultsScreen):
            app.pop_screen()
            await pilot.pause()
        await save(app, pilot, "02-case4-probe-step")
        app.push_screen(ResultsScreen(app.guide))
        await save(app, pilot, "03-case4-conclusion")
        app.push_screen(ExportScreen(app.guide, data / "exports"))
        await save(app, pilot, "04-export-preview")
    # 5. case 2 (three causes) in learn mode
    app = app_for(None)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        app.start_practice("case2")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not isinstance(app.screen, ResultsScreen):
            app.push_screen(ResultsScreen(app.guide))
        await save(app, pilot, "05-case2-results")
    # 6-7. practice that teaches: a round after a wrong pick, then the debrief
    app = app_for(None)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        app.start_quiz("case1")
        await app.workers.wait_for_complete()
        await pilot.pause()
        quiz = app.screen.quiz  # type: ignore[attr-defined]
        choices = app.screen.query_one("#choices")
        first = quiz.current()
        choices.highlighted = [o.id for o in first.options].index(next(o.id for o in first.options if o.id != first.expert))
        await pilot.press("enter")
        await save(app, pilot, "06-practice-round")
        await pilot.press("enter")  # next round
        while not quiz.done:
            r = quiz.current()
            await pilot.pause()
            choices.highlighted = [o.id for o in r.options].index(r.expert)
            await pilot.press("enter")
            await pilot.pause()
            await pilot.press("enter")
        await pilot.pause(0.3)  # the debrief scrolls to its top once laid out
        await save(app, pilot, "07-practice-debrief")
    # 8. the glossary, searched
    app = app_for("case4")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("g", *"numa")
        await save(app, pilot, "08-glossary-search")
    # 9-10. attach from the start screen; a step on the host alone asks for the job's context
    from troubleshooter.tui.screens.attach import AttachScreen

    app = app_for(None)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("a")
        await save(app, pilot, "09-attach")
        await pilot.press("escape")
        await pilot.pause()
        app.start_walk("host-ok-container-slow")
        await until(app, pilot, lambda: isinstance(app.screen, AttachScreen))  # the first probes, then the dialog
        await save(app, pilot, "10-asks-for-the-job")
    # 11. pasted outputs (a cloud-init boot line and a harmless group warning): the cause, and what is noted as no fault
    pasted = data / "pasted"
    pasted.mkdir()
    corpus = Path(__file__).resolve().parents[2] / "tests" / "data"
    for rel in ("cloud-init/azdocs-hbhc-duplicate-mac-eth1-ib0.txt", "benign-messages/nvctdocs-groups-cannot-find-name-for-gid.txt"):
        if (corpus / rel).exists():  # the repository's captures (not in an installed package)
            shutil.copy(corpus / rel, pasted / Path(rel).name)
    if any(pasted.iterdir()):
        app = TroubleshooterApp(TargetSpec(), settings=Settings(), evidence=[str(pasted)], session_dir=data / "sessions",
                                context_lines=None, discover=running)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            for _ in range(2):  # as a person does: enter on the first symptom, enter again to walk it to its end
                await pilot.press("enter")
                await until(app, pilot, lambda: isinstance(app.screen, ResultsScreen))
            await save(app, pilot, "11-pasted-outputs-noted")
    # 12. the ibstat outputs of two nodes, pasted: each node's diagnosis (the one with a port down first), then
    # how the nodes differ; enter would walk the highlighted node
    from troubleshooter.tui.screens.nodes import NodesScreen

    two = [corpus / "ibstat" / n for n in ("ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt",
                                           "ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt")]
    if all(p.exists() for p in two):
        app = TroubleshooterApp(TargetSpec(), settings=Settings(), evidence=[f"gpu10:{two[0]}", f"gpu9:{two[1]}"],
                                session_dir=data / "sessions", context_lines=None, discover=running)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.press("enter")  # "Pasted nodes", first on the list once the outputs are read
            await until(app, pilot, lambda: isinstance(app.screen, NodesScreen) and app.screen.many is not None)
            await save(app, pilot, "12-pasted-nodes")
        # 13. the paste dialog, with the port-down host's ibstat pasted (the terminal's bracketed paste)
        from textual import events

        app = app_for(None)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.press("v")
            await pilot.pause()
            text = "".join(ln for ln in two[1].read_text().splitlines(keepends=True) if not ln.startswith("#%"))
            app.post_message(events.Paste(text.lstrip("\n")))
            await pilot.pause()
            await save(app, pilot, "13-paste")
    shutil.rmtree(data, ignore_errors=True)
    return written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="screenshots")
    ap.add_argument("--size", default="100x30", help="columns x rows")
    args = ap.parse_args()
    cols, rows = (int(x) for x in args.size.lower().split("x"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    _freeze()
    svgs = asyncio.run(_shots(out, (cols, rows)))
    conv = shutil.which("rsvg-convert")
    for svg in svgs:
        if conv:
            subprocess.run([conv, "-o", str(svg.with_suffix(".png")), str(svg)], check=True)
        print(svg.with_suffix(".png") if conv else svg)
    if not conv:
        print("rsvg-convert not found: SVG only (apt-get install librsvg2-bin for PNGs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
