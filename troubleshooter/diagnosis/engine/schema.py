"""Tree files: the node kinds, the schema, its fast check, and loading one tree with file:line errors.
"""

from __future__ import annotations

import dataclasses
import numbers
import re
from pathlib import Path
from typing import Any

from troubleshooter import locations, yamlio

NODE_KINDS = ("ask", "probe", "conclude", "call", "end")
FIX_NEEDS = ("root", "reboot", "bios", "job-script", "hypervisor", "drain", "none")
#: what a probe step needs that the current target may not provide: the job's own context beside the host (a
#: container or job step, to compare the two), a training log with step times, an NCCL_DEBUG=INFO log. A face that
#: can ask (the app) asks for it before the step runs; one that cannot walks on and the step says what was missing.
PROBE_NEEDS = ("job-context", "steps-log", "nccl-log")
#: what a step that needs it must read: the host side (to compare), the step-time source, the NCCL log source
NEED_WANTS = {"job-context": ("host",), "steps-log": ("step-times-log",), "nccl-log": ("nccl-debug-log",)}
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
        "not_applicable": {"type": "array", "items": {"type": "string"}},
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
                "needs": {"type": "array", "items": {"enum": list(PROBE_NEEDS)}},
                "show": {"type": "array", "items": {"type": "string"}},
                # facts shown only when known: measurements a person attaches that no probe of the walk collects
                "show_known": {"type": "array", "items": {"type": "string"}},
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


#: data files beside the trees that are not trees: the preflight checks, the glossary, the causes with their
#: signatures, the Xid catalogue
NOT_TREES = frozenset({"checks.yaml", "glossary.yaml", "causes.yaml", "xid.yaml", "fact_labels.yaml"})


def tree_files(directory: Path | None = None) -> list[Path]:
    d = directory or locations.trees_dir()
    return sorted(p for p in d.glob("*.yaml") if p.name not in NOT_TREES)


