"""Comparisons over synthetic facts: host vs target, before/after, waterfall, node vs node, limits parser."""

from __future__ import annotations

import json
import random

import pytest

from tests import corpus
from troubleshooter.probe import bundle as bmod
from troubleshooter.diagnosis import compare
from troubleshooter import parsers
from troubleshooter.model.evidence import Evidence, Status
from troubleshooter.model.facts import Fact, FactSet


def fs(values: dict, side: str = "target") -> FactSet:
    out = FactSet(side)
    for k, v in values.items():
        out.add(Fact(k, v))
    return out


HOST = {"env.names": ["NCCL_TOPO_FILE", "PATH", "PWD"], "env.var.NCCL_TOPO_FILE": "/etc/nccl/topo.xml",
        "env.var.PWD": "/root", "env.var.CUDA_HOME": "/usr/local/cuda", "nccl.topo_file.visible": True,
        "nccl.topo_file.sha256": "a" * 64, "gpu.count": 8, "limits.memlock": "unlimited", "limits.shm_kb": 1 << 24,
        "ib.dev_infiniband_visible": True, "container.runtime": "none"}


# ------------------------------------------------------------------ host vs target
def test_host_vs_target_case4_differences_that_matter() -> None:
    target = {"env.names": ["PATH", "PWD"], "env.var.PWD": "/", "env.var.CUDA_HOME": "/opt/cuda",
              "nccl.topo_file.visible": False, "gpu.count": 8, "limits.memlock": "64", "limits.shm_kb": 65536,
              "ib.dev_infiniband_visible": False, "container.runtime": "enroot"}
    cmp = compare.host_vs_target(fs(HOST, "host"), fs(target))
    by = {d.fact: d for d in cmp.diffs}
    assert by["env.var.NCCL_TOPO_FILE"].status == "host-only" and by["env.var.NCCL_TOPO_FILE"].matters
    assert by["nccl.topo_file.visible"].matters and by["ib.dev_infiniband_visible"].matters
    assert by["limits.memlock"].matters and not by["limits.shm_kb"].matters
    assert not by["env.var.CUDA_HOME"].matters and by["env.var.CUDA_HOME"].status == "differs"
    assert "env.var.PWD" not in by  # always differs: ignored
    assert "nccl.topo_file.sha256" not in by  # absent on one side: 'present' tells it
    assert "gpu.count" in cmp.same
    assert cmp.context["target"]["runtime"] == "enroot"
    assert json.loads(json.dumps(cmp.as_dict()))["matters"] == 4


def test_host_vs_target_same_and_unknown() -> None:
    cmp = compare.host_vs_target(fs(HOST, "host"), fs(HOST))
    assert cmp.matters == [] and not [d for d in cmp.diffs if d.status != "unknown"]
    # a side whose environment could not be read is 'cannot tell', never a difference that matters
    t = FactSet("target")
    t.source_unavailable("env-self", "error: srun failed")
    cmp = compare.host_vs_target(fs(HOST, "host"), t)
    assert cmp.matters == []
    assert any(d.status == "unknown" and d.fact == "env.var.NCCL_TOPO_FILE" for d in cmp.diffs)


def test_all_env_keeps_the_ignore_list() -> None:
    h = dict(HOST, **{"env.var.HOSTNAME": "a", "env.var.SLURM_STEP_ID": "0", "env.var.LD_LIBRARY_PATH": "/x"})
    t = dict(HOST, **{"env.var.HOSTNAME": "b", "env.var.SLURM_STEP_ID": "1", "env.var.LD_LIBRARY_PATH": "/y"})
    facts = {d.fact for d in compare.host_vs_target(h, t, all_env=True).diffs}
    assert facts == {"env.var.LD_LIBRARY_PATH"}
    facts = {d.fact for d in compare.host_vs_target(h, t, all_env=True, same_host=False).diffs}
    assert facts == {"env.var.LD_LIBRARY_PATH", "env.var.HOSTNAME"}


# ------------------------------------------------------------------ before / after
def test_before_after_numbers_sets_measured_and_the_95_rule() -> None:
    a = {"nccl_tests.busbw_at_max_size_gbps": 400.0, "steps.median_ms": 1000.0, "cpu.busy_mhz": 3000,
         "gpu.count": 8, "ib.device_names": ["mlx5_0", "mlx5_1"], "proc.pid": 1, "nccl.debug": "INFO"}
    b = {"nccl_tests.busbw_at_max_size_gbps": 360.0, "steps.median_ms": 900.0, "cpu.busy_mhz": 3000,
         "gpu.count": 7, "ib.device_names": ["mlx5_0"], "proc.pid": 2, "nccl.ib_hca": "mlx5"}
    ch = {c.name: c for c in compare.before_after(a, b)}
    bw = ch["nccl_tests.busbw_at_max_size_gbps"]
    assert bw.measured and bw.ratio == pytest.approx(0.9) and bw.verdict == "below-reference"
    st = ch["steps.median_ms"]
    assert st.perf_ratio == pytest.approx(1000 / 900) and st.verdict == "ok"  # lower is better
    assert ch["cpu.busy_mhz"].ratio == 1.0  # measured numbers are listed even when equal
    assert ch["gpu.count"].ratio == pytest.approx(7 / 8)
    assert ch["ib.device_names"].removed == ["mlx5_1"]
    assert ch["nccl.debug"].kind == "removed" and ch["nccl.ib_hca"].kind == "added"
    assert "proc.pid" not in ch  # volatile
    assert [c.name for c in compare.before_after(a, b)][:3] == sorted(compare.MEASURED.keys() & a.keys())
    only = compare.before_after(a, b, names=["gpu.*"])
    assert [c.name for c in only] == ["gpu.count"]


def test_waterfall_case2() -> None:
    text = compare.waterfall([("C-states", 92.0), ("NUMA/cpuset", 97.0)], 88.0, 100.0, width=24, ascii=True)
    lines = text.splitlines()
    assert lines[0] == "where the gap went: 88 -> 100 (gap 12)"
    assert "33% of the gap" in lines[2] and "42% of the gap" in lines[3] and "25% of the gap" in lines[4]
    assert len({ln.index("|") for ln in lines[1:]}) == 1  # bars aligned
    bars = [ln.split("|")[1] for ln in lines[1:]]
    assert bars[1].count("#") == 8 and bars[2].count("#") == 10 and bars[3].count(".") == 6
    # a regression and a lower-is-better metric
    t = compare.waterfall([("a", 1050.0), ("oops", 1080.0)], 1100.0, 1000.0)
    assert "▒" in t and "█" in t and "░" in t
    assert "left" not in compare.waterfall([("x", 2.0)], 1.0, None)


# ------------------------------------------------------------------ node vs node
def _node(i: int, rng: random.Random) -> dict:
    return {"cpu.busy_mhz": 3000 + rng.randint(-20, 20), "gpu.count": 8, "gpu.temp_max_c": rng.randint(50, 70),
            "ib.device_names": [f"mlx5_{k}" for k in range(8)], "nccl.version": "2.21.5",
            "env.var.NCCL_IB_QPS_PER_CONNECTION": "4", "env.var.SLURM_PROCID": str(i),
            "host.kernel_release": "5.15.0-118", "gpu.names": ["H100"] * 8, "mem.total_kb": 2_000_000_000 + i}


def test_nodes_outliers_ranked_and_grouped() -> None:
    rng = random.Random(7)
    comp = compare.NodeComparator()
    for i in range(64):
        f = _node(i, rng)
        if i == 5:
            f["cpu.busy_mhz"] = 2400  # a C-state / power-capped node
        if i in (10, 11, 12):
            f["env.var.NCCL_IB_QPS_PER_CONNECTION"] = "1"
        if i == 20:
            f["ib.device_names"] = f["ib.device_names"][:7]
            del f["nccl.version"]
        comp.add(f"gpu{i:03d}", f)
    rep = comp.report()
    by = {fo.fact: fo for fo in rep.outliers}
    assert [o.node for o in by["cpu.busy_mhz"].outliers] == ["gpu005"] and by["cpu.busy_mhz"].outliers[0].direction == "low"
    assert [o.node for o in by["env.var.NCCL_IB_QPS_PER_CONNECTION"].outliers] == ["gpu010", "gpu011", "gpu012"]
    assert [o.node for o in by["ib.device_names"].outliers] == ["gpu020"]
    assert by["nccl.version"].outliers[0].value is compare._MISSING
    assert "gpu.temp_max_c" not in by and "mem.total_kb" not in by  # noise, and under the floors
    assert "env.var.SLURM_PROCID" not in by and "env.var.SLURM_PROCID" not in rep.identity  # ignored
    sizes = [len(g.nodes) for g in rep.groups]
    assert sizes == [59, 3, 1, 1]
    assert rep.groups[0].differs == {} and compare.hostlist(rep.groups[1].nodes) == "gpu[010-012]"
    assert rep.suspects()[0]["node"] == "gpu020"  # two facts out
    doc = json.loads(json.dumps(rep.as_dict()))
    assert doc["groups"][0]["nodes"].startswith("gpu[000-004,006-009")


def test_nodes_small_noise_and_no_majority() -> None:
    comp = compare.NodeComparator()
    for i, (mhz, drv) in enumerate([(3000, "a"), (3001, "b"), (3002, "a"), (3060, "b")]):
        comp.add(f"n{i}", {"cpu.busy_mhz": mhz, "gpu.driver_version": drv, "host.dmi_product": f"serial{i}"})
    rep = comp.report()
    assert rep.outliers == []  # 60 MHz off: over 3.5 MADs but under the 5% floor
    assert rep.splits and rep.splits[0]["fact"] == "gpu.driver_version"
    assert rep.identity == ["host.dmi_product"]


def test_hostlist() -> None:
    assert compare.hostlist(["gpu002", "gpu001", "gpu003", "gpu010", "login"]) == "login,gpu[001-003,010]"
    assert compare.hostlist(["n9", "n10", "n11"]) == "n[9-11]"
    assert compare.hostlist([]) == ""


def _write_bundle(path, env: str) -> None:
    ev = [Evidence("env-self", Status.OK, rc=0, stdout=env.encode(), argv=["cat"]),
          Evidence("limits", Status.OK, rc=0, stdout=corpus.load("limits/this-sandbox-root-memlock-8192-shm-tmpfs.txt").encode(), argv=["sh"]),
          Evidence("nvidia-smi-q", Status.NOT_INSTALLED, rc=127, reason="nvidia-smi is not installed", argv=["nvidia-smi"])]
    manifest, files = bmod.build_manifest({"target": ({"kind": "local", "label": "t"}, ev)})
    bmod.write(path, manifest, files)


def test_bundles_stream_with_sidecars(tmp_path) -> None:
    for i in range(4):
        _write_bundle(tmp_path / f"node{i}.bundle.tar.gz", f"PATH=/bin\0NCCL_DEBUG={'WARN' if i == 3 else 'INFO'}\0")
    (tmp_path / "node1.facts.json").write_text("{not json")  # a broken sidecar is ignored
    compare.write_sidecar(tmp_path / "node2.bundle.tar.gz")
    paths = compare.find_bundles(tmp_path)
    assert [compare.node_name(p) for p in paths] == ["node0", "node1", "node2", "node3"]
    rep = compare.compare_node_bundles(paths, workers=1)
    assert [(f.fact, [o.node for o in f.outliers]) for f in rep.outliers][:2] == [
        ("env.var.NCCL_DEBUG", ["node3"]), ("nccl.debug", ["node3"])]
    facts, status = compare.bundle_facts(paths[0])
    assert status["nvidia-smi-q"] == "not-installed" and facts["evidence.nvidia-smi-q"] == "not-installed"
    assert facts["limits.memlock_kb"] == 8192
    # the same with two worker processes
    rep2 = compare.compare_node_bundles(paths, workers=2)
    assert [f.fact for f in rep2.outliers] == [f.fact for f in rep.outliers]


def test_before_after_on_bundles(tmp_path) -> None:
    _write_bundle(tmp_path / "a.bundle.tar.gz", "NCCL_DEBUG=INFO\0")
    _write_bundle(tmp_path / "b.bundle.tar.gz", "NCCL_DEBUG=WARN\0")
    res = compare.compare_bundles(tmp_path / "a.bundle.tar.gz", tmp_path / "b.bundle.tar.gz")
    assert res.profile == "generic" and res.reference_ratio_min == 0.95
    assert "env.var.NCCL_DEBUG" in [c.name for c in res.changes]
    assert json.loads(json.dumps(res.as_dict(), default=str))["kind"] == "before-after"


# ------------------------------------------------------------------ limits parser
def test_limits_parser() -> None:
    f = parsers.run("limits", corpus.load("limits/this-sandbox-root-memlock-8192-shm-tmpfs.txt"))
    assert f["limits.memlock"] == "8192" and f["limits.memlock_unlimited"] is False
    assert f["limits.nofile"] == 20000 and f["limits.shm_kb"] == 24684084 and f["limits.shm_fstype"] == "tmpfs"
    f = parsers.run("limits", "#@ limits 1\nmemlock_soft=unlimited\nmemlock_hard=unlimited\nshm_present=0\n")
    assert f["limits.memlock_unlimited"] is True and "limits.memlock_kb" not in f and f["limits.shm_present"] is False
    for bad in ("", "hello", "#@ limits 1\nnothing here\n"):
        with pytest.raises(parsers.ParseError):
            parsers.run("limits", bad)
    assert parsers.detect(corpus.load("limits/this-sandbox-root-memlock-8192-shm-tmpfs.txt")) == "limits"
