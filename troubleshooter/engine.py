"""Decision trees: loading, validation, and the walk from a symptom to root causes.

A tree file (``decision_trees/*.yaml``; schema in ``decision_trees/SCHEMA.md`` and
:data:`TREE_SCHEMA`) holds one tree: an entry tree for a symptom (``kind: entry``) or a shared subtree
(``kind: subtree``) that entry trees ``call``. Node kinds:

- ``ask``: a question with choices, each with an explanation and a next node.
- ``probe``: run named sources (on the job's side, or also on the host side), then take the first branch
  whose condition is true; ``unknown`` is taken when a condition could not be decided because facts are
  unknown, ``default`` when every condition is false.
- ``conclude``: a root cause with evidence facts, fix commands (templates filled with shell-quoted facts),
  the verify command, caution and references; may continue (``next``) to look for further causes, since
  gaps are cumulative.
- ``call``: walk a subtree, then continue at ``next``.
- ``end``: stop (or return from a subtree).

Branches and choices may ``rule_in`` / ``rule_out`` hypotheses; the walk keeps the hypotheses table.
"""

from __future__ import annotations

import copy
import dataclasses
import numbers
import re
import shlex
from pathlib import Path
from typing import Any, Callable

from troubleshooter import conditions, facts as factmod, locations, yamlio
from troubleshooter.facts import Unknown, format_value

NODE_KINDS = ("ask", "probe", "conclude", "call", "end")
FIX_NEEDS = ("root", "reboot", "bios", "job-script", "hypervisor", "drain", "none")
FIX_CONTEXTS = ("any", "pyxis", "enroot", "docker", "kubernetes", "bare-metal", "vm-host", "slurm")


class TreeError(ValueError):
    """A malformed tree: the message names the file and line."""


# ---------------------------------------------------------------------------- schema
_COND = {"type": "object"}
_BRANCH = {
    "type": "object",
    "required": ["next"],
    "additionalProperties": False,
    "properties": {
        "when": _COND, "next": {"type": "string"}, "because": {"type": "string"},
        "rule_in": {"type": "array", "items": {"type": "string"}},
        "rule_out": {"type": "array", "items": {"type": "string"}},
    },
}
TREE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["id", "version", "kind", "title", "start", "nodes"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "pattern": r"^[a-z0-9][a-z0-9-]*$"},
        "version": {"type": "integer", "minimum": 1},
        "kind": {"enum": ["entry", "subtree"]},
        "title": {"type": "string"},
        "summary": {"type": "string"},
        "why": {"type": "string"},
        "order": {"type": "integer"},
        "start": {"type": "string"},
        "hypotheses": {"type": "array", "items": {
            "type": "object", "required": ["id", "title"], "additionalProperties": False,
            "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "settle": {"type": "string"}},
        }},
        "nodes": {"type": "object", "additionalProperties": {
            "type": "object", "required": ["kind"],
            "properties": {
                "kind": {"enum": list(NODE_KINDS)},
                "title": {"type": "string"}, "why": {"type": "string"},
                "question": {"type": "string"},
                "choices": {"type": "array", "items": {
                    "type": "object", "required": ["id", "label", "next"], "additionalProperties": False,
                    "properties": {"id": {"type": "string"}, "label": {"type": "string"}, "explain": {"type": "string"},
                                   "next": {"type": "string"},
                                   "rule_in": {"type": "array", "items": {"type": "string"}},
                                   "rule_out": {"type": "array", "items": {"type": "string"}}}}},
                "assume": {"type": "string"},
                "sources": {"type": "array", "items": {"type": "string"}},
                "sides": {"type": "array", "items": {"enum": ["target", "host"]}},
                "show": {"type": "array", "items": {"type": "string"}},
                "signal": {"type": "string"},
                "branches": {"type": "array", "items": _BRANCH},
                "unknown": _BRANCH, "default": _BRANCH,
                "cause": {"type": "string"}, "hypothesis": {"type": "string"},
                "summary": {"type": "string"},
                "evidence": {"type": "array", "items": {"type": "string"}},
                "fix": {"type": "array", "items": {
                    "type": "object", "required": ["title", "command"], "additionalProperties": False,
                    "properties": {"title": {"type": "string"}, "command": {"type": "string"},
                                   "context": {"enum": list(FIX_CONTEXTS)},
                                   "needs": {"type": "array", "items": {"enum": list(FIX_NEEDS)}},
                                   "note": {"type": "string"}}}},
                "verify": {"type": "object", "required": ["command"], "additionalProperties": False,
                           "properties": {"command": {"type": "string"}, "sources": {"type": "array", "items": {"type": "string"}},
                                          "expect": _COND, "explain": {"type": "string"}}},
                "caution": {"type": "string"},
                "references": {"type": "array", "items": {"type": "string"}},
                "recovered": {"type": "string"},
                "tree": {"type": "string"},
                "next": {"type": "string"},
            },
        }},
    },
}


@dataclasses.dataclass
class Tree:
    id: str
    kind: str
    title: str
    summary: str
    start: str
    nodes: dict[str, dict[str, Any]]
    hypotheses: list[dict[str, str]]
    path: Path
    version: int
    why: str = ""
    order: int = 100

    def line(self, node_id: str) -> int | None:
        return yamlio.line_of(self.nodes.get(node_id))


# ---------------------------------------------------------------------------- the schema check, fast
# jsonschema costs ~50 ms to import and ~10 ms to check the shipped trees, at every start of the app (the start
# screen lists the symptoms). _conforms() decides the same question for the keywords TREE_SCHEMA uses, with
# jsonschema's Draft 2020-12 semantics, in well under a millisecond; jsonschema runs only for a tree it rejects,
# to word the errors (and a tree only loads when jsonschema finds none, so the fast check can only be stricter).
_SCHEMA_KEYWORDS = frozenset({"type", "required", "additionalProperties", "properties", "enum", "pattern",
                              "minimum", "items"})


def _is_type(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "integer":  # jsonschema: bools are not integers; 1.0 is one
        return not isinstance(value, bool) and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))
    return False  # a type TREE_SCHEMA does not use: let jsonschema decide


def _conforms(value: Any, schema: dict[str, Any]) -> bool:
    """``value`` is valid against ``schema`` (a subset of JSON Schema: the keywords of TREE_SCHEMA)."""
    t = schema.get("type")
    if t is not None and not _is_type(value, t):
        return False
    enum = schema.get("enum")
    if enum is not None and not (isinstance(value, str) and value in enum):  # TREE_SCHEMA's enums hold strings only
        return False
    if isinstance(value, str):
        pattern = schema.get("pattern")
        if pattern is not None and re.search(pattern, value) is None:
            return False
    minimum = schema.get("minimum")
    if minimum is not None and isinstance(value, numbers.Number) and not isinstance(value, bool) and value < minimum:
        return False
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                return False
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            sub = props.get(key) if isinstance(key, str) else None
            if sub is not None:
                if not _conforms(item, sub):
                    return False
            elif extra is False:
                return False
            elif isinstance(extra, dict) and not _conforms(item, extra):
                return False
    elif isinstance(value, list):
        items = schema.get("items")
        if items is not None:
            for item in value:
                if not _conforms(item, items):
                    return False
    return True


def _schema_keywords(schema: Any) -> set[str]:
    """Every keyword used anywhere in ``schema`` (the test that _conforms covers TREE_SCHEMA reads it)."""
    out: set[str] = set()
    if isinstance(schema, dict):
        out |= set(schema)
        for key, sub in schema.items():
            if key == "properties":
                for s in sub.values():
                    out |= _schema_keywords(s)
            elif key in ("additionalProperties", "items"):
                out |= _schema_keywords(sub)
    return out


def _schema_errors(data: Any, path: Path) -> list[str]:
    if _conforms(data, TREE_SCHEMA):
        return []
    import jsonschema

    v = jsonschema.Draft202012Validator(TREE_SCHEMA)
    out = []
    for err in sorted(v.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        obj: Any = data
        line = yamlio.line_of(data)
        for part in err.absolute_path:
            try:
                obj = obj[part]
            except (KeyError, IndexError, TypeError):
                break
            line = yamlio.line_of(obj) or line
        where = "/".join(map(str, err.absolute_path)) or "(top)"
        out.append(f"{path}:{line or '?'}: {where}: {err.message}")
    return out


def _load_doc(path: Path) -> Any:
    """A tree file's document, parsed and checked against the schema (TreeError naming file and line)."""
    try:
        data = yamlio.load(path)
    except yamlio.YamlError as exc:
        raise TreeError(str(exc)) from None
    errs = _schema_errors(data, path)
    if errs:
        raise TreeError("\n".join(errs))
    return data


def _tree_of(data: Any, path: Path) -> Tree:
    return Tree(
        id=data["id"], kind=data["kind"], title=data["title"], summary=data.get("summary", ""),
        start=data["start"], nodes=dict(data["nodes"]), hypotheses=list(data.get("hypotheses", [])),
        path=path, version=int(data["version"]), why=data.get("why", ""), order=int(data.get("order", 100)),
    )


def load_tree(path: Path) -> Tree:
    return _tree_of(_load_doc(path), path)


def tree_files(directory: Path | None = None) -> list[Path]:
    d = directory or locations.trees_dir()
    return sorted(p for p in d.glob("*.yaml") if p.name not in ("checks.yaml", "glossary.yaml"))


# ---------------------------------------------------------------------------- the checked-trees cache
# Parsing and checking the shipped trees costs ~20 ms, at every start of the app and of most verbs. The
# documents of a set of trees that loaded without an error are kept in the user cache directory
# (locations.cache_dir(), trees.json), as JSON, under a key that is a digest of the tool's version, this module's
# and yamlio's source, and every tree file's path and bytes: any change to any of them is a miss, and a miss is
# the uncached load, errors and all. Only the default trees directory is cached; a cache that cannot be read,
# written or decoded is ignored. A document holding anything JSON does not carry exactly (a key that is not a
# string, a date, a set) is not cached.
_CACHE_FORMAT = "troubleshooter-trees-cache/1"
_LINE_KEY = "\x00line"


def _cache_key(files: list[Path]) -> str | None:
    import hashlib

    from troubleshooter import __version__

    h = hashlib.sha256(f"{_CACHE_FORMAT}\0{__version__}\0".encode())
    try:
        for src in (Path(__file__), Path(yamlio.__file__)):
            h.update(src.read_bytes())
        for p in files:
            data = p.read_bytes()
            h.update(f"\0{p}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
            h.update(data)
    except OSError:
        return None
    return h.hexdigest()


def _encode_doc(obj: Any) -> Any:
    """A parsed document as JSON-ready data, each mapping's line under _LINE_KEY; TypeError if not exact."""
    if type(obj) is yamlio.LineDict:
        out: dict[str, Any] = {_LINE_KEY: obj.line}
        for k, v in obj.items():
            if type(k) is not str or k == _LINE_KEY:
                raise TypeError(f"key {k!r}")
            out[k] = _encode_doc(v)
        return out
    if type(obj) is list:
        return [_encode_doc(v) for v in obj]
    if obj is None or type(obj) in (str, int, float, bool):
        return obj
    raise TypeError(type(obj).__name__)


def _decode_mapping(d: dict[str, Any]) -> yamlio.LineDict:
    line = d.pop(_LINE_KEY)
    out = yamlio.LineDict(d)
    out.line = line
    return out


def _cached_docs(key: str) -> list[tuple[str, Any]] | None:
    import json

    try:
        raw = json.loads((locations.cache_dir() / "trees.json").read_text(encoding="utf-8"),
                         object_hook=_decode_mapping)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    if not isinstance(raw, list) or len(raw) != 3 or raw[0] != _CACHE_FORMAT or raw[1] != key:
        return None
    docs = raw[2]
    if not isinstance(docs, list) or not all(isinstance(d, list) and len(d) == 2 and isinstance(d[0], str)
                                             for d in docs):
        return None
    return [(d[0], d[1]) for d in docs]


def _store_docs(key: str, docs: list[tuple[str, Any]]) -> None:
    import json
    import os

    try:
        text = json.dumps([_CACHE_FORMAT, key, [[p, _encode_doc(d)] for p, d in docs]], separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return
    try:
        d = locations.cache_dir()
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f"trees.json.{os.getpid()}.partial"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, d / "trees.json")
    except OSError:
        pass


def load_trees(directory: Path | None = None) -> dict[str, Tree]:
    files = tree_files(directory)
    key = _cache_key(files) if directory is None and files else None
    cached = _cached_docs(key) if key else None
    if cached is not None and [p for p, _ in cached] == [str(p) for p in files]:
        docs = [(p, d) for p, (_, d) in zip(files, cached)]
    else:
        docs = None
    trees: dict[str, Tree] = {}
    errors: list[str] = []
    loaded: list[tuple[str, Any]] = []
    for i, p in enumerate(files):
        try:
            if docs is not None:
                data = docs[i][1]
            else:
                data = _load_doc(p)
                loaded.append((str(p), data))
            t = _tree_of(data, p)
        except TreeError as exc:
            errors.append(str(exc))
            continue
        if t.id in trees:
            errors.append(f"{p}: tree id {t.id!r} also used by {trees[t.id].path}")
        trees[t.id] = t
    if errors:
        raise TreeError("\n".join(errors))
    if not trees:
        raise TreeError(f"no decision trees found in {directory or locations.trees_dir()} (a broken install?)")
    if key and docs is None and _cache_key(files) == key:  # the files did not change while being read
        _store_docs(key, loaded)
    return trees


def load_glossary(directory: Path | None = None) -> dict[str, dict[str, Any]]:
    p = (directory or locations.trees_dir()) / "glossary.yaml"
    if not p.exists():
        return {}
    data = yamlio.load(p)
    terms = data.get("terms", {}) if isinstance(data, dict) else {}
    return {str(k).lower(): dict(v, term=str(k)) for k, v in terms.items()}


GLOSSARY_LINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")


def strip_links(text: str) -> str:
    """'[[C-state]]' -> 'C-state', '[[QP|queue pairs]]' -> 'queue pairs'."""
    return GLOSSARY_LINK.sub(lambda m: m.group(2) or m.group(1), text or "")


def linked_terms(text: str) -> list[str]:
    return [m.group(1).strip() for m in GLOSSARY_LINK.finditer(text or "")]


# ---------------------------------------------------------------------------- templates
_TEMPLATE = re.compile(r"\{(?:(host|target):)?([a-z][\w.*-]*)\}")


def template_facts(text: str) -> list[tuple[str, str]]:
    return [(m.group(2), m.group(1) or "target") for m in _TEMPLATE.finditer(text or "")]


def fill(template: str, lookup: Callable[[str, str], Any]) -> tuple[str, list[str]]:
    """Fill ``{fact}`` / ``{host:fact}`` with shell-quoted values. Returns the text and the facts missing."""
    missing: list[str] = []

    def sub(m: re.Match) -> str:
        side = m.group(1) or "target"
        v = lookup(m.group(2), side)
        if isinstance(v, Unknown) or v is None:
            missing.append(m.group(2))
            return f"<{m.group(2)}>"
        if isinstance(v, (list, tuple)):
            v = ",".join(str(x) for x in v)
        elif isinstance(v, bool):
            v = "1" if v else "0"
        return shlex.quote(str(v))

    return _TEMPLATE.sub(sub, template or ""), missing


def display(name: str, value: Any) -> str:
    """A fact's value for people: unknown env vars read as unset; other unknowns keep their reason."""
    if isinstance(value, Unknown):
        if name.startswith(("env.var.", "nccl_conf.var.", "kernel.")) and value.reason.startswith("not in the output"):
            return "(not set)"
        return str(value)
    s = factmod.spec(name)
    return format_value(value, s.unit if s else "")


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


HYP_STATES = ("untested", "ruled-in", "ruled-out")


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
        self.state.steps.append(Step(tree.id, nid, "ask", node.get("question", nid), strip_links(node.get("why", "")),
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
        if kind == "ask":
            return None
        self._snapshot()
        if kind == "end":
            step = Step(tree.id, nid, "end", node.get("title", "end"), strip_links(node.get("why", "")))
            self.state.steps.append(step)
            self._return()
        elif kind == "call":
            sub = self.engine.tree(node["tree"])
            self._add_hypotheses(sub)
            step = Step(tree.id, nid, "call", node.get("title", sub.title), strip_links(node.get("why", sub.why)),
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
        if chosen is None and undecided and "unknown" in node:
            chosen, explain = node["unknown"], "; ".join(undecided)
        if chosen is None:
            chosen = node.get("default") or node.get("unknown")
            explain = explain or ("; ".join(undecided) if undecided else "no branch condition held")
        if chosen is None:
            raise TreeError(f"{tree.path}:{tree.line(nid)}: probe {nid} has no branch for these facts and no default")
        shown = {}
        for name in node.get("show", []):
            side, _, fname = name.rpartition(":") if ":" in name else ("target", "", name)
            shown[name] = display(fname, self.lookup(fname, side or "target"))
        because = chosen.get("because", "")
        step = Step(tree.id, nid, "probe", node.get("title", nid), strip_links(node.get("why", "")),
                    decision=chosen["next"], because=because, explain=explain, facts=shown, evidence=evidence,
                    next=chosen["next"])
        self.state.steps.append(step)
        self._rule(chosen, because or explain)
        self._goto(chosen["next"])
        return step

    def _conclude(self, tree: Tree, nid: str, node: dict[str, Any]) -> Step:
        evidence = {}
        for name in node.get("evidence", []):
            side, fname = (name.split(":", 1) if ":" in name else ("target", name))
            if side != "target" and not self.facts.has_side(side):
                continue  # this session has no such side: nothing to show, nothing missing
            evidence[name] = display(fname, self.lookup(fname, side))
        missing: list[str] = []
        fixes = []
        for fx in node.get("fix", []):
            cmd, miss = fill(fx["command"], self.lookup)
            missing += miss
            fixes.append({"title": fx["title"], "command": cmd, "context": fx.get("context", "any"),
                          "needs": list(fx.get("needs", [])), "note": fx.get("note", "")})
        verify = dict(node.get("verify", {}))
        if verify:
            verify["command"], miss = fill(verify["command"], self.lookup)
            missing += miss
        cause = node.get("cause", nid)
        concl = Conclusion(cause, tree.id, nid, node.get("title", cause), strip_links(node.get("summary", "")),
                           evidence, fixes, verify, strip_links(node.get("caution", "")), list(node.get("references", [])),
                           node.get("recovered", ""), sorted(set(missing)))
        if not any(c.cause == cause for c in self.state.conclusions):
            self.state.conclusions.append(concl)
        hyp = node.get("hypothesis")
        if hyp and hyp in self.state.hypotheses:
            self.state.hypotheses[hyp].state = "ruled-in"
            shown = [f"{k}={v}" for k, v in list(evidence.items())[:3]]
            self.state.hypotheses[hyp].evidence = f"root cause `{cause}`: " + "; ".join(shown) + \
                ("; …" if len(evidence) > 3 else "")
        step = Step(tree.id, nid, "conclude", concl.title, strip_links(node.get("why", "")), decision=cause,
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

    def tree(self, tree_id: str) -> Tree:
        if tree_id not in self.trees:
            raise TreeError(f"unknown tree {tree_id!r}; known: {', '.join(sorted(self.trees))}")
        return self.trees[tree_id]

    def symptoms(self) -> list[Tree]:
        return sorted((t for t in self.trees.values() if t.kind == "entry"), key=lambda t: (t.order, t.id))

    def walk(self, tree_id: str, facts: FactSource) -> Walk:
        return Walk(self, tree_id, facts)


def auto_walk(engine: Engine, tree_id: str, facts: FactSource, answers: dict[str, str] | None = None,
              ask: Callable[[Tree, str, dict[str, Any]], str | None] | None = None,
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
            choice = ask(tree, nid, node)
        if choice is None and node.get("assume"):
            choice, assumed = node["assume"], True
        if choice is None:
            raise MissingAnswer(tree, nid, node)
        w.answer(choice, assumed=assumed)
    raise TreeError("walk did not end")


class MissingAnswer(TreeError):
    def __init__(self, tree: Tree, nid: str, node: dict[str, Any]) -> None:
        self.tree, self.nid, self.node = tree, nid, node
        choices = ", ".join(f"{c['id']} ({c['label']})" for c in node.get("choices", []))
        super().__init__(f"question {tree.id}.{nid} needs an answer: {node.get('question', '')} "
                         f"-- pass --answer {nid}=CHOICE; choices: {choices}")
