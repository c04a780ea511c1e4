"""Safe YAML for trees, profiles, checks and settings: errors name the file and line.

Anchors and aliases are refused (they enable "billion laughs" expansion and are never needed in our data),
so are non-standard tags (SafeLoader already refuses Python objects) and files over 2 MB. Mappings come
back as :class:`LineDict`, which remembers the line each mapping starts on, for the linter's messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 2 * 1024 * 1024


class YamlError(ValueError):
    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path, self.line, self.message = path, line, message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


class LineDict(dict):
    line: int = 0


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


if getattr(yaml, "__with_libyaml__", False):  # the C parser: ~10x faster (start-up loads every tree)

    class _CLoader(yaml.CSafeLoader):
        construct_mapping = _Loader.construct_mapping

    _CLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _CLoader.construct_mapping)
else:  # pragma: no cover
    _CLoader = None  # type: ignore[assignment,misc]


def _parse(text: str) -> Any:
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
    try:
        return _parse(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        msg = " ".join(str(x) for x in (exc.context, exc.problem) if x)
        raise YamlError(name, line, msg or str(exc)) from None
    except yaml.YAMLError as exc:
        raise YamlError(name, None, str(exc)) from None


def load(path: str | Path) -> Any:
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
    return loads(text, str(p))


def line_of(obj: Any) -> int | None:
    return getattr(obj, "line", None) or None
