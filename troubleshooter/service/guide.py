"""A guided session: the walk, its facts, its journal and its exports, for the TUI (and scripts).

The TUI calls these methods from worker threads and shows what they return; it holds no diagnosis logic
of its own. Everything that changes the walk is journaled before it returns.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path
from typing import Any, Callable

from troubleshooter import locations
from troubleshooter.diagnosis import conditions, profiles
from troubleshooter.output import export
from troubleshooter.diagnosis.engine import Conclusion, Engine, Question, Step, Tree, Walk
from troubleshooter.model.facts import Unknown, format_value
from troubleshooter.model import facts as factmod
from troubleshooter.output.redact import Redactor
from troubleshooter.output.summary import noted_lines
from troubleshooter.output.emit import Emitter
from troubleshooter.session import Session, SessionError
from troubleshooter.probe.targetspec import TargetSpec  # noqa: F401  (re-exported: troubleshooter.service.guide.TargetSpec)


_GLOSSARY: dict[str, dict[str, Any]] | None = None  # read once: the walk screen asks for every step


@dataclasses.dataclass
class VerifyResult:
    cause: str
    command: str
    passed: bool | None  # None: could not tell (facts unknown)
    before: dict[str, str]
    after: dict[str, str]
    explain: str
    replay: bool  # the target is a bundle: the same capture was read again


#: what each need asks of the person, and the command line that gives it from the start
NEED_TEXT = {
    "job-context": ("the job's own context (its Slurm job, its container)",
                    "This step compares what the host sees with what the job sees, and this session runs on the host "
                    "alone. Pick the job or container the training runs in: the same probes then run on both sides.",
                    ("troubleshooter --job J [--container-name C]", "troubleshooter --exec 'docker exec NAME'")),
    "steps-log": ("a training log with step times",
                  "This step reads the distribution of step times (steady, bimodal, long tail) from the training "
                  "log (Megatron, NeMo, Lightning, CSV, one time per line).",
                  ("troubleshooter --steps-log FILE",)),
    "nccl-log": ("an NCCL_DEBUG=INFO log of the job",
                 "This step reads which network, plugin and HCAs NCCL really used, from a log of the job run with "
                 "NCCL_DEBUG=INFO.",
                 ("troubleshooter --nccl-log FILE",)),
}


@dataclasses.dataclass(frozen=True)
class Need:
    """What the walk waits for before a step (declared by the tree's ``needs``), for the app to ask."""
    kind: str  # job-context | steps-log | nccl-log
    step: str  # the step's title
    what: str
    why: str
    reruns: tuple[str, ...]  # the command lines that give it from the start

    @property
    def rerun(self) -> str:
        return "   or   ".join(self.reruns)


class Guide:
    def __init__(self, engine: Engine, facts, target, spec: TargetSpec, profile_id: str,
                 session: Session | None = None, redactor: Redactor | None = None, *,
                 profile_explicit: bool = True) -> None:
        self.engine = engine
        self.facts = facts
        self.target = target
        self.spec = spec
        self.profile_id = profile_id
        # not named by the user: chosen from the GPUs seen, before the first probe (as the CLI does)
        self.profile_pending = not profile_explicit
        self.session = session
        self.redactor = redactor or Redactor()
        self.walk: Walk | None = None
        self.symptom: Tree | None = None
        self.verifications: list[VerifyResult] = []
        self.record_problem = ""  # why this walk is not being recorded (a read-only HOME), or ""
        self.practice_case: dict[str, Any] | None = None  # the practice case this walk replays, if any
        # where the gap went: the metric before any fix, the reference, and the value after each fix
        self.metric: dict[str, Any] = {}
        self.measurements: list[tuple[str, float]] = []
        # one thread drives the walk at a time: a walk screen left mid-probe (esc) and opened again waits for it
        self.driving = threading.RLock()
        self.ask_needs = False  # stop before a step whose needs the target lacks (the app asks for them)

    # ------------------------------------------------------------------ construction
    @classmethod
    def for_target(cls, spec: TargetSpec, profile_id: str | None = None, on_event=None,
                   redactor: Redactor | None = None, measure: bool = False) -> "Guide":
        from troubleshooter.diagnosis.workbench import LiveFacts

        target = spec.make()
        facts = LiveFacts.for_target(target, spec.params(), on_event=on_event, measure=measure)
        prof = profiles.choose(profile_id)  # not named: generic until the GPUs are seen (guess_profile)
        return cls(Engine(profile=prof.thresholds), facts, target, spec, prof.id, None, redactor,
                   profile_explicit=bool(profile_id))

    def set_profile(self, profile_id: str) -> None:
        prof = profiles.get(profile_id)
        self.profile_id = prof.id
        self.engine.profile = prof.thresholds

    def guess_profile(self) -> str:
        return profiles.choose(None, self.facts.lookup("gpu.names", "target")).id

    # ------------------------------------------------------------------ walking
    def _evidence_host(self) -> str | None:
        """The host the evidence comes from when it is not this node: a bundle's own (its exports are named
        after the node that was diagnosed, not the laptop that replayed it)."""
        bundle = getattr(self.target, "bundle", None)
        host = bundle.manifest.get("host") if bundle is not None else None
        return host if isinstance(host, str) and host else None

    def begin(self, symptom_id: str, *, record: bool = True, session_dir: Path | None = None) -> None:
        self.symptom = self.engine.tree(symptom_id)
        self.walk = self.engine.walk(symptom_id, self.facts)
        self.walk.stop_at_needs = self.ask_needs
        self.verifications = []
        self.record_problem = ""
        if record:
            try:
                self.session = Session.create({
                    "symptom": symptom_id, "symptom_title": self.symptom.title,
                    "target": dataclasses.asdict(self.spec), "target_label": self.target.label,
                    "profile": None if self.profile_pending else self.profile_id,
                }, session_dir, host=self._evidence_host())
            except SessionError as exc:  # a read-only HOME: walk anyway, unrecorded, and say where and why
                self.session = None
                self.record_problem = (f"this walk is not recorded: {exc} (set TROUBLESHOOTER_DATA_DIR to a "
                                       "writable directory to keep sessions)")

    def current(self) -> tuple[Tree, str, dict[str, Any]] | None:
        return self.walk.current() if self.walk else None

    def question(self) -> Question | None:
        """The question the walk waits on (typed), or None while it runs or when it is done."""
        return self.walk.question() if self.walk else None

    def need(self) -> Need | None:
        """What the walk waits for before its next step (a job's context, a log), or None."""
        if self.walk is None:
            return None
        unmet = self.walk.unmet()
        if not unmet:
            return None
        cur = self.walk.current()
        what, why, reruns = NEED_TEXT[unmet[0]]
        return Need(unmet[0], cur[2].get("title", cur[1]) if cur else "", what, why, reruns)

    def noted(self) -> list[str]:
        """What the outputs say that is no cluster fault, one line each, redacted for the screen."""
        return [self.redactor.text(n) for n in noted_lines(self.facts)]

    def waived(self) -> list[Need]:
        """What the person went on without (the steps that needed it are untested), each with its command line."""
        if self.walk is None:
            return []
        return [Need(k, "", *NEED_TEXT[k]) for k in sorted(self.walk.waived) if k in NEED_TEXT]

    def waive(self, kind: str) -> None:
        """Go on without it: the steps that need it run with what there is, and say what was missing."""
        assert self.walk is not None
        self.walk.waive(kind)
        self._journal({"event": "waive", "need": kind})

    def provide(self, spec: TargetSpec) -> None:
        """Go on with a new target (a job or container chosen, a log given): the walk keeps its steps; the next
        ones run on the new target, with what this machine read so far kept as the host side."""
        assert self.walk is not None
        if hasattr(self.facts, "retarget"):
            if (spec.bundle, spec.job, spec.node, spec.container_name, spec.exec_prefix) != \
                    (self.spec.bundle, self.spec.job, self.spec.node, self.spec.container_name, self.spec.exec_prefix):
                self.target = spec.make()
                self.facts = self.facts.retarget(self.target, spec.params())
                self.walk.facts = self.facts
            else:
                self.facts.with_params(spec.params())
        self.spec = spec
        self._journal({"event": "target", "target": dataclasses.asdict(spec), "target_label": self.target.label})

    @property
    def done(self) -> bool:
        return self.walk is None or self.walk.done

    def answers(self) -> list[tuple[str, str]]:
        if not self.walk:
            return []
        return [(f"{s.tree}.{s.node}", s.decision) for s in self.walk.steps if s.kind == "ask"]

    def answer(self, choice_id: str) -> None:
        assert self.walk is not None
        cur = self.walk.current()
        self.walk.answer(choice_id)
        self._journal({"event": "answer", "node": f"{cur[0].id}.{cur[1]}" if cur else "", "choice": choice_id,
                       "answers": self.answers()})

    def advance(self, on_step: Callable[[Step], None] | None = None) -> Step | None:
        """One step that is not a question (may run probes: call from a worker thread)."""
        assert self.walk is not None
        if self.profile_pending:
            self.profile_pending = False
            self.facts.ensure(["nvml", "nvidia-smi-q"], "target")
            self.set_profile(self.guess_profile())
            self._journal({"event": "profile", "profile": self.profile_id, "from": "the GPUs seen"})
        was_done = self.walk.done
        step = self.walk.advance()
        if self.walk.done and not was_done:
            # the step that finished the walk: what `diagnose` adds to it, so the app and the CLI name the same
            # causes (going back restores a state from before it, and finishing again adds it again)
            from troubleshooter.service.diagnose import complete

            complete(self.walk, self.facts, self.engine.profile, self.engine.trees)
        if step is not None:
            self._journal({"event": "step", "step": step.as_dict()})
            if step.kind in ("conclude", "end") or self.walk.done:
                # raw in the journal (it stays on the node, 0600, like the step events); every export
                # redacts, and `export --no-redact` can then really give the raw values when asked
                self._journal({"event": "snapshot", "doc": self.doc(raw=True)})
            if on_step:
                on_step(step)
        if self.walk.done:
            self._journal({"event": "end"})
        return step

    def run_to_question(self, on_step: Callable[[Step], None] | None = None,
                        cancelled: Callable[[], bool] | None = None) -> None:
        with self.driving:
            self._run_to_question(on_step, cancelled)

    def _run_to_question(self, on_step: Callable[[Step], None] | None,
                         cancelled: Callable[[], bool] | None) -> None:
        for _ in range(1000):
            if self.current() is None or self.question() is not None:
                return
            if self.walk is not None and self.walk.stop_at_needs and self.walk.unmet():
                return  # the app asks for what the next step needs (Guide.need)
            if cancelled is not None and cancelled():
                return
            self.advance(on_step)

    def back(self) -> bool:
        """Back to the previous question (undoing the probes and conclusions after it).

        False when no question has been answered on this walk (at the first question, or a tree that asks
        none): there is nothing to go back to inside the walk, and the walk is left as it is."""
        if not self.walk or not self.walk.can_go_back():
            return False
        if not any(s.kind == "ask" for s in self.walk.steps):
            return False
        self.walk.back_to_last_question()
        self._journal({"event": "back", "answers": self.answers()})
        return True

    def practice_missed(self) -> str:
        """On a practice walk that ended without the case's causes: the lesson (Markdown), else ""."""
        if self.practice_case is None or self.walk is None or not self.walk.done:
            return ""
        from troubleshooter.service.practice import missed

        return missed(self.practice_case, [c.cause for c in self.walk.conclusions], self.answers())

    def glossary_terms(self, step: Step) -> list[tuple[str, str]]:
        """(glossary key, the words the step shows for it) of every glossary term the step's tree text links
        (``[[C-state]]``, ``[[QP|queue pairs]]``), in order, each once: the app marks them and opens them."""
        from troubleshooter.diagnosis.engine import GLOSSARY_LINK, load_glossary

        global _GLOSSARY
        if _GLOSSARY is None:
            _GLOSSARY = load_glossary()
        try:
            node = self.engine.tree(step.tree).nodes.get(step.node, {})
        except Exception:  # noqa: BLE001 - a tree changed under a resumed session: no marks, no error
            return []
        texts: list[str] = []

        def collect(v: Any) -> None:
            if isinstance(v, str):
                texts.append(v)
            elif isinstance(v, dict):
                for x in v.values():
                    collect(x)
            elif isinstance(v, list):
                for x in v:
                    collect(x)

        collect({k: v for k, v in node.items() if k in ("why", "question", "title", "summary", "branches", "choices")})
        out: dict[str, str] = {}
        for t in texts:
            for m in GLOSSARY_LINK.finditer(t):
                key = m.group(1).strip().lower()
                if key in _GLOSSARY and key not in out:
                    out[key] = (m.group(2) or m.group(1)).strip()
        return list(out.items())

    # ------------------------------------------------------------------ results
    def doc(self, *, raw: bool = False) -> dict[str, Any]:
        """The diagnosis document, redacted (``raw=True``: as found, for the local journal only)."""
        assert self.walk is not None and self.symptom is not None
        evidence = {}
        if hasattr(self.facts, "all_evidence"):
            for side, evs in self.facts.all_evidence().items():
                evidence[side] = {sid: ev.describe() for sid, ev in sorted(evs.items())}
        missing = self.facts.missing_for(self.walk) if hasattr(self.facts, "missing_for") else []
        extra: dict[str, Any] = {"verifications": [dataclasses.asdict(v) for v in self.verifications]}
        if self.walk.waived:  # asked for and not given: the ticket says what, and the command lines that give it
            extra["not_given"] = [{"need": n.kind, "what": n.what, "rerun": list(n.reruns)} for n in self.waived()]
        noted = noted_lines(self.facts)
        if noted:  # what the outputs say that is no cluster fault (a harmless warning, the program's own error)
            extra["noted"] = noted
        if self.metric:
            extra["metric"] = dict(self.metric, measurements=[{"after": l, "value": v} for l, v in self.measurements])
            extra["waterfall"] = self.waterfall(ascii=True)
        doc = export.diagnosis_doc(symptom={"id": self.symptom.id, "title": self.symptom.title},
                                   target=self.target.describe(), profile=self.profile_id, steps=self.walk.steps,
                                   hypotheses=self.walk.hypotheses, conclusions=self.walk.conclusions,
                                   evidence=evidence, missing=missing, extra=extra,
                                   redactor=Redactor(enabled=False) if raw else self.redactor)
        if self.session:  # after redaction: the key "session" looks like a secret's name to the redactor
            doc["session"] = self.session.id
        return doc

    def copied(self, command: str) -> None:
        self._journal({"event": "copy", "command": command})

    def verify(self, conclusion: Conclusion) -> VerifyResult:
        """Re-run the verify step's probes and judge its expectation; records before/after."""
        v = conclusion.verify or {}
        srcs = list(v.get("sources", []))
        names = [n for n, _ in conditions.facts_named(v.get("expect", {}))] or \
            [k.split(":", 1)[-1] for k in conclusion.evidence]
        before = {n: self._show(n) for n in names}
        if hasattr(self.facts, "rerun"):
            self.facts.rerun(srcs, "target")
        else:
            self.facts.ensure(srcs, "target")
        after = {n: self._show(n) for n in names}
        passed: bool | None = None
        if v.get("expect"):
            res = conditions.Evaluator(self.facts.lookup, self.engine.profile).evaluate(v["expect"])
            passed = res.value
        replay = not getattr(self.target, "is_live", True)
        result = VerifyResult(conclusion.cause, v.get("command", ""), passed, before, after, v.get("explain", ""), replay)
        self.verifications.append(result)
        self._journal({"event": "verify", **dataclasses.asdict(result)})
        return result

    def set_metric(self, name: str, baseline: float, reference: float | None, unit: str = "") -> None:
        """The number the fixes should move (step time, throughput) before any fix, and its reference."""
        self.metric = {"name": name, "baseline": baseline, "reference": reference, "unit": unit}
        self.measurements = []
        self._journal({"event": "metric", **self.metric})

    def record_measurement(self, label: str, value: float) -> None:
        """The metric measured after a fix (cumulative: after every fix so far)."""
        self.measurements.append((label, float(value)))
        self._journal({"event": "measurement", "label": label, "value": float(value)})

    def waterfall(self, ascii: bool = False) -> str:
        if not self.metric or not self.measurements:
            return ""
        from troubleshooter.diagnosis import compare

        m = self.metric
        return compare.waterfall(self.measurements, m["baseline"], m.get("reference"), unit=m.get("unit", ""),
                                 ascii=ascii, title=f"where the gap went ({m['name']})")

    def _show(self, name: str) -> str:
        val = self.facts.lookup(name, "target")
        if isinstance(val, Unknown):
            return "unknown"
        s = factmod.spec(name)
        return format_value(val, s.unit if s else "")

    def export(self, fmt: str, directory: Path) -> Path:
        doc = self.doc()
        locations.private_dir(directory)
        stem = (self.session.id if self.session else time.strftime("%Y%m%d-%H%M%S")) + f"-{doc['symptom']['id']}"
        em = Emitter(redactor=self.redactor)  # the doc is redacted already; the writer escapes for the format
        if fmt == "md":
            path, data = directory / f"{stem}.md", em.safe(export.to_markdown(doc)).encode()
        elif fmt == "json":
            path, data = directory / f"{stem}.json", (em.json_text(doc, keep={"session"}) + "\n").encode()
        elif fmt == "bundle":
            return self.export_bundle(directory / f"{stem}.bundle.tar.gz")
        else:
            raise ValueError(f"unknown export format {fmt!r}")
        try:  # disk full, read-only: no half-written file left behind, a clear error
            locations.write_private(path, data)
        except OSError as exc:
            why = getattr(exc, "reason", "") or exc.strerror or exc
            raise OSError(exc.errno, f"cannot write the export {path}: {why}") from exc
        self._journal({"event": "export", "format": fmt, "path": str(path)})
        return path

    def export_bundle(self, path: Path) -> Path:
        from troubleshooter.probe import bundle as bmod

        if not hasattr(self.facts, "all_evidence") or not self.facts.all_evidence():
            raise ValueError("no raw evidence in this session to bundle (pasted outputs?)")
        sides = {}
        for side, evs in self.facts.all_evidence().items():
            red = []
            for ev in evs.values():
                ev2 = dataclasses.replace(ev, stdout=self.redactor.bytes(ev.stdout), stderr=self.redactor.bytes(ev.stderr),
                                          argv=self.redactor.argv(ev.argv), reason=self.redactor.text(ev.reason),
                                          target=self.redactor.text(ev.target))
                red.append(ev2)
            # the target's label and description carry its command prefix ("docker exec -e HF_TOKEN=... trainer")
            sides[side] = (self.redactor.obj(self.facts.targets[side].describe()), red)
        manifest, files = bmod.build_manifest(sides, params=self.redactor.obj({"pid": self.spec.pid, **self.spec.extra}),
                                              note=f"session {self.session.id if self.session else '-'}")
        out = bmod.write(path, manifest, files)
        self._journal({"event": "export", "format": "bundle", "path": str(out)})
        return out

    def _journal(self, event: dict[str, Any]) -> None:
        if self.session is not None:
            self.session.append(event)

    # ------------------------------------------------------------------ resume
    @classmethod
    def resume(cls, session: Session, on_event=None, on_step=None, ask_needs: bool = False) -> "Guide":
        """Recreate the target and replay the recorded answers (probes run again on a live target)."""
        start = session.start_event()
        # the target the walk ended on: a job or log given mid-walk (a "target" event) replaces the first one
        last = session.last("target") or start
        spec = TargetSpec(**{k: v for k, v in (last.get("target") or {}).items() if k in TargetSpec.__dataclass_fields__})
        g = cls.for_target(spec, start.get("profile"), on_event=on_event)
        g.session = None  # don't journal the replay itself
        g.ask_needs = ask_needs
        g.begin(start["symptom"], record=False)
        evs, _ = session.events()
        for ev in evs:
            if ev.get("event") == "waive" and g.walk is not None:
                g.walk.waive(str(ev.get("need")))
        for node, choice in session.answers():
            g.run_to_question(on_step)
            q = g.question()
            if q is None or q.key != node:
                break  # the tree changed since; stop at the first divergence
            g.answer(choice)
        g.run_to_question(on_step)
        g.session = session
        session.append({"event": "resume", "answers": g.answers()})
        return g
