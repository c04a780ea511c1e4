"""Conditions in plain English: the one rendering of a condition's leaf that the app, the CLI report and the
ticket show (``✓ perf.smmu_cmdq_pct = 24.13 (gt 5)`` reads "✓ SMMU command-queue time (share of CPU samples)
is 24.1%, above 5%").

A fact is named by its label in ``decision_trees/fact_labels.yaml``, else by the first clause of its registry
doc, else by its name. :func:`leaf_text` covers every operator of :data:`troubleshooter.diagnosis.conditions.OPS`;
:func:`raw_leaf_text` keeps the terse form for people who write trees.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any

from troubleshooter import locations, yamlio
from troubleshooter.model import facts as factmod
from troubleshooter.model.facts import Unknown, format_value

if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.diagnosis.conditions import Leaf

MARK = {True: "✓", False: "✗", None: "?"}
_labels: dict[str, str] | None = None
_lock = threading.Lock()


def labels() -> dict[str, str]:
    """fact name -> plain label (read once)."""
    global _labels
    with _lock:
        if _labels is None:
            p = locations.trees_dir() / "fact_labels.yaml"
            data = yamlio.load(p) if p.exists() else {}
            raw = data.get("labels", {}) if isinstance(data, dict) else {}
            _labels = {str(k): str(v) for k, v in (raw or {}).items()}
        return _labels


def label(name: str) -> str:
    """A fact's name for people: its label, else the first clause of its doc, else the name itself."""
    found = labels().get(name)
    if found:
        return found
    if name.startswith("env.var."):
        return f"{name[len('env.var.'):]} in this environment"
    if name.startswith("kernel.config."):
        return f"the kernel build option {name[len('kernel.config.'):]}"
    s = _spec(name)
    if s is not None and s.doc and not s.is_pattern:
        first = re.split(r"\s\(|;\s|: (?=[a-z])", s.doc, maxsplit=1)[0].strip()
        if 3 <= len(first) <= 70:
            return first
    return name


def _spec(name: str) -> factmod.FactSpec | None:
    """The registry entry, the parsers' declarations loaded first (a condition may be shown before any parse)."""
    from troubleshooter import parsers

    parsers.load_all()
    return factmod.spec(name)


def evidence_label(key: str) -> str:
    """An evidence key (``perf.smmu_cmdq_pct``, ``host:env.var.NCCL_TOPO_FILE``) as people read it, the
    name kept for whoever greps for it: ``SMMU command-queue time (share of CPU samples) [perf.smmu_cmdq_pct]``."""
    side, _, name = key.rpartition(":") if ":" in key else ("", "", key)
    what = label(name)
    where = f"on the {side}: " if side == "host" else f"on {side}: " if side else ""
    return f"{where}{what}" if what == name else f"{where}{what} [{name}]"


def split_evidence(evidence: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """A conclusion's evidence as people read it: the facts with a value, in order, and then the keys of those this
    run did not collect (shown ``unknown (...)``), for one line after them. A cause read through several signatures
    lists every signature's facts; the ones with values are what decided it (a process listing), the rest would
    have decided it another way (an affinity checker's output) and only crowded the table."""
    known = {k: v for k, v in evidence.items() if not v.startswith("unknown")}
    return known, [k for k in evidence if k not in known]


def uncollected_line(keys: list[str], label=None) -> str:
    """``Not collected here: ...``: the evidence keys :func:`split_evidence` set aside, by their plain names."""
    return "Not collected here: " + "; ".join((label or evidence_label)(k) for k in keys)


def is_yes_no(name: str, *values: Any) -> bool:
    s = _spec(name)
    if s is not None and s.type == "bool":
        return True
    return any(isinstance(v, bool) for v in values)


def value_text(value: Any, unit: str = "") -> str:
    """A value in a sentence: numbers rounded as people say them, empty lists as "none"."""
    if isinstance(value, Unknown):
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and not value.is_integer() and abs(value) < 1e6:
        num = f"{value:.1f}" if abs(value) >= 1 else f"{value:.2g}"
        return format_value(float(num), unit) if unit else num
    if isinstance(value, (list, tuple, set, frozenset, dict)) and not value:
        return "none"
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return format_value(value[0], unit)
    if value is None:
        return "none"
    return format_value(value, unit)


def leaf_text(leaf: Leaf, *, mark: bool = True) -> str:
    """One leaf of a condition as a sentence, led by ✓ (held), ✗ (did not) or ? (could not tell)."""
    name = leaf.fact
    s = _spec(name)
    unit = s.unit if s else ""
    what = label(name)
    where = "" if leaf.side == "target" else f"on the {leaf.side}: " if leaf.side == "host" else f"on {leaf.side}: "
    actual, expected, op, res = leaf.actual, leaf.expected, leaf.op, leaf.result
    a, e = value_text(actual, unit), value_text(expected, unit)
    if isinstance(expected, (list, tuple, set, frozenset)) and op in ("in", "not_in"):
        e = ", ".join(value_text(v, unit) for v in expected) or "none"
    yes_no = is_yes_no(name, actual, expected)
    why = f" ({actual.reason})" if isinstance(actual, Unknown) and actual.reason else ""
    is_list = isinstance(actual, (list, tuple, set, frozenset, dict)) or isinstance(expected, (list, tuple, dict))
    if name.startswith("env.var.") and op in ("exists", "missing"):
        var = name[len("env.var."):]
        text = f"{var} is set here: {a}" if not isinstance(actual, Unknown) else f"{var} is not set here"
    elif op == "exists":
        text = f"{what} is known: {a}" if res else f"{what} could not be established{why}"
    elif op == "missing":
        text = f"{what} is not there{why}" if res else f"{what} is there: {a}"
    elif isinstance(actual, Unknown):
        text = f"{what} is unknown{why}"
    elif isinstance(expected, Unknown):
        text = f"{what} is {a}; the value to compare it with is unknown ({expected.reason})"
    elif yes_no and op in ("eq", "ne") and isinstance(expected, bool):
        text = f"{what}: {a}"
    elif op in ("lt", "le", "gt", "ge"):
        word = {"gt": ("above", "not above"), "ge": ("at least", "below"), "lt": ("below", "not below"),
                "le": ("at most", "above")}[op]
        text = f"{what} is {a}, {word[0] if res else word[1]} {e}" if res is not None else \
            f"{what} is {a}, which cannot be compared with {e}"
    elif op in ("eq", "ne") and is_list:
        text = f"{what}: {a}" + ("" if (res if op == "eq" else not res) else f" (not {e})" if e != "none" else "")
    elif op == "eq":
        text = f"{what} is {a}" if res else f"{what} is {a}, not {e}"
    elif op == "ne":
        text = f"{what} is {a}, not {e}" if res else f"{what} is {a}"
    elif op in ("in", "not_in"):
        inside = (res if op == "in" else not res) if res is not None else None
        text = f"{what} is {a}, " + ("one of" if inside else "not one of") + f" {e}"
    elif op == "contains":
        text = f"{what}: {a}, which include {e}" if res else f"{what}: {a}, without {e}"
    elif op == "matches":
        text = f"{what} ({a}) matches {e!r}" if res else f"{what} ({a}) does not match {e!r}"
    else:  # pragma: no cover - the validator allows no other op
        text = f"{what} {op} {e}: {a}"
    text = where + text
    return f"{MARK[res]} {text}" if mark else text


def raw_leaf_text(leaf: Leaf) -> str:
    """The terse form (``✓ perf.smmu_cmdq_pct = 24.13 (gt 5)``), for tree authors."""
    actual = "unknown" if isinstance(leaf.actual, Unknown) else format_value(leaf.actual)
    side = f"{leaf.side}:" if leaf.side != "target" else ""
    if leaf.op in ("exists", "missing"):
        return f"{side}{leaf.fact} {leaf.op}: {'yes' if leaf.result else 'no'} ({actual})"
    return f"{MARK[leaf.result]} {side}{leaf.fact} = {actual} ({leaf.op} {format_value(leaf.expected)})"


def condense(explain: str, most: int = 4) -> str:
    """A step's explanation as people read it first: the leaves that held (✓) when any did, else the others,
    each once, at most ``most`` of them and a count of the rest."""
    leaves = list(dict.fromkeys(x.strip() for x in (explain or "").split("; ") if x.strip()))
    held = [x for x in leaves if x.startswith("✓")]
    keep = held or leaves
    rest = len(keep) - most
    return "; ".join(keep[:most]) + (f" (+{rest} more)" if rest > 0 else "")
