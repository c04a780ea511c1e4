"""Sources, one module per family (host, cpu, numa, env, slurm, gpu, fabric, nccl, perf...).

Each module declares its sources at import with :func:`~troubleshooter.sources.base.source`;
:func:`load_all` imports every module here, so a new family needs no list edited.
"""

from __future__ import annotations

import importlib
import pkgutil

from troubleshooter.sources.base import SOURCES, Params, Source, source

__all__ = ["SOURCES", "Params", "Source", "source", "load_all", "load_own", "load_defs", "get", "producers_of"]

_loaded = False
_own_loaded = False
_defs_loaded = False


def load_defs() -> dict[str, Source]:
    """The sources' declarations, without importing the parsers (~25 ms of regular expressions compiled at their
    import): what a sweep needs to start its commands. :func:`load_own` before parsing their output."""
    global _defs_loaded
    if not _defs_loaded and not _loaded:
        from troubleshooter.model import combine as derived  # noqa: F401  (declares its facts, as in load_all)

        for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            if mod.name != "base" and not mod.name.startswith("_"):
                importlib.import_module(f"{__name__}.{mod.name}")
        _defs_loaded = True
    return SOURCES


def load_own() -> dict[str, Source]:
    """The sources with their own parsers imported, not every kind a paste may be (a sweep needs ~35 of ~80; each
    parser compiles its regular expressions at import: all of them was ~70 ms of `check`'s ~290 ms on a 2-core VM).
    The fact registry then holds these parsers' facts only: :func:`load_all` where every fact name must be known."""
    global _own_loaded
    if not _own_loaded and not _loaded:
        from troubleshooter import parsers

        load_defs()
        for src in SOURCES.values():
            try:
                parsers.get(src.parser)
            except KeyError:
                raise ValueError(f"source {src.id!r} names unknown parser {src.parser!r}") from None
        _own_loaded = True
    return SOURCES


def load_all() -> dict[str, Source]:
    """The sources, with every parser imported (the whole fact registry: linting, listing facts, pasted files)."""
    global _loaded
    if not _loaded:
        from troubleshooter import parsers

        load_own()
        parsers.load_all()
        _loaded = True
    return SOURCES


def get(source_id: str) -> Source:
    sources = load_all()
    if source_id not in sources:
        raise KeyError(f"unknown source {source_id!r}")
    return sources[source_id]


def producers_of(fact_name: str) -> list[str]:
    """Ids of the sources whose parser can produce ``fact_name``."""
    import fnmatch

    out = []
    for sid, produced in _facts_index().items():  # a source's own parser is all that says what it produces
        if any(f == fact_name or ("*" in f and fnmatch.fnmatchcase(fact_name, f)) for f in produced):
            out.append(sid)
    return out


# ---------------------------------------------------------------------------- the facts each source's parser declares
# Knowing them (to say why a fact is unknown: "nvml: no GPU") meant importing every source's parser, ~280 regular
# expressions compiled: ~50 ms of `check --json`'s ~360 on a 2-core VM, most of it for sources that could not run
# (no GPU, no HCA) and whose parsers then read nothing. The declarations are kept in the user cache directory
# (source-facts.json), used only while the tool's version, every file of the parsers package (name, size, mtime)
# and the sources' parser kinds are exactly as when they were written; anything else is a miss, and a miss imports
# the parsers (:func:`load_own`) as before. A parser is then imported only when its source has output to read.
_INDEX: dict[str, tuple[str, ...]] | None = None
_INDEX_FROM_PARSERS = False
_INDEX_FORMAT = "troubleshooter-source-facts/1"


def _index_tag(defs: dict[str, Source]) -> str:
    import os

    from troubleshooter import __version__, parsers

    files = sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in os.scandir(parsers.__path__[0])
                   if e.name.endswith(".py"))
    kinds = sorted((sid, src.parser) for sid, src in defs.items())
    return repr((_INDEX_FORMAT, __version__, files, kinds))


def _facts_index() -> dict[str, tuple[str, ...]]:
    global _INDEX, _INDEX_FROM_PARSERS
    fresh = _INDEX is not None and len(_INDEX) == len(SOURCES)  # a source declared since (a test's) is a miss
    if fresh and (_INDEX_FROM_PARSERS or not (_own_loaded or _loaded)):
        return _INDEX
    if _own_loaded or _loaded:  # the parsers are imported already: they say it themselves
        from troubleshooter import parsers

        _INDEX = {sid: parsers.get(src.parser).facts for sid, src in SOURCES.items()}
        _INDEX_FROM_PARSERS = True
        return _INDEX
    import json

    from troubleshooter import locations

    defs = load_defs()
    tag, path = "", None
    try:
        tag = _index_tag(defs)  # a package that cannot be listed (a zip) has no tag: no cache
        path = locations.cache_dir() / "source-facts.json"
        raw = json.loads(path.read_text(encoding="utf-8"))
        if type(raw) is dict and raw.get("tag") == tag and type(raw.get("facts")) is dict:
            got = {sid: tuple(fl) for sid, fl in raw["facts"].items()
                   if type(fl) is list and all(type(f) is str for f in fl)}
            if got.keys() == defs.keys():
                _INDEX = got
                return _INDEX
    except (OSError, ValueError, RecursionError):
        pass
    load_own()
    index = _facts_index()
    if not tag or path is None:
        return index
    try:
        import os

        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"tag": tag, "facts": {sid: list(fl) for sid, fl in index.items()}}),
                       encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written is no cache: the next run imports the parsers again
    return index
