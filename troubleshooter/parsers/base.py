"""The parser contract: a pure function from a tool's text output to facts. No I/O.

A parser module registers each parser with :func:`parser`::

    @parser("turbostat", detect=_looks_like_turbostat, facts=[("cpu.busy_mhz", "number", "MHz", "...")])
    def parse(text: str) -> dict[str, object]:
        '''Doc with a real sample of the tool's output.'''

Empty or garbled input raises :class:`ParseError` with a message (and a line number where one helps);
nothing else may escape. ``detect(text)`` returns a confidence in [0, 1] that the text is this kind's output,
for ``parse`` without a kind and for ``diagnose --evidence`` on pasted files.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from typing import Any, Callable, Iterable

from troubleshooter.model import facts as _facts


class ParseError(ValueError):
    """The text is not (or not enough of) the output this parser reads."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.message = message
        self.line = line
        super().__init__(f"line {line}: {message}" if line else message)


ParseFunc = Callable[[str], dict[str, Any]]
DetectFunc = Callable[[str], float]


@dataclasses.dataclass(frozen=True)
class Parser:
    kind: str
    func: ParseFunc
    detect: DetectFunc
    summary: str  # one line: what output this reads
    facts: tuple[str, ...]
    command: str = ""  # how to produce the input by hand, shown to users who paste output

    def __call__(self, text: str) -> dict[str, Any]:
        return self.func(text)


PARSERS: dict[str, Parser] = {}

StreamFunc = Callable[[Iterable[str]], dict[str, Any]]
# Kinds that can also read a file line by line in bounded memory (``parse_stream``): the same facts as
# ``func`` on the whole text; :func:`troubleshooter.parsers.run_file` uses them for big files.
STREAMS: dict[str, StreamFunc] = {}


def parser(
    kind: str,
    *,
    detect: DetectFunc,
    summary: str,
    facts: Iterable[tuple[str, str, str, str]],
    command: str = "",
) -> Callable[[ParseFunc], ParseFunc]:
    facts = list(facts)

    def register(func: ParseFunc) -> ParseFunc:
        if kind in PARSERS and PARSERS[kind].func is not func:
            raise ValueError(f"parser kind {kind!r} registered twice")
        _facts.declare(kind, facts)
        PARSERS[kind] = Parser(kind, func, detect, summary, tuple(f[0] for f in facts), command)
        return func

    return register


def strip_noise(text: str) -> str:
    """Normalise line endings and drop NUL bytes (pasted or captured output often has both)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def clip(s: str, limit: int = 300) -> str:
    """A message as facts keep it: whitespace runs made one space, cut at ``limit`` characters with an ellipsis."""
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def clip_middle(s: str, limit: int = 300) -> str:
    """As :func:`clip`, but a long message keeps its head and its tail with an ellipsis between: a Go error chain
    ("failed to create containerd task: ...: rpc error: ... desc = PodResources API Get method disabled") names its
    innermost cause last."""
    s = " ".join(s.split())
    if len(s) <= limit:
        return s
    head = (limit - 1) // 2
    return s[:head] + "…" + s[len(s) - (limit - 1 - head):]


def add_clipped(out: list[str], msg: str, limit: int = 20, width: int = 300, keep_end: bool = False) -> None:
    """Append ``msg``, clipped (:func:`clip`, or :func:`clip_middle` with ``keep_end``), unless it is empty, already
    there, or ``out`` holds ``limit`` items."""
    m = clip_middle(msg, width) if keep_end else clip(msg, width)
    if m and m not in out and len(out) < limit:
        out.append(m)


def require_text(text: str, what: str) -> str:
    text = strip_noise(text)
    if not text.strip():
        raise ParseError(f"empty input: expected {what}")
    return text


def to_number(token: str) -> float | int | None:
    """'3,000' -> 3000, '12.5' -> 12.5, '-nan'/'N/A'/'' -> None."""
    t = token.strip().replace(",", "")
    if not t:
        return None
    try:
        if t.lstrip("+-").isdigit():
            return int(t)
        value = float(t)
    except ValueError:
        return None
    if value != value or value in (float("inf"), float("-inf")):  # nan, inf
        return None
    return value


# Go's logrus, which the NVIDIA container toolkit and dcgm-exporter log with: 'WARN[0005] message' on a terminal, and
# 'time="..." level=warning msg="..."' (logfmt) in a journal or a file. The message group is greedy and stripped in
# code: a lazy group before \s*$ retried the whole run of spaces at every character (a 64 KB line took 31 s).
_LOGRUS_TEXT = re.compile(r"\b(INFO|WARN|WARNING|ERRO|ERROR|FATA|FATAL|DEBU|DEBUG|TRAC|PANI)\[\d+\]\s+(.*)$")
_LOGRUS_KV = re.compile(r'\blevel=(\w+)\s+msg="((?:[^"\\]|\\.)*)"')
_LOGRUS_LEVELS = {"warn": "warning", "erro": "error", "fata": "fatal", "debu": "debug", "trac": "trace", "pani": "panic"}


def logrus_entry(line: str) -> tuple[str, str] | None:
    """(level, message) of one logrus line in either form, the level spelled out in lower case (warning, error,
    fatal ...) and the message with its escaped quotes undone (an escaped newline stays as written); None for
    another line."""
    m = _LOGRUS_KV.search(line) if "level=" in line else None
    if m:
        level, msg = m.group(1).lower(), m.group(2).replace('\\"', '"')
    else:
        m = _LOGRUS_TEXT.search(line) if "[" in line else None
        if not m:
            return None
        level, msg = m.group(1).lower(), m.group(2).strip()
    return _LOGRUS_LEVELS.get(level, level), msg


#: a line another program printed into a tool's output: a shell's, sudo's or a launcher's diagnostic ("sudo: unable to
#: resolve host ...", "slurmstepd: error: couldn't chdir ...", "bash[12]: ...", "cat: /x: No such file"), never the
#: continuation of a wrapped message or a multi-line value (env and nhc read around such lines)
OTHER_PROGRAM = re.compile(r"^\s*+-?(?:slurmstepd(?:-[\w.-]+)?|srun|salloc|sbatch|pyxis|enroot|mpirun|sudo|su|bash|sh|zsh|"
                           r"ssh|pdsh|clush|timeout|nohup|env|cat)(?:\[\d+\])?: ")
_SHELL_QUOTING = re.compile(r"[\"'\\]")
_SHELL_BLANKS = re.compile(r"[ \t\r\n]+")
#: the longest line with quotes or backslashes split as shell words (a command line is a few KiB)
SHELL_LIMIT = 16384


def shell_words(line: str, comments: bool = False) -> list[str]:
    """``shlex.split(line, comments=comments)`` in linear time, raising ValueError where it does.

    shlex builds each word a character at a time, quadratic in a long word (a 180 KB pasted prompt took 1.3 CPU-s,
    a megabyte minutes). A line with no quote or backslash (nor '#' when comments count) is split on shlex's own
    blanks, which gives the same words; a quoted one longer than SHELL_LIMIT is refused like an unclosed quote.
    """
    if not _SHELL_QUOTING.search(line) and not (comments and "#" in line):
        return [w for w in _SHELL_BLANKS.split(line) if w]
    if len(line) > SHELL_LIMIT:
        raise ValueError(f"a {len(line)}-character line with quotes is too long to split as a shell command")
    return shlex.split(line, comments=comments)
