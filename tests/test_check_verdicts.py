"""Every preflight check's verdicts, judged as ``troubleshooter check`` judges them.

``CASES`` gives each check in ``decision_trees/checks.yaml`` facts that must give each verdict it defines
(a pass case and a fail/warn case at least), at the edge of its threshold where it has one, under every
profile's thresholds. ``REAL`` does the same from real captured outputs in ``tests/data``. So flipping a
check's operator (``lt`` -> ``gt``) or moving a literal threshold (``gt 0`` -> ``gt 1000``) fails a test;
``test_every_mutation_of_an_operator_or_literal_changes_a_verdict`` makes every such edit and proves it.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable

import pytest

from troubleshooter import parsers
from troubleshooter.diagnosis import checks, profiles
from troubleshooter.model.facts import FactSet

DATA = Path(__file__).parent / "data"

Facts = Callable[[dict[str, Any]], dict[str, Any]]  # profile thresholds -> facts


def _turbo_edge(t: dict[str, Any]) -> float:
    # the same product the evaluator computes for {fact: cpu.max_turbo_mhz, times: {profile: ...}}
    return float(3800) * float(t["cpu_busy_mhz_min_ratio"])


#: check id -> [(expected verdict, facts)]; thresholds come from the profile under test
CASES: dict[str, list[tuple[str, Facts]]] = {
    "gpu-visible": [
        ("fail", lambda t: {"gpu.count": 0}),
        ("pass", lambda t: {"gpu.count": 1, "gpu.driver_version": "570.1"}),
        ("pass", lambda t: {"gpu.count": 8, "gpu.driver_version": "570.1"}),
    ],
    "gpu-throttle": [
        ("fail", lambda t: {"gpu.throttled": [0], "gpu.throttle_reasons": ["sw_power_cap"]}),
        ("pass", lambda t: {"gpu.throttled": [], "gpu.throttle_reasons": []}),
    ],
    "gpu-ecc": [
        ("fail", lambda t: {"gpu.ecc_uncorrected_total": 1, "gpu.remapped_rows_failure": 0, "gpu.remapped_rows_pending": 0}),
        ("fail", lambda t: {"gpu.ecc_uncorrected_total": 0, "gpu.remapped_rows_failure": 1, "gpu.remapped_rows_pending": 0}),
        ("warn", lambda t: {"gpu.ecc_uncorrected_total": 0, "gpu.remapped_rows_failure": 0, "gpu.remapped_rows_pending": 1}),
        ("pass", lambda t: {"gpu.ecc_uncorrected_total": 0, "gpu.remapped_rows_failure": 0, "gpu.remapped_rows_pending": 0}),
    ],
    "gpu-pcie": [
        ("warn", lambda t: {"gpu.pcie_degraded": [{"index": 0, "gen": 1, "gen_max": 5, "width": 16, "width_max": 16}]}),
        ("pass", lambda t: {"gpu.pcie_degraded": []}),
    ],
    "gpu-nvlink": [
        ("fail", lambda t: {"gpu.nvlink_inactive": 1}),
        ("pass", lambda t: {"gpu.nvlink_inactive": 0}),
        # PCIe-only GPUs: no NVLink to be down, and no NVLink to be up either
        ("n/a", lambda t: {"gpu.nvlink_present": False}),
    ],
    "gpu-temperature": [
        ("warn", lambda t: {"gpu.temp_max_c": t["gpu_temp_max_c"]}),
        ("pass", lambda t: {"gpu.temp_max_c": t["gpu_temp_max_c"] - 1}),
    ],
    "kernel-xid": [
        ("fail", lambda t: {"dmesg.xid_codes": [79], "dmesg.fallen_off_bus": False}),
        ("fail", lambda t: {"dmesg.xid_codes": [], "dmesg.fallen_off_bus": True}),
        ("fail", lambda t: {"dmesg.xid_codes": [], "dmesg.fallen_off_bus": False, "dmesg.sxid_fatal_codes": [24007]}),
        ("pass", lambda t: {"dmesg.xid_codes": [], "dmesg.fallen_off_bus": False, "dmesg.sxid_fatal_codes": []}),
    ],
    "vm-cmdqv": [
        ("warn", lambda t: {"host.arch": "aarch64", "host.virt": "kvm", "kernel.cmdqv_configured": False,
                            "dmesg.cmdqv_probed": False}),
        ("pass", lambda t: {"host.arch": "aarch64", "host.virt": "kvm", "kernel.cmdqv_configured": True,
                            "dmesg.cmdqv_probed": True}),
        # no Arm guest: nothing to check, which is not a pass
        ("n/a", lambda t: {"host.arch": "x86_64", "host.virt": "kvm", "kernel.cmdqv_configured": False,
                           "dmesg.cmdqv_probed": False}),
        ("n/a", lambda t: {"host.arch": "aarch64", "host.virt": "none", "kernel.cmdqv_configured": False,
                           "dmesg.cmdqv_probed": False}),
        # an Arm guest whose kernel has CMDQV but did not probe it: neither verdict is earned
        ("unknown", lambda t: {"host.arch": "aarch64", "host.virt": "kvm", "kernel.cmdqv_configured": True,
                               "dmesg.cmdqv_probed": False}),
    ],
    "vm-steal": [
        ("warn", lambda t: {"cpu.steal_pct": t["cpu_steal_max_pct"] + 0.1}),
        ("pass", lambda t: {"cpu.steal_pct": t["cpu_steal_max_pct"]}),
        ("pass", lambda t: {"cpu.steal_pct": 0.0}),
    ],
    "iommu-faults": [
        ("warn", lambda t: {"dmesg.iommu_faults": 1}),
        ("pass", lambda t: {"dmesg.iommu_faults": 0}),
    ],
    "cpu-cstates": [
        ("fail", lambda t: {"host.virt": "none", "kernel.max_cstate": 9, "kernel.idle": "halt",
                            "cpu.deep_cstates_enabled": False}),
        ("fail", lambda t: {"host.virt": "none", "kernel.max_cstate": 1, "kernel.idle": "halt",
                            "cpu.deep_cstates_enabled": True}),
        ("fail", lambda t: {"host.virt": "none", "kernel.max_cstate": 9, "kernel.idle": "poll",
                            "cpu.deep_cstates_enabled": True}),
        ("warn", lambda t: {"host.virt": "kvm", "kernel.max_cstate": 9, "kernel.idle": "halt",
                            "cpu.deep_cstates_enabled": False}),
        ("pass", lambda t: {"host.virt": "none", "kernel.max_cstate": 2, "kernel.idle": "halt",
                            "cpu.deep_cstates_enabled": True}),
    ],
    "cpu-turbo": [
        ("fail", lambda t: {"cpu.max_turbo_mhz": 3800, "cpu.busy_cores_mhz": _turbo_edge(t) - 1}),
        ("pass", lambda t: {"cpu.max_turbo_mhz": 3800, "cpu.busy_cores_mhz": _turbo_edge(t)}),
        ("pass", lambda t: {"cpu.max_turbo_mhz": 3800, "cpu.busy_cores_mhz": 3800}),
    ],
    "cpu-governor": [
        ("warn", lambda t: {"cpu.freq.governor": "powersave"}),
        ("pass", lambda t: {"cpu.freq.governor": "performance"}),
    ],
    "numa-remote": [
        ("fail", lambda t: {"numa.proc.remote_pct": t["numa_remote_max_pct"] + 0.1}),
        ("pass", lambda t: {"numa.proc.remote_pct": t["numa_remote_max_pct"]}),
        ("pass", lambda t: {"numa.proc.remote_pct": 0.0}),
    ],
    "numa-free": [
        ("warn", lambda t: {"numa.min_free_pct": t["numa_min_free_pct"] - 0.1}),
        ("pass", lambda t: {"numa.min_free_pct": t["numa_min_free_pct"]}),
        ("pass", lambda t: {"numa.min_free_pct": 90.0}),
    ],
    "topo-file": [
        ("fail", lambda t: {"nccl.topo_file.from_env": True, "nccl.topo_file.visible": False,
                            "nccl.etc_topo.visible": False, "host.virt": "kvm", "gpu.count": 8}),
        ("fail", lambda t: {"nccl.topo_file.from_env": True, "nccl.topo_file.visible": True,
                            "nccl.topo_file.parse_ok": False, "host.virt": "kvm", "gpu.count": 8}),
        ("warn", lambda t: {"nccl.topo_file.from_env": False, "nccl.topo_file.visible": False,
                            "nccl.etc_topo.visible": False, "host.virt": "kvm", "gpu.count": 1}),
        ("pass", lambda t: {"nccl.topo_file.from_env": True, "nccl.topo_file.visible": True,
                            "nccl.topo_file.parse_ok": True, "nccl.etc_topo.visible": False, "host.virt": "kvm",
                            "gpu.count": 8}),
        ("n/a", lambda t: {"nccl.topo_file.from_env": False, "nccl.topo_file.visible": False,
                           "nccl.etc_topo.visible": False, "host.virt": "none", "gpu.count": 8}),
        ("pass", lambda t: {"nccl.topo_file.from_env": False, "nccl.topo_file.visible": True,
                            "nccl.etc_topo.visible": True, "host.virt": "none", "gpu.count": 8}),
        # a VM with no GPU: nothing says NCCL will need a topology file, nor that it has one
        ("unknown", lambda t: {"nccl.topo_file.from_env": False, "nccl.topo_file.visible": False,
                               "nccl.etc_topo.visible": False, "host.virt": "kvm", "gpu.count": 0}),
    ],
    "ib-devices": [
        ("fail", lambda t: {"ib.sysfs_present": True, "ib.dev_infiniband_visible": False}),
        ("pass", lambda t: {"ib.sysfs_present": True, "ib.dev_infiniband_visible": True}),
        # no RDMA device at all: "not applicable", never a pass (issue 15: not ruled out)
        ("n/a", lambda t: {"ib.sysfs_present": False, "ib.dev_infiniband_visible": False}),
    ],
    "ib-ports": [
        ("fail", lambda t: {"ib.down_ports": ["mlx5_1/1"], "ib.min_active_rate_gbps": t["ib_rate_min_gbps"],
                            "ib.active_ports": 1, "ib.sysfs_present": True}),
        ("warn", lambda t: {"ib.down_ports": [], "ib.min_active_rate_gbps": t["ib_rate_min_gbps"] - 1,
                            "ib.active_ports": 1, "ib.sysfs_present": True}),
        ("pass", lambda t: {"ib.down_ports": [], "ib.min_active_rate_gbps": t["ib_rate_min_gbps"],
                            "ib.active_ports": 1, "ib.sysfs_present": True}),
        ("n/a", lambda t: {"ib.down_ports": [], "ib.min_active_rate_gbps": t["ib_rate_min_gbps"],
                           "ib.active_ports": 0, "ib.sysfs_present": False}),
        # RDMA devices but not one port active: not a pass
        ("unknown", lambda t: {"ib.down_ports": [], "ib.min_active_rate_gbps": t["ib_rate_min_gbps"],
                               "ib.active_ports": 0, "ib.sysfs_present": True}),
    ],
    "collective-allgather": [
        ("fail", lambda t: {"nccl_tests.failed": True, "nccl_tests.wrong_total": 0}),
        ("fail", lambda t: {"nccl_tests.failed": False, "nccl_tests.wrong_total": 1,
                            "nccl_tests.busbw_at_max_size_gbps": 80.0}),
        ("pass", lambda t: {"nccl_tests.failed": False, "nccl_tests.wrong_total": 0,
                            "nccl_tests.busbw_at_max_size_gbps": 80.0, "nccl_tests.max_size_bytes": 1 << 30}),
        ("unknown", lambda t: {"nccl_tests.failed": False, "nccl_tests.wrong_total": 0}),
    ],
    "collective-qps-sweep": [
        ("warn", lambda t: {"sweep.within_noise": False, "sweep.gain_pct": t["sweep_gain_min_pct"] + 0.1,
                            "sweep.recommendation": "set NCCL_IB_QPS_PER_CONNECTION=4"}),
        ("pass", lambda t: {"sweep.within_noise": True, "sweep.gain_pct": 0.5, "sweep.recommendation": "keep"}),
        # above the noise but not above the profile's minimum gain: no recommendation, no pass either
        ("unknown", lambda t: {"sweep.within_noise": False, "sweep.gain_pct": t["sweep_gain_min_pct"],
                               "sweep.recommendation": "keep"}),
    ],
    "cpu-profile-smmu": [
        ("fail", lambda t: {"perf.smmu_cmdq_pct": t["perf_smmu_cmdq_max_pct"] + 0.01, "perf.spinlock_pct": 0.0,
                            "perf.top_pct": 20.0, "perf.top_symbol": "arm_smmu_cmdq_issue_cmdlist"}),
        ("warn", lambda t: {"perf.smmu_cmdq_pct": t["perf_smmu_cmdq_max_pct"],
                            "perf.spinlock_pct": t["perf_spinlock_max_pct"] + 0.01,
                            "perf.top_pct": 20.0, "perf.top_symbol": "native_queued_spin_lock_slowpath"}),
        ("pass", lambda t: {"perf.smmu_cmdq_pct": t["perf_smmu_cmdq_max_pct"],
                            "perf.spinlock_pct": t["perf_spinlock_max_pct"],
                            "perf.top_pct": 20.0, "perf.top_symbol": "memcpy"}),
        ("unknown", lambda t: {"perf.smmu_cmdq_pct": 0.0, "perf.spinlock_pct": 0.0}),
    ],
}

#: (check id, expected verdict, profile, [(parser kind, file under tests/data)]) from real captured outputs
REAL: list[tuple[str, str, str, list[tuple[str, str]]]] = [
    ("kernel-xid", "fail", "generic", [("dmesg", "dmesg/nvrm-xid13-xid109-ctx-switch-timeout-dmesg-ctime-gpud-doc.txt")]),
    ("kernel-xid", "fail", "generic", [("dmesg", "dmesg/gpu-fallen-off-bus-multiline-no-xid-nvsentinel.txt")]),
    ("kernel-xid", "pass", "generic", [("dmesg", "dmesg/dmesg-kernel-cmdline-spectre-off-nopti-intel_iommu-on-dmar-enabled-rocm.txt")]),
    ("kernel-xid", "fail", "generic", [("dmesg", "dmesg/talos-hgx-a100-nvswitch-sxid-24007-severity1-ogkm1118.txt")]),
    # a non-fatal SXid (a MINION link interrupt) is not a failed check
    ("kernel-xid", "pass", "generic", [("dmesg", "dmesg/hgx-nvswitch-sxid-22013-nonfatal-minion-link60.txt")]),
    ("iommu-faults", "warn", "generic", [("dmesg", "dmesg/amd-vi-io-page-fault-nvidia-p2p-cuda-samples-journal.txt")]),
    ("iommu-faults", "pass", "generic", [("dmesg", "dmesg/dmesg-kernel-cmdline-spectre-off-nopti-intel_iommu-on-dmar-enabled-rocm.txt")]),
    # SW power cap at the default power limit (300 of 300 W) is the GPU keeping to its budget, not a slowdown
    ("gpu-throttle", "pass", "generic", [("nvidia-smi-q", "nvidia-smi/a40x10-driver550-table-and-q-idle-p8-sw-power-cap-active-dram-ce-remapped.txt")]),
    ("gpu-throttle", "pass", "generic", [("nvidia-smi-q", "nvidia-smi/rtx5080-laptop-driver580-full-q-event-reason-counters.txt")]),
    ("gpu-ecc", "pass", "generic", [("nvidia-smi-q", "nvidia-smi/a40x10-driver550-table-and-q-idle-p8-sw-power-cap-active-dram-ce-remapped.txt")]),
    ("gpu-visible", "pass", "generic", [("nvidia-smi-q", "nvidia-smi/rtx5080-laptop-driver580-full-q-event-reason-counters.txt")]),
    ("gpu-temperature", "pass", "generic", [("nvidia-smi-q", "nvidia-smi/rtx5080-laptop-driver580-full-q-event-reason-counters.txt")]),
    ("gpu-pcie", "warn", "generic", [("nvidia-smi-q", "nvidia-smi/rtx5080-laptop-driver580-full-q-event-reason-counters.txt")]),
    ("cpu-turbo", "fail", "generic", [("turbostat", "turbostat/westmere-debug-preamble-node-minus1.txt")]),
    ("cpu-cstates", "warn", "generic", [("cpuidle", "cpuidle/this-sandbox-haltpoll.txt"), ("virt", "host/virt-this-sandbox-kvm.txt")]),
    ("vm-steal", "pass", "generic", [("procstat", "host/proc-stat-this-sandbox.txt")]),
    ("vm-cmdqv", "n/a", "generic", [("virt", "host/virt-this-sandbox-kvm.txt")]),
    ("numa-remote", "pass", "generic", [("numastat", "numa/local-1node-numastat-p-bash-two-decimals.txt")]),
    ("numa-free", "warn", "generic", [("numactl", "numa/vm-2node-uneven-cpus-free-191mb-numactl-numastat-c.txt")]),
    ("numa-free", "pass", "generic", [("numactl", "numa/epyc9375f-2s-smt-off-numactl-distance-32-numastat-m-token-warnings.txt")]),
    ("cpu-profile-smmu", "fail", "gb200", [("perf-report", "perf/arm64-64cpu-perf-top-smmu-8.99pct-queued-spin-lock.txt")]),
    ("cpu-profile-smmu", "warn", "generic", [("perf-report", "perf/x86-nfsd-perf-top-native-queued-spin-lock-82pct.txt")]),
    ("cpu-profile-smmu", "pass", "generic", [("perf-report", "perf/x86-perf-top-intel-iommu-clflush-pfn_to_dma_pte-thunderbolt-net-qp.txt")]),
]

PROFILES = sorted(profiles.load_all())


def _judge(check: checks.Check, facts: dict[str, Any], thresholds: dict[str, Any]) -> checks.CheckResult:
    fs = FactSet()
    fs.update_from(facts, source="test")
    return checks.judge(check, fs, thresholds, {})


def _run(facts: dict[str, Any], thresholds: dict[str, Any]) -> dict[str, checks.CheckResult]:
    from troubleshooter.model import combine

    fs = FactSet()
    fs.update_from(facts, source="test")
    combine.apply(fs)  # as `check` does (probe.collect): facts implied by others, e.g. remote NUMA memory
    return {r.id: r for r in checks.run_checks(fs, thresholds, {}, measure=True)}


def _all_cases():
    for cid, cases in CASES.items():
        for i, (verdict, _) in enumerate(cases):
            yield pytest.param(cid, i, id=f"{cid}-{verdict}-{i}")


@pytest.mark.parametrize("profile_id", PROFILES)
@pytest.mark.parametrize(("check_id", "index"), list(_all_cases()))
def test_check_gives_its_verdict(check_id: str, index: int, profile_id: str) -> None:
    thresholds = dict(profiles.get(profile_id).thresholds)
    expected, make = CASES[check_id][index]
    facts = make(thresholds)
    result = _run(facts, thresholds)[check_id]
    assert result.verdict == expected, f"{check_id} under {profile_id} with {facts}: {result.verdict} ({result.reason})"
    assert result.reason


@pytest.mark.parametrize(("check_id", "expected", "profile_id", "inputs"), REAL,
                         ids=[f"{c}-{v}-{Path(i[0][1]).stem[:40]}" for c, v, _, i in REAL])
def test_check_verdict_on_real_outputs(check_id: str, expected: str, profile_id: str, inputs) -> None:
    facts: dict[str, Any] = {}
    for kind, rel in inputs:
        facts.update(parsers.run_file(kind, DATA / rel))
    thresholds = dict(profiles.get(profile_id).thresholds)
    result = _run(facts, thresholds)[check_id]
    assert result.verdict == expected, f"{check_id} on {inputs}: {result.verdict} ({result.reason})"


def test_every_check_has_a_case_for_every_verdict_it_gives() -> None:
    loaded = checks.load()
    ids = [c.id for c in loaded]
    assert sorted(CASES) == sorted(ids), "CASES must name exactly the checks in checks.yaml"
    for c in loaded:
        have = {v for v, _ in CASES[c.id]}
        assert "pass" in c.blocks, f"{c.id} has no pass block"
        assert set(c.blocks) <= have, f"{c.id}: no case for {sorted(set(c.blocks) - have)}"
        assert "pass" in have and have & {"fail", "warn"}, f"{c.id} needs a pass and a fail/warn case"


_FLIP = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "ne", "ne": "eq", "exists": "missing",
         "missing": "exists", "in": "not_in", "not_in": "in"}


def _leaves(cond: Any, path: tuple = ()):
    if not isinstance(cond, dict):
        return
    for k in ("all", "any"):
        if k in cond:
            for i, c in enumerate(cond[k]):
                yield from _leaves(c, path + (k, i))
            return
    if "not" in cond:
        yield from _leaves(cond["not"], path + ("not",))
        return
    yield path, cond


def _at(cond: Any, path: tuple) -> dict:
    for p in path:
        cond = cond[p]
    return cond


def _mutants(check: checks.Check):
    for verdict, block in check.blocks.items():
        for path, leaf in _leaves(block["when"]):
            op = leaf.get("op", "exists")
            if op in _FLIP:
                yield f"{verdict} {leaf['fact']} {op}->{_FLIP[op]}", verdict, path, {"op": _FLIP[op]}
            v = leaf.get("value")
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                yield f"{verdict} {leaf['fact']} value {v}->{v + 1000}", verdict, path, {"value": v + 1000}


@pytest.mark.parametrize("check_id", sorted(CASES))
def test_every_mutation_of_an_operator_or_literal_changes_a_verdict(check_id: str) -> None:
    """What a reviewer's edit of checks.yaml could break: each flipped operator and each literal threshold
    moved by 1000 must change the verdict of at least one case above (under the generic profile)."""
    check = next(c for c in checks.load() if c.id == check_id)
    thresholds = dict(profiles.get("generic").thresholds)
    survivors = []
    for name, verdict, path, change in _mutants(check):
        mutant = copy.deepcopy(check)
        _at(mutant.blocks[verdict]["when"], path).update(change)
        if all(_judge(mutant, make(thresholds), thresholds).verdict == expected for expected, make in CASES[check_id]):
            survivors.append(name)
    assert not survivors, f"{check_id}: no case notices these edits of checks.yaml: {survivors}"
