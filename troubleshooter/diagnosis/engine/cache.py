"""The checked-trees cache: every tree file validated once per content, then loaded from the user cache dir.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from troubleshooter import locations, yamlio
from troubleshooter.diagnosis.engine.schema import Tree, TreeError, _load_doc, _tree_of, tree_files

# ---------------------------------------------------------------------------- the checked-trees cache
# Parsing and checking the shipped trees costs ~20 ms, at every start of the app and of most verbs. The
# documents of a set of trees that loaded without an error are kept in the user cache directory
# (locations.cache_dir(), trees.json), as JSON, under a key that is a digest of the tool's version, this module's
# and yamlio's source, and every tree file's path and bytes: any change to any of them is a miss, and a miss is
# the uncached load, errors and all. Only the default trees directory is cached; a cache that cannot be read,
# written or decoded is ignored. A document holding anything JSON does not carry exactly (a key that is not a
# string, a date, a set) is not cached.
_CACHE_FORMAT = "troubleshooter-trees-cache/1"
_LINE_KEY = "\x00line"


def _cache_key(files: list[Path]) -> str | None:
    import hashlib

    from troubleshooter import __version__

    h = hashlib.sha256(f"{_CACHE_FORMAT}\0{__version__}\0".encode())
    try:
        for src in (Path(__file__), Path(yamlio.__file__)):
            h.update(src.read_bytes())
        for p in files:
            data = p.read_bytes()
            h.update(f"\0{p}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
            h.update(data)
    except OSError:
        return None
    return h.hexdigest()


def _encode_doc(obj: Any) -> Any:
    """A parsed document as JSON-ready data, each mapping's line under _LINE_KEY; TypeError if not exact."""
    if type(obj) is yamlio.LineDict:
        out: dict[str, Any] = {_LINE_KEY: obj.line}
        for k, v in obj.items():
            if type(k) is not str or k == _LINE_KEY:
                raise TypeError(f"key {k!r}")
            out[k] = _encode_doc(v)
        return out
    if type(obj) is list:
        return [_encode_doc(v) for v in obj]
    if obj is None or type(obj) in (str, int, float, bool):
        return obj
    raise TypeError(type(obj).__name__)


def _decode_mapping(d: dict[str, Any]) -> yamlio.LineDict:
    line = d.pop(_LINE_KEY)
    out = yamlio.LineDict(d)
    out.line = line
    return out


def _cached_docs(key: str) -> list[tuple[str, Any]] | None:
    import json

    try:
        raw = json.loads((locations.cache_dir() / "trees.json").read_text(encoding="utf-8"),
                         object_hook=_decode_mapping)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    if not isinstance(raw, list) or len(raw) != 3 or raw[0] != _CACHE_FORMAT or raw[1] != key:
        return None
    docs = raw[2]
    if not isinstance(docs, list) or not all(isinstance(d, list) and len(d) == 2 and isinstance(d[0], str)
                                             for d in docs):
        return None
    return [(d[0], d[1]) for d in docs]


def _store_docs(key: str, docs: list[tuple[str, Any]]) -> None:
    import json
    import os

    try:
        text = json.dumps([_CACHE_FORMAT, key, [[p, _encode_doc(d)] for p, d in docs]], separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return
    try:
        d = locations.cache_dir()
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f"trees.json.{os.getpid()}.partial"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, d / "trees.json")
    except OSError:
        pass


def load_trees(directory: Path | None = None) -> dict[str, Tree]:
    files = tree_files(directory)
    key = _cache_key(files) if directory is None and files else None
    cached = _cached_docs(key) if key else None
    if cached is not None and [p for p, _ in cached] == [str(p) for p in files]:
        docs = [(p, d) for p, (_, d) in zip(files, cached)]
    else:
        docs = None
    trees: dict[str, Tree] = {}
    errors: list[str] = []
    loaded: list[tuple[str, Any]] = []
    for i, p in enumerate(files):
        try:
            if docs is not None:
                data = docs[i][1]
            else:
                data = _load_doc(p)
                loaded.append((str(p), data))
            t = _tree_of(data, p)
        except TreeError as exc:
            errors.append(str(exc))
            continue
        if t.id in trees:
            errors.append(f"{p}: tree id {t.id!r} also used by {trees[t.id].path}")
        trees[t.id] = t
    if errors:
        raise TreeError("\n".join(errors))
    if not trees:
        raise TreeError(f"no decision trees found in {directory or locations.trees_dir()} (a broken install?)")
    if key and docs is None and _cache_key(files) == key:  # the files did not change while being read
        _store_docs(key, loaded)
    return trees


