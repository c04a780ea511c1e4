"""bench/run.py --quick at a small size exits 0: no ratio past its regression bound (issue 7)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.bench
def test_bench_quick() -> None:
    res = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--size", "2", "--runs", "1",
                          "--nodes", "16", "--only", "startup,sweep,parse,ui"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "ratio" in res.stdout
