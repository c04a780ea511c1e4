"""Run sources on a target concurrently and turn their evidence into facts.

The sweep takes about as long as its slowest source, not the sum: each source runs in its own thread with
its own timeout. ``on_event`` receives ``("start", source)`` and ``("done", evidence)`` callbacks so the
TUI can stream progress; it is called from worker threads.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import threading
import time
from typing import Callable, Iterable

from troubleshooter.model import combine as derived
from troubleshooter import parsers, sources
from troubleshooter.model.evidence import Evidence, Status
from troubleshooter.model.facts import FactSet
from troubleshooter.sources.base import Params, Source
from troubleshooter.probe.targets import Target

EventCallback = Callable[[str, object], None]
MAX_WORKERS = 16


@dataclasses.dataclass
class Collection:
    target: Target
    evidence: dict[str, Evidence]
    facts: FactSet
    wall_s: float = 0.0

    @property
    def slowest_s(self) -> float:
        return max((e.duration_s for e in self.evidence.values()), default=0.0)


def select(ids: Iterable[str] | None = None, *, measure: bool = False) -> list[Source]:
    """The sources to run: the named ones, or every passive source (and active ones with ``measure``)."""
    registry = sources.load_all()
    if ids is not None:
        return [registry[i] for i in ids if i in registry]
    return [s for s in registry.values() if measure or not s.active]


def run_sources(
    target: Target,
    srcs: list[Source],
    params: Params | None = None,
    *,
    on_event: EventCallback | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, Evidence]:
    params = params or Params()
    results: dict[str, Evidence] = {}

    def one(src: Source) -> Evidence:
        if cancel is not None and cancel.is_set():
            return Evidence(src.id, Status.CANCELLED, reason="cancelled by the user before it ran", target=target.label)
        if on_event:
            on_event("start", src)
        try:
            ev = target.run(src, params)
        except Exception as exc:  # a target bug must not lose the other sources
            ev = Evidence(src.id, Status.ERROR, reason=f"internal error: {type(exc).__name__}: {exc}",
                          started_at=time.time(), target=target.label)
        if on_event:
            on_event("done", ev)
        return ev

    if not srcs:
        return results
    own_cancel = cancel is None
    if cancel is None:
        # Ctrl-C (KeyboardInterrupt in this thread) sets it: the running probes are killed, group and all,
        # instead of the pool waiting for each to finish or time out (up to a minute)
        cancel = threading.Event()
    previous = target.cancel
    target.cancel = cancel
    if on_event is not None:
        target.on_output = lambda sid, chunk: on_event("output", (sid, chunk))
    pool = cf.ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(srcs)), thread_name_prefix="probe")
    try:
        for ev in pool.map(one, srcs):
            results[ev.source_id] = ev
    except BaseException:
        cancel.set()
        pool.shutdown(wait=True, cancel_futures=True)  # each running probe notices within 0.2 s
        raise
    finally:
        pool.shutdown(wait=True)
        if own_cancel:
            target.cancel = previous
    return results


def facts_from(evidence: dict[str, Evidence], side: str = "target", target_label: str = "") -> FactSet:
    """Parse every ok evidence with its source's parser; record why the others give no facts."""
    registry = sources.load_all()
    fs = FactSet(side)
    for sid, ev in evidence.items():
        src = registry.get(sid)
        if src is None:
            continue
        if not ev.ok:
            fs.source_unavailable(sid, ev.describe())
            continue
        try:
            values = parsers.run(src.parser, ev.text)
        except parsers.ParseError as exc:
            fs.parse_errors[sid] = str(exc)
            continue
        fs.update_from(values, source=sid, target=target_label or ev.target, at=ev.started_at)
    derived.apply(fs)  # facts computed from several sources' facts
    return fs


def collect(
    target: Target,
    ids: Iterable[str] | None = None,
    params: Params | None = None,
    *,
    measure: bool = False,
    on_event: EventCallback | None = None,
    cancel: threading.Event | None = None,
    side: str = "target",
) -> Collection:
    t0 = time.monotonic()
    srcs = select(ids, measure=measure)
    if not target.is_live:
        srcs = [s for s in srcs if not s.active] + [s for s in srcs if s.active]
    evidence = run_sources(target, srcs, params, on_event=on_event, cancel=cancel)
    facts = facts_from(evidence, side=side, target_label=target.label)
    return Collection(target, evidence, facts, time.monotonic() - t0)
