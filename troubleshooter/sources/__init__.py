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

    from troubleshooter import parsers

    out = []
    for src in load_own().values():  # a source's own parser is all that says what it produces
        p = parsers.PARSERS[src.parser]
        if any(f == fact_name or ("*" in f and fnmatch.fnmatchcase(fact_name, f)) for f in p.facts):
            out.append(src.id)
    return out
