"""The tree engine and the author tooling, on small trees written into a temporary directory (not the
shipped ones): schema errors name file:line, the linter catches each kind of mistake, the walk takes the
right branches (ask, probe true/false/unknown/default, call and return, several conclusions, hypotheses,
back), auto_walk's answers/assume/MissingAnswer, fill() shell-quotes, and run_case passes and fails."""

from __future__ import annotations

import copy
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from troubleshooter.diagnosis import engine as eng
from troubleshooter.diagnosis import treetools
from troubleshooter.diagnosis.engine import Engine, MissingAnswer, TreeError, auto_walk, fill
from troubleshooter.model.facts import Unknown
from troubleshooter.diagnosis.workbench import CannedFacts


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # never write anchors: yamlio refuses them
        return True


def _dump(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False)


GLOSSARY = {"version": 1, "terms": {"C-state": {"short": "a CPU idle level"}}}

SYM: dict[str, Any] = {
    "id": "sym", "version": 1, "kind": "entry", "title": "A symptom", "start": "q",
    "why": "Test tree.",
    "hypotheses": [{"id": "h-topo", "title": "topology file missing", "settle": "look for the file"}],
    "nodes": {
        "q": {"kind": "ask", "question": "Is it slow in the container?", "why": "Only the container sees a [[C-state]].",
              "choices": [{"id": "yes", "label": "Yes, only there", "explain": "container-only", "next": "p"},
                          {"id": "no", "label": "No, everywhere", "next": "done", "rule_out": ["h-topo"]}]},
        "p": {"kind": "probe", "title": "Look for the topology file", "why": "NCCL needs it.",
              "sources": ["nccl-topo-file"], "show": ["nccl.topo_file.path"],
              "branches": [{"when": {"fact": "nccl.topo_file.visible", "op": "eq", "value": False}, "next": "c",
                            "because": "the file is not there", "rule_in": ["h-topo"]}],
              "unknown": {"next": "done", "because": "could not tell"},
              "default": {"next": "sub", "because": "the file is there", "rule_out": ["h-topo"]}},
        "c": {"kind": "conclude", "title": "Topology file missing", "why": "Proven by the probe.", "cause": "topo-missing",
              "hypothesis": "h-topo", "summary": "The file is not in the container.",
              "evidence": ["nccl.topo_file.path", "nccl.topo_file.visible"],
              "fix": [{"title": "mount it", "command": "ls -l {nccl.topo_file.path}", "needs": ["job-script"]}],
              "verify": {"command": "test -e {nccl.topo_file.path}", "sources": ["nccl-topo-file"],
                         "expect": {"fact": "nccl.topo_file.visible", "op": "eq", "value": True}},
              "next": "sub"},
        "sub": {"kind": "call", "tree": "subt", "next": "done"},
        "done": {"kind": "end", "title": "done"},
    },
}

SUBT: dict[str, Any] = {
    "id": "subt", "version": 1, "kind": "subtree", "title": "Environment", "start": "s1",
    "hypotheses": [{"id": "h-env", "title": "variable unset"}],
    "nodes": {
        "s1": {"kind": "probe", "title": "Read the environment", "why": "The variable names the file.",
               "sources": ["env-self"],
               "branches": [{"when": {"fact": "env.var.NCCL_TOPO_FILE", "op": "missing"}, "next": "c2",
                             "rule_in": ["h-env"]}],
               "unknown": {"next": "e"}, "default": {"next": "e", "rule_out": ["h-env"]}},
        "c2": {"kind": "conclude", "title": "Variable unset", "why": "env shows it.", "cause": "env-unset",
               "fix": [{"title": "set it", "command": "export NCCL_TOPO_FILE=/etc/nccl/topo.xml"}],
               "verify": {"command": "env | grep NCCL_TOPO_FILE"}},
        "e": {"kind": "end"},
    },
}


def write_trees(d: Path, *trees: dict[str, Any], glossary: dict[str, Any] | None = GLOSSARY) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for t in trees:
        (d / f"{t['id']}.yaml").write_text(_dump(t))
    if glossary is not None:
        (d / "glossary.yaml").write_text(_dump(glossary))
    return d


def node_line(path: Path, nid: str) -> int:
    """The line a node's mapping starts on (the line after '  nid:' in block style)."""
    lines = path.read_text().splitlines()
    return lines.index(f"  {nid}:") + 2


def _lint(tmp_path: Path, sym: dict[str, Any] | None = None, subt: dict[str, Any] | None = None) -> list[str]:
    d = write_trees(tmp_path / "trees", sym or SYM, subt or SUBT)
    return treetools.lint(directory=d)


def _engine(tmp_path: Path, sym: dict[str, Any] | None = None, subt: dict[str, Any] | None = None) -> Engine:
    d = write_trees(tmp_path / "trees", sym or SYM, subt or SUBT)
    return Engine(trees=eng.load_trees(d), profile={})


# ---------------------------------------------------------------------------- schema errors
def _load_err(tmp_path: Path, text: str) -> tuple[Path, str]:
    p = tmp_path / "t.yaml"
    p.write_text(text)
    with pytest.raises(TreeError) as ei:
        eng.load_tree(p)
    return p, str(ei.value)


HEAD = "id: t\nversion: 1\nkind: entry\ntitle: T\nstart: a\nnodes:\n"


def test_schema_bad_node_kind_names_file_and_line(tmp_path: Path) -> None:
    p, msg = _load_err(tmp_path, HEAD + "  a:\n    kind: end\n  b:\n    kind: question\n")
    assert msg.startswith(f"{p}:10: nodes/b/kind:"), msg
    assert "'question' is not one of" in msg


def test_schema_missing_key(tmp_path: Path) -> None:
    p, msg = _load_err(tmp_path, "id: t\nversion: 1\nkind: entry\ntitle: T\nnodes:\n  a: {kind: end}\n")
    assert msg.startswith(f"{p}:1: (top):") and "'start' is a required property" in msg
    p, msg = _load_err(tmp_path, HEAD + "  a:\n    kind: ask\n    choices:\n      - {id: x, next: a}\n")
    assert msg.startswith(f"{p}:10: nodes/a/choices/0:") and "'label' is a required property" in msg


def test_schema_unknown_key_in_branch(tmp_path: Path) -> None:
    p, msg = _load_err(tmp_path, HEAD + "  a:\n    kind: probe\n    default: {next: a, goto: b}\n")
    assert msg.startswith(f"{p}:9: nodes/a/default:") and "'goto'" in msg


def test_yaml_syntax_error(tmp_path: Path) -> None:
    p, msg = _load_err(tmp_path, HEAD + "  a:\n    kind: end\n   title: [unclosed\n")
    assert msg.startswith(f"{p}:"), msg
    line = int(msg[len(str(p)) + 1:].split(":", 1)[0])
    assert 8 <= line <= 10


def test_anchor_and_alias_refused(tmp_path: Path) -> None:
    # an anchor is refused even before anything uses it
    p, msg = _load_err(tmp_path, HEAD + "  a: &x\n    kind: end\n  b:\n    kind: end\n")
    assert msg.startswith(f"{p}:7:") and "anchors (&name) are not allowed" in msg, msg
    p, msg = _load_err(tmp_path, HEAD + "  a: &x\n    kind: end\n  b: *x\n")
    assert msg.startswith(f"{p}:7:") and "anchors (&name) are not allowed" in msg, msg
    p, msg = _load_err(tmp_path, HEAD + "  a:\n    kind: end\n    title: *x\n")
    assert msg.startswith(f"{p}:9:") and "aliases" in msg


def test_duplicate_key_refused(tmp_path: Path) -> None:
    p, msg = _load_err(tmp_path, HEAD + "  a:\n    kind: end\n  a:\n    kind: end\n")
    assert msg.startswith(f"{p}:9:") and "duplicate key 'a'" in msg


def test_duplicate_tree_id_and_every_bad_file_reported(tmp_path: Path) -> None:
    d = write_trees(tmp_path / "trees", SYM, SUBT)
    (d / "copy.yaml").write_text(_dump(SYM))
    (d / "broken.yaml").write_text(HEAD + "  a: {kind: nope}\n")
    with pytest.raises(TreeError) as ei:
        eng.load_trees(d)
    msg = str(ei.value)
    assert "tree id 'sym' also used by" in msg and "broken.yaml:7" in msg
    # the linter reports the same problems instead of raising
    problems = treetools.lint(directory=d)
    assert any("also used by" in p for p in problems) and any("broken.yaml:7" in p for p in problems)


# ---------------------------------------------------------------------------- lint
def test_lint_clean_trees(tmp_path: Path) -> None:
    assert _lint(tmp_path) == []


def _mut(fn) -> tuple[dict[str, Any], dict[str, Any]]:
    sym, subt = copy.deepcopy(SYM), copy.deepcopy(SUBT)
    fn(sym["nodes"], subt["nodes"], sym)
    return sym, subt


def _set(d: dict[str, Any], key: str, value: Any) -> None:
    d[key] = value


LINT_CASES = {
    "dangling next": (lambda n, s, t: _set(n["p"]["default"], "next", "nowhere"), "p", "goes to 'nowhere', which is not a node of sym"),
    "unreachable": (lambda n, s, t: _set(n, "orphan", {"kind": "end"}), "orphan", "unreachable from 'q'"),
    "no verify": (lambda n, s, t: n["c"].pop("verify"), "c", "a conclusion needs a verify step"),
    "no fix": (lambda n, s, t: n["c"].pop("fix"), "c", "a conclusion needs fix commands"),
    "no unknown branch": (lambda n, s, t: n["p"].pop("unknown"), "p", "explicit 'unknown' branch"),
    "no default branch": (lambda n, s, t: n["p"].pop("default"), "p", "a probe needs a 'default' branch"),
    "unknown fact": (lambda n, s, t: _set(n["p"]["branches"][0]["when"], "fact", "no.such.fact"), "p", "unknown fact 'no.such.fact'"),
    "unknown shown fact": (lambda n, s, t: _set(n["p"], "show", ["host:no.such.fact"]), "p", "shows unknown fact 'no.such.fact'"),
    "unknown evidence fact": (lambda n, s, t: n["c"]["evidence"].append("no.such"), "c", "evidence names unknown fact 'no.such'"),
    "bad condition": (lambda n, s, t: _set(n["p"]["branches"][0]["when"], "op", "approx"), "p", "branches[0].when: unknown op 'approx'"),
    "unknown profile key": (lambda n, s, t: _set(n["p"]["branches"][0]["when"], "value", {"profile": "no_such_threshold"}), "p",
                            "unknown profile threshold 'no_such_threshold'"),
    "unknown source": (lambda n, s, t: n["p"]["sources"].append("no-such-source"), "p", "unknown source 'no-such-source'"),
    "unknown hypothesis in a branch": (lambda n, s, t: _set(n["p"]["branches"][0], "rule_in", ["h-nope"]), "p", "unknown hypothesis 'h-nope'"),
    "unknown hypothesis in a choice": (lambda n, s, t: _set(n["q"]["choices"][1], "rule_out", ["h-nope"]), "q", "unknown hypothesis 'h-nope'"),
    "unknown hypothesis of a conclusion": (lambda n, s, t: _set(n["c"], "hypothesis", "h-nope"), "c", "unknown hypothesis 'h-nope'"),
    "glossary link missing": (lambda n, s, t: _set(n["c"], "why", "See [[Nonexistent term|this]]."), "c", "[[Nonexistent term]] is not in the glossary"),
    "missing why": (lambda n, s, t: n["p"].pop("why"), "p", "every step needs a 'why'"),
    "needs what it does not read": (lambda n, s, t: _set(n["p"], "needs", ["steps-log"]), "p",
                                    "needs steps-log but neither reads step-times-log"),
    "needs job context on one side": (lambda n, s, t: _set(n["p"], "needs", ["job-context"]), "p",
                                      "needs job-context but neither reads host"),
    "needs on a question": (lambda n, s, t: _set(n["q"], "needs", ["nccl-log"]), "q", "only a probe step 'needs'"),
    "assume not a choice": (lambda n, s, t: _set(n["q"], "assume", "maybe"), "q", "assume 'maybe' is not one of its choices"),
    "question without choices": (lambda n, s, t: _set(n["q"], "choices", []), "q", "a question needs choices"),
    "call unknown tree": (lambda n, s, t: _set(n["sub"], "tree", "nope"), "sub", "calls unknown tree 'nope'"),
    "call an entry tree": (lambda n, s, t: _set(n["sub"], "tree", "sym"), "sub", "calls 'sym', which is not a subtree"),
    "template fact nobody establishes": (lambda n, s, t: _set(n["c"]["fix"][0], "command", "echo {cpu.busy_mhz}"), "c",
                                         "template uses target:cpu.busy_mhz, which no probe on every path here establishes (producers: turbostat)"),
    "template on the wrong side": (lambda n, s, t: _set(n["c"]["verify"], "command", "cat {host:nccl.topo_file.path}"), "c",
                                   "template uses host:nccl.topo_file.path"),
    "template fact unknown": (lambda n, s, t: _set(n["c"]["fix"][0], "command", "echo {no.such.fact}"), "c", "template uses unknown fact 'no.such.fact'"),
    # a second path into the conclusion that skips the probe: the template is no longer established everywhere
    "template fact on one path only": (lambda n, s, t: _set(n["q"]["choices"][1], "next", "c"), "c",
                                       "template uses target:nccl.topo_file.path, which no probe on every path"),
}


@pytest.mark.parametrize("case", list(LINT_CASES))
def test_lint_catches(tmp_path: Path, case: str) -> None:
    mutate, nid, fragment = LINT_CASES[case]
    sym, subt = _mut(mutate)
    problems = _lint(tmp_path, sym, subt)
    hits = [p for p in problems if fragment in p]
    assert hits, f"{case}: {fragment!r} not in {problems}"
    path = tmp_path / "trees" / "sym.yaml"
    assert hits[0].startswith(f"{path}:{node_line(path, nid)}:"), hits[0]


def test_lint_cycle(tmp_path: Path) -> None:
    sym, subt = _mut(lambda n, s, t: _set(n["c"], "next", "q"))
    problems = _lint(tmp_path, sym, subt)
    assert f"{tmp_path / 'trees' / 'sym.yaml'}: cycle q -> p -> c -> q" in problems


def test_lint_subtree_call_loop(tmp_path: Path) -> None:
    sym, subt = _mut(lambda n, s, t: (_set(s, "again", {"kind": "call", "tree": "subt", "next": "e"}),
                                      _set(s["s1"]["unknown"], "next", "again")))
    problems = _lint(tmp_path, sym, subt)
    assert any("subtree calls loop: subt -> subt" in p for p in problems), problems


def test_lint_template_established_on_every_path(tmp_path: Path) -> None:
    # both paths into the conclusion run the probe that establishes the fact: accepted
    def two_probes(n, s, t):
        n["p2"] = copy.deepcopy(n["p"])
        n["q"]["choices"][1]["next"] = "p2"
    sym, subt = _mut(two_probes)
    assert _lint(tmp_path, sym, subt) == []


def test_lint_template_host_side_established(tmp_path: Path) -> None:
    def host_too(n, s, t):
        n["p"]["sides"] = ["target", "host"]
        n["c"]["verify"]["command"] = "diff <(cat {host:nccl.topo_file.path}) {nccl.topo_file.path}"
    sym, subt = _mut(host_too)
    assert _lint(tmp_path, sym, subt) == []


# ---------------------------------------------------------------------------- walking
def _facts(target: dict[str, Any] | None = None, host: dict[str, Any] | None = None) -> CannedFacts:
    sides = {"target": target or {}}
    if host is not None:
        sides["host"] = host
    return CannedFacts(sides)


MISSING = {"nccl.topo_file.visible": False, "nccl.topo_file.path": "/etc/nccl/topo.xml"}
PRESENT = {"nccl.topo_file.visible": True, "nccl.topo_file.path": "/etc/nccl/topo.xml",
           "env.var.NCCL_TOPO_FILE": "/etc/nccl/topo.xml"}


def test_walk_ask_then_probe_true_concludes_and_continues(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    w = e.walk("sym", _facts(MISSING))
    assert w.current()[1] == "q"
    q = w.question()  # the faces get the question typed, never the node's dict
    assert (q.key, [c.id for c in q.choices]) == ("sym.q", ["yes", "no"]) and all(c.label for c in q.choices)
    assert w.advance() is None  # a question does not advance by itself
    w.answer("yes")
    w.run_to_question()
    assert w.done and w.current() is None and w.question() is None
    # two causes: the probe's conclusion, then (its next) the subtree's: gaps are cumulative
    assert [c.cause for c in w.conclusions] == ["topo-missing", "env-unset"]
    assert [(s.tree, s.node, s.kind) for s in w.steps] == [
        ("sym", "q", "ask"), ("sym", "p", "probe"), ("sym", "c", "conclude"), ("sym", "sub", "call"),
        ("subt", "s1", "probe"), ("subt", "c2", "conclude"), ("sym", "done", "end")]
    probe = w.steps[1]
    assert probe.decision == "c" and probe.because == "the file is not there"
    assert "the topology file is visible here: no" in probe.explain and probe.evidence == {"nccl-topo-file": "canned facts"}
    assert probe.facts == {"nccl.topo_file.path": "/etc/nccl/topo.xml"}
    concl = w.conclusions[0]
    assert concl.fixes[0]["command"] == "ls -l /etc/nccl/topo.xml" and concl.missing_facts == []
    assert concl.verify["command"] == "test -e /etc/nccl/topo.xml"
    assert concl.evidence == {"nccl.topo_file.path": "/etc/nccl/topo.xml", "nccl.topo_file.visible": "no"}
    hyps = {h.id: h for h in w.hypotheses}
    assert hyps["h-topo"].state == "ruled-in" and hyps["h-env"].state == "ruled-in"
    assert hyps["h-topo"].settle == "look for the file"


def test_walk_probe_false_takes_default_into_the_subtree_and_returns(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    w = e.walk("sym", _facts(PRESENT))
    w.answer("yes")
    seen: list[str] = []
    w.run_to_question(on_step=lambda s: seen.append(f"{s.tree}.{s.node}"))
    assert seen == ["sym.p", "sym.sub", "subt.s1", "subt.e", "sym.done"]
    assert w.done and w.conclusions == []
    hyps = {h.id: h.state for h in w.hypotheses}
    assert hyps == {"h-topo": "ruled-out", "h-env": "ruled-out"}


def test_walk_probe_unknown_branch(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    w = auto_walk(e, "sym", _facts({}), answers={"q": "yes"})
    probe = next(s for s in w.steps if s.node == "p")
    assert probe.decision == "done" and probe.because == "could not tell"
    assert "unknown" in probe.explain
    assert w.conclusions == [] and {h.id: h.state for h in w.hypotheses} == {"h-topo": "untested"}


def test_walk_probe_unknown_without_unknown_branch_takes_default(tmp_path: Path) -> None:
    sym, subt = _mut(lambda n, s, t: n["p"].pop("unknown"))
    w = auto_walk(_engine(tmp_path, sym, subt), "sym", _facts({}), answers={"q": "yes"})
    assert next(s for s in w.steps if s.node == "p").decision == "sub"


def test_walk_probe_without_any_way_out_names_file_and_line(tmp_path: Path) -> None:
    sym, subt = _mut(lambda n, s, t: (n["p"].pop("unknown"), n["p"].pop("default")))
    e = _engine(tmp_path, sym, subt)
    path = tmp_path / "trees" / "sym.yaml"
    with pytest.raises(TreeError, match=rf"{path}:{node_line(path, 'p')}: probe p has no branch"):
        auto_walk(e, "sym", _facts(PRESENT), answers={"q": "yes"})


def test_walk_rule_out_by_answer_and_rule_in_wins(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    w = auto_walk(e, "sym", _facts(MISSING), answers={"q": "no"})
    h = next(h for h in w.hypotheses if h.id == "h-topo")
    assert h.state == "ruled-out" and "No, everywhere" in h.evidence
    # the subtree was never called: its hypotheses are not in the table
    assert [h.id for h in w.hypotheses] == ["h-topo"]


def test_back_restores_answers_conclusions_and_hypotheses(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    w = e.walk("sym", _facts(MISSING))
    assert not w.can_go_back()
    w.answer("yes")
    assert w.state.answers == {"sym.q": "yes"}
    w.advance()  # probe -> c
    w.advance()  # conclude
    assert [c.cause for c in w.conclusions] == ["topo-missing"]
    w.back()  # undo the conclusion
    assert w.conclusions == [] and w.current()[1] == "c"
    assert {h.id: h.state for h in w.hypotheses}["h-topo"] == "ruled-in"  # the probe's rule_in stays
    w.back()  # undo the probe
    assert w.current()[1] == "p" and {h.id: h.state for h in w.hypotheses}["h-topo"] == "untested"
    w.back()  # undo the answer
    assert w.current()[1] == "q" and w.state.answers == {} and w.steps == []
    assert not w.can_go_back()
    # answer differently after going back
    w.answer("no")
    w.run_to_question()
    assert w.done and w.conclusions == []


def test_back_to_last_question(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    w = e.walk("sym", _facts(MISSING))
    w.answer("yes")
    w.run_to_question()
    assert w.done
    w.back_to_last_question()
    assert w.current()[1] == "q" and w.conclusions == [] and w.steps == [] and not w.done


def test_answer_errors(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    w = e.walk("sym", _facts(MISSING))
    with pytest.raises(TreeError, match=r"sym.q: no choice 'maybe'; choices: yes, no"):
        w.answer("maybe")
    w.answer("yes")
    with pytest.raises(TreeError, match="not at a question"):
        w.answer("yes")
    with pytest.raises(TreeError, match="subt is a subtree, not a symptom"):
        e.walk("subt", _facts())
    with pytest.raises(TreeError, match=r"unknown tree 'nope'; known: subt, sym"):
        e.walk("nope", _facts())


def test_auto_walk_answers_by_node_and_by_tree_node(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    assert [c.cause for c in auto_walk(e, "sym", _facts(MISSING), answers={"q": "yes"}).conclusions] == ["topo-missing", "env-unset"]
    assert auto_walk(e, "sym", _facts(MISSING), answers={"sym.q": "no"}).conclusions == []
    # tree.node is more specific than node
    assert auto_walk(e, "sym", _facts(MISSING), answers={"q": "yes", "sym.q": "no"}).conclusions == []


def test_missing_answer_names_node_and_choices(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    with pytest.raises(MissingAnswer) as ei:
        auto_walk(e, "sym", _facts(MISSING))
    msg = str(ei.value)
    assert "question sym.q needs an answer: Is it slow in the container?" in msg
    assert "--answer q=CHOICE" in msg and "yes (Yes, only there), no (No, everywhere)" in msg
    assert ei.value.nid == "q" and ei.value.tree.id == "sym"
    # ask() returning None is the same as no answer
    with pytest.raises(MissingAnswer):
        auto_walk(e, "sym", _facts(MISSING), ask=lambda q: None)


def test_assume_only_without_an_answer(tmp_path: Path) -> None:
    sym, subt = _mut(lambda n, s, t: _set(n["q"], "assume", "no"))
    e = _engine(tmp_path, sym, subt)
    w = auto_walk(e, "sym", _facts(MISSING))
    assert w.steps[0].decision == "no" and w.steps[0].because.startswith("assumed (no answer given)")
    w = auto_walk(e, "sym", _facts(MISSING), answers={"q": "yes"})
    assert w.steps[0].decision == "yes" and w.steps[0].because.startswith("answered")
    asked: list[str] = []
    w = auto_walk(e, "sym", _facts(MISSING), ask=lambda q: asked.append(q.node) or "yes")
    assert asked == ["q"] and w.steps[0].decision == "yes" and not w.steps[0].because.startswith("assumed")


def test_conclusion_reports_missing_template_facts(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    w = auto_walk(e, "sym", _facts({"nccl.topo_file.visible": False}), answers={"q": "yes"})
    c = w.conclusions[0]
    assert c.fixes[0]["command"] == "ls -l <nccl.topo_file.path>"
    assert c.missing_facts == ["nccl.topo_file.path"]


def test_conclusion_reached_twice_is_listed_once(tmp_path: Path) -> None:
    sym, subt = _mut(lambda n, s, t: (_set(n, "c-again", copy.deepcopy(n["c"])), _set(n["c"], "next", "c-again"),
                                      _set(n["c-again"], "next", "done")))
    w = auto_walk(_engine(tmp_path, sym, subt), "sym", _facts(MISSING), answers={"q": "yes"})
    assert [c.cause for c in w.conclusions] == ["topo-missing"]


def test_profile_thresholds_reach_conditions(tmp_path: Path) -> None:
    def by_profile(n, s, t):
        n["p"]["branches"][0]["when"] = {"fact": "nccl.topo_file.bytes", "op": "lt", "value": {"profile": "min_bytes"}}
    sym, subt = _mut(by_profile)
    d = write_trees(tmp_path / "trees", sym, subt)
    trees = eng.load_trees(d)
    facts = {"nccl.topo_file.bytes": 100, "nccl.topo_file.path": "/x"}
    causes = lambda prof: [c.cause for c in auto_walk(Engine(trees, prof), "sym", _facts(facts), answers={"q": "yes"}).conclusions]  # noqa: E731
    assert "topo-missing" in causes({"min_bytes": 1000})
    assert "topo-missing" not in causes({"min_bytes": 10})
    assert "topo-missing" not in causes({})  # the threshold is unknown: the unknown branch


# ---------------------------------------------------------------------------- fill
NASTY = ["/tmp/a b;rm -rf /", "$(reboot)", "`id`", "it's", 'a"b', "x\ny", "*", "&& true", "a|b > /etc/passwd", "--flag", ""]


@pytest.mark.parametrize("value", NASTY)
def test_fill_shell_quotes_each_value_as_one_argument(value: str) -> None:
    text, missing = fill("ls -l {nccl.topo_file.path} --then {host:nccl.topo_file.path}",
                         lambda n, s: value if s == "target" else "/host/side")
    assert missing == []
    assert shlex.split(text) == ["ls", "-l", value, "--then", "/host/side"]


def test_fill_lists_bools_numbers_and_missing() -> None:
    vals = {("a.list", "target"): ["mlx5_0", "mlx5 1"], ("a.flag", "target"): True, ("a.num", "target"): 4,
            ("a.off", "target"): False}

    def lookup(n: str, s: str) -> Any:
        return vals.get((n, s), Unknown(n, "absent") if n != "a.none" else None)

    text, missing = fill("x {a.list} {a.flag} {a.off} {a.num} {a.gone} {host:a.num} {a.none}", lookup)
    assert shlex.split(text)[:5] == ["x", "mlx5_0,mlx5 1", "1", "0", "4"]
    assert "<a.gone>" in text and "<a.num>" in text and "<a.none>" in text
    assert missing == ["a.gone", "a.num", "a.none"]
    assert eng.template_facts("a {x.y} {host:z.w} {not a fact}") == [("x.y", "target"), ("z.w", "host")]


# ---------------------------------------------------------------------------- run_case
def test_run_case_passes_and_fails(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    path = tmp_path / "trees" / "tests" / "sym.yaml"
    ok = {"name": "missing file", "tree": "sym", "answers": {"q": "yes"}, "facts": {"target": MISSING},
          "expect": {"conclusions": ["env-unset", "topo-missing"], "includes": ["topo-missing"], "excludes": ["other"],
                     "path": ["q", "p", "subt.s1", "done"], "hypotheses": {"h-topo": "ruled-in", "h-env": "ruled-in"}}}
    r = treetools.run_case(path, ok, engine_=e)
    assert r.ok, r.problems
    assert r.conclusions == ["topo-missing", "env-unset"]
    assert r.path == ["q", "p", "c", "sub", "subt.s1", "subt.c2", "done"]

    bad = copy.deepcopy(ok)
    bad["expect"] = {"conclusions": [], "excludes": ["topo-missing"], "path": ["p", "q"], "hypotheses": {"h-topo": "ruled-out", "h-x": "untested"}}
    r = treetools.run_case(path, bad, engine_=e)
    assert not r.ok
    text = "\n".join(r.problems)
    assert "expected conclusions [], got ['env-unset', 'topo-missing']" in text
    assert "must NOT reach 'topo-missing', but did" in text
    assert "expected path ['p', 'q'] (in order)" in text
    assert "hypothesis h-topo expected ruled-out, got ruled-in" in text and "hypothesis h-x expected untested, got absent" in text

    # an empty expectation of conclusions means "must not conclude anything" (promtool style)
    none = {"name": "present", "tree": "sym", "answers": {"q": "yes"}, "facts": {"target": PRESENT}, "expect": {"conclusions": []}}
    assert treetools.run_case(path, none, engine_=e).ok
    # a question without an answer fails the case with the message, it does not raise
    r = treetools.run_case(path, {"name": "no answer", "tree": "sym", "facts": {"target": MISSING}}, engine_=e)
    assert not r.ok and "needs an answer" in r.problems[0]


def test_run_all_on_a_tests_directory(tmp_path: Path) -> None:
    d = write_trees(tmp_path / "trees", SYM, SUBT)
    (d / "tests").mkdir()
    (d / "tests" / "sym.yaml").write_text(_dump({"tree": "sym", "cases": [
        {"name": "one", "answers": {"q": "no"}, "facts": {"target": {}}, "expect": {"conclusions": []}},
        {"name": "two", "answers": {"q": "yes"}, "facts": {"target": MISSING}, "expect": {"includes": ["nope"]}},
    ]}))
    cases = treetools.load_cases(d)
    assert [c["name"] for _, c in cases] == ["one", "two"] and all(c["tree"] == "sym" for _, c in cases)
    results = [treetools.run_case(p, c, engine_=Engine(eng.load_trees(d)), directory=d) for p, c in cases]
    assert [r.ok for r in results] == [True, False]
    assert results[1].problems[0].startswith(f"{d / 'tests' / 'sym.yaml'}:")


# ---------------------------------------------------------------------------- graphs
def test_graphs(tmp_path: Path) -> None:
    t = _engine(tmp_path).tree("sym")
    m = treetools.mermaid(t)
    assert m.startswith("flowchart TD\n") and "q -->|Yes, only there| p" in m and "p -.->|default| sub" in m
    d = treetools.dot(t)
    assert d.startswith('digraph "sym" {') and '"p" -> "sub" [style=dashed, label="default"];' in d and d.rstrip().endswith("}")
