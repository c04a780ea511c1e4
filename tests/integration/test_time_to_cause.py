"""Time to cause (issue 13): the installed app in tmux, launched as the README says, driven with send-keys from the
start screen to each seed case's fix. The goal: at most 10 keys and well under 3 minutes per case. The key
scripts are bench/timetocause.py's (the bench figure and docs/benchmarks.md report the same walks)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from .conftest import unavailable

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_timetocause", ROOT / "bench" / "timetocause.py")
ttc = importlib.util.module_from_spec(_spec)
assert _spec.loader is not None
_spec.loader.exec_module(ttc)

pytestmark = pytest.mark.tmux


@pytest.mark.parametrize("case", list(ttc.CASES))
def test_each_seed_case_reaches_its_fix_from_the_start_screen(case, tmp_path):
    if not shutil.which("tmux"):
        unavailable("tmux is not installed (apt-get install tmux)")
    if not ttc.ENTRY.exists():
        unavailable(f"the troubleshooter entry point is not installed at {ttc.ENTRY} (pip install -e .)")
    r = ttc.walk(case, tmp_path)
    assert r["keys"] <= ttc.MAX_KEYS, f"{case}: {r['keys']} keys"
    assert r["seconds"] < 60, f"{case}: {r['seconds']} s from launch to the fix (goal: well under 3 minutes)"
    screen = r["screen"]
    assert "found;" in screen and "Commands" in screen and r["fix"] in screen


def test_the_scripts_start_from_the_start_screen_and_fit_the_goal():
    for case, spec in ttc.CASES.items():
        keys = [k for k, _ in spec["steps"]]
        assert keys[0] == "d", f"{case}: from the start screen, into practice"
        assert len(keys) <= ttc.MAX_KEYS
