"""The diagnose use case, headless: walk a symptom's tree to its end over a fact source (live target, bundle,
pasted files) and build the diagnosis document (redacted) that the CLI prints and exports.

The app walks step by step through :class:`troubleshooter.service.guide.Guide`; both choose the reference profile
with :func:`troubleshooter.diagnosis.profiles.choose`.
"""

from __future__ import annotations

from typing import Any, Callable

from troubleshooter import settings
from troubleshooter.diagnosis import causes as causes_mod
from troubleshooter.diagnosis import engine as eng
from troubleshooter.diagnosis import profiles
from troubleshooter.output import export
from troubleshooter.output.redact import Redactor


class DiagnoseError(ValueError):
    """The diagnosis cannot start (no symptom named, say); the message says what to pass."""


def engine_for(profile_id: str | None, facts: eng.FactSource | None = None) -> tuple[eng.Engine, profiles.Profile]:
    gpu_names = facts.lookup("gpu.names", "target") if facts is not None else None
    prof = profiles.choose(profile_id, gpu_names)
    return eng.Engine(profile=prof.thresholds), prof


def diagnose(symptom: str | None, facts: eng.FactSource, *, answers: dict[str, str], profile_id: str | None,
             target_desc: dict[str, Any], context: list[str] | None = None,
             ask: Callable[[eng.Tree, str, dict[str, Any]], str | None] | None = None,
             extra: dict[str, Any] | None = None, redact: bool = True) -> tuple[eng.Walk, dict[str, Any]]:
    """Walk ``symptom``'s tree over ``facts`` and return the walk and the diagnosis document."""
    engine, prof = engine_for(profile_id, facts)
    if symptom is None:
        raise DiagnoseError("--symptom is required; one of: " + ", ".join(t.id for t in engine.symptoms()))
    tree = engine.tree(symptom)
    walk = eng.auto_walk(engine, symptom, facts, answers=answers, ask=ask)
    add_signature_findings(walk, facts, prof.thresholds)
    evidence = {side: {sid: ev.describe() for sid, ev in sorted(evs.items())}
                for side, evs in facts.all_evidence().items()}
    doc = export.diagnosis_doc(symptom={"id": tree.id, "title": tree.title}, target=target_desc, profile=prof.id,
                               steps=walk.steps, hypotheses=walk.hypotheses, conclusions=walk.conclusions,
                               evidence=evidence, missing=facts.missing_for(walk),
                               extra={"context": context or [], **(extra or {})},
                               redactor=Redactor(settings.load().redact_extra, enabled=redact))
    return walk, doc


def add_signature_findings(walk: eng.Walk, facts: eng.FactSource, profile: dict[str, Any] | None = None) -> list[str]:
    """Causes that a sufficient signature rules in (decision_trees/causes.yaml) and the walk did not reach:
    added to the walk's conclusions, each naming the signature that decided it. Returns their ids."""
    lookup = facts.lookup
    added = []
    have = {c.cause for c in walk.conclusions}
    for f in causes_mod.ruled_in(causes_mod.load(), lookup, profile):
        if f.cause.id in have:
            continue
        walk.conclusions.append(causes_mod.conclusion(f, lookup))
        added.append(f.cause.id)
    return added
