"""`troubleshooter measure ...` end to end against the suite's own fake nccl-tests binaries."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAKES = ROOT / "tests" / "fakes"


def run(*args, env=None):
    e = dict(os.environ, PATH=f"{FAKES}:{os.environ['PATH']}", **(env or {}))
    return subprocess.run([sys.executable, "-m", "troubleshooter", "measure", *args], capture_output=True,
                          text=True, env=e, timeout=120)


def test_sweep_recommends_only_the_measured_better_value(tmp_path):
    out = tmp_path / "sweep.bundle"
    r = run("sweep", "--values", "1,4", "--repeats", "1", "--json", "-o", str(out))
    assert r.returncode == 1, r.stderr  # a better value was measured: something to change
    doc = json.loads(r.stdout)
    assert doc["best"] == "4" and doc["within_noise"] is False
    assert doc["gain_pct"] > 100
    assert doc["recommendation"].startswith("set NCCL_IB_QPS_PER_CONNECTION=4")
    # saved as the nccl-sweep-qps source's evidence, so the bundle replays through the trees
    manifest = json.loads((out / "manifest.json").read_text())
    assert [e["source"] for e in manifest["evidence"]] == ["nccl-sweep-qps"]
    from troubleshooter import parsers

    facts = parsers.run("nccl-sweep", (out / "evidence/target/nccl-sweep-qps.out").read_text())
    assert facts["sweep.best_value"] == "4" and facts["sweep.within_noise"] is False


def test_nccl_run_missing_binary_is_a_clear_state():
    r = run("nccl", "--binary", "reduce_scatter_perf_absent")
    assert r.returncode == 2
    assert "not-installed" in r.stderr and "Traceback" not in r.stderr


def test_launcher_wraps_the_binary():
    r = run("nccl", "--launcher", "env FAKE_LAUNCHER=1", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["facts"]["nccl_tests.collective"] == "all_gather"


def test_nccl_run_with_nccl_debug_reads_nccls_own_log():
    r = run("nccl", "--nccl-debug", "--json")
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout)["facts"]
    assert facts["nccl.version"] == "2.20.5"
    assert facts["nccl.socket_fallback"] is True and facts["nccl.net"] == "Socket"
    assert facts["nccl_tests.collective"] == "all_gather"
