"""Fact sources for the walk: live targets or bundles (:class:`LiveFacts`) and canned facts (:class:`CannedFacts`).

``LiveFacts`` runs a source once per side and keeps its evidence (so going back and forth in a tree never
re-runs a probe unless asked: :meth:`LiveFacts.rerun` is the verify step's way).
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Mapping

from troubleshooter.probe import collect
from troubleshooter import sources
from troubleshooter.diagnosis.engine import FactSource
from troubleshooter.model.evidence import Evidence, Status
from troubleshooter.model.facts import Fact, FactSet, Unknown
from troubleshooter.sources.base import Params
from troubleshooter.probe.targets import LocalTarget, Target


class LiveFacts(FactSource):
    def __init__(self, targets: Mapping[str, Target], params: Params | None = None,
                 on_event: Callable[[str, object], None] | None = None, measure: bool = False) -> None:
        self.targets = dict(targets)
        self.params = params or Params()
        self.on_event = on_event
        self.measure = measure
        self.evidence: dict[str, dict[str, Evidence]] = {side: {} for side in self.targets}
        self.factsets: dict[str, FactSet] = {side: FactSet(side) for side in self.targets}
        # each output is parsed once; a step merges only the new ones (see collect.IncrementalFacts)
        shared: dict = {}
        self._incremental = {side: collect.IncrementalFacts(side, t.label, shared) for side, t in self.targets.items()}
        self.cancel = threading.Event()
        self._lock = threading.Lock()

    @classmethod
    def for_target(cls, target: Target, params: Params | None = None, **kw: Any) -> "LiveFacts":
        """The target as the job's side, plus this machine as the host side when the target is elsewhere
        (a container, a job step) or when a bundle captured a host side too."""
        sides: dict[str, Target] = {"target": target}
        if target.kind in ("exec", "slurm"):
            sides["host"] = LocalTarget()
        elif target.kind == "bundle" and "host" in target.bundle.sides:
            from troubleshooter.probe.targets import BundleTarget

            sides["host"] = BundleTarget(target.bundle, side="host")
        return cls(sides, params, **kw)

    def factset(self, side: str) -> FactSet | None:
        return self.factsets.get(side)

    def has_side(self, side: str) -> bool:
        return side in self.targets

    def provides(self, need: str) -> bool:
        """A live target lacks the job's context when it is this machine alone, and a log until one is given;
        a bundle has what it captured (nothing to ask for)."""
        if not self.targets["target"].is_live:
            return True
        if need == "job-context":
            return "host" in self.targets
        if need in ("steps-log", "nccl-log"):
            return bool(self.params.extra.get(need.replace("-", "_")))
        return True

    def with_params(self, params: Params) -> None:
        """New values for the sources (a log given mid-walk): the sources skipped for want of them run again."""
        self.params = params
        with self._lock:
            for side, evs in self.evidence.items():
                registry = sources.load_all()
                for sid in [sid for sid, ev in evs.items() if ev.status is Status.SKIPPED
                            and sid in registry and not registry[sid].missing_params(params)]:
                    del evs[sid]
        for side in self.targets:
            self._reparse(side)

    def retarget(self, target: Target, params: Params) -> "LiveFacts":
        """The facts of a new target (the job's context chosen mid-walk). What this machine's own probes read so
        far is kept as the host side when the new target has one: those probes need not run again."""
        new = LiveFacts.for_target(target, params, on_event=self.on_event, measure=self.measure)
        old = self.targets["target"]
        if old.kind == "local" and "host" in new.targets:
            new.evidence["host"] = dict(self.evidence.get("target", {}))
            new._reparse("host")
        return new

    def ensure(self, source_ids: list[str], side: str = "target") -> dict[str, str]:
        if side not in self.targets:
            return {}
        registry = sources.load_all()
        live = self.targets[side].is_live
        pending = [registry[s] for s in source_ids if s in registry and s not in self.evidence[side]]
        # active measurements only run live when asked (--measure); a bundle replays what it holds
        skipped = [s for s in pending if s.active and live and not self.measure]
        todo = [s for s in pending if s not in skipped]
        if todo:
            got = collect.run_sources(self.targets[side], todo, self.params, on_event=self.on_event, cancel=self.cancel)
            with self._lock:
                self.evidence[side].update(got)
        for s in skipped:
            self.evidence[side][s.id] = Evidence(s.id, Status.SKIPPED, reason="active measurement: run with --measure",
                                                 target=self.targets[side].label)
        if todo or skipped:
            self._reparse(side)
        unknown = [s for s in source_ids if s not in registry]
        out = {s: self.evidence[side][s].describe() for s in source_ids if s in self.evidence[side]}
        out.update({s: "unknown source" for s in unknown})
        return out

    def rerun(self, source_ids: list[str], side: str = "target") -> dict[str, Evidence]:
        """Run sources again (verify after a fix); returns the *previous* evidence for comparison."""
        before = {s: self.evidence[side].pop(s) for s in source_ids if s in self.evidence[side]}
        self.ensure(source_ids, side)
        return before

    def _reparse(self, side: str) -> None:
        with self._lock:
            self.factsets[side] = self._incremental[side].update(self.evidence[side], self.targets[side].label)

    def lookup(self, name: str, side: str = "target") -> Any:
        fs = self.factsets.get(side)
        if fs is None:
            return Unknown(name, f"no {side} side in this session")
        return fs.get_value(name, sources.producers_of(name))

    def all_evidence(self) -> dict[str, dict[str, Evidence]]:
        return self.evidence


class CannedFacts(FactSource):
    """Facts given directly (tree test cases): ``{"target": {name: value}, "host": {...}}``."""

    def __init__(self, sides: Mapping[str, Mapping[str, Any]]) -> None:
        self.factsets: dict[str, FactSet] = {}
        for side, values in sides.items():
            fs = FactSet(side)
            for k, v in (values or {}).items():
                fs.add(Fact(k, v, "", "canned", side, 0.0))
            self.factsets[side] = fs

    def factset(self, side: str) -> FactSet | None:
        return self.factsets.get(side)

    def has_side(self, side: str) -> bool:
        return side in self.factsets

    def ensure(self, source_ids: list[str], side: str = "target") -> dict[str, str]:
        return {s: "canned facts" for s in source_ids} if side in self.factsets else {}

    def lookup(self, name: str, side: str = "target") -> Any:
        fs = self.factsets.get(side)
        if fs is None:
            return Unknown(name, f"no {side} side")
        if name in fs:
            return fs[name].value
        return Unknown(name, "not given in this case")
