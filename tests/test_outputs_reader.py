"""Pasted outputs are read once per set of them (service.outputs): the app asks for the same files from the open
dialog's check, the start screen, the nodes screen and each walk, and a long NCCL log takes seconds to read. A file
written again is read again; a walk gets a copy of its own to add facts to."""

from __future__ import annotations

import os

import pytest

from tests.corpus import load
from troubleshooter.diagnosis import pasted
from troubleshooter.diagnosis.pasted import EvidenceFacts, PastedError
from troubleshooter.model.facts import Fact
from troubleshooter.service.outputs import OutputsReader

IBSTAT_DOWN = "ibstat/ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt"
IBSTAT_UP = "ibstat/ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt"


@pytest.fixture
def reads(monkeypatch):
    """The specs read from disk, in order (pasted.read_spec is what reading a file costs)."""
    seen: list[str] = []
    real = pasted.read_spec
    monkeypatch.setattr(pasted, "read_spec", lambda spec, base=None: seen.append(spec) or real(spec, base))
    return seen


def _write(path, rel: str, mtime_ns: int | None = None):
    path.write_text(load(rel))
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return str(path)


def test_a_set_of_outputs_is_read_once_and_gives_what_reading_it_gives(tmp_path, reads):
    a, b = _write(tmp_path / "a.txt", IBSTAT_DOWN), _write(tmp_path / "b.txt", IBSTAT_UP)
    r = OutputsReader()
    assert not r.ready([a])
    one = r.read([a])
    assert r.ready([a]) and r.read([a]) is one and reads == [a]
    both = r.read([f"gpu9:{a}", f"gpu10:{b}"])  # another set: only the specs not read before are read
    assert reads == [a, f"gpu9:{a}", f"gpu10:{b}"]
    r.read([a])  # the set before again: its spec's files are kept
    assert reads == [a, f"gpu9:{a}", f"gpu10:{b}"]
    plain = EvidenceFacts.from_specs([f"gpu9:{a}", f"gpu10:{b}"])
    assert {s: dict(fs.items()).keys() for s, fs in both.factsets.items()} == \
        {s: dict(fs.items()).keys() for s, fs in plain.factsets.items()}
    assert both.lookup("ib.down_ports", "gpu9") == plain.lookup("ib.down_ports", "gpu9")


def test_a_file_written_again_is_read_again(tmp_path, reads):
    a = _write(tmp_path / "a.txt", IBSTAT_DOWN, mtime_ns=1_000_000_000)
    r = OutputsReader()
    before = r.read([a]).lookup("ib.down_ports")
    _write(tmp_path / "a.txt", IBSTAT_UP, mtime_ns=2_000_000_000)  # saved again from an editor
    assert not r.ready([a])
    after = r.read([a]).lookup("ib.down_ports")
    assert reads == [a, a] and before != after


def test_a_walk_gets_a_copy_it_may_add_to(tmp_path):
    a = _write(tmp_path / "a.txt", IBSTAT_DOWN)
    r = OutputsReader()
    mine = r.fresh([a])
    mine.factsets["target"].add(Fact("steps.shape", "bimodal", "", "an answer in the walk", "", 0.0))
    assert mine is not r.read([a]) and "steps.shape" not in r.read([a]).factsets["target"]


def test_what_cannot_be_read_is_said_each_time_and_a_file_made_later_is_read(tmp_path):
    missing = str(tmp_path / "later.txt")
    r = OutputsReader()
    for _ in range(2):
        with pytest.raises(PastedError, match="no such file"):
            r.read([missing])
    _write(tmp_path / "later.txt", IBSTAT_DOWN)
    assert r.read([missing]).lookup("ib.down_ports")
