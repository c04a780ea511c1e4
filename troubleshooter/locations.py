"""Every path the tool uses, in one place (XDG through platformdirs, overridable by environment)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "troubleshooter"


def trees_dir() -> Path:
    """The decision trees shipped with the package (TROUBLESHOOTER_TREES overrides, for tree authors)."""
    env = os.environ.get("TROUBLESHOOTER_TREES")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    for candidate in (here / "decision_trees", here.parent / "decision_trees"):
        if candidate.is_dir():
            return candidate
    return here.parent / "decision_trees"


def data_dir() -> Path:
    """Sessions and exports (TROUBLESHOOTER_DATA_DIR overrides)."""
    env = os.environ.get("TROUBLESHOOTER_DATA_DIR")
    return Path(env) if env else Path(platformdirs.user_data_dir(APP))


def sessions_dir() -> Path:
    return data_dir() / "sessions"


def exports_dir() -> Path:
    return data_dir() / "exports"


def cache_dir() -> Path:
    """What can be rebuilt at any time: the checked decision trees (TROUBLESHOOTER_CACHE_DIR overrides)."""
    env = os.environ.get("TROUBLESHOOTER_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir(APP))


def config_dir() -> Path:
    env = os.environ.get("TROUBLESHOOTER_CONFIG_DIR")
    return Path(env) if env else Path(platformdirs.user_config_dir(APP))


def config_file() -> Path:
    env = os.environ.get("TROUBLESHOOTER_CONFIG")
    return Path(env) if env else config_dir() / "config.yaml"


def user_profiles_dir() -> Path:
    return config_dir() / "profiles"


def all_paths() -> dict[str, Path]:
    return {
        "trees": trees_dir(),
        "config": config_file(),
        "profiles (user)": user_profiles_dir(),
        "sessions": sessions_dir(),
        "exports": exports_dir(),
        "cache": cache_dir(),
    }
