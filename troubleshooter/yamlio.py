"""Safe YAML for trees, profiles, checks and settings: errors name the file and line.

Anchors and aliases are refused (they enable "billion laughs" expansion and are never needed in our data),
so are non-standard tags (SafeLoader already refuses Python objects) and files over 2 MB. Mappings come
back as :class:`LineDict`, which remembers the line each mapping starts on, for the linter's messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

MAX_BYTES = 2 * 1024 * 1024


class YamlError(ValueError):
    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path, self.line, self.message = path, line, message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


class LineDict(dict):
    line: int = 0


_LOADERS: tuple[Any, Any] | None = None


def _loaders() -> tuple[Any, Any]:
    """(the pure-Python loader, the C one or None), built at the first parse: yaml is imported only to parse
    (~15 ms of start-up for a verb whose YAML comes from the document cache below)."""
    global _LOADERS
    if _LOADERS is not None:
        return _LOADERS
    import yaml

    class _Loader(yaml.SafeLoader):
        def compose_node(self, parent, index):  # type: ignore[override]
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed", event.start_mark)
            event = self.peek_event()
            if getattr(event, "anchor", None):  # nodes do not keep their anchor: check the event
                raise yaml.composer.ComposerError(None, None, "anchors (&name) are not allowed", event.start_mark)
            return super().compose_node(parent, index)

        def construct_mapping(self, node, deep=False):  # type: ignore[override]
            data = LineDict(yaml.constructor.SafeConstructor.construct_mapping(self, node, deep=True))
            data.line = node.start_mark.line + 1
            seen = set()
            for key_node, _ in node.value:
                key = key_node.value
                if key in seen:
                    raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
                seen.add(key)
            return data

    _Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _Loader.construct_mapping)

    _CLoader = None
    if getattr(yaml, "__with_libyaml__", False):  # the C parser: ~10x faster (start-up loads every tree)

        class _CLoader(yaml.CSafeLoader):  # type: ignore[no-redef]
            construct_mapping = _Loader.construct_mapping

        _CLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _CLoader.construct_mapping)
    _LOADERS = (_Loader, _CLoader)
    return _LOADERS


def _parse(text: str) -> Any:
    import yaml

    _Loader, _CLoader = _loaders()
    if _CLoader is None:  # pragma: no cover
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    # the C composer keeps no anchors on nodes: refuse anchors and aliases from the event stream first
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed", event.start_mark)
        if getattr(event, "anchor", None):
            raise yaml.composer.ComposerError(None, None, "anchors (&name) are not allowed", event.start_mark)
    return yaml.load(text, Loader=_CLoader)  # noqa: S506 - a CSafeLoader


def loads(text: str, name: str = "<string>") -> Any:
    if len(text.encode("utf-8", errors="replace")) > MAX_BYTES:
        raise YamlError(name, None, f"larger than {MAX_BYTES >> 20} MB, refused")
    import yaml

    try:
        return _parse(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        msg = " ".join(str(x) for x in (exc.context, exc.problem) if x)
        raise YamlError(name, line, msg or str(exc)) from None
    except yaml.YAMLError as exc:
        raise YamlError(name, None, str(exc)) from None


def load(path: str | Path, *, cached: bool = False) -> Any:
    """The document in the YAML file at ``path``. ``cached``: through the document cache (:func:`_cached_load`),
    for the shipped data files every run of a verb reads (profiles, checks, the Xid catalogue)."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise YamlError(str(p), None, exc.strerror or str(exc)) from None
    if size > MAX_BYTES:
        raise YamlError(str(p), None, f"larger than {MAX_BYTES >> 20} MB, refused")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise YamlError(str(p), None, f"not UTF-8 text: {exc}") from None
    if cached:
        return _cached_load(p, text)
    return loads(text, str(p))


# ---------------------------------------------------------------------------- the document cache
# `check` read three YAML files (profiles, checks, the Xid catalogue) at every run: importing yaml and parsing them
# cost ~20 ms of a ~200 ms process. A document that parsed without an error is kept in the user cache directory
# (locations.cache_dir(), yaml-docs.json) as JSON, with each mapping's line number, beside the file's whole text:
# it is used only when the file's text now is exactly that text, and this module and the tool are the same
# (version, this file's size and mtime). Anything else is a miss, and a miss is the uncached parse, errors and all;
# an error is never cached; a document JSON cannot carry exactly (a date, a set) is not cached; a cache
# that cannot be read, decoded or written is ignored. JSON, not pickle: reading a cache must not run code.
_CACHE_FORMAT = "troubleshooter-yaml-docs/1"
_LINE_KEY = "\x00line"
_DOCS: dict[str, Any] | None = None  # the cache file as read, this process


def _cache_tag() -> str:
    import os

    from troubleshooter import __version__

    st = os.stat(__file__)
    return f"{_CACHE_FORMAT} {__version__} {st.st_size} {st.st_mtime_ns}"


_ITEMS_KEY = "\x00items"  # a mapping with a key that is not a string (the Xid catalogue's codes): its pairs
_SCALARS = (str, int, float, bool, type(None))


def _encode(obj: Any) -> Any:
    if type(obj) is LineDict:
        if all(type(k) is str for k in obj) and _LINE_KEY not in obj and _ITEMS_KEY not in obj:
            out: dict[str, Any] = {_LINE_KEY: obj.line}
            for k, v in obj.items():
                out[k] = _encode(v)
            return out
        if not all(type(k) in _SCALARS for k in obj):
            raise TypeError("a key JSON cannot carry")
        return {_LINE_KEY: obj.line, _ITEMS_KEY: [[k, _encode(v)] for k, v in obj.items()]}
    if type(obj) is list:
        return [_encode(v) for v in obj]
    if type(obj) in _SCALARS:
        return obj
    raise TypeError(type(obj).__name__)


def _decode(obj: Any) -> Any:
    if type(obj) is dict:
        if _LINE_KEY not in obj:
            raise ValueError("a mapping without its line")
        if _ITEMS_KEY in obj:
            out = LineDict((k, _decode(v)) for k, v in obj[_ITEMS_KEY])
        else:
            out = LineDict((k, _decode(v)) for k, v in obj.items() if k != _LINE_KEY)
        out.line = obj[_LINE_KEY]
        return out
    if type(obj) is list:
        return [_decode(v) for v in obj]
    return obj


def _cache_file() -> Path:
    from troubleshooter import locations

    return locations.cache_dir() / "yaml-docs.json"


def _read_cache() -> dict[str, Any]:
    global _DOCS
    if _DOCS is None:
        import json

        _DOCS = {}
        try:
            raw = json.loads(_cache_file().read_text(encoding="utf-8"))
            if type(raw) is dict and raw.get("tag") == _cache_tag() and type(raw.get("docs")) is dict:
                _DOCS = raw["docs"]
        except (OSError, ValueError, RecursionError):
            pass
    return _DOCS


def _cached_load(p: Path, text: str) -> Any:
    key = str(p)
    try:
        docs = _read_cache()
        hit = docs.get(key)
        if type(hit) is list and len(hit) == 2 and hit[0] == text:
            return _decode(hit[1])
    except (OSError, ValueError, TypeError, RecursionError):
        docs = None
    data = loads(text, key)  # a miss: the uncached parse, errors and all
    if docs is not None:
        try:
            docs[key] = [text, _encode(data)]
            _write_cache(docs)
        except (OSError, TypeError, ValueError, RecursionError):
            docs.pop(key, None)
    return data


def _write_cache(docs: dict[str, Any]) -> None:
    import json
    import os

    text = json.dumps({"tag": _cache_tag(), "docs": docs}, separators=(",", ":"))
    f = _cache_file()
    f.parent.mkdir(parents=True, exist_ok=True)
    tmp = f.with_name(f"{f.name}.{os.getpid()}.partial")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, f)


def line_of(obj: Any) -> int | None:
    return getattr(obj, "line", None) or None
