"""Causes with sufficient signatures (``decision_trees/causes.yaml``): small sets of facts, any one of which rules
a cause in, so that whatever evidence a user has can reach it even when the tree's path needed other facts.

A signature is a condition in the trees' closed language (:mod:`troubleshooter.diagnosis.conditions`); a fact
that is unknown in one signature never blocks another. :func:`ruled_in` returns, for each cause some signature
rules in, the signature that decided it and its confidence.

A ``possible`` signature rules nothing in: the outputs fit the cause, and fit others as well (nvidia-smi's
"couldn't communicate with the NVIDIA driver" on a host without its module, and inside a job that was given no
GPU). :func:`suspected` returns those; the diagnosis lists each as a hypothesis the outputs point at, with the
cause's ``settle`` command, and never as a root cause.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable

from troubleshooter import locations, yamlio
from troubleshooter.diagnosis import conditions
from troubleshooter.diagnosis.engine import Conclusion, display, fill, plain_text
from troubleshooter.diagnosis.engine.walk import conclusion_from_node

CONFIDENCES = ("confirmed", "likely", "possible")
#: the confidences that rule a cause in
RULE_IN = ("confirmed", "likely")


class CauseError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class Signature:
    name: str
    confidence: str
    when: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Cause:
    id: str
    title: str
    area: str
    summary: str
    signatures: tuple[Signature, ...]
    evidence: tuple[str, ...]
    fix: tuple[dict[str, Any], ...]
    verify: dict[str, Any]
    references: tuple[str, ...]
    node: str = ""  #: TREE.NODE: a conclude node of a tree that holds this cause's title, evidence and fixes
    supersedes: tuple[str, ...] = ()  #: more general causes this one makes redundant when both are found
    settle: str = ""  #: the one command whose output decides a possible signature (required with one)
    #: evidence that the fault was dealt with where it shows at start-up: an earlier output shows the fault, a later
    #: one of the same machine the launch its fix asks for, going past it. Not ruled in then (see _decided, and
    #: service.diagnose's overridden findings, which weigh it on the whole evidence)
    resolved_when: dict[str, Any] | None = None


@dataclasses.dataclass(frozen=True)
class Finding:
    cause: Cause
    signature: Signature
    explain: str


_LOADED: dict[Path, tuple[int, list[Cause]]] = {}


def load(path: Path | None = None) -> list[Cause]:
    """The causes of ``decision_trees/causes.yaml``, read again only when the file changed (every diagnosis
    asks; a walk in the app and each case of the evaluation would otherwise parse the YAML anew)."""
    path = path or locations.trees_dir() / "causes.yaml"
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return []
    held = _LOADED.get(path)
    if held is not None and held[0] == stamp:
        return held[1]
    causes = _load(path)
    _LOADED[path] = (stamp, causes)
    return causes


def _load(path: Path) -> list[Cause]:
    doc = yamlio.load(path)
    out = []
    for i, c in enumerate(doc.get("causes", []) if isinstance(doc, dict) else []):
        where = f"{path}: causes[{i}] ({c.get('id', '?')})"
        sigs = []
        for s in c.get("signatures", []):
            errs = conditions.validate(s.get("when"), f"{where} signature {s.get('name')!r}")
            if errs:
                raise CauseError("; ".join(errs))
            if s.get("confidence", "likely") not in CONFIDENCES:
                raise CauseError(f"{where}: confidence must be one of {CONFIDENCES}")
            sigs.append(Signature(str(s["name"]), str(s.get("confidence", "likely")), dict(s["when"])))
        if not sigs:
            raise CauseError(f"{where}: a cause needs at least one signature")
        if any(sg.confidence == "possible" for sg in sigs) and not str(c.get("settle", "")).strip():
            raise CauseError(f"{where}: a cause with a possible signature needs 'settle', the command that decides it")
        resolved = c.get("resolved_when")
        if resolved is not None:
            errs = conditions.validate(resolved, f"{where} resolved_when")
            if errs:
                raise CauseError("; ".join(errs))
        if not c.get("node") and not c.get("title"):
            raise CauseError(f"{where}: a cause needs a title (or node: TREE.NODE naming its conclude node)")
        out.append(Cause(str(c["id"]), str(c.get("title", "")), str(c.get("area", "")),
                         str(c.get("summary", "")).strip(), tuple(sigs), tuple(c.get("evidence", [])),
                         tuple(dict(f) for f in c.get("fix", [])), dict(c.get("verify", {})),
                         tuple(c.get("references", [])), str(c.get("node", "")), tuple(c.get("supersedes", [])),
                         str(c.get("settle", "")).strip(), dict(resolved) if resolved is not None else None))
    return out


def ruled_in(causes: list[Cause], lookup: Callable[[str, str], Any],
             profile: dict[str, Any] | None = None) -> list[Finding]:
    ev = conditions.Evaluator(lookup, profile)
    return [f for cause in causes if (f := _decided(ev, cause, RULE_IN)) is not None]


def suspected(causes: list[Cause], lookup: Callable[[str, str], Any], profile: dict[str, Any] | None = None,
              ruled: set[str] | frozenset[str] = frozenset()) -> list[Finding]:
    """Causes that only a ``possible`` signature fits (and none of ``ruled``, the causes already found)."""
    ev = conditions.Evaluator(lookup, profile)
    return [f for cause in causes if cause.id not in ruled and (f := _decided(ev, cause, ("possible",))) is not None]


def _decided(ev: conditions.Evaluator, cause: Cause, confidences: tuple[str, ...]) -> Finding | None:
    """The first of the cause's signatures with one of ``confidences`` that holds, confirmed ones tried first
    (whatever their order in the file). A cause whose ``resolved_when`` holds is not ruled in (its possible
    signatures still point at it)."""
    if cause.resolved_when is not None and set(confidences) & set(RULE_IN) \
            and ev.evaluate(cause.resolved_when).value is True:
        return None
    for sig in sorted(cause.signatures, key=lambda s: CONFIDENCES.index(s.confidence)):
        if sig.confidence in confidences:
            r = ev.evaluate(sig.when)
            if r.value is True:
                return Finding(cause, sig, r.explain())
    return None


def conclusion(f: Finding, lookup: Callable[[str, str], Any], has_side: Callable[[str], bool] = lambda s: True,
               trees: dict[str, Any] | None = None) -> Conclusion:
    """The finding as a conclusion of the same shape the tree walk gives (fix commands filled shell-quoted)."""
    how = f" ({f.signature.confidence}: {f.signature.name})"
    if f.cause.node:
        tree_id, _, nid = f.cause.node.partition(".")
        tree = (trees or {}).get(tree_id)
        if tree is None or nid not in tree.nodes:
            raise CauseError(f"cause {f.cause.id}: node {f.cause.node} not found")
        c = conclusion_from_node(tree_id, nid, tree.nodes[nid], lookup, has_side)
        # the facts this door reads, beside the node's own (a bandwidthTest spread is not the node's numastat), the
        # deciding signature's first (iblinkinfo's slow link is not the node's own ports)
        door = dict.fromkeys([n for n, _side in conditions.facts_named(f.signature.when)] + list(f.cause.evidence))
        extra = {name: display(name, lookup(name, "target")) for name in door if name not in c.evidence}
        return dataclasses.replace(c, cause=f.cause.id, summary=c.summary + how, evidence={**extra, **c.evidence})
    evidence = {name: display(name, lookup(name, "target")) for name in f.cause.evidence}
    missing: list[str] = []
    fixes = []
    for fx in f.cause.fix:
        cmd, miss = fill(fx["command"], lookup)
        missing += miss
        fixes.append({"title": fx["title"], "command": cmd, "context": fx.get("context", "any"),
                      "needs": list(fx.get("needs", [])), "note": fx.get("note", "")})
    verify = dict(f.cause.verify)
    if verify.get("command"):
        verify["command"], miss = fill(verify["command"], lookup)
        missing += miss
    summary = plain_text(f.cause.summary) + how
    return Conclusion(f.cause.id, "causes", f.signature.name, f.cause.title, summary, evidence, fixes, verify, "",
                      list(f.cause.references), "", sorted(set(missing)))
