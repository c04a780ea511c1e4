"""Tree tests (decision_trees/tests/*.yaml), the tree linter, and the practice bundles being up to date."""

from __future__ import annotations

from pathlib import Path

import pytest

from troubleshooter.diagnosis import engine, treetools
from troubleshooter import locations
from troubleshooter.service import practice

CASES = treetools.load_cases()


@pytest.mark.parametrize("path,case", CASES, ids=[f"{c.get('tree')}: {c.get('name')}" for _, c in CASES])
def test_tree_case(path, case):
    r = treetools.run_case(path, case)
    assert r.ok, "\n".join(r.problems)


def test_trees_lint_clean():
    from troubleshooter.diagnosis import checks

    problems = treetools.lint() + checks.lint(checks.load())
    assert problems == []


def test_every_entry_tree_has_a_test_file():
    entries = {t.id for t in engine.load_trees().values() if t.kind == "entry"}
    have = {p.stem for p in treetools.tests_dir().glob("*.yaml")}
    assert entries - have == set()
    tested = {c.get("tree") for _, c in CASES}
    assert entries <= tested


def test_every_practice_case_is_tested_through_its_symptom():
    cases = practice.load_cases()
    assert {c["id"] for c in cases} >= {"case1", "case2", "case3", "case4", "healthy"}
    for c in cases:
        bundled = [t for _, t in CASES if t.get("bundle") == f"practice/{c['bundle']}" and t.get("tree") == c["symptom"]]
        assert bundled, f"no tree test replays {c['id']} through {c['symptom']}"
        assert any(sorted((t.get("expect") or {}).get("conclusions", [None])) == sorted(c["expect"]) for t in bundled)


def test_healthy_runs_through_every_entry_tree_without_conclusion():
    entries = {t.id for t in engine.load_trees().values() if t.kind == "entry"}
    healthy = {t.get("tree") for _, t in CASES
               if t.get("bundle") == "practice/healthy/bundle" and (t.get("expect") or {}).get("conclusions") == []}
    assert entries <= healthy


@pytest.mark.parametrize("case", practice.load_cases(), ids=lambda c: c["id"])
def test_practice_bundle_up_to_date(case, tmp_path):
    """Rebuilding a bundle from its outputs gives byte-identical evidence: run
    `python -m troubleshooter.service.practice build` after editing decision_trees/practice/*/outputs."""
    case_dir = locations.trees_dir() / "practice" / Path(case["bundle"]).parent
    fresh = practice.build_bundle(case_dir, dest=tmp_path / "bundle")
    committed = case_dir / "bundle"

    def evidence(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / "evidence").rglob("*")) if p.is_file()}

    got, want = evidence(fresh), evidence(committed)
    assert sorted(got) == sorted(want), "practice bundle files differ: rebuild with `python -m troubleshooter.service.practice build`"
    stale = [name for name in got if got[name] != want[name]]
    assert not stale, f"stale evidence {stale}: rebuild with `python -m troubleshooter.service.practice build`"


@pytest.mark.parametrize("case", practice.load_cases(), ids=lambda c: c["id"])
def test_demo_reaches_expected_causes(case):
    from troubleshooter.diagnosis import profiles
    from troubleshooter.probe.bundle import Bundle
    from troubleshooter.probe.targets import BundleTarget
    from troubleshooter.diagnosis.workbench import LiveFacts

    prof = profiles.get(case.get("profile") or "generic")
    e = engine.Engine(profile=prof.thresholds)
    facts = LiveFacts.for_target(BundleTarget(Bundle.open(locations.trees_dir() / "practice" / case["bundle"])))
    w = engine.auto_walk(e, case["symptom"], facts, answers=dict(case.get("answers") or {}))
    assert sorted(c.cause for c in w.conclusions) == sorted(case["expect"])
    # every evidence record replays as ok: the outputs parse as their sources' tools print them
    for side, evs in facts.all_evidence().items():
        for sid, ev in evs.items():
            assert ev.ok or ev.status.value == "not-captured", f"{case['id']} {side}:{sid}: {ev.describe()}"


def _outputs():
    root = locations.trees_dir() / "practice"
    return sorted(root.glob("*/outputs/**/*.txt"))


@pytest.mark.parametrize("path", _outputs(), ids=lambda p: p.relative_to(p.parents[2] if p.parent.name == "host" else p.parents[1]).as_posix())
def test_practice_output_parses_and_has_provenance(path):
    from troubleshooter import parsers, sources

    raw = path.read_bytes()
    assert raw.startswith(b"#% adapted from: "), f"{path}: needs a '#%' provenance header"
    src = sources.load_all()[path.stem]
    facts = parsers.get(src.parser).func(practice.strip_header(raw).decode("utf-8", errors="replace"))
    assert facts, f"{path}: no facts"
