"""Practice that teaches: on a practice case the trainee chooses the next probe, reads what it printed, and is
then shown the expert path's choice, why that probe is the one that discriminates, and a score; at the end
the trainee names the root cause and gets a debrief (the cause, its evidence, the fix, their choices against
the expert path, the whole case).

The expert path is the case's own walk (:func:`troubleshooter.service.diagnose.diagnose` over the practice
bundle). Each probe step of it whose output the trainee has not read yet is one round. The options are the
expert's probe (the first source of the step that the bundle holds) and distractors: other probes the bundle
captured, chosen the same way every time (seeded by the case and the round). Outputs shown are the bundle's
captured text, redacted and with control characters escaped, as every output path is.

The app (``tui/screens/quiz.py``) and the headless ``troubleshooter practice CASE`` both drive :class:`Quiz`.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from troubleshooter import sources
from troubleshooter.diagnosis.plain import condense, label, value_text
from troubleshooter.output.redact import Redactor
from troubleshooter.output.safe import escape_controls
from troubleshooter.probe.targetspec import TargetSpec
from troubleshooter.service.practice import case_intro, practice_bundle_path, practice_case

NOTHING = "nothing-wrong"  # the diagnosis option "nothing is wrong on this node"
OUTPUT_LINES = 40  # lines of a probe's output shown in a round (the whole output is one key away)
DISTRACTORS = 3
DIAGNOSIS_POINTS = 2


@dataclasses.dataclass(frozen=True)
class Option:
    id: str  # "source-id" or "host:source-id"; for the diagnosis, a hypothesis id or NOTHING
    title: str  # what it is, in words
    command: str = ""  # what it runs (a probe)


@dataclasses.dataclass
class Round:
    index: int  # 1-based
    prompt: str
    options: list[Option]
    expert: str  # the expert's option id
    step: Any = None  # the expert walk's probe step (None: the diagnosis round)
    context: list[str] = dataclasses.field(default_factory=list)  # what happened since the last round
    chosen: str = ""
    feedback: "Feedback | None" = None

    @property
    def is_diagnosis(self) -> bool:
        return self.step is None


@dataclasses.dataclass
class Feedback:
    chosen: Option
    correct: bool
    points: int
    output: str  # the chosen probe's captured output (clipped to OUTPUT_LINES), safe to show
    output_full: str
    shows: list[str]  # what the chosen output establishes, in plain words
    expert: Option
    verdict: str  # one line: right / not the expert's choice
    why: list[str]  # why the expert's probe discriminates, what it found


def _side_sid(option_id: str) -> tuple[str, str]:
    side, _, sid = option_id.rpartition(":")
    return (side or "target"), sid


class Quiz:
    """One practice case as rounds of "which probe next?", then "what is the root cause?", then a debrief."""

    def __init__(self, case_id: str, *, redactor: Redactor | None = None) -> None:
        from troubleshooter.diagnosis.workbench import LiveFacts
        from troubleshooter.service.diagnose import diagnose

        self.case = practice_case(case_id)
        self.redactor = redactor or Redactor()
        spec = TargetSpec(bundle=str(practice_bundle_path(self.case)))
        self.target = spec.make()
        self.bundle = self.target.bundle
        self.facts = LiveFacts.for_target(self.target, spec.params())
        self.walk, self.doc = diagnose(self.case["symptom"], self.facts, answers=dict(self.case.get("answers") or {}),
                                       profile_id=self.case.get("profile"), target_desc=self.target.describe(),
                                       practice=True)
        self.registry = sources.load_all()
        self.captured = [f"{side}:{sid}" if side != "target" else sid
                         for side in self.bundle.sides for sid in self.bundle.source_ids(side)
                         if sid in self.registry]
        self.rounds: list[Round] = []
        self._build()
        self.at = 0

    # ------------------------------------------------------------------ building the rounds
    @property
    def title(self) -> str:
        return str(self.case.get("title", self.case["id"]))

    @property
    def intro(self) -> str:
        return case_intro(self.case)

    def option(self, option_id: str) -> Option:
        side, sid = _side_sid(option_id)
        src = self.registry.get(sid)
        where = "on the host: " if side == "host" else ""
        ev = self.bundle.evidence(sid, side)
        cmd = " ".join(ev.argv) if ev is not None and ev.argv else ""
        if cmd.startswith("sh -c") or len(cmd) > 80:  # a script: its summary says what it reads
            cmd = ""
        return Option(option_id, where + (src.summary if src else sid), self._safe(cmd, one_line=True))

    def _build(self) -> None:
        seen: set[str] = set()
        context: list[str] = []
        # a later round's answer is no distractor now (picking the winning probe early is not wrong)
        primaries = {next(iter(s.evidence), "") for s in self.walk.steps if s.kind == "probe"}
        for step in self.walk.steps:
            if step.kind == "ask":
                context.append(f"The team answers “{step.title}”: {step.because.split(': ', 1)[-1]}")
                continue
            if step.kind == "conclude":  # named in the debrief, not before the trainee's own diagnosis
                context.append("The expert has found one cause and keeps checking the other layers: gaps add up.")
                continue
            if step.kind != "probe":
                continue
            wanted = [k for k in step.evidence if k in self.captured]
            primary = next(iter(step.evidence), "")
            if primary not in wanted or primary in seen:
                # the step's main probe was read already (or this case did not capture it): the expert goes on
                context.append(f"The expert also asks “{step.title}” → {step.because or step.decision}")
                continue
            expert = primary
            rng = random.Random(f"{self.case['id']}:{len(self.rounds)}")
            pool = [k for k in self.captured if k not in step.evidence and k not in seen and k not in primaries] or \
                [k for k in self.captured if k not in step.evidence]
            distractors = rng.sample(pool, min(DISTRACTORS, len(pool)))
            ids = [expert, *distractors]
            rng.shuffle(ids)
            n = len(self.rounds) + 1
            self.rounds.append(Round(n, "Which probe do you run next?", [self.option(i) for i in ids], expert,
                                     step, context))
            context = []
            seen.add(expert)
        causes = [h for h in self.walk.hypotheses if h.state == "ruled-in"]
        others = [h for h in self.walk.hypotheses if h.state != "ruled-in"]
        rng = random.Random(f"{self.case['id']}:diagnosis")
        picked = causes + rng.sample(others, min(max(0, 5 - len(causes)), len(others)))
        rng.shuffle(picked)
        options = [Option(h.id, h.title) for h in picked] + [Option(NOTHING, "Nothing is wrong on this node")]
        expert = causes[0].id if causes else NOTHING
        self.rounds.append(Round(len(self.rounds) + 1, "What is the root cause?", options, expert, None, context))

    # ------------------------------------------------------------------ playing
    @property
    def done(self) -> bool:
        return self.at >= len(self.rounds)

    def current(self) -> Round | None:
        return None if self.done else self.rounds[self.at]

    def causes(self) -> set[str]:
        """The hypothesis ids the expert path ruled in (any of them is a right diagnosis)."""
        return {h.id for h in self.walk.hypotheses if h.state == "ruled-in"} or {NOTHING}

    def choose(self, option_id: str) -> Feedback:
        """Answer the current round; returns the feedback and moves on to the next round."""
        r = self.current()
        if r is None:
            raise ValueError("the quiz is over: see the debrief")
        chosen = next((o for o in r.options if o.id == option_id), None)
        if chosen is None:
            raise ValueError(f"no option {option_id!r}; options: {', '.join(o.id for o in r.options)}")
        fb = self._diagnosis_feedback(r, chosen) if r.is_diagnosis else self._probe_feedback(r, chosen)
        r.chosen, r.feedback = option_id, fb
        self.at += 1
        return fb

    def _probe_feedback(self, r: Round, chosen: Option) -> Feedback:
        step = r.step
        expert = next(o for o in r.options if o.id == r.expert)
        correct = chosen.id == r.expert or chosen.id in step.evidence
        full = self.output_of(chosen.id)
        lines = full.splitlines()
        clipped = "\n".join(lines[:OUTPUT_LINES]) + (f"\n… ({len(lines) - OUTPUT_LINES} more lines)"
                                                     if len(lines) > OUTPUT_LINES else "")
        why = [f"The expert asks: {step.title}"]
        if step.why:
            why.append(f"Why this probe: {step.why}")
        found = step.because or step.decision
        why.append(f"What it found: {found}")
        if step.explain:
            why.append(f"Because: {condense(step.explain, 3)}")
        if correct:
            verdict = f"Right: {chosen.title} is the probe that answers “{step.title}”."
        else:
            verdict = (f"Not the expert's choice: {chosen.title} does not answer “{step.title}”. "
                       f"The expert ran {expert.title}.")
        return Feedback(chosen, correct, 1 if correct else 0, clipped, full, self.shows(chosen.id), expert,
                        self._safe(verdict), [self._safe(w) for w in why])

    def _diagnosis_feedback(self, r: Round, chosen: Option) -> Feedback:
        right = self.causes()
        correct = chosen.id in right
        titles = [o.title for o in r.options if o.id in right]
        if correct:
            verdict = f"Right: {chosen.title}."
        elif NOTHING in right:
            verdict = f"Not this one: every check on the expert path came back clean; “{chosen.title}” was ruled out or never indicated."
        else:
            verdict = f"Not this one. The expert path found: {'; '.join(titles)}."
        why = []
        for h in self.walk.hypotheses:
            if h.id == chosen.id and not correct:
                why.append(f"“{h.title}”: {h.evidence or 'nothing on the expert path pointed at it'}")
        for c in self.walk.conclusions:
            why.append(f"{c.title}: {c.summary}")
        expert = next((o for o in r.options if o.id == r.expert), chosen)
        return Feedback(chosen, correct, DIAGNOSIS_POINTS if correct else 0, "", "", [], expert,
                        self._safe(verdict), [self._safe(w) for w in why])

    # ------------------------------------------------------------------ outputs and facts
    def _safe(self, text: str, one_line: bool = False) -> str:
        return escape_controls(self.redactor.text(text), one_line=one_line)

    def output_of(self, option_id: str) -> str:
        """A probe's captured output as the trainee reads it: redacted, control characters escaped."""
        side, sid = _side_sid(option_id)
        ev = self.bundle.evidence(sid, side)
        if ev is None:
            return "(this case did not capture it)"
        text = ev.stdout.decode("utf-8", errors="replace")
        if not text.strip():
            text = f"(no output; {ev.describe()})"
        return self._safe(text.rstrip("\n"))

    def shows(self, option_id: str, limit: int = 6) -> list[str]:
        """What an output establishes, in plain words (the facts read from it, those trees use first)."""
        side, sid = _side_sid(option_id)
        self.facts.ensure([sid], side)
        fs = self.facts.factset(side)
        if fs is None:
            return []
        from troubleshooter.diagnosis.plain import labels

        known = labels()
        names = [n for n in fs if fs[n].source == sid and not _structured(fs[n].value) and label(n) != n]
        names.sort(key=lambda n: (n not in known, n))
        out = []
        for n in names[:limit]:
            f = fs[n]
            out.append(self._safe(f"{label(n)}: {value_text(f.value, f.unit)}", one_line=True))
        if len(names) > limit:
            out.append(f"… and {len(names) - limit} more facts")
        return out

    # ------------------------------------------------------------------ score and debrief
    def score(self) -> tuple[int, int]:
        got = sum(r.feedback.points for r in self.rounds if r.feedback)
        most = sum(DIAGNOSIS_POINTS if r.is_diagnosis else 1 for r in self.rounds)
        return got, most

    def debrief_markdown(self) -> str:
        """The end of the case: the root cause, its evidence and fix, the trainee's path against the expert's,
        the score, the whole story. Safe to show (redacted, escaped)."""
        got, most = self.score()
        out = [f"# Debrief: {self.title}", "", f"**Score: {got} / {most}**", ""]
        if self.walk.conclusions:
            out += ["## Root cause" + ("s" if len(self.walk.conclusions) > 1 else ""), ""]
            from troubleshooter.diagnosis.plain import evidence_label, split_evidence, uncollected_line

            for c in self.walk.conclusions:
                out += [f"### {c.title}", "", c.summary, ""]
                if c.evidence:
                    known, uncollected = split_evidence(c.evidence)
                    out += ["**Evidence**", ""] + [f"- {evidence_label(k)}: {v}" for k, v in known.items()]
                    out += [f"- {uncollected_line(uncollected)}"] if uncollected else []
                    out += [""]
                for fx in c.fixes[:3]:
                    out += [f"**Fix: {fx['title']}**", "", "```sh", fx["command"], "```", ""]
                if c.verify.get("command"):
                    out += ["**Verify**", "", "```sh", c.verify["command"], "```", ""]
        else:
            out += ["## No root cause: this node is healthy", "",
                    "Every layer the expert path checked came back clean. Reading “nothing wrong” is a result too: "
                    "the gap is elsewhere (another node, the workload, the reference itself).", ""]
        out += ["## Your choices and the expert path", "", "| # | the expert asks | you chose | the expert ran | |",
                "|---|---|---|---|---|"]
        for r in self.rounds:
            ask = "What is the root cause?" if r.is_diagnosis else r.step.title
            mine = r.feedback.chosen.title if r.feedback else "-"
            theirs = (", ".join(o.title for o in r.options if o.id in self.causes()) or "nothing wrong") \
                if r.is_diagnosis else next(o.title for o in r.options if o.id == r.expert)
            mark = "✓" if r.feedback and r.feedback.correct else "✗"
            out.append(f"| {r.index} | {_cell(ask)} | {_cell(mine)} | {_cell(theirs)} | {mark} |")
        out.append("")
        story = str(self.case.get("story") or "").strip()
        if story:
            out += ["## The whole case", "", story, ""]
        return self._safe("\n".join(out))


def _structured(value: Any) -> bool:
    """A value that is a record, not a reading (a list of mappings): no sentence shows it well."""
    if isinstance(value, dict):
        return any(isinstance(v, (dict, list)) for v in value.values())
    return isinstance(value, (list, tuple)) and any(isinstance(v, (dict, list, tuple)) for v in value)


def _cell(s: str) -> str:
    return s.replace("|", "/").replace("\n", " ")
