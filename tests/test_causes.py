"""Causes with sufficient signatures (decision_trees/causes.yaml) and the real-world evaluation (tests/realworld)."""

from __future__ import annotations

import pytest

from troubleshooter import sources
from troubleshooter.diagnosis import causes, conditions
from troubleshooter.model.facts import FactSet, spec

from .realworld import score


def test_causes_load_and_name_only_declared_facts() -> None:
    sources.load_all()
    loaded = causes.load()
    assert {c.id for c in loaded} >= {"gpu-fallen-off-bus", "iommu-page-faults", "shm-too-small"}
    for c in loaded:
        for s in c.signatures:
            for name, _side in conditions.facts_named(s.when):
                assert spec(name) is not None, f"{c.id}: signature {s.name!r} names undeclared fact {name}"
        for name in c.evidence:
            assert spec(name) is not None, f"{c.id}: evidence names undeclared fact {name}"


def _lookup(values: dict):
    fs = FactSet("target")
    fs.update_from(values, source="test", target="target", at=0.0)
    return lambda name, side: fs.get_value(name)


def test_one_signature_suffices_and_unknown_never_rules_in() -> None:
    sources.load_all()
    loaded = causes.load()
    got = causes.ruled_in(loaded, _lookup({"dmesg.xid_codes": [79]}))
    assert [(f.cause.id, f.signature.confidence) for f in got] == [("gpu-fallen-off-bus", "confirmed")]
    assert causes.ruled_in(loaded, _lookup({})) == []  # nothing known: nothing ruled in
    assert causes.ruled_in(loaded, _lookup({"dmesg.xid_codes": [13], "dmesg.fallen_off_bus": False,
                                            "dmesg.iommu_faults": 0})) == []


@pytest.fixture(scope="module")
def rows():
    return score.score(score.load_cases())


def test_realworld_cases_are_well_formed() -> None:
    cases = score.load_cases()
    assert len(cases) >= 43
    for c in cases:
        assert c.files and all(p.is_file() for _, p in c.files), c.id
        assert c.source, c.id


def test_realworld_no_wrong_cause(rows) -> None:
    """The tool may miss a cause; it must never claim one the thread did not establish."""
    wrong = [(r["id"], r["with_symptom"]["found"]) for r in rows if r["with_symptom"]["verdict"] == "wrong"]
    wrong += [(r["id"], r["without_symptom"]["found"]) for r in rows if r["without_symptom"]["verdict"] == "wrong"]
    assert not wrong


def test_realworld_right_does_not_regress(rows) -> None:
    # the floor measured when the evaluation was introduced (docs/accuracy.md); raise it as rules improve
    s = score.summary(rows)
    assert s["with_symptom"]["in_domain_right"] >= 22
    assert s["without_symptom"]["in_domain_right"] >= 22


def test_every_signal_fact_is_read_by_some_rule() -> None:
    """Issue 15: every fact a parser extracts that signals trouble is read by a tree, a check or a cause."""
    from troubleshooter.diagnosis import treetools

    assert treetools.unread_signals() == []


def test_unread_signal_is_reported(monkeypatch) -> None:
    from troubleshooter.diagnosis import treetools

    monkeypatch.setattr(treetools, "facts_read_by_rules", lambda trees=None: set())
    lines = treetools.unread_signals()
    assert any(line.startswith("signal fact nccl.warnings ") for line in lines)


def test_xid_classes_name_the_specific_cause_on_real_kernel_logs() -> None:
    """A driver/firmware Xid is not 'drain the node and run diagnostics'; an application Xid is not a node fault."""
    from pathlib import Path

    from troubleshooter.diagnosis.pasted import EvidenceFacts
    from troubleshooter.service.diagnose import diagnose

    data = Path(__file__).parent / "data" / "dmesg"

    def causes(name: str) -> list[str]:
        facts = EvidenceFacts.from_specs([str(data / name)])
        walk, _ = diagnose("below-reference", facts, answers={}, profile_id=None, target_desc={"kind": "evidence"})
        return [c.cause for c in walk.conclusions]

    assert causes("rtx5090-gsp-rpcSendMessage-failed-assertions-journal-grep.txt") == ["gpu-firmware-errors"]
    assert causes("rtx5090-xid79-fallen-off-bus-gsp-rpc-failed-open-kmod-595.txt") == [
        "gpu-fallen-off-bus", "gpu-firmware-errors"]
    # Xid 13 (graphics engine exception) and 109 (context switch timeout): the application, not the node
    assert causes("nvrm-xid13-xid109-ctx-switch-timeout-dmesg-ctime-gpud-doc.txt") == []
