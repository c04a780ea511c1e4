"""Facts: typed, namespaced values read out of evidence, with their provenance.

Every fact name is documented in the registry (:data:`REGISTRY`). Parsers declare the facts they can produce
with :func:`declare`; the tree linter rejects a tree that names a fact nobody declares. A family of names
with a variable last part (``env.var.NCCL_TOPO_FILE``) is declared once with a ``*`` (``env.var.*``).

A fact that could not be established is :class:`Unknown` with the reason, and trees handle it explicitly.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
import time
from typing import Any, Iterable, Iterator, Mapping

TYPES = ("number", "string", "bool", "list", "dict")


@dataclasses.dataclass(frozen=True)
class FactSpec:
    name: str
    type: str  # one of TYPES
    unit: str
    doc: str
    parser: str = ""  # the parser kind that declares it

    @property
    def is_pattern(self) -> bool:
        return "*" in self.name


REGISTRY: dict[str, FactSpec] = {}


def declare(parser: str, specs: Iterable[tuple[str, str, str, str]]) -> None:
    """Register fact names: ``(name, type, unit, doc)`` tuples, declared by the parser ``parser``.

    The same name may be declared by several parsers (``nccl.version`` comes from a log and from the
    environment) only with the same type. Its entry (doc and unit) is the declaration of the parser whose
    name sorts first, whatever order the parsers were imported in: verbs import only the parsers they
    need, so first-come would make a fact's label depend on what ran before.
    """
    for name, typ, unit, doc in specs:
        if typ not in TYPES:
            raise ValueError(f"fact {name}: type {typ!r} is not one of {TYPES}")
        old = REGISTRY.get(name)
        if old is not None and old.type != typ:
            raise ValueError(f"fact {name} declared as {old.type} by {old.parser} and {typ} by {parser}")
        if old is None or parser < old.parser:
            REGISTRY[name] = FactSpec(name, typ, unit, doc, parser)
            if old is not None:
                global _seen
                _seen = -1  # an entry was replaced: the families and cached answers are rebuilt


_PATTERNS: list[FactSpec] = []  # the ``*`` families, in declaration order (as REGISTRY iterates them)
_SPEC_CACHE: dict[str, FactSpec | None] = {}  # name -> its family (or None): a sweep looks up ~3,000 names
_SPEC_CACHE_MAX = 1 << 16
_seen = 0  # len(REGISTRY) when _PATTERNS was built
_families: "re.Pattern[str]" = re.compile("(?!)")


def spec(name: str) -> FactSpec | None:
    """The registry entry for a name, matching ``*`` families too."""
    global _seen
    found = REGISTRY.get(name)
    if found is not None:
        return found
    global _families
    if _seen != len(REGISTRY):  # names were declared since: rebuild the families, forget the answers
        _PATTERNS[:] = [s for s in REGISTRY.values() if s.is_pattern]
        # one expression for every family, tried in declaration order (the first family that matches wins)
        _families = re.compile("|".join(f"(?P<f{i}>{fnmatch.translate(s.name)})" for i, s in enumerate(_PATTERNS))
                               or "(?!)")
        _SPEC_CACHE.clear()
        _seen = len(REGISTRY)
    try:
        return _SPEC_CACHE[name]
    except KeyError:
        pass
    m = _families.match(name)
    if m is not None:
        found = _PATTERNS[int(m.lastgroup[1:])]  # type: ignore[index]
    if len(_SPEC_CACHE) < _SPEC_CACHE_MAX:
        _SPEC_CACHE[name] = found
    return found


def is_known_name(name: str) -> bool:
    return spec(name) is not None


@dataclasses.dataclass(frozen=True)
class Unknown:
    """A fact that could not be established, and why (shown to the user; trees branch on it)."""

    name: str
    reason: str

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"unknown ({self.reason})"


@dataclasses.dataclass(frozen=True)
class Fact:
    name: str
    value: Any
    unit: str = ""
    source: str = ""  # source id (or the file it was parsed from)
    target: str = ""  # where it was collected
    at: float = 0.0  # unix time of collection

    def display(self) -> str:
        return format_value(self.value, self.unit)


#: human display of one value stops here (a 20 MB environment value took minutes to lay out in a table);
#: JSON output keeps the whole value
MAX_DISPLAY_CHARS = 2000


def clip(text: str, limit: int = MAX_DISPLAY_CHARS) -> str:
    """``text`` cut to ``limit`` characters for a human, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit} characters)"


def format_value(value: Any, unit: str = "") -> str:
    """A value as a human reads it: units, yes/no, lists and mappings shortened, at most
    :data:`MAX_DISPLAY_CHARS` characters of it."""
    return clip(_format_value(value, unit))


def _format_value(value: Any, unit: str = "") -> str:
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, float):
        text = f"{value:.4g}" if abs(value) < 1e6 else f"{value:.0f}"
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = [clip(str(v)) for v in list(value)[:8]]
        text = ", ".join(items) + (f", … (+{len(value) - 8})" if len(value) > 8 else "")
        text = text or "(none)"
    elif isinstance(value, dict):
        text = ", ".join(f"{k}={clip(str(v))}" for k, v in list(value.items())[:6])
        text += f", … (+{len(value) - 6})" if len(value) > 6 else ""
        text = text or "(none)"
    else:
        text = str(value)
    if unit and unit not in ("", "bool", "count") and not isinstance(value, (bool, list, dict)):
        text = f"{text} {unit}" if not unit.startswith("%") else f"{text}{unit}"
    return text


class FactSet(Mapping[str, Fact]):
    """The facts established on one side (a target: the job's container, the host, a node).

    ``get_value(name)`` returns the value or an :class:`Unknown` with the reason: either the reason the
    source that produces it could not run, or that its output did not contain it.
    """

    def __init__(self, side: str = "target") -> None:
        self.side = side
        self._facts: dict[str, Fact] = {}
        self._why_missing: dict[str, str] = {}  # source id -> reason its facts are unknown
        self.parse_errors: dict[str, str] = {}  # source id -> parse error message

    def __getitem__(self, name: str) -> Fact:
        return self._facts[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._facts)

    def __len__(self) -> int:
        return len(self._facts)

    def add(self, fact: Fact) -> None:
        self._facts[fact.name] = fact

    def copy(self) -> "FactSet":
        """A shallow copy (facts are immutable values): adding to it leaves this set as it was."""
        other = FactSet(self.side)
        other._facts = dict(self._facts)
        other._why_missing = dict(self._why_missing)
        other.parse_errors = dict(self.parse_errors)
        return other

    def update_from(self, values: Mapping[str, Any], *, source: str, target: str = "", at: float | None = None) -> None:
        stamp = time.time() if at is None else at
        for name, value in values.items():
            s = spec(name)
            self.add(Fact(name, value, s.unit if s else "", source, target, stamp))

    def source_unavailable(self, source_id: str, reason: str) -> None:
        self._why_missing[source_id] = reason

    def get_value(self, name: str, producers: Iterable[str] = ()) -> Any:
        fact = self._facts.get(name)
        if fact is not None:
            return fact.value
        return Unknown(name, self.why_unknown(name, producers))

    def why_unknown(self, name: str, producers: Iterable[str] = ()) -> str:
        reasons = []
        for src in producers:
            if src in self._why_missing:
                reasons.append(f"{src}: {self._why_missing[src]}")
            elif src in self.parse_errors:
                reasons.append(f"{src}: parse error: {self.parse_errors[src]}")
        if reasons:
            return "; ".join(reasons)
        producers = list(producers)
        if producers:
            return f"not in the output of {', '.join(producers)}"
        return "no source collected it"

    def messages_matching(self, patterns: Mapping[str, re.Pattern[str]]) -> tuple[list[str], list[str]]:
        """For facts holding messages (a list of them, or one): the names of those present, and their messages that
        the name's pattern finds, in order and each once."""
        read = [name for name in patterns if name in self._facts]
        hits: list[str] = []
        for name in read:
            value = self._facts[name].value
            hits += [m for m in (value if isinstance(value, list) else [value])
                     if isinstance(m, str) and patterns[name].search(m)]
        return read, list(dict.fromkeys(hits))

    def as_dict(self) -> dict[str, Any]:
        return {name: f.value for name, f in sorted(self._facts.items())}
