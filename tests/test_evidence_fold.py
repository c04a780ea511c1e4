"""A conclusion's evidence lists the facts of every signature of its cause: those this run did not collect come after
the ones that decided it, on one line, in the ticket, the app and the quiz debrief; JSON keeps every fact."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from troubleshooter.diagnosis.plain import split_evidence, uncollected_line
from troubleshooter.output.export import to_markdown

ROOT = Path(__file__).resolve().parents[1]
LISTING = ROOT / "tests/data/gpustat/gpustat-mpi4jax-194-all-on-gpu0.txt"  # decided by the process listing alone


def test_split_keeps_order_and_not_set_env_values() -> None:
    ev = {"a.x": "3", "b.y": "unknown (no source collected it)", "env.var.NCCL_ALGO": "(not set)",
          "host:c.z": "unknown (not in the output of env-self)"}
    known, uncollected = split_evidence(ev)
    assert list(known.items()) == [("a.x", "3"), ("env.var.NCCL_ALGO", "(not set)")]
    assert uncollected == ["b.y", "host:c.z"]
    assert uncollected_line(uncollected, str) == "Not collected here: b.y; host:c.z"


def test_ticket_shows_what_decided_then_what_was_not_collected() -> None:
    r = subprocess.run([sys.executable, "-m", "troubleshooter", "diagnose", "--evidence", str(LISTING), "--json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL)
    doc = json.loads(r.stdout)
    (c,) = [c for c in doc["conclusions"] if c["cause"] == "ranks-not-bound-to-gpus"]
    assert c["evidence"]["job.rank_gpu_ranks"].startswith("unknown")  # JSON keeps every fact
    md = to_markdown(doc)
    table = md.split("| evidence | value |", 1)[1].split("\n\n", 1)[0]
    assert "gpu.processes_crowded" in table and "GPU 0: 2 working processes" in table
    assert "unknown" not in table and "rank_gpu_ranks" not in table
    line = next(ln for ln in md.splitlines() if ln.startswith("Not collected here: "))
    assert "`job.rank_gpu_ranks`" in line and "`job.rank_gpu_max_visible`" in line
