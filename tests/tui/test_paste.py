"""Pasting a tool's output into the app (v on the start screen): read as `diagnose --evidence` reads a file.

The pasted texts are real captures (tests/data: an ibstat of a host with a port Down, a pdsh paste of two
Proxmox hosts); the garbage and the side's bad name are made up.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input, Static, TextArea

from tests.corpus import load
from troubleshooter.tui.screens.paste import PasteScreen
from troubleshooter.tui.screens.start import StartScreen

from .conftest import hold_reads, make_app, settle


async def paste(app, pilot, text: str, side: str = "", kind: str = "") -> None:
    await pilot.press("v")
    await settle(app, pilot)
    assert isinstance(app.screen, PasteScreen)
    app.post_message(events.Paste(text))  # the terminal's bracketed paste, as the driver posts it
    app.screen.query_one("#paste-side", Input).value = side
    app.screen.query_one("#paste-kind", Input).value = kind
    await settle(app, pilot)
    await pilot.press("ctrl+s")
    await settle(app, pilot)


@pytest.mark.asyncio
async def test_a_pasted_output_is_read_kept_private_and_walked(tmp_path):
    app = make_app(None, context_lines=None)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        text = load("ibstat/ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt")
        await paste(app, pilot, text)
        assert isinstance(app.screen, StartScreen)
        (kept,) = app.evidence
        from troubleshooter import locations

        assert Path(kept).parent == locations.pasted_dir() and Path(kept).stat().st_mode & 0o077 == 0
        assert Path(kept).read_text() == text  # byte for byte what was pasted
        assert "pasted outputs: paste-" in str(app.screen.query_one("#context", Static).render())
        app.start_walk("one-slow-node")
        await settle(app, pilot)
        await pilot.press("enter")  # "Yes, checking the slow node"
        await settle(app, pilot)
        assert [c.cause for c in app.guide.walk.conclusions] == ["fabric-port-down"]


@pytest.mark.asyncio
async def test_each_paste_adds_to_those_before_with_the_side_it_names():
    app = make_app(None, context_lines=None)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        await paste(app, pilot, load("ibstat/ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt"),
                    side="gpu9")
        await paste(app, pilot, load("ibstat/ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt"), side="gpu10")
        assert [e.split(":", 1)[0] for e in app.evidence] == ["gpu9", "gpu10"]
        assert app.evidence_nodes() == ["gpu9", "gpu10"]  # two nodes: each diagnosed, as two files would be


@pytest.mark.asyncio
async def test_a_paste_nothing_can_read_keeps_the_dialog_and_the_text():
    app = make_app(None, context_lines=None)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        before = app.evidence
        await paste(app, pilot, "hello\nthis is not the output of any tool\n")
        assert isinstance(app.screen, PasteScreen)
        error = str(app.screen.query_one("#paste-error", Static).render())
        assert error == ("nothing in it could be read: cannot tell what tool printed this; name the kind (see "
                         "`troubleshooter parse --list`); name it under 'what printed it'")
        assert app.screen.query_one("#paste-text", TextArea).text == "hello\nthis is not the output of any tool\n"
        from troubleshooter import locations

        assert not list(locations.pasted_dir().glob("paste-*"))  # nothing kept that was not read
        app.screen.query_one("#paste-side", Input).value = "no such/side"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert "is not a side's name" in str(app.screen.query_one("#paste-error", Static).render())
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, StartScreen) and app.evidence == before


@pytest.mark.asyncio
async def test_a_pdsh_paste_is_its_nodes():
    app = make_app(None, context_lines=None)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        await paste(app, pilot, load("pdsh/asokolsky-pdsh-uname-uptime-2-proxmox-hosts-kernel-differs.txt"))
        assert app.evidence_nodes() == ["duo", "fuji"]


@pytest.mark.asyncio
async def test_closed_while_a_long_paste_is_read_keeps_nothing():
    # 100,000 lines of a real NCCL log line (an 8-NIC RoCE node's): read off the UI thread, seconds; esc meanwhile
    line = next(ln for ln in load("nccl-debug/roce-8nic-stale-aws-ofi-plugin-verbs-rxm-fallback-to-ib-nccl2.27.5.txt")
                .splitlines(keepends=True) if "NCCL INFO" in ln)
    app = make_app(None, context_lines=None)
    gate = hold_reads(app)  # the read ends once the test says (after esc)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        await pilot.press("v")
        await settle(app, pilot)
        app.post_message(events.Paste(line * 100000))
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        assert str(app.screen.query_one("#paste-error", Static).render()) == "reading…"
        await pilot.press("escape")
        gate.set()
        await settle(app, pilot)
        from troubleshooter import locations

        assert isinstance(app.screen, StartScreen) and app.evidence is None
        assert not list(locations.pasted_dir().glob("paste-*"))


@pytest.mark.asyncio
async def test_what_printed_it_can_be_named_when_it_cannot_be_told():
    # a real ibstat capture, its kind named as `diagnose --evidence ibstat=FILE` names it (for an output the
    # detection cannot tell); a misspelt kind is said, with the near ones
    text = load("ibstat/ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt")
    app = make_app(None, context_lines=None)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        await paste(app, pilot, text, kind="ibstatt")
        assert isinstance(app.screen, PasteScreen)
        assert "no kind 'ibstatt'; did you mean ibstat" in str(app.screen.query_one("#paste-error", Static).render())
        app.screen.query_one("#paste-kind", Input).value = "ibstat"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        assert isinstance(app.screen, StartScreen)
        assert app.evidence[0].startswith("ibstat=")


@pytest.mark.asyncio
async def test_text_that_is_not_valid_unicode_is_kept_not_a_crash():
    # a lone surrogate (what undecodable terminal input can become) inside a real ibstat: written with "?" for it
    text = load("ibstat/ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt").replace(
        "CA type: MT4123", "CA type: MT4123\ud800", 1)
    app = make_app(None, context_lines=None)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        await paste(app, pilot, text)
        assert isinstance(app.screen, StartScreen)
        assert "CA type: MT4123?" in Path(app.evidence[0]).read_text()
