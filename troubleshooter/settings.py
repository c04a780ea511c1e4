"""User settings: a YAML file found through platformdirs (``troubleshooter locate``), each key overridable
by an environment variable ``TROUBLESHOOTER_<KEY>`` (upper case). Unknown keys and bad values are reported
with the file name, never fatal: the defaults apply.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from troubleshooter import locations, yamlio


@dataclasses.dataclass
class Settings:
    theme: str = "textual-dark"
    """Textual theme name; 'textual-light' for light terminals. NO_COLOR in the environment is honoured regardless."""
    learn_mode: bool = False
    """Explain every step in full (the 'why' panel always open); practice cases turn it on."""
    show_why: bool = True
    """Show the 'why' of each step (toggle with w)."""
    default_target: str = ""
    """Where probes run when no --job/--exec/--bundle is given: '' (here), 'exec:PREFIX', 'job:J', 'bundle:PATH'."""
    export_dir: str = ""
    """Where exports are written ('' = the data directory's exports/)."""
    redact_extra: list[str] = dataclasses.field(default_factory=list)
    """Extra regular expressions whose matches are redacted from every output (a file that does not parse
    loses them, and every verb says so on stderr)."""
    profile: str = ""
    """Reference profile id ('' = from the GPUs seen)."""
    keymap: dict[str, str] = dataclasses.field(default_factory=dict)
    """Key remapping: binding id -> keys, e.g. {walk.back: 'left,b'} (ids are listed in the help screen)."""

    warnings: list[str] = dataclasses.field(default_factory=list, repr=False)

    def exports_path(self) -> Path:
        return Path(self.export_dir).expanduser() if self.export_dir else locations.exports_dir()


FIELDS = [f for f in dataclasses.fields(Settings) if f.name != "warnings"]


def _coerce(name: str, typ: Any, value: Any) -> Any:
    t = str(typ)
    if "bool" in t:
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("1", "true", "yes", "on"):
            return True
        if str(value).lower() in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(f"{name}: expected true/false, got {value!r}")
    if "dict" in t:
        if isinstance(value, dict):
            return {str(k): str(v) for k, v in value.items()}
        pairs = [p.split("=", 1) for p in str(value).split(";") if "=" in p]
        return {k.strip(): v.strip() for k, v in pairs}
    if "list" in t:
        if isinstance(value, list):
            return [str(v) for v in value]
        return [v for v in str(value).split(",") if v]
    return str(value)


def load(path: Path | None = None) -> Settings:
    s = Settings()
    p = path or locations.config_file()
    if p.exists():
        try:
            data = yamlio.load(p) or {}
        except yamlio.YamlError as exc:
            s.warnings.append(f"{exc} (defaults used: no setting from this file applies, its redact_extra "
                              "patterns included; fix the file)")
            data = {}
        if not isinstance(data, dict):
            s.warnings.append(f"{p}: expected a mapping of settings (defaults used: no setting from this file "
                              "applies, its redact_extra patterns included)")
            data = {}
        known = {f.name: f for f in FIELDS}
        for k, v in data.items():
            if k not in known:
                s.warnings.append(f"{p}:{yamlio.line_of(data) or ''}: unknown setting {k!r} (known: {', '.join(known)})")
                continue
            try:
                setattr(s, k, _coerce(k, known[k].type, v))
            except ValueError as exc:
                s.warnings.append(f"{p}: {exc}")
    for f in FIELDS:
        env = os.environ.get(f"TROUBLESHOOTER_{f.name.upper()}")
        if env is not None:
            try:
                setattr(s, f.name, _coerce(f.name, f.type, env))
            except ValueError as exc:
                s.warnings.append(f"TROUBLESHOOTER_{f.name.upper()}: {exc}")
    return s


def documented() -> list[tuple[str, str, str]]:
    """(name, default, doc) for the README and `troubleshooter locate --settings`."""
    import ast
    import inspect

    src = inspect.getsource(Settings)
    tree = ast.parse(src)
    docs: dict[str, str] = {}
    body = tree.body[0].body  # type: ignore[attr-defined]
    for i, node in enumerate(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and i + 1 < len(body):
            nxt = body[i + 1]
            if isinstance(nxt, ast.Expr) and isinstance(getattr(nxt, "value", None), ast.Constant):
                docs[node.target.id] = str(nxt.value.value)
    d = Settings()
    return [(f.name, repr(getattr(d, f.name)), docs.get(f.name, "")) for f in FIELDS]
