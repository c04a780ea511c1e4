"""End-to-end tests of the active measurements through LocalTarget, with fake nccl-tests binaries."""

from pathlib import Path


from troubleshooter.probe import measure
from troubleshooter import sources
from troubleshooter.model.evidence import Status
from troubleshooter.probe.targets import ExecTarget, LocalTarget

FAKES = Path(__file__).parent / "fakes"
AG = str(FAKES / "all_gather_perf")
RS = str(FAKES / "reduce_scatter_perf")


def test_find_nccl_tests_in_search_dirs():
    found = measure.find_nccl_tests(LocalTarget(), ["/nonexistent", str(FAKES)])
    assert found == {"all_gather_perf": AG, "reduce_scatter_perf": RS}


def test_find_nccl_tests_through_a_wrapper():
    found = measure.find_nccl_tests(ExecTarget(["env"]), [str(FAKES)])
    assert found["all_gather_perf"] == AG


def test_run_nccl_test_parses_and_passes_env():
    m = measure.run_nccl_test(LocalTarget(), AG, "256M", "1G", 2, 1, 5, env={"NCCL_IB_QPS_PER_CONNECTION": "4"}, timeout=20)
    assert m.ok, m.evidence.describe()
    assert m.evidence.argv == [AG, "-b", "256M", "-e", "1G", "-f", "2", "-g", "1", "-n", "5"]
    assert m.facts["nccl_tests.collective"] == "all_gather"
    assert [r["size_bytes"] for r in m.facts["nccl_tests.rows"]] == [268435456, 536870912, 1073741824]
    assert 60 <= m.facts["nccl_tests.busbw_at_max_size_gbps"] <= 62
    assert m.facts["nccl_tests.ranks"] == 16 and m.facts["nccl_tests.nodes"] == 2


def test_env_on_a_wrapped_target_goes_through_env_prefix():
    m = measure.run_nccl_test(ExecTarget(["env"]), RS, "1G", "1G", env={"NCCL_IB_QPS_PER_CONNECTION": "1"}, timeout=20)
    assert m.ok
    assert "NCCL_IB_QPS_PER_CONNECTION=1" in m.evidence.argv
    assert m.facts["nccl_tests.collective"] == "reduce_scatter"
    assert 27 <= m.facts["nccl_tests.busbw_at_max_size_gbps"] <= 29


def test_sweep_finds_qps_4():
    r = measure.sweep(LocalTarget(), AG, values=(1, 2, 4, 8), min_bytes="256M", max_bytes="1G", repeats=2, timeout=20)
    assert r.best == "4"
    assert r.baseline == "1"
    assert 110 <= r.gain_pct <= 126  # ~61 vs ~28 GB/s
    assert r.within_noise is False
    assert r.recommendation.startswith("set NCCL_IB_QPS_PER_CONNECTION=4")
    assert len(r.runs) == 8 and len(r.evidence) == 8 and all(e.ok for e in r.evidence)
    assert set(r.busbw) == {"1", "2", "4", "8"} and set(r.busbw["4"]) == {268435456, 536870912, 1073741824}
    assert r.problems == []
    assert r.as_dict()["best"] == "4"


def test_flat_sweep_is_within_noise_and_keeps_default():
    r = measure.sweep(LocalTarget(), AG, values=(1, 2, 4, 8), min_bytes="256M", max_bytes="1G", repeats=2,
                      env={"FAKE_NCCL_FLAT": "1"}, timeout=20)
    assert r.within_noise is True
    assert abs(r.gain_pct) < 3
    assert r.recommendation.startswith("keep NCCL_IB_QPS_PER_CONNECTION=1")
    assert "set " not in r.recommendation


def test_sweep_reports_a_hanging_value_and_goes_on():
    r = measure.sweep(LocalTarget(), AG, values=(1, 2, 4), min_bytes="1G", max_bytes="1G", repeats=1,
                      env={"FAKE_NCCL_HANG_QPS": "4"}, timeout=1.5)
    statuses = {run.value: run.measurement.evidence.status for run in r.runs}
    assert statuses == {"1": Status.OK, "2": Status.OK, "4": Status.TIMED_OUT}
    assert "4" not in r.score_gbps
    assert r.best == "2"  # never the value that did not finish
    assert any("NCCL_IB_QPS_PER_CONNECTION=4" in p and "timed-out" in p for p in r.problems)
    assert "=4" not in r.recommendation


def test_sweep_without_baseline_measurement_recommends_nothing():
    r = measure.sweep(LocalTarget(), AG, values=(1, 4), min_bytes="1G", max_bytes="1G", repeats=1,
                      env={"FAKE_NCCL_HANG_QPS": "1"}, timeout=1.5)
    assert r.recommendation.startswith("no recommendation")
    assert r.within_noise is None


def test_missing_binary_is_not_installed():
    m = measure.run_nccl_test(LocalTarget(), "/nonexistent/all_gather_perf", timeout=5)
    assert m.evidence.status is Status.NOT_INSTALLED and not m.ok


def test_cpu_microbench():
    m = measure.cpu_microbench(LocalTarget(), seconds=0.2)
    assert m.ok, m.evidence.describe()
    assert m.facts["cpu.single_thread_score"] > 1000


def test_perf_sample_is_declared_active():
    src = sources.get("perf-sample")
    assert src.active and src.root and src.parser == "perf-report" and src.family == "measure"
    assert src.argv[:2] == ("sh", "-c") and src.argv[-1] == "{sample_s}"
    script = src.argv[2]
    assert "perf record -a -g -o" in script and "--no-children --sort comm,dso,sym" in script
    assert "perf top" not in script
    # nccl-tests run only when invoked explicitly: no default source runs them
    # nccl-tests only ever run on request (--measure): every source that runs them is active
    nccl = [s for s in sources.load_all().values() if s.parser in ("nccl-tests", "nccl-sweep")]
    assert nccl and all(s.active for s in nccl)
