"""Comparisons for real: host vs a bubblewrap container in a real Slurm job step, and fanout over a real
(single-node) Slurm allocation with several tasks playing nodes. Nothing is faked."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tests.integration.test_targets_real import bwrap_prefix, cli

ROOT = Path(__file__).resolve().parents[2]


def _fixed(bwrap: str, hide: str, topo: str) -> str:
    # the same sandbox, with the file bound back in (after the tmpfs that hides its directory) and the
    # variable passed: the fixed container of case 4
    return bwrap_prefix(bwrap, hide) + " " + shlex.join(["--ro-bind", topo, topo, "--setenv", "NCCL_TOPO_FILE", topo])


def _compare(job: str, prefix: str, topo: str) -> tuple[int, dict]:
    res = cli("compare", "--host", "--job", job, "--exec", prefix, "--json", env={"NCCL_TOPO_FILE": topo})
    assert res.returncode in (0, 1), f"exit {res.returncode}\n{res.stderr}"
    assert "Traceback" not in res.stderr, res.stderr
    return res.returncode, json.loads(res.stdout)


def _diagnose(job: str, prefix: str, topo: str) -> dict:
    res = cli("diagnose", "--symptom", "host-ok-container-slow", "--job", job, "--exec", prefix, "--json",
              env={"NCCL_TOPO_FILE": topo})
    assert res.returncode in (0, 1), f"exit {res.returncode}\n{res.stderr}"
    return json.loads(res.stdout)


@pytest.mark.slurm
@pytest.mark.bwrap
def test_host_vs_container_in_job_step_finds_the_missing_topology(slurm_job: str, bwrap: str,
                                                                   host_topo: tuple[str, str]) -> None:
    hide, topo = host_topo
    # broken container: neither the variable nor the file reach it
    rc, doc = _compare(slurm_job, bwrap_prefix(bwrap, hide), topo)
    assert rc == 1 and doc["exit"] == 1 and doc["matters"] >= 2
    assert doc["target"]["kind"] == "slurm" and doc["target"]["wrapper"][0] == bwrap
    diffs = {d["fact"]: d for d in doc["differences"]}
    var = diffs["env.var.NCCL_TOPO_FILE"]
    assert (var["host"], var["target"], var["status"], var["matters"]) == (topo, None, "host-only", True)
    vis = diffs["nccl.topo_file.visible"]
    assert (vis["host"], vis["target"], vis["matters"]) == (True, False, True)
    assert doc["evidence"]["target"]["limits"].startswith("ok"), doc["evidence"]["target"]["limits"]
    assert doc["context"]["target"]["runtime"] == "bubblewrap"
    diag = _diagnose(slurm_job, bwrap_prefix(bwrap, hide), topo)
    assert "topo-not-in-container" in [c.get("cause") for c in diag["conclusions"]], diag["path"]

    # fixed container: the file bound in, the variable passed
    rc, doc = _compare(slurm_job, _fixed(bwrap, hide, topo), topo)
    assert [d for d in doc["differences"] if d["matters"]] == [] and rc == 0 and doc["matters"] == 0, doc["differences"]
    assert {"env.var.NCCL_TOPO_FILE", "nccl.topo_file.visible", "nccl.topo_file.sha256"} <= set(doc["same"])
    diag = _diagnose(slurm_job, _fixed(bwrap, hide, topo), topo)
    assert "topo-not-in-container" not in [c.get("cause") for c in diag["conclusions"]], diag["conclusions"]


@pytest.mark.slurm
def test_compare_host_cannot_run_is_exit_2(slurm: str) -> None:
    res = cli("compare", "--host", "--job", "999999")
    assert res.returncode == 2 and "Invalid job id" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.slurm
def test_fanout_single_node_slurm_three_simulated_nodes(slurm_job: str, tmp_path: Path) -> None:
    wrap = tmp_path / "wrap.sh"  # one "node" differs: a variable set only in task 2
    wrap.write_text('#!/bin/sh\nif [ "$SLURM_PROCID" = 2 ]; then export NCCL_IB_QPS_PER_CONNECTION=1; fi\nexec "$@"\n')
    wrap.chmod(0o755)
    out = tmp_path / "fan"
    res = cli("fanout", "--job", slurm_job, "--simulate-nodes", "3", "-o", str(out), "--exec", str(wrap),
              "--timeout", "60", "--json")
    assert res.returncode == 1, f"exit {res.returncode}\n{res.stderr}\n{res.stdout[-2000:]}"
    doc = json.loads(res.stdout)
    assert doc["nodes"] == 3 and doc["failed"] == [] and not doc["run"]["timed_out"]
    argv = doc["run"]["argv"]
    assert argv[:3] == ["srun", f"--jobid={slurm_job}", "--overlap"] and "--kill-on-bad-exit=0" in argv
    assert argv[argv.index("-c") + 2] == sys.executable
    names = sorted(p.name for p in out.glob("*.bundle.tar.gz"))
    assert len(names) == 3 and all("-t" in n for n in names), names
    assert len(list(out.glob("*.facts.json"))) == 3  # parsed on the "nodes"
    top = {f["fact"]: f for f in doc["outliers"]}
    qps = top["env.var.NCCL_IB_QPS_PER_CONNECTION"]
    assert [o["node"] for o in qps["nodes"]] == [names[2].removesuffix(".bundle.tar.gz")]
    assert qps["nodes"][0]["value"] == "1" and qps["majority_absent"] and qps["typical_nodes"] == 2
    assert doc["suspects"][0]["node"].endswith("-t2")
    assert [g["size"] for g in doc["groups"]] == [2, 1] and doc["groups"][0]["differs"] == {}

    # the same comparison from the saved bundles, with and without the facts the nodes wrote
    for extra in ((), ("--no-sidecar",)):
        res = cli("fanout", "--bundles", str(out), "--json", *extra)
        assert res.returncode == 1, res.stderr
        again = json.loads(res.stdout)
        assert [(f["fact"], [o["node"] for o in f["nodes"]]) for f in again["outliers"]] == \
            [(f["fact"], [o["node"] for o in f["nodes"]]) for f in doc["outliers"]]


@pytest.mark.slurm
def test_fanout_bad_job_is_exit_2(slurm: str, tmp_path: Path) -> None:
    res = cli("fanout", "--job", "999999", "-o", str(tmp_path / "x"))
    assert res.returncode == 2 and "999999" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.bwrap
def test_compare_and_diagnose_agree_on_a_real_container(bwrap: str, host_topo: tuple[str, str]) -> None:
    """Issue 15: what compare --host finds that matters, diagnose on the same target weighs as a cause.
    The container gets the topology file and its variable (so case 4 is not the answer) but none of the host's
    other NCCL variables (bwrap --clearenv): compare flags them, and diagnose names them with a fix."""
    hide, topo = host_topo
    prefix = _fixed(bwrap, hide, topo)
    env = {"NCCL_TOPO_FILE": topo, "NCCL_IB_HCA": "=mlx5_0:1,mlx5_3:1", "NCCL_SOCKET_IFNAME": "eth0"}
    res = cli("compare", "--host", "--exec", prefix, "--json", env=env)
    assert res.returncode == 1, res.stderr
    flagged = {d["fact"] for d in json.loads(res.stdout)["differences"] if d["matters"]}
    assert {"env.var.NCCL_IB_HCA", "env.var.NCCL_SOCKET_IFNAME"} <= flagged
    res = cli("diagnose", "--symptom", "host-ok-container-slow", "--exec", prefix, "--json", env=env)
    assert res.returncode == 1, res.stderr
    doc = json.loads(res.stdout)
    causes = {c["cause"]: c for c in doc["conclusions"]}
    assert "topo-not-in-container" not in causes
    c = causes["container-differs-from-host"]
    assert {"env NCCL_IB_HCA", "env NCCL_SOCKET_IFNAME"} <= set(c["evidence"])
    pyxis = next(f["command"] for f in c["fixes"] if f["context"] == "pyxis")
    words = shlex.split(pyxis)  # shell-quoted: the values come back exactly
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_3:1;" in words and "--container-env=NCCL_IB_HCA,NCCL_SOCKET_IFNAME" in words
