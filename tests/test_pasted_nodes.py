"""Pasted outputs of several nodes: each node diagnosed as one machine, the nodes compared, nothing dropped.

Until session 25, `diagnose --evidence n1:a n2:b` read both files and then diagnosed neither (no output was the
target's): a port down on one of two nodes went "untested". The two ibstat captures below are real, of two
different machines (an H20 node's ConnectX-7 ports, all Active at 400; a mixed ConnectX-6/ConnectX-4 Lx host
with a port Down at rate 10), given here as two nodes of one job. The env listings with secrets are made up
(planted secrets, so that a leak can be seen).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clihelp import main
from tests.corpus import load
from troubleshooter.diagnosis import pasted_nodes
from troubleshooter.diagnosis.pasted import EvidenceFacts

DATA = Path(__file__).resolve().parent / "data"
GOOD = DATA / "ibstat" / "ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt"
DOWN = DATA / "ibstat" / "ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG", str(tmp_path / "no-config.yaml"))


def test_each_node_is_diagnosed_and_the_one_with_a_port_down_is_named(capsys) -> None:
    rc, out, err = main(capsys, "diagnose", "--evidence", f"gpu10:{GOOD}", f"gpu9:{DOWN}", "--symptom",
                        "one-slow-node", "--json")
    assert rc == 1, err  # a root cause found on one node
    doc = json.loads(out)
    assert doc["kind"] == "nodes"
    assert [n["node"] for n in doc["nodes"]] == ["gpu9", "gpu10"]  # the cause first (and natural order: gpu9, gpu10)
    causes = {n["node"]: [c["cause"] for c in n["conclusions"]] for n in doc["nodes"]}
    assert causes == {"gpu9": ["fabric-port-down"], "gpu10": []}
    assert 'ib.down_ports: ["mlx5_1:1"] on gpu9; [] on gpu10' in doc["differences"]
    assert "ib.rates_gbps: [200] on gpu9; [400] on gpu10" in doc["differences"]
    # each node's own evidence, its file as the machine diagnosed
    assert list(doc["nodes"][0]["evidence"]) == ["target"]
    assert DOWN.name in doc["nodes"][0]["evidence"]["target"]


def test_the_terminal_leads_with_each_node_and_what_differs(capsys) -> None:
    rc, out, _ = main(capsys, "diagnose", "--evidence", f"n1:{GOOD}", f"n2:{DOWN}", "--symptom", "one-slow-node")
    assert rc == 1
    head = out.split("\n")
    assert head[0] == "Pasted outputs of 2 nodes, each diagnosed as one machine"
    # the node where a cause was found first
    assert head[1].startswith("- n2: 1 root cause found") and head[1].endswith("(fabric-port-down)")
    assert head[2].startswith("- n1: No root cause found")
    assert "How the nodes' outputs differ:" in out and "node n2" in out


def test_the_ticket_nests_each_node_under_its_heading(capsys) -> None:
    rc, out, _ = main(capsys, "diagnose", "--evidence", f"n1:{GOOD}", f"n2:{DOWN}", "--symptom", "one-slow-node",
                      "--md")
    assert rc == 1
    assert out.startswith("# Pasted outputs of 2 nodes")
    headings = [ln for ln in out.split("\n") if ln.startswith("#")]
    assert headings.count("# Pasted outputs of 2 nodes, each diagnosed as one machine") == 1
    assert [h for h in headings if h.startswith("# ")] == [headings[0]]  # every node's own headings one level down
    assert "## Node n1" in headings and "## Node n2" in headings
    assert any(h.startswith("### Slow training") for h in headings)


def test_a_secret_that_differs_between_nodes_leaves_through_no_output(capsys, tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("HOME=/root\nNCCL_IB_HCA=mlx5_0\nWANDB_API_KEY=0123456789abcdef0123456789abcdef01234567\n"
                 "MY_PASSWORD=hunter2hunter2\n")
    b.write_text("HOME=/root\nNCCL_IB_HCA=mlx5_1\nWANDB_API_KEY=fedcba9876543210fedcba9876543210fedcba98\n"
                 "MY_PASSWORD=swordfish99\n")
    for fmt in ("--json", "--md", None):
        args = ["diagnose", "--evidence", f"n1:env={a}", f"n2:env={b}", "--symptom", "below-reference"]
        rc, out, err = main(capsys, *(args + ([fmt] if fmt else [])))
        assert rc in (0, 1), err
        for secret in ("0123456789abcdef", "fedcba9876543210", "hunter2", "swordfish99"):
            assert secret not in out and secret not in err, (fmt, secret)
        assert "NCCL_IB_HCA: mlx5_0 on n1; mlx5_1 on n2" in out  # what is not a secret is still shown


def test_one_node_beside_the_job_is_not_the_nodes_mode() -> None:
    facts = EvidenceFacts.from_specs([f"n1:{GOOD}", str(DOWN)])
    assert pasted_nodes.node_names(facts) == []  # the job's outputs and its node's: one machine, as before
    facts = EvidenceFacts.from_specs([f"n1:{GOOD}"])
    assert pasted_nodes.node_names(facts) == []


def test_a_node_sees_its_own_outputs_and_the_hosts_not_the_other_nodes() -> None:
    facts = EvidenceFacts.from_specs([f"n1:{GOOD}", f"n2:{DOWN}"])
    assert pasted_nodes.node_names(facts) == ["n1", "n2"]
    one = pasted_nodes.for_node(facts, "n1")
    assert one.lookup("ib.down_ports") == []
    two = pasted_nodes.for_node(facts, "n2")
    assert two.lookup("ib.down_ports") == ["mlx5_1:1"]
    assert {f.side for f in two.files} == {"target"}


def test_nodes_whose_outputs_give_the_same_facts_are_one_walk(capsys) -> None:
    # the same real capture given for three nodes (copies, said plainly), and the other capture for a fourth
    specs = [f"gpu{i}:{GOOD}" for i in (1, 2, 3)] + [f"gpu4:{DOWN}"]
    rc, out, _ = main(capsys, "diagnose", "--evidence", *specs, "--symptom", "one-slow-node", "--json")
    assert rc == 1
    doc = json.loads(out)
    # the node that stands out first, then the group
    assert [(n["node"], n.get("alike")) for n in doc["nodes"]] == [("gpu4", None),
                                                                    ("gpu[1-3]", ["gpu1", "gpu2", "gpu3"])]
    assert doc["nodes"][1]["target"]["label"].startswith(
        "nodes gpu[1-3] (3 whose outputs give the same facts; diagnosed as gpu1), of 4 nodes pasted: ")
    assert 'ib.down_ports: [] on 3 node(s), but gpu4: ["mlx5_1:1"]' in doc["differences"]


def test_one_pdsh_paste_is_its_nodes(capsys) -> None:
    # a real pdsh transcript of two Proxmox hosts (asokolsky.github.io, cli-pdsh.md): uname -a, then uptime
    paste = DATA / "pdsh" / "asokolsky-pdsh-uname-uptime-2-proxmox-hosts-kernel-differs.txt"
    rc, out, err = main(capsys, "diagnose", "--evidence", str(paste), "--json")
    doc = json.loads(out)
    assert [n["node"] for n in doc["nodes"]] == ["duo", "fuji"]
    assert doc["differences"] == ["host.kernel_release: 5.13.19-3-pve on duo; 5.13.19-4-pve on fuji"]
    assert "duo:asokolsky-pdsh-uname-uptime-2-proxmox-hosts-kernel-differs.txt (line 2: `uname -a`): uname" in err
    assert rc == 0  # no cause: a kernel that differs between two hosts is shown, not a cause by itself


def test_past_the_walk_bound_the_odd_nodes_are_diagnosed_and_the_rest_said(capsys, monkeypatch) -> None:
    from troubleshooter.service import diagnose as service

    monkeypatch.setattr(service, "MAX_NODE_WALKS", 1)
    specs = [f"gpu{i}:{GOOD}" for i in (1, 2, 3)] + [f"gpu4:{DOWN}"]
    rc, out, _ = main(capsys, "diagnose", "--evidence", *specs, "--symptom", "one-slow-node")
    assert rc == 1
    lines = out.split("\n")
    assert lines[1].startswith("- gpu4: 1 root cause found")
    assert lines[2].startswith("- 3 more node(s) not diagnosed") and "(gpu[1-3])" in lines[2]
    rc, out, _ = main(capsys, "diagnose", "--evidence", *specs, "--symptom", "one-slow-node", "--json")
    assert json.loads(out)["not_diagnosed"] == ["gpu1", "gpu2", "gpu3"]


def _piped(text: str, *args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TROUBLESHOOTER_DATA_DIR": str(tmp_path / "data"),
           "TROUBLESHOOTER_CONFIG": str(tmp_path / "no-config.yaml"), "TMPDIR": str(tmp_path)}
    return subprocess.run([sys.executable, "-m", "troubleshooter", "diagnose", *args], input=text.encode(),
                          capture_output=True, env=env, timeout=120)


def test_a_pdsh_paste_piped_into_standard_input_is_its_nodes(tmp_path: Path) -> None:
    # `pdsh -w ... 'uname -a; uptime' | troubleshooter diagnose --evidence -`, through a real pipe
    run = _piped(load("pdsh/asokolsky-pdsh-uname-uptime-2-proxmox-hosts-kernel-differs.txt"),
                 "--evidence", "-", "--json", tmp_path=tmp_path)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert [n["node"] for n in doc["nodes"]] == ["duo", "fuji"]
    assert "host.kernel_release: 5.13.19-3-pve on duo; 5.13.19-4-pve on fuji" in doc["differences"]
    assert "duo:stdin (line 2: `uname -a`): uname (command)" in run.stderr.decode()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("troubleshooter-")]  # the spooled copy is gone


def test_standard_input_beside_files_is_a_side_like_any_file(tmp_path: Path) -> None:
    run = _piped(load(str(DOWN.relative_to(DATA))), "--evidence", "gpu9:-", f"gpu10:{GOOD}", "--symptom", "one-slow-node", "--json",
                 tmp_path=tmp_path)
    assert run.returncode == 1, run.stderr  # a cause found on gpu9, whose ibstat came through the pipe
    doc = json.loads(run.stdout)
    assert {n["node"]: [c["cause"] for c in n["conclusions"]] for n in doc["nodes"]} == {
        "gpu9": ["fabric-port-down"], "gpu10": []}
    assert doc["nodes"][0]["evidence"] == {"target": {"stdin": "ibstat"}}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("troubleshooter-")]  # the spooled copy is gone
    run = _piped("x", "--evidence", "-", "n2:-", tmp_path=tmp_path)
    assert run.returncode == 2 and b"standard input (-) can be read once" in run.stderr
    # nothing readable piped in: said of <stdin>, not of the temporary copy (gone by then)
    run = _piped("", "--evidence", "-", tmp_path=tmp_path)
    assert run.returncode == 2 and run.stderr == b"troubleshooter: none of the files could be read: <stdin>: empty\n"
