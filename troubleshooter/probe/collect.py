"""Run sources on a target concurrently and turn their evidence into facts.

The sweep takes about as long as its slowest source, not the sum: each source runs in its own thread with
its own timeout. ``on_event`` receives ``("start", source)`` and ``("done", evidence)`` callbacks so the
TUI can stream progress; it is called from worker threads.
"""

from __future__ import annotations

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
    registry = sources.load_defs()
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
    on_result: Callable[[Evidence], object] | None = None,
) -> dict[str, Evidence]:
    """Run ``srcs`` on ``target``, up to MAX_WORKERS at a time; their evidence by source id, in ``srcs``' order.
    ``on_result`` is called with each evidence in the order they finish, in this thread, while the slower
    commands still run (work of this process that can overlap theirs: parsing what is already there)."""
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
    # up to MAX_WORKERS threads take the sources in order; results are read back in that order. Plain threads,
    # not concurrent.futures (whose import, logging with it, was ~5 ms of `check`'s start-up).
    out: list = [None] * len(srcs)
    finished: list[int] = []  # indices in the order their sources finished; list.append is atomic
    arrived = threading.Condition()
    stop = threading.Event()  # set when the caller gives up: sources not started yet are never started
    nxt = iter(range(len(srcs)))
    lock = threading.Lock()

    def worker() -> None:
        while not stop.is_set():
            with lock:
                i = next(nxt, None)
            if i is None:
                return
            try:
                out[i] = (True, one(srcs[i]))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, as pool.map did
                out[i] = (False, exc)
            with arrived:
                finished.append(i)
                arrived.notify()

    threads = [threading.Thread(target=worker, name=f"probe_{k}") for k in range(min(MAX_WORKERS, len(srcs)))]
    try:
        for t in threads:
            t.start()
        for k in range(len(srcs)):
            with arrived:
                while len(finished) <= k:
                    arrived.wait()
                i = finished[k]
            ok, val = out[i]
            if not ok:
                raise val
            if on_result is not None:
                on_result(val)
        for ok, val in out:
            results[val.source_id] = val
    except BaseException:
        cancel.set()
        stop.set()  # each running probe notices within 0.2 s
        raise
    finally:
        for t in threads:
            if t.ident is not None:
                t.join()
        if own_cancel:
            target.cancel = previous
    return results


class _Failed:
    """Why an evidence gives no facts: its source could not run, or its output did not parse."""

    __slots__ = ("reason", "parse_error")

    def __init__(self, reason: str, parse_error: bool) -> None:
        self.reason = reason
        self.parse_error = parse_error


def parse_one(sid: str, ev: Evidence) -> dict | _Failed | None:
    """The parsed values of one evidence (the only place its text is parsed), or why there are none; ``None``
    when ``sid`` is no known source. Imports the source's parser when it first has output to read: a source
    that was skipped or could not run (no GPU, no HCA) costs its parser's import nothing."""
    src = sources.load_defs().get(sid)
    if src is None:
        return None
    if not ev.ok:
        return _Failed(ev.describe(), False)
    try:
        return parsers.run(src.parser, ev.text)
    except parsers.ParseError as exc:
        return _Failed(str(exc), True)


def merge_into(fs: FactSet, sid: str, ev: Evidence, parsed: dict | _Failed | None, target_label: str = "") -> None:
    """Add what :func:`parse_one` gave for ``sid`` to ``fs`` (a later source's fact of the same name wins)."""
    if parsed is None:
        return
    if isinstance(parsed, _Failed):
        if parsed.parse_error:
            fs.parse_errors[sid] = parsed.reason
        else:
            fs.source_unavailable(sid, parsed.reason)
        return
    fs.update_from(parsed, source=sid, target=target_label or ev.target, at=ev.started_at)


def facts_from(evidence: dict[str, Evidence], side: str = "target", target_label: str = "",
               parsed: dict[str, dict | _Failed | None] | None = None) -> FactSet:
    """Parse every ok evidence with its source's parser (or take ``parsed``'s values for it, parsed already
    from that very evidence); record why the others give no facts. Merged in ``evidence``'s order."""
    fs = FactSet(side)
    for sid, ev in evidence.items():
        merge_into(fs, sid, ev, parsed[sid] if parsed is not None and sid in parsed else parse_one(sid, ev),
                   target_label)
    derived.apply(fs)  # facts computed from several sources' facts
    return fs


class IncrementalFacts:
    """:func:`facts_from` for evidence that grows a few sources at a time (a tree walk): each evidence is
    parsed once, its facts merged into a base set, and only the cheap combiners run again on a copy.

    The result equals ``facts_from(evidence)`` for the same dict: when the evidence is no longer the earlier
    one plus new entries at its end (a source was run again), the base is rebuilt from the parsed values
    already held, re-parsing only the evidence that changed.
    """

    def __init__(self, side: str = "target", target_label: str = "",
                 shared: dict[tuple[str, str], dict | _Failed | None] | None = None) -> None:
        self.side = side
        self.target_label = target_label
        self._parsed: dict[str, tuple[Evidence, dict | _Failed | None]] = {}
        # (source, output) -> parsed values, shared by the sides of one session: the host and the job's
        # container often print the very same text (a comparison runs the same sources on both)
        self._shared = shared if shared is not None else {}
        self._merged: list[tuple[str, Evidence]] = []
        self._base = FactSet(side)

    def _values(self, sid: str, ev: Evidence) -> dict | _Failed | None:
        held = self._parsed.get(sid)
        if held is None or held[0] is not ev:
            # a run again is parsed again (a verify step must see the new output); another side's same text is not
            key = (sid, ev.text) if ev.ok and held is None else None
            if key is not None and key in self._shared:
                values = self._shared[key]
            else:
                values = parse_one(sid, ev)
                if key is not None:
                    self._shared[key] = values
            held = (ev, values)
            self._parsed[sid] = held
        return held[1]

    def update(self, evidence: dict[str, Evidence], target_label: str | None = None) -> FactSet:
        items = list(evidence.items())
        n = len(self._merged)
        if target_label is not None and target_label != self.target_label:
            self.target_label, n = target_label, -1
        if n < 0 or len(items) < n or any(a[0] != b[0] or a[1] is not b[1] for a, b in zip(items, self._merged)):
            self._base, self._merged, n = FactSet(self.side), [], 0
        for sid, ev in items[n:]:
            merge_into(self._base, sid, ev, self._values(sid, ev), self.target_label)
            self._merged.append((sid, ev))
        for sid in [s for s in self._parsed if s not in evidence]:
            del self._parsed[sid]
        fs = self._base.copy()
        derived.apply(fs)
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
    parsed: dict[str, dict | _Failed | None] = {}

    def parse_now(ev: Evidence) -> None:  # the output of the probes done first, while the slow ones still run
        parsed[ev.source_id] = parse_one(ev.source_id, ev)

    evidence = run_sources(target, srcs, params, on_event=on_event, cancel=cancel, on_result=parse_now)
    facts = facts_from(evidence, side=side, target_label=target.label, parsed=parsed)
    return Collection(target, evidence, facts, time.monotonic() - t0)
