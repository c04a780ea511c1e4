"""Reference profiles: the thresholds trees and checks judge against, per platform.

Shipped in ``decision_trees/profiles/*.yaml``; users add their own in the config directory's
``profiles/``. A profile may ``inherit`` another (``generic`` is the root). Keys are documented in the
generic profile, and a profile may only set keys the generic profile documents.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from troubleshooter import locations, yamlio


class ProfileError(ValueError):
    pass


@dataclasses.dataclass
class Profile:
    id: str
    title: str
    thresholds: dict[str, Any]
    docs: dict[str, str]
    path: Path | None = None
    match: dict[str, Any] = dataclasses.field(default_factory=dict)


def _dirs() -> list[Path]:
    return [locations.trees_dir() / "profiles", locations.user_profiles_dir()]


def load_raw() -> dict[str, tuple[dict, Path]]:
    raw: dict[str, tuple[dict, Path]] = {}
    for d in _dirs():
        if not d.is_dir():
            continue
        for p in sorted(d.glob("*.yaml")):
            data = yamlio.load(p, cached=True)
            if not isinstance(data, dict) or "id" not in data:
                raise ProfileError(f"{p}: a profile needs an 'id'")
            raw[str(data["id"])] = (data, p)
    return raw


def load_all() -> dict[str, Profile]:
    raw = load_raw()
    if "generic" not in raw:
        raise ProfileError(f"no generic profile in {_dirs()[0]}")
    generic_docs = {k: str(v.get("doc", "")) if isinstance(v, dict) else "" for k, v in raw["generic"][0].get("thresholds", {}).items()}
    out: dict[str, Profile] = {}

    def build(pid: str, chain: tuple[str, ...] = ()) -> Profile:
        if pid in out:
            return out[pid]
        if pid in chain:
            raise ProfileError(f"profile inheritance cycle: {' -> '.join(chain + (pid,))}")
        if pid not in raw:
            raise ProfileError(f"unknown profile {pid!r}")
        data, path = raw[pid]
        base: dict[str, Any] = {}
        parent = data.get("inherits")
        if parent:
            base = dict(build(str(parent), chain + (pid,)).thresholds)
        for key, val in (data.get("thresholds") or {}).items():
            if key not in generic_docs:
                raise ProfileError(f"{path}:{yamlio.line_of(data) or ''}: unknown threshold {key!r} (document it in the generic profile first)")
            base[key] = val["value"] if isinstance(val, dict) else val
        prof = Profile(pid, str(data.get("title", pid)), base, generic_docs, path, dict(data.get("match") or {}))
        out[pid] = prof
        return prof

    for pid in raw:
        build(pid)
    return out


def get(pid: str | None) -> Profile:
    profiles = load_all()
    if not pid:
        return profiles["generic"]
    if pid not in profiles:
        raise ProfileError(f"unknown profile {pid!r}; known: {', '.join(sorted(profiles))}")
    return profiles[pid]


def guess(gpu_names: object) -> str:
    """The profile for the GPUs seen (by name substring), else generic: the ``gpu.names`` fact as looked
    up, so an unknown (no GPU, no probe) or empty value gives generic."""
    if not isinstance(gpu_names, (list, tuple)) or not gpu_names:
        return "generic"
    name = " ".join(gpu_names).upper()
    for pid, prof in load_all().items():
        for pat in prof.match.get("gpu_name_contains", []) or []:
            if str(pat).upper() in name:
                return pid
    return "generic"


def choose(explicit: str | None, gpu_names: object = None) -> Profile:
    """The reference profile for a run: the one the user named, else the one the GPUs seen select (``guess``),
    else ``generic``. Every use case (check, diagnose, the app's walk and preflight, compare) asks here."""
    return get(explicit) if explicit else get(guess(gpu_names))
