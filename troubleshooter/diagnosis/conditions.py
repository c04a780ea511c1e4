"""Conditions are data: a closed set of operators over facts, evaluated in three-valued logic. No eval.

Grammar (YAML)::

    all: [COND, ...]          true if all true; false if any false; else unknown
    any: [COND, ...]          true if any true; false if all false; else unknown
    not: COND                 unknown stays unknown
    fact: NAME                a leaf; with
      op: eq|ne|lt|le|gt|ge|in|not_in|contains|matches|exists|missing
      value: LITERAL | {profile: KEY} | {fact: NAME, times: K}
      side: target|host|...   which side's facts (default: the primary target)

A leaf over a fact that is unknown is unknown (so a tree must say what to do then), except ``exists`` and
``missing``, which are exactly about that. Every evaluation records its leaves so the UI can say *why*.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Mapping

from troubleshooter.model.facts import Unknown

OPS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "contains", "matches", "exists", "missing")
LOGIC = ("all", "any", "not")


class ConditionError(ValueError):
    pass


@dataclasses.dataclass
class Leaf:
    fact: str
    side: str
    op: str
    expected: Any
    actual: Any
    result: bool | None

    def explain(self) -> str:
        """In plain English (:func:`troubleshooter.diagnosis.plain.leaf_text`): what people read."""
        from troubleshooter.diagnosis.plain import leaf_text

        return leaf_text(self)

    def raw(self) -> str:
        """The terse form for tree authors: ``✓ perf.smmu_cmdq_pct = 24.13 (gt 5)``."""
        from troubleshooter.diagnosis.plain import raw_leaf_text

        return raw_leaf_text(self)


Lookup = Callable[[str, str], Any]  # (fact, side) -> value or Unknown


@dataclasses.dataclass
class Result:
    value: bool | None
    leaves: list[Leaf]

    def explain(self) -> str:
        """Every leaf in plain English, each once, joined with "; " (the app, the CLI and the ticket show this)."""
        return "; ".join(dict.fromkeys(leaf.explain() for leaf in self.leaves))

    def raw(self) -> str:
        return "; ".join(leaf.raw() for leaf in self.leaves)


def validate(cond: Any, where: str = "condition") -> list[str]:
    """Structural errors in a condition (the linter calls this; the evaluator trusts validated input)."""
    errs: list[str] = []
    if not isinstance(cond, Mapping):
        return [f"{where}: a condition must be a mapping, got {type(cond).__name__}"]
    keys = set(cond)
    logic = keys & set(LOGIC)
    if logic:
        if len(keys) != 1:
            return [f"{where}: '{next(iter(logic))}' must be alone in its mapping (found {sorted(keys)})"]
        k = logic.pop()
        if k == "not":
            return validate(cond["not"], f"{where}.not")
        items = cond[k]
        if not isinstance(items, list) or not items:
            return [f"{where}.{k}: must be a non-empty list"]
        for i, c in enumerate(items):
            errs += validate(c, f"{where}.{k}[{i}]")
        return errs
    if "fact" not in cond:
        return [f"{where}: needs 'fact' (or all/any/not)"]
    extra = keys - {"fact", "op", "value", "side"}
    if extra:
        errs.append(f"{where}: unknown keys {sorted(extra)}")
    op = cond.get("op", "exists")
    if op not in OPS:
        errs.append(f"{where}: unknown op {op!r}; ops are {', '.join(OPS)}")
    if op not in ("exists", "missing") and "value" not in cond:
        errs.append(f"{where}: op {op} needs a value")
    if op == "matches" and isinstance(cond.get("value"), str):
        try:
            re.compile(cond["value"])
        except re.error as exc:
            errs.append(f"{where}: bad regular expression {cond['value']!r}: {exc}")
    if op in ("in", "not_in") and not isinstance(cond.get("value"), (list, dict)):
        errs.append(f"{where}: op {op} needs a list value")
    v = cond.get("value")
    if isinstance(v, Mapping):
        times = v.get("times")
        if isinstance(times, Mapping) and set(times) != {"profile"}:
            errs.append(f"{where}: times is a number or {{profile: KEY}}")
        if not (set(v) <= {"profile", "fact", "times", "side"}) or not ({"profile", "fact"} & set(v)):
            errs.append(f"{where}: a value mapping is {{profile: KEY}} or {{fact: NAME, times: K}}")
    return errs


def facts_named(cond: Any) -> list[tuple[str, str]]:
    """Every (fact, side) a condition reads, for the linter and for 'what evidence would settle this'."""
    out: list[tuple[str, str]] = []
    if not isinstance(cond, Mapping):
        return out
    for k in LOGIC:
        if k in cond:
            sub = cond[k]
            for c in (sub if isinstance(sub, list) else [sub]):
                out += facts_named(c)
            return out
    if "fact" in cond:
        out.append((str(cond["fact"]), str(cond.get("side", "target"))))
        v = cond.get("value")
        if isinstance(v, Mapping) and "fact" in v:
            out.append((str(v["fact"]), str(v.get("side", cond.get("side", "target")))))
    return out


def profile_keys(cond: Any) -> list[str]:
    out: list[str] = []
    if not isinstance(cond, Mapping):
        return out
    for k in LOGIC:
        if k in cond:
            sub = cond[k]
            for c in (sub if isinstance(sub, list) else [sub]):
                out += profile_keys(c)
            return out
    v = cond.get("value")
    if isinstance(v, Mapping) and "profile" in v:
        out.append(str(v["profile"]))
    if isinstance(v, Mapping) and isinstance(v.get("times"), Mapping) and "profile" in v["times"]:
        out.append(str(v["times"]["profile"]))
    return out


class Evaluator:
    def __init__(self, lookup: Lookup, profile: Mapping[str, Any] | None = None) -> None:
        self.lookup = lookup
        self.profile = profile or {}

    def evaluate(self, cond: Mapping[str, Any]) -> Result:
        leaves: list[Leaf] = []
        value = self._eval(cond, leaves)
        return Result(value, leaves)

    def _eval(self, cond: Mapping[str, Any], leaves: list[Leaf]) -> bool | None:
        if "all" in cond:
            vals = [self._eval(c, leaves) for c in cond["all"]]
            if any(v is False for v in vals):
                return False
            return None if any(v is None for v in vals) else True
        if "any" in cond:
            vals = [self._eval(c, leaves) for c in cond["any"]]
            if any(v is True for v in vals):
                return True
            return None if any(v is None for v in vals) else False
        if "not" in cond:
            v = self._eval(cond["not"], leaves)
            return None if v is None else not v
        return self._leaf(cond, leaves)

    def resolve(self, value: Any, side: str) -> Any:
        if isinstance(value, Mapping):
            if "profile" in value:
                key = str(value["profile"])
                if key not in self.profile:
                    return Unknown(key, f"profile has no threshold {key!r}")
                return self.profile[key]
            if "fact" in value:
                other = self.lookup(str(value["fact"]), str(value.get("side", side)))
                if isinstance(other, Unknown):
                    return other
                times = self.resolve(value.get("times", 1), side)
                if isinstance(times, Unknown):
                    return times
                try:
                    return float(other) * float(times)
                except (TypeError, ValueError, OverflowError):
                    return other
        return value

    def _leaf(self, cond: Mapping[str, Any], leaves: list[Leaf]) -> bool | None:
        name = str(cond["fact"])
        side = str(cond.get("side", "target"))
        op = cond.get("op", "exists")
        actual = self.lookup(name, side)
        expected = self.resolve(cond.get("value"), side)
        result = _apply(op, actual, expected)
        leaves.append(Leaf(name, side, op, expected, actual, result))
        return result


def _num(x: Any) -> float | None:
    if isinstance(x, bool):
        return float(x)
    if isinstance(x, (int, float)):
        try:
            return float(x)
        except OverflowError:  # an int beyond float range
            return float("inf") if x > 0 else float("-inf")
    if isinstance(x, str):
        try:
            return float(x.strip())
        except ValueError:
            return None
    return None


def _apply(op: str, actual: Any, expected: Any) -> bool | None:
    unknown = isinstance(actual, Unknown)
    if op == "exists":
        return not unknown
    if op == "missing":
        return unknown
    if unknown or isinstance(expected, Unknown):
        return None
    if op in ("eq", "ne"):
        a, e = _num(actual), _num(expected)
        same = (a == e) if (a is not None and e is not None and not isinstance(actual, str) or
                            (isinstance(actual, str) and isinstance(expected, (int, float)) and a is not None)) \
            else _norm(actual) == _norm(expected)
        return same if op == "eq" else not same
    if op in ("lt", "le", "gt", "ge"):
        a, e = _num(actual), _num(expected)
        if a is None or e is None:
            return None
        return {"lt": a < e, "le": a <= e, "gt": a > e, "ge": a >= e}[op]
    if op in ("in", "not_in"):
        if not isinstance(expected, (list, tuple, set, frozenset)):
            return None  # a profile value or fact that is not a list: cannot decide
        members = [_norm(v) for v in expected]
        r = _norm(actual) in members
        return r if op == "in" else not r
    if op == "contains":
        if isinstance(actual, Mapping):
            try:
                return expected in actual
            except TypeError:  # an unhashable value (a list) is never a key
                return None
        if isinstance(actual, (list, tuple, set, frozenset)):
            return _norm(expected) in [_norm(v) for v in actual]
        if isinstance(actual, str):
            return str(expected) in actual
        return None
    if op == "matches":  # a list matches when one of its items does (so ^ and $ anchor to an item)
        try:
            items = actual if isinstance(actual, (list, tuple, set, frozenset)) else [actual]
            return any(re.search(str(expected), str(v)) is not None for v in items)
        except re.error:
            return None
    return None


def _norm(v: Any) -> Any:
    if isinstance(v, str):
        return v.strip().lower()
    return v
