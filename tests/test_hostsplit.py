"""Parallel-shell pastes (pdsh, clush, dshbak) cut per node, on real captures (tests/data/pdsh, each with its
source), and nothing else taken for one: no other capture in tests/data, the evaluation or the corpus is cut."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus import strip_header
from troubleshooter.diagnosis import hostsplit, intake
from troubleshooter.diagnosis.pasted import EvidenceFacts

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PDSH = HERE / "data" / "pdsh"
UCX = PDSH / "ucx2346-dshbak-c-jazz-24-hosts-ofed-info-link-layer.txt"


def _parts(path: Path) -> list[hostsplit.Part]:
    return hostsplit.parts(intake.clean(strip_header(path.read_text())))


def test_dshbak_groups_each_under_the_command_of_its_own_pdsh_line() -> None:
    got = [p for p in _parts(UCX) if p.node]
    assert [(p.node, p.command) for p in got] == [
        ("jazz[04,08,11-32]", "ofed_info -s"),
        ("jazz[04,08,11-32]", "ibv_devinfo -d mlx5_1 | grep link_layer"),  # dshbak gathered, the grep filtered
        ("jazz[04,08,11-32]", "ibv_devinfo -d mlx5_1 | grep vendor_part_id"),
    ]
    assert got[0].lines[0] == "MLNX_OFED_LINUX-4.2-1.2.0.0:"
    assert got[1].lines[0].split() == ["link_layer:", "Ethernet"]


def test_the_group_is_read_as_one_machine_with_its_ofed_release(tmp_path: Path) -> None:
    facts = EvidenceFacts.from_specs([str(UCX)])
    read = [f for f in facts.files if f.kind and not f.error]
    assert [(f.kind, f.where) for f in read] == [("packages", "line 6: `ofed_info -s`")]
    assert {f.side for f in read} == {"target"}  # one host list: the machine diagnosed


@pytest.mark.parametrize("line, remote", [
    ("#pdsh -w jazz[04,08,11-32] ofed_info -s | dshbak -c", "ofed_info -s"),
    ("[root@login1 ~]# pdsh -w gpu[01-16] -f 32 'nvidia-smi -q -d PERFORMANCE' | dshbak -c",
     "nvidia-smi -q -d PERFORMANCE"),
    ("$ sudo clush -b -w node[1-4] -- cat /proc/cmdline", "cat /proc/cmdline"),
    ("user@head:~$ clush -w @gpu -x node3 ibstat", "ibstat"),
    ("$ pdsh-wrapper --help", None),
    ("$ ls pdsh.log", None),
    ("pdsh -w a[1-2] 'nvidia-smi -q | grep -i uuid' | sort | dshbak -c", "nvidia-smi -q | grep -i uuid | sort"),
])
def test_the_remote_command_is_read_past_the_parallel_shells_options(line: str, remote: str | None) -> None:
    assert hostsplit.remote_command(line) == remote


def _captures() -> list[Path]:
    roots = [HERE / "data", HERE / "realworld" / "cases", ROOT.parent / "shared" / "corpus"]
    return sorted(p for r in roots if r.is_dir() for p in r.rglob("*")
                  if p.is_file() and p.suffix not in (".py", ".json", ".yaml", ".md") and "pdsh" not in p.parts)


def test_no_other_capture_is_taken_for_a_parallel_shells_paste() -> None:
    files = _captures()
    assert len(files) > 1500
    cut = []
    for p in files:
        text = strip_header(p.read_bytes().decode("utf-8", "replace"))
        if hostsplit.parts(intake.clean(text)):
            cut.append(str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p))
    # the one evaluation file that is a dshbak paste (the same text as the fixture above)
    assert cut == ["tests/realworld/cases/bc-ucx2346-roce-not-lossless-retry-exceeded/setup-ofed-linklayer.txt"]


@pytest.mark.parametrize("text", [
    # an interface listing: "eth0: flags=..." lines are interfaces, not nodes
    "eth0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1500\n        inet 10.0.0.5\n"
    "ib0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 2044\n        inet 192.168.0.5\n",
    # key: value lines of one tool
    "Driver Version: 535.104.05\nCUDA Version: 12.2\nDriver Version: 535.104.05\nCUDA Version: 12.2\n",
    # one name only, without the pdsh line: not enough to call it a node's
    "gpu07: GPU 0: NVIDIA H100 80GB HBM3\ngpu07: GPU 1: NVIDIA H100 80GB HBM3\n",
])
def test_lines_that_only_look_prefixed_are_not_cut(text: str) -> None:
    assert hostsplit.parts(text) == []
