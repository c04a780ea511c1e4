"""The walk: from a symptom's entry tree, node by node, to root causes; steps, conclusions, hypotheses.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable

from troubleshooter.diagnosis import conditions
from troubleshooter.diagnosis.engine.cache import load_trees
from troubleshooter.diagnosis.engine.schema import Tree, TreeError
from troubleshooter.diagnosis.engine.text import display, fill, plain_text, strip_links
from troubleshooter.model.facts import Unknown

# ---------------------------------------------------------------------------- walking
@dataclasses.dataclass
class Step:
    tree: str
    node: str
    kind: str
    title: str
    why: str = ""
    decision: str = ""  # choice id or branch target
    because: str = ""
    explain: str = ""  # leaves of the condition that decided
    facts: dict[str, Any] = dataclasses.field(default_factory=dict)  # shown facts (side:name -> value text)
    evidence: dict[str, str] = dataclasses.field(default_factory=dict)  # source -> status line
    next: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Conclusion:
    cause: str
    tree: str
    node: str
    title: str
    summary: str
    evidence: dict[str, str]
    fixes: list[dict[str, Any]]
    verify: dict[str, Any]
    caution: str
    references: list[str]
    recovered: str = ""
    missing_facts: list[str] = dataclasses.field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def conclusion_from_node(tree_id: str, nid: str, node: dict[str, Any], lookup: Callable[[str, str], Any],
                         has_side: Callable[[str], bool], *, practice: bool = False) -> Conclusion:
    """A ``conclude`` node as a conclusion: evidence facts looked up, fix and verify commands filled shell-quoted.
    The walk uses it, and so does a cause's signature that names the node (decision_trees/causes.yaml)."""
    evidence = {}
    for name in node.get("evidence", []):
        side, fname = (name.split(":", 1) if ":" in name else ("target", name))
        if side != "target" and not has_side(side):
            continue  # this session has no such side: nothing to show, nothing missing
        evidence[name] = display(fname, lookup(fname, side))
    missing: list[str] = []
    fixes = []
    for fx in node.get("fix", []):
        cmd, miss = fill(fx["command"], lookup)
        missing += miss
        fixes.append({"title": plain_text(fx["title"], practice), "command": cmd, "context": fx.get("context", "any"),
                      "needs": list(fx.get("needs", [])), "note": plain_text(fx.get("note", ""), practice)})
    verify = dict(node.get("verify", {}))
    if verify:
        verify["command"], miss = fill(verify["command"], lookup)
        missing += miss
    cause = node.get("cause", nid)
    return Conclusion(cause, tree_id, nid, node.get("title", cause), plain_text(node.get("summary", ""), practice),
                      evidence, fixes, verify, plain_text(node.get("caution", ""), practice), list(node.get("references", [])),
                      plain_text(node.get("recovered", ""), practice), sorted(set(missing)))


@dataclasses.dataclass(frozen=True)
class Choice:
    id: str
    label: str
    explain: str = ""


@dataclasses.dataclass(frozen=True)
class Question:
    """The question a walk is waiting on, typed: what the faces (the app, the CLI's prompt) show and answer.
    They never index the tree's node dictionaries, so a schema change stays inside the engine."""
    tree: str
    node: str
    text: str
    why: str
    choices: tuple[Choice, ...]
    assume: str = ""

    @property
    def key(self) -> str:
        return f"{self.tree}.{self.node}"

    @classmethod
    def of(cls, tree: "Tree", nid: str, node: dict[str, Any]) -> "Question":
        return cls(tree.id, nid, strip_links(node.get("question", nid)), strip_links(node.get("why", "")),
                   tuple(Choice(c["id"], c["label"], strip_links(c.get("explain", ""))) for c in node.get("choices", [])),
                   node.get("assume", ""))


#: not-applicable: what the hypothesis is about is not there (no RDMA device: no port can be down); unlike
#: ruled-out, it says nothing is wrong only about a thing that does not exist here. suspected: the outputs point
#: at it without deciding it (a cause's possible signature): untested, and first to settle
HYP_STATES = ("untested", "suspected", "ruled-in", "ruled-out", "not-applicable")


@dataclasses.dataclass
class Hypothesis:
    id: str
    title: str
    tree: str
    state: str = "untested"
    evidence: str = ""
    settle: str = ""  # what evidence would settle it

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class FactSource:
    """What the walk asks for facts: run (or replay) sources on a side, then look facts up.

    The CLI and the TUI pass an implementation backed by live targets, a bundle, or pasted files.
    """

    def ensure(self, source_ids: list[str], side: str) -> dict[str, str]:  # returns source -> status line
        raise NotImplementedError

    def lookup(self, name: str, side: str) -> Any:
        raise NotImplementedError

    def has_side(self, side: str) -> bool:
        return side == "target"

    def all_evidence(self) -> dict[str, dict[str, Any]]:
        """side -> source id -> Evidence collected so far (none for canned facts)."""
        return {}

    def factset(self, side: str) -> Any:
        """The facts established so far on a side (a FactSet), or None when there is no such side."""
        return None

    def provides(self, need: str) -> bool:
        """Whether this source can give what a step ``needs`` (a tree's PROBE_NEEDS): canned facts, bundles and
        pasted outputs have what they have, so only a live source says no."""
        return True

    def missing_for(self, walk: "Walk") -> list[dict[str, Any]]:
        """Evidence the walk wanted and this source could not provide (pasted files name what to attach)."""
        return []


@dataclasses.dataclass
class _State:
    stack: list[tuple[str, str]]  # (tree, node) frames; top = current
    steps: list[Step]
    hypotheses: dict[str, Hypothesis]
    conclusions: list[Conclusion]
    answers: dict[str, str]
    done: bool = False


class Walk:
    """One walk through an entry tree. Drive it with :meth:`current`, :meth:`answer`, :meth:`advance`."""

    def __init__(self, engine: "Engine", tree_id: str, facts: FactSource) -> None:
        self.engine = engine
        self.facts = facts
        self.root = engine.tree(tree_id)
        if self.root.kind != "entry":
            raise TreeError(f"{tree_id} is a subtree, not a symptom")
        self.state = _State([(tree_id, self.root.start)], [], {}, [], {})
        self._history: list[_State] = []
        self._add_hypotheses(self.root)
        #: stop before a probe step whose ``needs`` the facts cannot provide (a face that can ask sets it)
        self.stop_at_needs = False
        self.waived: set[str] = set()  # needs the person chose to go on without

    def _text(self, text: str) -> str:
        """Tree text for a step: practice-case references only on a practice walk (engine.practice)."""
        return plain_text(text, self.engine.practice)

    # -- state
    def _add_hypotheses(self, tree: Tree) -> None:
        for h in tree.hypotheses:
            if h["id"] not in self.state.hypotheses:
                self.state.hypotheses[h["id"]] = Hypothesis(h["id"], h["title"], tree.id, settle=h.get("settle", ""))

    @property
    def done(self) -> bool:
        return self.state.done

    @property
    def steps(self) -> list[Step]:
        return self.state.steps

    @property
    def conclusions(self) -> list[Conclusion]:
        return self.state.conclusions

    @property
    def hypotheses(self) -> list[Hypothesis]:
        return list(self.state.hypotheses.values())

    def current(self) -> tuple[Tree, str, dict[str, Any]] | None:
        if self.state.done or not self.state.stack:
            return None
        tid, nid = self.state.stack[-1]
        tree = self.engine.tree(tid)
        return tree, nid, tree.nodes[nid]

    def question(self) -> Question | None:
        """The question the walk waits on, or None (running, or done)."""
        cur = self.current()
        if cur is None or cur[2]["kind"] != "ask":
            return None
        return Question.of(*cur)

    def unmet(self) -> tuple[str, ...]:
        """What the current probe step needs that the facts cannot provide and was not waived (empty: nothing)."""
        cur = self.current()
        if cur is None or cur[2]["kind"] != "probe":
            return ()
        return tuple(n for n in cur[2].get("needs", ()) if n not in self.waived and not self.facts.provides(n))

    def waive(self, need: str) -> None:
        """Go on without ``need``: its steps run with what there is (their facts unknown, their branch says so)."""
        self.waived.add(need)

    def _snapshot(self) -> None:
        self._history.append(copy.deepcopy(self.state))

    def can_go_back(self) -> bool:
        return bool(self._history)

    def back(self) -> None:
        """Undo the last step (an answer, a probe's branch, a conclusion)."""
        if self._history:
            self.state = self._history.pop()

    def back_to_last_question(self) -> None:
        while self._history:
            self.back()
            cur = self.current()
            if cur and cur[2]["kind"] == "ask":
                return

    # -- moving
    def _goto(self, target: str) -> None:
        tid, _ = self.state.stack[-1]
        self.state.stack[-1] = (tid, target)

    def _return(self) -> None:
        self.state.stack.pop()
        while self.state.stack:
            tid, nid = self.state.stack[-1]
            node = self.engine.tree(tid).nodes[nid]
            # we were at a call node: continue after it
            nxt = node.get("next")
            if nxt:
                self._goto(nxt)
                return
            self.state.stack.pop()
        self.state.done = True

    def _rule(self, spec: dict[str, Any], because: str) -> None:
        for h in spec.get("rule_in", []) or []:
            hyp = self.state.hypotheses.get(h)
            if hyp:
                hyp.state, hyp.evidence = "ruled-in", because
        for h in spec.get("rule_out", []) or []:
            hyp = self.state.hypotheses.get(h)
            if hyp and hyp.state != "ruled-in":
                hyp.state, hyp.evidence = "ruled-out", because
        for h in spec.get("not_applicable", []) or []:
            hyp = self.state.hypotheses.get(h)
            if hyp and hyp.state == "untested":
                hyp.state, hyp.evidence = "not-applicable", because

    def lookup(self, name: str, side: str = "target") -> Any:
        return self.facts.lookup(name, side)

    def answer(self, choice_id: str, assumed: bool = False) -> None:
        cur = self.current()
        if cur is None or cur[2]["kind"] != "ask":
            raise TreeError("not at a question")
        tree, nid, node = cur
        choice = next((c for c in node["choices"] if c["id"] == choice_id), None)
        if choice is None:
            raise TreeError(f"{tree.id}.{nid}: no choice {choice_id!r}; choices: {', '.join(c['id'] for c in node['choices'])}")
        self._snapshot()
        self.state.answers[f"{tree.id}.{nid}"] = choice_id
        self.state.steps.append(Step(tree.id, nid, "ask", node.get("question", nid), self._text(node.get("why", "")),
                                     decision=choice_id,
                                     because=f"{'assumed (no answer given)' if assumed else 'answered'}: {choice['label']}",
                                     next=choice["next"]))
        self._rule(choice, f"answered {choice['label']!r}")
        self._goto(choice["next"])

    def advance(self, on_step: Callable[[Step], None] | None = None) -> Step | None:
        """Take one non-question step (probe, conclude, call, end). Returns the step taken, or None at a
        question or the end."""
        cur = self.current()
        if cur is None:
            return None
        tree, nid, node = cur
        kind = node["kind"]
        if kind == "ask" or (self.stop_at_needs and self.unmet()):
            return None
        self._snapshot()
        if kind == "end":
            step = Step(tree.id, nid, "end", node.get("title", "end"), self._text(node.get("why", "")))
            self.state.steps.append(step)
            self._return()
        elif kind == "call":
            sub = self.engine.tree(node["tree"])
            self._add_hypotheses(sub)
            step = Step(tree.id, nid, "call", node.get("title", sub.title), self._text(node.get("why", sub.why)),
                        next=f"{sub.id}.{sub.start}")
            self.state.steps.append(step)
            self.state.stack.append((sub.id, sub.start))
        elif kind == "probe":
            step = self._probe(tree, nid, node)
        elif kind == "conclude":
            step = self._conclude(tree, nid, node)
        else:  # pragma: no cover - schema prevents it
            raise TreeError(f"unknown node kind {kind}")
        if on_step:
            on_step(step)
        return step

    def run_to_question(self, on_step: Callable[[Step], None] | None = None, limit: int = 500) -> None:
        for _ in range(limit):
            if self.current() is None or self.current()[2]["kind"] == "ask":
                return
            if self.stop_at_needs and self.unmet():
                return
            self.advance(on_step)
        raise TreeError("walk did not reach a question or the end in 500 steps (a cycle?)")

    def _probe(self, tree: Tree, nid: str, node: dict[str, Any]) -> Step:
        evidence: dict[str, str] = {}
        for side in node.get("sides", ["target"]):
            if side != "target" and not self.facts.has_side(side):
                continue
            for sid, status in self.facts.ensure(list(node.get("sources", [])), side).items():
                evidence[sid if side == "target" else f"{side}:{sid}"] = status
        ev = conditions.Evaluator(self.lookup, self.engine.profile)
        chosen, explain, undecided = None, "", []
        for br in node.get("branches", []):
            res = ev.evaluate(br["when"])
            if res.value is True:
                chosen, explain = br, res.explain()
                break
            if res.value is None:
                undecided.append(res.explain())
        undecided = list(dict.fromkeys("; ".join(undecided).split("; "))) if undecided else []
        if chosen is None and undecided and "unknown" in node:
            chosen, explain = node["unknown"], "; ".join(undecided)
        if chosen is None:
            chosen = node.get("default") or node.get("unknown")
            explain = explain or ("; ".join(undecided) if undecided else "no branch condition held")
        if chosen is None:
            raise TreeError(f"{tree.path}:{tree.line(nid)}: probe {nid} has no branch for these facts and no default")
        shown = {}
        always = node.get("show", [])
        for name in always + node.get("show_known", []):  # show_known: an attached measurement, where one was given
            side, _, fname = name.rpartition(":") if ":" in name else ("target", "", name)
            value = self.lookup(fname, side or "target")
            if name in always or not isinstance(value, Unknown):
                shown[name] = display(fname, value)
        because = self._text(chosen.get("because", ""))
        step = Step(tree.id, nid, "probe", node.get("title", nid), self._text(node.get("why", "")),
                    decision=chosen["next"], because=because, explain=explain, facts=shown, evidence=evidence,
                    next=chosen["next"])
        self.state.steps.append(step)
        self._rule(chosen, because or explain)
        self._goto(chosen["next"])
        return step

    def _conclude(self, tree: Tree, nid: str, node: dict[str, Any]) -> Step:
        concl = conclusion_from_node(tree.id, nid, node, self.lookup, self.facts.has_side, practice=self.engine.practice)
        cause, evidence = concl.cause, concl.evidence
        if not any(c.cause == cause for c in self.state.conclusions):
            self.state.conclusions.append(concl)
        hyp = node.get("hypothesis")
        if hyp and hyp in self.state.hypotheses:
            self.state.hypotheses[hyp].state = "ruled-in"
            shown = [f"{k}={v}" for k, v in list(evidence.items())[:3]]
            self.state.hypotheses[hyp].evidence = f"root cause `{cause}`: " + "; ".join(shown) + \
                ("; …" if len(evidence) > 3 else "")
        step = Step(tree.id, nid, "conclude", concl.title, self._text(node.get("why", "")), decision=cause,
                    because=concl.summary, facts=evidence, next=node.get("next", ""))
        self.state.steps.append(step)
        if node.get("next"):
            self._goto(node["next"])
        else:
            self._return()
        return step


class Engine:
    def __init__(self, trees: dict[str, Tree] | None = None, profile: dict[str, Any] | None = None) -> None:
        self.trees = trees if trees is not None else load_trees()
        self.profile = profile or {}
        self.practice = False  # a practice walk: steps keep their "(case N)" references to the reference cases

    def tree(self, tree_id: str) -> Tree:
        if tree_id not in self.trees:
            raise TreeError(f"unknown tree {tree_id!r}; known: {', '.join(sorted(self.trees))}")
        return self.trees[tree_id]

    def symptoms(self) -> list[Tree]:
        return sorted((t for t in self.trees.values() if t.kind == "entry"), key=lambda t: (t.order, t.id))

    def walk(self, tree_id: str, facts: FactSource) -> Walk:
        return Walk(self, tree_id, facts)


def auto_walk(engine: Engine, tree_id: str, facts: FactSource, answers: dict[str, str] | None = None,
              ask: Callable[[Question], str | None] | None = None,
              on_step: Callable[[Step], None] | None = None) -> Walk:
    """Walk to the end, answering questions from ``answers`` (``node`` or ``tree.node`` -> choice) or ``ask``.

    Raises :class:`MissingAnswer` when a question has no answer and ``ask`` is None or returns None.
    """
    answers = dict(answers or {})
    w = engine.walk(tree_id, facts)
    for _ in range(1000):
        w.run_to_question(on_step)
        cur = w.current()
        if cur is None:
            return w
        tree, nid, node = cur
        choice = answers.get(f"{tree.id}.{nid}") or answers.get(nid)
        assumed = False
        if choice is None and ask is not None:
            choice = ask(Question.of(tree, nid, node))
        if choice is None and node.get("assume"):
            choice, assumed = node["assume"], True
        if choice is None:
            raise MissingAnswer(tree, nid, node)
        w.answer(choice, assumed=assumed)
    raise TreeError("walk did not end")


class MissingAnswer(TreeError):
    def __init__(self, tree: Tree, nid: str, node: dict[str, Any]) -> None:
        self.tree, self.nid, self.node = tree, nid, node
        self.question = Question.of(tree, nid, node)
        choices = ", ".join(f"{c['id']} ({c['label']})" for c in node.get("choices", []))
        super().__init__(f"question {tree.id}.{nid} needs an answer: {node.get('question', '')} "
                         f"-- pass --answer {nid}=CHOICE; choices: {choices}")
