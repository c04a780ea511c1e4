"""The diagnose use case, headless: walk a symptom's tree to its end over a fact source (live target, bundle,
pasted files) and build the diagnosis document (redacted) that the CLI prints and exports.

The app walks step by step through :class:`troubleshooter.service.guide.Guide`; both choose the reference profile
with :func:`troubleshooter.diagnosis.profiles.choose`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from troubleshooter import settings
from troubleshooter.diagnosis import causes as causes_mod
from troubleshooter.diagnosis import engine as eng
from troubleshooter.diagnosis import profiles
from troubleshooter.output import compare_text, export
from troubleshooter.output.summary import noted_lines
from troubleshooter.output.redact import Redactor


class DiagnoseError(ValueError):
    """The diagnosis cannot start (no symptom named, say); the message says what to pass."""


def engine_for(profile_id: str | None, facts: eng.FactSource | None = None) -> tuple[eng.Engine, profiles.Profile]:
    """The engine with the reference profile: the one named, else the GPUs' (read first: the thresholds decide
    branches, so they must be the right ones from the first step on), else generic."""
    gpu_names = None
    if facts is not None and not profile_id:
        from troubleshooter import sources

        facts.ensure(list(sources.producers_of("gpu.names")), "target")
        gpu_names = facts.lookup("gpu.names", "target")
    prof = profiles.choose(profile_id, gpu_names)
    return eng.Engine(profile=prof.thresholds), prof


def diagnose(symptom: str | None, facts: eng.FactSource, *, answers: dict[str, str], profile_id: str | None,
             target_desc: dict[str, Any], context: list[str] | None = None,
             ask: Callable[[eng.Question], str | None] | None = None,
             extra: dict[str, Any] | None = None, redact: bool = True,
             practice: bool = False) -> tuple[eng.Walk, dict[str, Any]]:
    """Walk ``symptom``'s tree over ``facts`` and return the walk and the diagnosis document. ``practice``:
    a practice case, whose steps keep their references to the reference cases ("(case 2)")."""
    engine, prof = engine_for(profile_id, facts)
    engine.practice = practice
    if symptom is None:
        raise DiagnoseError("--symptom is required; one of: " + ", ".join(t.id for t in engine.symptoms()))
    tree = engine.tree(symptom)
    walk, assumed = walk_exploring(engine, symptom, facts, answers=answers, ask=ask)
    complete(walk, facts, prof.thresholds, engine.trees)
    if assumed:
        extra = {**(extra or {}), "assumed": assumed}
    noted = noted_lines(facts)
    if noted:
        extra = {**(extra or {}), "noted": noted}
    evidence = {side: {sid: ev.describe() for sid, ev in sorted(evs.items())}
                for side, evs in facts.all_evidence().items()}
    doc = export.diagnosis_doc(symptom={"id": tree.id, "title": tree.title}, target=target_desc, profile=prof.id,
                               steps=walk.steps, hypotheses=walk.hypotheses, conclusions=walk.conclusions,
                               evidence=evidence, missing=facts.missing_for(walk),
                               extra={"context": context or [], **(extra or {})},
                               redactor=Redactor(settings.load().redact_extra, enabled=redact))
    return walk, doc


@dataclasses.dataclass
class NodesDiagnosis:
    """Pasted outputs of several nodes: each node's walk and document (its outputs as the machine diagnosed),
    and the node-vs-node comparison of what their outputs gave."""
    runs: list[tuple[str, eng.Walk, dict[str, Any]]]
    comparison: dict[str, Any]  # troubleshooter.diagnosis.compare.NodeReport.as_dict(), redacted
    lines: list[str]  # the comparison, one line per fact the nodes differ on
    undiagnosed: list[str] = dataclasses.field(default_factory=list)  # beyond MAX_NODE_WALKS kinds of outputs

    @property
    def found(self) -> bool:
        return any(w.conclusions for _, w, _ in self.runs)

    def heading(self) -> str:
        """What the outputs were, in one line: the first line of every form of the result (terminal, ticket, app)."""
        n = self.comparison.get("nodes", len(self.runs))
        return f"Pasted outputs of {n} nodes, each diagnosed as one machine" + (
            "" if len(self.runs) == n else " (nodes whose outputs give the same facts, once)")

    def summaries(self) -> list[tuple[str, str]]:
        """(node or host list, its headline and the causes found there), one per walk, in the order walked; then
        the nodes not diagnosed, if any (under an empty name)."""
        from troubleshooter.diagnosis.compare import hostlist

        out = [(n, d.get("headline", "") + "".join(f"; {c['title']} ({c['cause']})" for c in d.get("conclusions", [])))
               for n, _, d in self.runs]
        if self.undiagnosed:
            out.append(("", f"{len(self.undiagnosed)} more node(s) not diagnosed ({hostlist(self.undiagnosed)}): more "
                            f"than {len(self.runs)} kinds of output in one paste; how they differ is below, and a "
                            "paste of fewer nodes diagnoses them"))
        return out

    def overview(self) -> tuple[list[str], list[str]]:
        """The lines that lead every form of the result: one per node (its headline and causes), then how the
        nodes' outputs differ."""
        each = [f"- {n}: {line}" if n else f"- {line}" for n, line in self.summaries()]
        differ = ["How the nodes' outputs differ:"] + [f"- {ln}" for ln in self.lines] if self.lines else \
            ["The nodes' outputs differ in nothing they both show."]
        return each, differ

    def markdown(self, clean: Callable[[dict[str, Any]], dict[str, Any]] = lambda d: d) -> str:
        """The ticket: the overview, then each node's diagnosis under its heading (its own headings one level
        down). ``clean``: what the emitter does to each document first (redaction that learns its secrets)."""
        each, differ = self.overview()
        parts = [f"# {self.heading()}", "\n".join(each), "\n".join(differ)]
        parts += [f"## {'Nodes' if d.get('alike') else 'Node'} {n}\n\n" + _demote(export.to_markdown(clean(d)))
                  for n, _, d in self.runs]
        return "\n\n".join(parts) + "\n"

    @staticmethod
    def walked_node(name: str, doc: dict[str, Any]) -> str:
        """The node a run's walk diagnosed: the first of its group when nodes gave the same facts."""
        return (doc.get("alike") or [name])[0]

    def doc(self) -> dict[str, Any]:
        """One document: every node's diagnosis, then how the nodes differ (the emitter redacts it as a whole)."""
        return {"schema": "troubleshooter.diagnosis-nodes/1", "kind": "nodes",
                "nodes": [{"node": n, **d} for n, _, d in self.runs],
                "differences": self.lines, "comparison": self.comparison,
                **({"not_diagnosed": self.undiagnosed} if self.undiagnosed else {})}


def _demote(md: str) -> str:
    """A node's ticket inside the nodes' ticket: its headings one level down (never a '#' inside a code block)."""
    out, fenced = [], False
    for line in md.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        out.append("#" + line if line.startswith("#") and not fenced else line)
    return "\n".join(out)


#: walks at most for one paste of many nodes: nodes whose outputs give the same facts are one walk, and a paste with
#: more kinds of output than this has its other nodes compared, not diagnosed (a walk is ~0.1 s)
MAX_NODE_WALKS = 32


def diagnose_nodes(symptom: str | None, facts: Any, *, answers: dict[str, str], profile_id: str | None,
                   target_desc: dict[str, Any], ask: Callable[[eng.Question], str | None] | None = None,
                   extra: dict[str, Any] | None = None, redact: bool = True) -> NodesDiagnosis | None:
    """Pasted outputs named by node (two or more, none of the job's own side): each node diagnosed as one
    machine, with the symptom given (else the one its outputs suggest), and the nodes compared. Nodes whose outputs
    give the same facts are one walk; those with a cause found come first, then those with a node that stands out;
    past MAX_NODE_WALKS kinds of output the other nodes are listed, not walked. None when the outputs are one
    machine's (:func:`diagnose` them as they are)."""
    from troubleshooter.diagnosis import pasted_nodes
    from troubleshooter.diagnosis.compare import hostlist
    from troubleshooter.diagnosis.pasted import infer_symptom

    names = pasted_nodes.node_names(facts)
    if not names:
        return None
    report = pasted_nodes.compare(facts, names)
    runs = []
    groups = pasted_nodes.alike(facts, names, report)  # those with a node that stands out first
    for group in groups[:MAX_NODE_WALKS]:
        n = group[0]  # nodes whose outputs gave the same facts: one walk, said of them all
        one = pasted_nodes.for_node(facts, n)
        who = f"node {n}" if len(group) == 1 else \
            f"nodes {hostlist(group)} ({len(group)} whose outputs give the same facts; diagnosed as {n})"
        label = f"{who}, of {len(names)} nodes pasted: " + ", ".join(
            dict.fromkeys(f.display for f in one.files if f.side == "target"))
        walk, doc = diagnose(symptom or infer_symptom(one), one, answers=answers, profile_id=profile_id,
                             target_desc={**target_desc, "label": label}, ask=ask, extra=extra, redact=redact)
        doc["evidence"] = one.evidence_table()
        if len(group) > 1:
            doc["alike"] = group
        runs.append((n if len(group) == 1 else hostlist(group), walk, doc))
    runs.sort(key=lambda r: not r[1].conclusions)  # the nodes where a cause was found first (stable: odd ones next)
    # redacted here, where it is made: a secret that differs between nodes is a value of a fact named like one
    comparison = Redactor(settings.load().redact_extra, enabled=redact).obj(report.as_dict())
    left = {n for g in groups[MAX_NODE_WALKS:] for n in g}
    rest = [n for n in names if n in left]  # names: in natural order
    return NodesDiagnosis(runs, comparison, compare_text.node_differences(comparison), rest)


MAX_BRANCHES = 16  # walks explored at most when questions go unanswered


def walk_exploring(engine: eng.Engine, symptom: str, facts: eng.FactSource, *, answers: dict[str, str],
                   ask: Callable[[eng.Question], str | None] | None = None
                   ) -> tuple[eng.Walk, list[str]]:
    """Walk to the end. A question nobody answers (no ``--answer``, no terminal, no ``assume:`` in the tree)
    does not stop the diagnosis: every choice is explored (at most MAX_BRANCHES walks), the first choice's walk
    is the one shown step by step, and causes found only under another answer join its conclusions, each saying
    which answer it assumes. Returns the walk and the assumptions made, one line each."""
    pending: list[dict[str, str]] = [dict(answers)]
    walks: list[tuple[eng.Walk, dict[str, str]]] = []
    while pending and len(walks) < MAX_BRANCHES:
        given = pending.pop(0)
        try:
            w = eng.auto_walk(engine, symptom, facts, answers=given, ask=ask)
        except eng.MissingAnswer as exc:
            q = exc.question
            pending[:0] = [{**given, q.key: c.id} for c in q.choices]
            continue
        walks.append((w, given))
    if not walks:  # every branch was cut by the bound: say what to answer
        return eng.auto_walk(engine, symptom, facts, answers=answers, ask=ask), []
    main, main_answers = walks[0]
    assumed = [f"{k} = {v} (not answered; other answers explored too)" for k, v in main_answers.items()
               if k not in answers]
    have = {c.cause for c in main.conclusions}
    for w, given in walks[1:]:
        diff = {k: v for k, v in given.items() if main_answers.get(k) != v}
        for c in w.conclusions:
            if c.cause in have:
                continue
            have.add(c.cause)
            note = ", ".join(f"{k} = {v}" for k, v in diff.items())
            main.conclusions.append(dataclasses.replace(c, summary=f"{c.summary} (if {note})"))
    return main, assumed


def complete(walk: eng.Walk, facts: eng.FactSource, profile: dict[str, Any] | None = None,
             trees: dict[str, eng.Tree] | None = None) -> None:
    """What a finished walk adds from all the evidence, the same for ``diagnose`` and the app's guided walk:
    the causes a sufficient signature rules in, those an earlier output of a side shows, what ``compare --host``
    flags, and the causes the outputs point at without deciding them."""
    add_signature_findings(walk, facts, profile, trees)
    add_overridden_findings(walk, facts, profile, trees)
    add_comparison_findings(walk, facts)
    add_suspected(walk, facts, profile, trees)


def add_signature_findings(walk: eng.Walk, facts: eng.FactSource, profile: dict[str, Any] | None = None,
                           trees: dict[str, eng.Tree] | None = None) -> list[str]:
    """Causes that a sufficient signature rules in (decision_trees/causes.yaml) and the walk did not reach:
    added to the walk's conclusions, each naming the signature that decided it. Returns their ids."""
    lookup = facts.lookup
    added = []
    have = {c.cause for c in walk.conclusions}
    trees = trees if trees is not None else eng.load_trees()
    catalogue = causes_mod.load()
    by_id = {c.id: c for c in catalogue}
    for f in causes_mod.ruled_in(catalogue, lookup, profile):
        if f.cause.id in have:
            continue
        if any(f.cause.id in by_id[c.cause].supersedes for c in walk.conclusions if c.cause in by_id):
            continue  # a more specific cause already found makes this one redundant, whichever the catalogue lists first
        concl = causes_mod.conclusion(f, lookup, facts.has_side, trees)
        walk.conclusions[:] = [c for c in walk.conclusions if c.cause not in f.cause.supersedes]
        walk.conclusions.append(concl)
        added.append(f.cause.id)
        _rule_in(walk, f, trees)
    return added


def add_suspected(walk: eng.Walk, facts: eng.FactSource, profile: dict[str, Any] | None = None,
                  trees: dict[str, eng.Tree] | None = None) -> list[str]:
    """Causes the outputs point at without deciding them (a ``possible`` signature, and no cause found that
    explains the same signal): each becomes a hypothesis in state ``suspected``, first in the list, with the
    command that settles it. Never a root cause. Returns their ids."""
    trees = trees if trees is not None else eng.load_trees()
    have = {c.cause for c in walk.conclusions}
    hyps = walk.state.hypotheses
    added: dict[str, eng.Hypothesis] = {}
    for f in causes_mod.suspected(causes_mod.load(), facts.lookup, profile, ruled=have):
        ids = _hypothesis_ids(f.cause, trees)
        known = [h for h in hyps.values() if h.id in ids]
        if any(h.state == "ruled-in" for h in known):
            continue
        for h in known:
            del hyps[h.id]
        title = known[0].title if known else f.cause.title
        added[f.cause.id] = eng.Hypothesis(f.cause.id, title, "causes", "suspected", f"possible: {f.signature.name}",
                                           f.cause.settle)
    if added:  # first in the list, before the tree's own
        rest = dict(hyps)
        hyps.clear()
        hyps.update({**added, **rest})
    return list(added)


def _hypothesis_ids(cause: causes_mod.Cause, trees: dict[str, eng.Tree]) -> tuple[str, ...]:
    """The hypotheses a cause answers: its own id, and its conclude node's hypothesis when it names one."""
    if not cause.node:
        return (cause.id,)
    tree_id, _, nid = cause.node.partition(".")
    return (trees[tree_id].nodes[nid].get("hypothesis", ""), cause.id)


def _rule_in(walk: eng.Walk, f: causes_mod.Finding, trees: dict[str, eng.Tree], where: str = "") -> None:
    """The hypothesis a finding's cause answers (its own id, or its conclude node's hypothesis) is ruled in."""
    ids = _hypothesis_ids(f.cause, trees)
    for h in walk.hypotheses:
        if h.id in ids and h.state != "ruled-in":
            h.state, h.evidence = "ruled-in", f"{f.signature.confidence}: {f.signature.name}{where}"


def add_overridden_findings(walk: eng.Walk, facts: eng.FactSource, profile: dict[str, Any] | None = None,
                            trees: dict[str, eng.Tree] | None = None) -> list[str]:
    """Pasted outputs of one side that disagree: the last file read stands for the side, so a cause that an
    earlier file shows would go unsaid. The evidence without the later files is weighed again; each cause it
    adds is reported with the file that shows it and the one that disagrees, when the signature that decided it
    reads a fact the two files disagree on."""
    from troubleshooter.diagnosis import conditions
    from troubleshooter.diagnosis.pasted import EvidenceFacts

    if not isinstance(facts, EvidenceFacts):
        return []
    trees = trees if trees is not None else eng.load_trees()
    have = {c.cause for c in walk.conclusions}
    added = []
    for f, diff, later in facts.overridden():
        alone = EvidenceFacts([x for x in facts.files if not any(x is y for y in later)])
        for finding in causes_mod.ruled_in(causes_mod.load(), alone.lookup, profile):
            read = {name for name, _side in conditions.facts_named(finding.signature.when)}
            disputed = sorted(n for n in diff if n in read)
            if finding.cause.id in have or not disputed:
                continue
            resolved = finding.cause.resolved_when
            if resolved is not None and conditions.Evaluator(facts.lookup, profile).evaluate(resolved).value is True:
                continue  # the later output is the launch the fault's fix asks for, gone past it
            concl = causes_mod.conclusion(finding, alone.lookup, alone.has_side, trees)
            note = "; ".join(f"{n}: {diff[n]}" for n in disputed)
            walk.conclusions.append(dataclasses.replace(concl, summary=f"{concl.summary} Shown by {f.path.name}; a "
                                    f"later output of the same machine disagrees ({note}): taken before and after "
                                    "a change, or on two machines?"))
            have.add(finding.cause.id)
            added.append(finding.cause.id)
            _rule_in(walk, finding, trees, f" (shown by {f.path.name})")
    return added


#: Differences between the host and the job's side that causes already explain (their fixes cover them).
EXPLAINED_BY = {"topology-file": "topo-not-in-container", "rdma": "ib-not-visible-in-container"}
CONTAINER_DIFF_CAUSE = "container-differs-from-host"


def add_comparison_findings(walk: eng.Walk, facts: eng.FactSource) -> list[str]:
    """What ``compare --host`` would flag, weighed as evidence: when the session has a host side and a job side,
    the differences that matter to NCCL and the training process (NCCL_* variables, nccl.conf, the topology
    file, RDMA devices, GPUs, the locked-memory limit, a /dev/shm far smaller than the host's) that no cause
    found so far explains become one cause, with a fix per launcher. Returns the keys it reports."""
    from troubleshooter.diagnosis import compare

    if not facts.has_side("host"):
        return []
    facts.ensure(list(compare.HOST_SOURCES), "target")
    facts.ensure(list(compare.HOST_SOURCES), "host")
    host, target = facts.factset("host"), facts.factset("target")
    if host is None or target is None:
        return []
    cmp = compare.host_vs_target(host, target)
    found = {c.cause for c in walk.conclusions}
    open_diffs = [d for d in cmp.diffs if _matters(d) and EXPLAINED_BY.get(d.category) not in found
                  and not (d.fact == "env.var.NCCL_TOPO_FILE" and "topo-not-in-container" in found)]
    if not open_diffs or CONTAINER_DIFF_CAUSE in found:
        return []
    walk.conclusions.append(_container_conclusion(open_diffs))
    return [d.key for d in open_diffs]


def _matters(d: Any) -> bool:
    if d.status == "unknown":
        return False
    if d.matters:
        return True
    if d.fact == "limits.shm_kb" and isinstance(d.host, (int, float)) and isinstance(d.target, (int, float)):
        return d.target < min(d.host, 1 << 20)  # under 1 GiB and smaller than the host's: NCCL's SHM transport
    return False


def _container_conclusion(diffs: list[Any]) -> eng.Conclusion:
    import shlex

    def show(v: Any) -> str:
        return "(absent)" if v is None else str(v)

    evidence = {d.key: f"host {show(d.host)} / job {show(d.target)}" for d in diffs}
    env_diffs = [d for d in diffs if d.category == "env" and d.host is not None]
    env = [d.fact[len("env.var."):] for d in env_diffs]
    fixes: list[dict[str, Any]] = []
    if env:
        pairs = [f"{n}={d.host}" for n, d in zip(env, env_diffs)]
        fixes += [
            {"title": "pyxis: pass the host's NCCL variables into the container", "context": "pyxis", "needs": ["job-script"],
             "note": "", "command": " ".join(f"export {shlex.quote(p)};" for p in pairs)
             + " srun --container-env=" + ",".join(env) + " <your usual srun arguments>"},
            {"title": "docker: pass them with -e", "context": "docker", "needs": ["job-script"], "note": "",
             "command": "docker run " + " ".join(f"-e {shlex.quote(p)}" for p in pairs) + " <image> <command>"},
            {"title": "enroot, for every container on the node", "context": "enroot", "needs": ["root"], "note": "",
             "command": "printf '%s\\n' " + " ".join(shlex.quote(p) for p in pairs)
             + " | sudo tee /etc/enroot/environ.d/60-nccl-host.env"},
        ]
    if any(d.fact == "limits.memlock" for d in diffs):
        fixes.append({"title": "docker: lift the locked-memory limit RDMA needs", "context": "docker", "needs": ["job-script"],
                      "note": "Slurm: PropagateResourceLimits / the job's ulimit -l", "command":
                      "docker run --ulimit memlock=-1:-1 <image> <command>"})
    if any(d.fact == "limits.shm_kb" for d in diffs):
        fixes.append({"title": "docker: a /dev/shm large enough for NCCL", "context": "docker", "needs": ["job-script"],
                      "note": "", "command": "docker run --shm-size=16g <image> <command>"})
    return eng.Conclusion(
        CONTAINER_DIFF_CAUSE, "compare", "host-vs-target",
        f"The job's container does not see what the host sees ({len(diffs)} difference(s) that matter)",
        "The same probes on the host and in the job's context differ in what NCCL and the training process "
        "need: " + ", ".join(d.key for d in diffs) + ". Collectives measured on the host (nccl-tests) then say "
        "nothing about the job.", evidence, fixes,
        {"command": "troubleshooter compare --host --exec '<how you enter the container>'",
         "explain": "run again after the fix: no difference that matters"},
        "Some differences are on purpose (a job that pins NCCL_IB_HCA to a subset); keep those.",
        ["troubleshooter compare --host (docs/comparisons.md)"])
