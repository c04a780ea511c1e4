"""A walk parses each collected output once (issue 14): the facts of a step merge the new outputs' facts into
those already held, so `diagnose --bundle` costs in proportion to its input, not to steps x outputs."""

from __future__ import annotations

import collections
import json

import pytest

from troubleshooter import cli, parsers
from troubleshooter.diagnosis.workbench import LiveFacts
from troubleshooter import sources
from troubleshooter.probe import collect
from troubleshooter.probe.bundle import Bundle
from troubleshooter.probe.targets import BundleTarget
from troubleshooter.service.practice import load_cases, practice_bundle_path


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    real = parsers.run

    def counting(kind: str, text: str):
        counts[(kind, text)] += 1
        return real(kind, text)

    monkeypatch.setattr(parsers, "run", counting)
    return counts


def _case(case_id: str) -> dict:
    case = next(c for c in load_cases() if c["id"] == case_id)
    if not (practice_bundle_path(case) / "manifest.json").exists():
        pytest.skip(f"practice bundle {case_id} not built")
    return case


@pytest.mark.parametrize("case_id", [c["id"] for c in load_cases()])
def test_diagnose_bundle_parses_each_output_once(case_id, monkeypatch, capsys, tmp_path) -> None:
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(tmp_path))
    case = _case(case_id)
    counts = _count_parses(monkeypatch)
    args = ["diagnose", "--bundle", str(practice_bundle_path(case)), "--symptom", case["symptom"], "--json"]
    for k, v in (case.get("answers") or {}).items():
        args += ["--answer", f"{k}={v}"]
    rc = cli.main(args)
    out = capsys.readouterr().out
    assert rc in (0, 1), out  # 1: a cause was found
    doc = json.loads(out)
    assert len(doc["path"]) > 1
    ok = sum(1 for evs in doc["evidence"].values() for d in evs.values() if d.startswith("ok"))
    assert counts, "the walk parsed nothing"
    assert max(counts.values()) == 1, [k[0] for k, n in counts.items() if n > 1]
    assert sum(counts.values()) <= ok


def _same(a, b) -> None:
    assert a.as_dict() == b.as_dict()
    assert {k: (f.source, f.target, f.unit) for k, f in a.items()} == {k: (f.source, f.target, f.unit) for k, f in b.items()}
    assert a.parse_errors == b.parse_errors and a._why_missing == b._why_missing


@pytest.mark.parametrize("case_id", ["case2", "case4"])
def test_incremental_facts_equal_parsing_everything_again(case_id, monkeypatch) -> None:
    """Each step's facts are those that parsing all the evidence so far would give, a rerun included."""
    case = _case(case_id)
    target = BundleTarget(Bundle.open(practice_bundle_path(case)))
    facts = LiveFacts({"target": target, "other": BundleTarget(Bundle.open(practice_bundle_path(case)), side="x")})
    ids = sorted(sources.load_all())
    counts = _count_parses(monkeypatch)

    def check() -> None:  # parsing everything again, not counted
        n = dict(counts)
        _same(facts.factsets["target"], collect.facts_from(facts.evidence["target"], "target", target.label))
        counts.clear()
        counts.update(n)

    for i in range(0, len(ids), 5):  # a few sources at a time, as the steps of a walk ask for them
        facts.ensure(ids[i:i + 5])
        facts.ensure(ids[i:i + 5], side="other")
        check()
    ok = [s for s in ids if facts.evidence["target"][s].ok]
    assert len(ok) > 5 and max(counts.values()) == 1
    assert sum(counts.values()) <= len(ok) + sum(e.ok for e in facts.evidence["other"].values())
    counts.clear()
    facts.rerun(ok[:3])
    check()
    assert sum(counts.values()) == 3  # only the outputs run again are parsed again
