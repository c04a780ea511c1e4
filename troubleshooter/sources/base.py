"""The source contract: one thing to collect, with a stable id. Sources never change the system.

A source is a command (argv list, never a shell string; fixed ``sh -c`` scripts are allowed where a glob
must expand on the target, and never interpolate values), or an in-process query (``func``, e.g. NVML) that
runs on the local target only. Each declares the parser that reads it, its timeout, the binary it needs,
whether it needs root, whether it is an *active* measurement (runs load; only with ``--measure``), and
``why``: what it reads, for the user.

Argument placeholders such as ``{pid}`` are filled from :class:`Params`; a source whose placeholder has no
value is skipped with the reason.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Mapping

from troubleshooter.model.evidence import Evidence


# {pid}, {sample_s}, {job} ...; not ${var} (shell) and not {a,b} (brace expansion)
_PLACEHOLDER = re.compile(r"(?<![$\w{])\{([a-z_][a-z0-9_]*)\}(?!\})")
_RENDER = re.compile(r"\{\{|\}\}|" + _PLACEHOLDER.pattern)


@dataclasses.dataclass(frozen=True)
class Source:
    id: str
    parser: str
    summary: str
    argv: tuple[str, ...] = ()
    func: Callable[["Params"], Evidence] | None = None  # in-process, local target only
    timeout_s: float = 10.0
    needs: str = ""  # the binary; for the user's "install X" advice
    package: str = ""  # the Debian/Ubuntu package that brings it
    root: bool = False
    active: bool = False
    why: str = ""
    accept_rc: tuple[int, ...] = (0,)
    env: tuple[tuple[str, str], ...] = (("LC_ALL", "C"),)
    max_bytes: int = 8 * 1024 * 1024
    keep: str = "head"  # over max_bytes keep the head, or the "tail" (logs: the newest lines matter)
    family: str = ""  # the module that declared it (host, cpu, numa, gpu, ...)

    def placeholders(self) -> set[str]:
        return {m.group(1) for arg in self.argv for m in _PLACEHOLDER.finditer(arg)}

    def render_argv(self, params: "Params") -> list[str]:
        """Fill ``{name}`` placeholders (whole arguments or parts); ``${var}`` in scripts is left alone, and
        ``{{`` / ``}}`` stand for literal braces (as in str.format), for arguments that must not be filled."""
        values = params.as_dict()

        def sub(m: re.Match) -> str:
            if m.group(0) in ("{{", "}}"):
                return m.group(0)[0]
            return str(values.get(m.group(1), m.group(0)))

        return [_RENDER.sub(sub, arg) for arg in self.argv]

    def missing_params(self, params: "Params") -> list[str]:
        values = params.as_dict()
        return sorted(n for n in self.placeholders() if values.get(n) in (None, ""))


@dataclasses.dataclass
class Params:
    """Values sources may need: the training process, how long to sample, nccl-tests settings."""

    pid: int | None = None
    sample_s: int = 3
    kernel_options: tuple[str, ...] = ()
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d = {"pid": self.pid, "sample_s": self.sample_s, "nccl_tests_dir": "-"}
        d.update(self.extra)
        return d


SOURCES: dict[str, Source] = {}


def source(**kwargs: Any) -> Source:
    """Declare and register a source (call at module level in a ``sources/<family>.py``)."""
    if "argv" in kwargs:
        kwargs["argv"] = tuple(kwargs["argv"])
    if "env" in kwargs and isinstance(kwargs["env"], Mapping):
        kwargs["env"] = tuple(kwargs["env"].items())
    src = Source(**kwargs)
    if src.id in SOURCES and SOURCES[src.id] != src:
        raise ValueError(f"source id {src.id!r} declared twice")
    if not src.argv and src.func is None:
        raise ValueError(f"source {src.id!r} has neither argv nor func")
    SOURCES[src.id] = src
    return src
