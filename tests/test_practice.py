"""Practice that teaches (issue 13, item 6), below the app: the quiz over every practice case, intros that do
not give the answer away, practice-case references kept out of real walks, the headless quiz."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from troubleshooter.diagnosis.engine import CASE_REF
from troubleshooter.service.practice import case_intro, load_cases
from troubleshooter.service.quiz import NOTHING, Quiz

from .clihelp import main

TREES = Path(__file__).resolve().parents[1] / "decision_trees"
CASES = [c["id"] for c in load_cases()]

# words that name each case's cause: an intro (what the SRE sees first) must not say them
GIVEAWAYS = {
    "case1": ["cmdqv", "smmu", "iommu", "invalidation", "arm_smmu"],
    "case2": ["c1", "c6", "c-state", "numa", "remote", "steal", "housekeeping", "turbostat", "numastat"],
    "case3": ["qps", "queue pair", "nccl_ib_qps", "all_gather_perf"],
    "case4": ["nccl_topo_file", "topo.xml", "topology", "bind-mount", "mount"],
    "healthy": [],
}


@pytest.mark.parametrize("case", CASES)
def test_intros_give_the_symptom_not_the_cause(case: str) -> None:
    c = next(x for x in load_cases() if x["id"] == case)
    intro = case_intro(c).lower()
    assert intro, f"{case} has no intro"
    for word in GIVEAWAYS[case]:
        assert not re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", intro), (case, word)
    assert c["story"].strip() != case_intro(c)  # the story is the debrief's


@pytest.mark.parametrize("case", CASES)
def test_the_expert_path_scores_full_marks_and_the_debrief_names_the_cause(case: str) -> None:
    q = Quiz(case)
    probe_rounds = [r for r in q.rounds if not r.is_diagnosis]
    assert probe_rounds and q.rounds[-1].is_diagnosis
    for r in probe_rounds:
        ids = [o.id for o in r.options]
        assert r.expert in ids and len(ids) == len(set(ids)) >= 3
    while not q.done:
        fb = q.choose(q.current().expert)
        assert fb.correct
        if fb.output:
            assert "\x1b" not in fb.output
    got, most = q.score()
    assert got == most
    md = q.debrief_markdown()
    assert "Your choices and the expert path" in md
    if case == "healthy":
        assert q.causes() == {NOTHING} and "this node is healthy" in md
    else:
        assert all(c.title in md for c in q.walk.conclusions) and "```sh" in md


def test_a_wrong_probe_shows_its_output_and_the_expert_choice() -> None:
    q = Quiz("case1")
    q.choose(q.current().expert)
    r = q.current()
    wrong = next(o for o in r.options if o.id != r.expert)
    fb = q.choose(wrong.id)
    assert not fb.correct and fb.points == 0
    assert fb.output_full and fb.output_full.splitlines()[0] in fb.output
    assert fb.expert.id == r.expert == "perf-sample"
    assert any(w.startswith("Why this probe:") for w in fb.why)
    assert any("SMMU command-queue time" in w and "above" in w for w in fb.why)


def test_a_wrong_diagnosis_is_debriefed_not_left_at_no_root_cause() -> None:
    q = Quiz("case3")
    while not q.current().is_diagnosis:
        q.choose(q.current().expert)
    fb = q.choose(NOTHING)
    assert not fb.correct and "NCCL_IB_QPS_PER_CONNECTION" in fb.verdict
    md = q.debrief_markdown()
    assert "No root cause found" not in md and "NCCL_IB_QPS_PER_CONNECTION=4" in md


def test_outputs_are_redacted_and_escaped(monkeypatch) -> None:
    from troubleshooter.output.redact import Redactor

    q = Quiz("case1", redactor=Redactor(["aarch64"]))
    assert "aarch64" not in q.output_of("virt")


# ---------------------------------------------------------------------------- practice-case references
def test_every_case_reference_in_tree_text_is_one_strippable_parenthetical() -> None:
    bad = []
    for p in sorted(TREES.glob("*.yaml")):
        for n, line in enumerate(p.read_text().splitlines(), 1):
            rest = CASE_REF.sub("", line)
            if re.search(r"(?i)\bcase \d\b", rest) and "case study" not in rest.lower():
                bad.append(f"{p.name}:{n}: {line.strip()}")
    assert not bad, "write a practice-case reference as '(case N...)' so real steps can leave it out:\n" + "\n".join(bad)


def test_a_real_diagnosis_leaves_case_references_out_and_a_practice_one_keeps_them() -> None:
    from troubleshooter.diagnosis.workbench import LiveFacts
    from troubleshooter.output import export
    from troubleshooter.service.diagnose import diagnose
    from troubleshooter.service.practice import practice_bundle_path, practice_case
    from troubleshooter.probe.targetspec import TargetSpec

    case = practice_case("case2")
    spec = TargetSpec(bundle=str(practice_bundle_path(case)))
    texts = {}
    for practice in (False, True):
        t = spec.make()
        _, doc = diagnose(case["symptom"], LiveFacts.for_target(t, spec.params()), answers={}, profile_id="h100",
                          target_desc=t.describe(), practice=practice)
        texts[practice] = export.to_markdown(doc)
    assert "(case 2" not in texts[False] and "case 2" not in texts[False]
    assert "(case 2" in texts[True]


def test_preflight_checks_say_no_case() -> None:
    from troubleshooter.diagnosis import checks

    for c in checks.load():
        assert not re.search(r"(?i)\bcase \d", c.why + " ".join(b["reason"] for b in c.blocks.values())), c.id


# ---------------------------------------------------------------------------- headless
def test_headless_quiz_reads_stdin(capsys, monkeypatch) -> None:
    q = Quiz("case3")
    answers = [str([o.id for o in r.options].index(r.expert) + 1) for r in q.rounds]
    monkeypatch.setattr("sys.stdin", io.StringIO("9\n" + "\n".join(answers) + "\n"))
    rc, out, err = main(capsys, "practice", "case3")
    assert rc == 0, err
    assert "Round 1 of" in out and "what it printed:" in out and "✓ Right" in out
    assert "one of 1-" in err  # 9 is no option: asked again
    assert f"Score: {q.score()[1]} / {q.score()[1]}" in out and "Debrief" in out


def test_headless_quiz_stops_at_end_of_input(capsys, monkeypatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n"))
    rc, out, _ = main(capsys, "practice", "case1")
    assert rc == 0 and "end of input" in out and "score so far" in out
    rc, _, err = main(capsys, "practice", "case9")
    assert rc == 2 and "unknown practice case" in err
