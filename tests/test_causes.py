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
    assert len(cases) >= 39
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
    assert s["with_symptom"]["in_domain_right"] >= 11
    assert s["without_symptom"]["in_domain_right"] >= 11
