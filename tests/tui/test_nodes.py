"""The app on pasted outputs of several nodes: each node diagnosed, the nodes compared, one node walked.

Until session 26 the app walked the outputs of all the pasted nodes as if they were one machine's (none of them the
target's): a port Down on one of two nodes came out as nothing found, while `diagnose --evidence` on the same files
named it. The ibstat captures are real, of two different machines, given as two nodes; the pdsh paste is a real
capture (tests/data/pdsh); the env listings with secrets are made up (planted, so that a leak can be seen).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static

from troubleshooter.tui.screens.nodes import NodesScreen
from troubleshooter.tui.screens.walk import WalkScreen

from .conftest import make_app, settle

DATA = Path(__file__).resolve().parents[1] / "data"
GOOD = DATA / "ibstat" / "ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt"
DOWN = DATA / "ibstat" / "ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt"
PDSH = DATA / "pdsh" / "asokolsky-pdsh-uname-uptime-2-proxmox-hosts-kernel-differs.txt"


def options(app) -> list[tuple[str | None, str]]:
    ol = app.screen.query_one("#nodes-list", OptionList)
    return [(ol.get_option_at_index(i).id, str(ol.get_option_at_index(i).prompt)) for i in range(ol.option_count)]


def detail(app) -> str:
    return app.screen.query_one("#nodes-md").source


@pytest.mark.asyncio
async def test_a_symptom_asks_which_node_and_the_walk_is_that_nodes():
    app = make_app(None, evidence=[f"gpu10:{GOOD}", f"gpu9:{DOWN}"], context_lines=None)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        assert "outputs of 2 nodes (gpu[9-10])" in str(app.screen.query_one("#context", Static).render())
        start = app.screen.query_one("#symptoms", OptionList)
        assert start.get_option_at_index(0).id == "action:nodes"  # offered first
        app.start_walk("one-slow-node")
        await settle(app, pilot)
        assert isinstance(app.screen, NodesScreen)  # not a walk over two machines at once
        got = options(app)
        assert [oid for oid, _ in got] == ["run:0", "run:1"]
        assert got[0][1].startswith("gpu9\n  1 root cause found") and got[0][1].endswith("(fabric-port-down)")
        assert got[1][1].startswith("gpu10\n  No root cause found")
        status = str(app.screen.query_one("#nodes-status", Static).render())
        assert status.startswith("Pasted outputs of 2 nodes, each diagnosed as one machine: a cause found on 1 of 2 nodes")
        md = detail(app)
        assert md.startswith("# Node gpu9") and "fabric-port-down" in md
        assert 'ib.down_ports: ["mlx5_1:1"] on gpu9; [] on gpu10' in md  # how the nodes differ, below
        await pilot.press("down")
        await settle(app, pilot)
        assert detail(app).startswith("# Node gpu10")
        await pilot.press("e")  # the ticket `diagnose --evidence ... --md` writes, and its JSON
        await settle(app, pilot)
        (md,) = app.settings.exports_path().glob("nodes-*.md")
        (js,) = app.settings.exports_path().glob("nodes-*.json")
        ticket = md.read_text()
        assert ticket.startswith("# Pasted outputs of 2 nodes, each diagnosed as one machine\n\n- gpu9: 1 root cause")
        assert "## Node gpu9" in ticket and "## Node gpu10" in ticket and "fabric-port-down" in ticket
        assert json.loads(js.read_text())["schema"] == "troubleshooter.diagnosis-nodes/1"
        assert md.stat().st_mode & 0o077 == 0  # private, as every export
        await pilot.press("up", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, WalkScreen)
        assert app.sub_title.startswith("node gpu9 of 2 pasted")
        await pilot.press("enter")  # "Yes, checking the slow node"
        await settle(app, pilot)
        assert [c.cause for c in app.guide.walk.conclusions] == ["fabric-port-down"]
        assert DOWN.name in app.guide.target.label and GOOD.name not in app.guide.target.label


@pytest.mark.asyncio
async def test_one_pdsh_paste_opened_is_its_nodes_and_their_difference():
    app = make_app(None, context_lines=None)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        app.open_path(str(PDSH))
        await settle(app, pilot)
        assert app.evidence_nodes() == ["duo", "fuji"]
        app.screen.query_one("#symptoms", OptionList).highlighted = 0
        await pilot.press("enter")  # "Pasted nodes"
        await settle(app, pilot)
        assert isinstance(app.screen, NodesScreen) and app.screen.symptom is None
        assert [name.split("\n")[0] for _, name in options(app)] == ["duo", "fuji"]
        assert "host.kernel_release: 5.13.19-3-pve on duo; 5.13.19-4-pve on fuji" in detail(app)
        await pilot.press("b")
        await settle(app, pilot)
        assert not isinstance(app.screen, NodesScreen)


@pytest.mark.asyncio
async def test_one_machines_outputs_are_walked_as_they_are():
    app = make_app(None, evidence=[str(DOWN)], context_lines=None)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        assert app.evidence_nodes() == []
        assert app.screen.query_one("#symptoms", OptionList).get_option_at_index(0).id != "action:nodes"
        app.start_walk("one-slow-node")
        await settle(app, pilot)
        assert isinstance(app.screen, WalkScreen)


@pytest.mark.asyncio
async def test_a_secret_that_differs_between_nodes_is_not_on_the_screen(tmp_path: Path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("HOME=/root\nNCCL_IB_HCA=mlx5_0\nWANDB_API_KEY=0123456789abcdef0123456789abcdef01234567\n"
                 "MY_PASSWORD=hunter2hunter2\nNCCL_SOCKET_IFNAME=eth0\x1b\x07\x08zz\n")
    b.write_text("HOME=/root\nNCCL_IB_HCA=mlx5_1\nWANDB_API_KEY=fedcba9876543210fedcba9876543210fedcba98\n"
                 "MY_PASSWORD=swordfish99\n")
    app = make_app(None, evidence=[f"n1:env={a}", f"n2:env={b}"], context_lines=None)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        app.start_walk("below-reference")
        await settle(app, pilot)
        assert isinstance(app.screen, NodesScreen)
        shown = "\n".join(name for _, name in options(app))
        for i in range(2):
            app.screen.detail(i)
            shown += detail(app)
        assert "NCCL_IB_HCA: mlx5_0 on n1; mlx5_1 on n2" in shown  # what is not a secret is still shown
        for secret in ("0123456789abcdef", "fedcba9876543210", "hunter2", "swordfish99"):
            assert secret not in shown, secret
        assert "\x1b" not in shown and "\x07" not in shown
        assert "eth0\\x1b\\x07\\x08zz on n1" in shown  # the value, its control characters escaped (visible)
        await pilot.press("e")
        await settle(app, pilot)
        written = "".join(p.read_text() for p in app.settings.exports_path().glob("nodes-*"))
        assert "NCCL_IB_HCA: mlx5_0 on n1; mlx5_1 on n2" in written
        for secret in ("0123456789abcdef", "fedcba9876543210", "hunter2", "swordfish99"):
            assert secret not in written, secret
        assert "\x1b" not in written and "\x07" not in written


@pytest.mark.asyncio
async def test_nodes_whose_outputs_give_the_same_facts_are_one_line_and_walk_as_the_first(monkeypatch):
    # the same real capture for three nodes (their facts alike), the port-down host's for the fourth
    app = make_app(None, evidence=[f"gpu1:{GOOD}", f"gpu2:{GOOD}", f"gpu3:{GOOD}", f"gpu4:{DOWN}"], context_lines=None)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        app.start_walk("one-slow-node")
        await settle(app, pilot)
        got = options(app)
        assert [p.split("\n")[0] for _, p in got] == ["gpu4", "gpu[1-3]"]
        assert "a cause found on 1 of 4 nodes" in str(app.screen.query_one("#nodes-status", Static).render())
        app.screen.query_one("#nodes-list", OptionList).highlighted = 1
        await settle(app, pilot)
        assert detail(app).startswith("# Nodes gpu[1-3]")
        from troubleshooter.diagnosis.pasted import EvidenceFacts

        reads = []
        real = EvidenceFacts.from_specs.__func__
        monkeypatch.setattr(EvidenceFacts, "from_specs", classmethod(lambda cls, *a, **k: reads.append(a) or real(cls, *a, **k)))
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.sub_title.startswith("node gpu1 of 4 pasted")
        assert reads == []  # the walk starts from the outputs the screen read (a big paste is not read again)


def test_the_app_opens_on_outputs_named_on_its_command_line_or_says_why_not(tmp_path):
    # `troubleshooter --evidence gpu10:a.txt gpu9:b.txt [--symptom ...]`: read before the app starts
    from troubleshooter.tui.entry import build_parser, evidence_error

    def problem(*argv: str) -> str:
        return evidence_error(build_parser().parse_args(list(argv)))

    assert problem("--evidence", f"gpu10:{GOOD}", f"gpu9:{DOWN}", "--symptom", "one-slow-node") == ""
    assert problem("--evidence", str(tmp_path / "none.txt")) == f"--evidence: {tmp_path / 'none.txt'}: no such file or directory"
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    assert problem("--evidence", str(junk)).startswith("--evidence: none of the files could be read: ")
    assert "does not combine with --bundle/--job/--exec" in problem("--evidence", str(GOOD), "--job", "42")
    assert "not standard input" in problem("--evidence", "-")
