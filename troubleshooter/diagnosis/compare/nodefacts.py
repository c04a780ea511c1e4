"""Node facts from bundles: each node's facts parsed once (a sidecar written on the node, else a parse cache),
loaded in parallel; and Slurm-style host lists.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterator, Sequence

from troubleshooter import locations
from troubleshooter.model.facts import FactSet
from troubleshooter.diagnosis.compare.nodes import NodeComparator, NodeReport, _natural, canonical


# ---------------------------------------------------------------------- node facts from bundles

FACTS_SIDECAR_FORMAT = "troubleshooter-node-facts"


def node_name(path: str | os.PathLike[str]) -> str:
    name = Path(path).name
    for suffix in (".bundle.tar.gz", ".bundle.tgz", ".bundle", ".tar.gz", ".tgz", ".facts.json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def sidecar_path(bundle_path: str | os.PathLike[str]) -> Path:
    p = Path(bundle_path)
    return p.with_name(node_name(p) + ".facts.json")


class _ParseCache:
    """Parsed values by (parser, sha1 of the output): identical outputs (lscpu, nccl.conf, the topology
    file ... on a homogeneous fleet) are parsed once. Bounded (LRU)."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self.data: collections.OrderedDict[tuple[str, str], dict[str, Any] | Exception] = collections.OrderedDict()

    def parse(self, kind: str, stdout: bytes, text_fn) -> dict[str, Any]:
        from troubleshooter import parsers

        key = (kind, hashlib.sha1(stdout).hexdigest())
        got = self.data.get(key)
        if got is None:
            try:
                got = parsers.run(kind, text_fn())
            except parsers.ParseError as exc:
                got = exc
            self.data[key] = got
            if len(self.data) > self.size:
                self.data.popitem(last=False)
        else:
            self.data.move_to_end(key)
        if isinstance(got, Exception):
            raise got
        return got


_CACHE = _ParseCache()


def bundle_facts(path: str | os.PathLike[str], side: str = "target") -> tuple[dict[str, Any], dict[str, str]]:
    """A bundle's facts as plain values, and each source's status (``ok``, ``not-installed`` ...).

    The same parsers and derived facts as ``check --bundle``, minus the provenance, with a parse cache.
    Sources that did not give evidence appear as ``evidence.<source>`` = status, so a node where a tool
    fails stands out from the nodes where it runs.
    """
    from troubleshooter.model import combine as derived
    from troubleshooter import parsers, sources
    from troubleshooter.probe.bundle import Bundle
    from troubleshooter.model.facts import Fact

    registry = sources.load_own()  # a bundle holds the probes' outputs: their own parsers, not every kind
    b = Bundle.open(path)
    if side not in b.sides and b.sides:
        side = b.sides[0]
    fs = FactSet(side)
    status: dict[str, str] = {}
    for sid in b.source_ids(side):
        src = registry.get(sid)
        ev = b.evidence(sid, side)
        if src is None or ev is None:
            continue
        status[sid] = ev.status.value
        if not ev.ok:
            continue
        try:
            values = _CACHE.parse(src.parser, ev.stdout, lambda: ev.text)
        except parsers.ParseError:
            status[sid] = "parse-error"
            continue
        for k, v in values.items():
            fs.add(Fact(k, v, "", sid))
    derived.apply(fs)
    out = fs.as_dict()
    for sid, st in status.items():
        if st != "ok":
            out[f"evidence.{sid}"] = st
    return out, status


def write_sidecar(bundle_path: str | os.PathLike[str]) -> Path:
    """Parse a bundle and write ``<node>.facts.json`` next to it (fanout does this on each node, so the
    comparison reads small JSON files instead of parsing every bundle again)."""
    from troubleshooter import __version__

    p = Path(bundle_path)
    facts, status = bundle_facts(p)
    doc = {"format": FACTS_SIDECAR_FORMAT, "version": 1, "tool": f"troubleshooter {__version__}",
           "bundle": p.name, "bundle_sha256": _file_sha256(p), "status": status, "facts": facts}
    out = sidecar_path(p)
    return locations.write_private(out, json.dumps(doc, default=str, separators=(",", ":")).encode("utf-8"))


def _file_sha256(p: Path) -> str:
    if p.is_dir():
        m = p / "manifest.json"
        return hashlib.sha256(m.read_bytes()).hexdigest() if m.exists() else ""
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _read_sidecar(bundle_path: Path) -> dict[str, Any] | None:
    from troubleshooter import __version__

    sc = sidecar_path(bundle_path)
    try:
        doc = json.loads(sc.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != FACTS_SIDECAR_FORMAT or doc.get("tool") != f"troubleshooter {__version__}":
        return None
    if doc.get("bundle_sha256") != _file_sha256(bundle_path) or not isinstance(doc.get("facts"), dict):
        return None
    return doc


def _load_node(path_str: str, use_sidecar: bool = True) -> tuple[str, dict[str, Any] | None, str]:
    """Worker: (node, canonical facts or None, error). Runs in a subprocess for large fan-outs."""
    from troubleshooter.probe.bundle import BundleError

    p = Path(path_str)
    node = node_name(p)
    try:
        doc = _read_sidecar(p) if use_sidecar else None
        facts = doc["facts"] if doc else bundle_facts(p)[0]
    except (BundleError, OSError, ValueError) as exc:
        return node, None, str(exc)
    except Exception as exc:  # noqa: BLE001 - one odd bundle must not stop the comparison of the others
        return node, None, f"cannot read this bundle ({type(exc).__name__}: {exc})"
    return node, {k: canonical(v) for k, v in facts.items()}, ""


def find_bundles(directory: str | os.PathLike[str]) -> list[Path]:
    d = Path(directory)
    if not d.is_dir():
        raise FileNotFoundError(f"{d}: not a directory of bundles")
    out = [p for p in d.iterdir() if p.name.endswith((".bundle.tar.gz", ".bundle.tgz"))
           or (p.is_dir() and (p / "manifest.json").exists())]
    return sorted(out, key=lambda p: _natural(node_name(p)))



def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, as a cgroup/taskset/Slurm allocation sets it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def iter_node_facts(paths: Sequence[Path], *, workers: int | None = None, use_sidecar: bool = True
                    ) -> Iterator[tuple[str, dict[str, Any] | None, str]]:
    """(node, canonical facts, error) per bundle, streamed; parsed in ``workers`` processes when many."""
    if workers is None:
        # reading the facts sidecars is cheaper than shipping results between processes: one process then
        with_sidecar = use_sidecar and paths and sidecar_path(paths[len(paths) // 2]).exists()
        workers = usable_cpus() if len(paths) >= 64 and not with_sidecar else 1
    if workers <= 1:
        for p in paths:
            yield _load_node(str(p), use_sidecar)
        return
    import concurrent.futures as cf
    import functools
    import multiprocessing

    ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    if ctx is not None:  # forked workers inherit the parsers imported once here instead of importing them each
        from troubleshooter import sources

        sources.load_own()
    with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        yield from pool.map(functools.partial(_load_node, use_sidecar=use_sidecar), [str(p) for p in paths],
                            chunksize=max(1, min(32, len(paths) // (workers * 4) or 1)))


def compare_node_bundles(paths: Sequence[Path], *, workers: int | None = None, use_sidecar: bool = True,
                         failed: Sequence[dict[str, str]] = ()) -> NodeReport:
    """Node-vs-node comparison of bundles, one per node, streamed (only facts are kept)."""
    comp = NodeComparator()
    for node, facts, err in iter_node_facts(paths, workers=workers, use_sidecar=use_sidecar):
        if facts is None:
            comp.add_failed(node, err)
        else:
            comp.add(node, facts, canonicalized=True)
    for f in failed:
        comp.add_failed(f["node"], f["reason"])
    return comp.report()
