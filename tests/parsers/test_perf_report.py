import shutil

import pytest
from hypothesis import given, settings, strategies as st

from troubleshooter.model import facts
from troubleshooter import parsers
from troubleshooter.parsers import ParseError
from tests.corpus import files, load

KIND = "perf-report"


def parse(rel):
    return parsers.run(KIND, load("perf/" + rel))


def test_arm64_perf_top_smmu_cmdq():
    f = parse("arm64-64cpu-perf-top-smmu-8.99pct-queued-spin-lock.txt")
    assert f["perf.top_symbol"] == "arm_smmu_cmdq_issue_cmdlist"
    assert f["perf.top_pct"] == 8.99
    assert f["perf.smmu_cmdq_pct"] == 8.99
    assert f["perf.spinlock_pct"] == 2.07  # queued_spin_lock_slowpath (arm64 name)
    assert f["perf.iommu_pct"] == 8.99
    assert f["perf.event"] == "cycles"
    assert "perf.samples" not in f
    assert f["perf.top"][0] == {"pct": 8.99, "command": None, "dso": "[kernel]",
                                "symbol": "arm_smmu_cmdq_issue_cmdlist", "kernel": True}
    assert f["perf.top"][-1] == {"pct": 1.93, "command": None, "dso": "[vdso]", "symbol": "0x0000000000000484",
                                 "kernel": False}
    assert len(f["perf.top"]) == 9


def test_x86_fio_perf_report_osq_lock():
    f = parse("x86-fio-md-raid-perf-report-osq_lock-73pct.txt")
    assert f["perf.top_symbol"] == "osq_lock" and f["perf.top_pct"] == 73.48
    # osq_lock 73.48 + native_queued_spin_lock_slowpath 3.49 + _raw_spin_lock_irqsave 0.60 + _raw_spin_lock 0.34
    assert f["perf.spinlock_pct"] == 77.91
    assert f["perf.smmu_cmdq_pct"] == 0.0 and f["perf.iommu_pct"] == 0.0
    assert f["perf.samples"] == 15527198  # exact count from the perf record trailer
    assert f["perf.event"] == "cycles"
    assert f["perf.entries"] == 46
    assert f["perf.top"][0]["command"] == "fio" and f["perf.top"][0]["dso"] == "[kernel.kallsyms]"
    iret = [e for e in f["perf.top"] if e["symbol"] == "native_irq_return_iret"][0]
    assert iret["kernel"] is True  # [.] marker but kernel DSO
    getio = [e for e in f["perf.top"] if e["symbol"] == "get_io_u"][0]
    assert getio == {"pct": 0.26, "command": "fio", "dso": "fio", "symbol": "get_io_u", "kernel": False}


def test_x86_nfsd_mail_quoted_with_call_graph():
    f = parse("x86-nfsd-perf-top-native-queued-spin-lock-82pct.txt")
    assert f["perf.entries"] == 4  # call-graph lines ('- 89.34% svc_process') are not entries
    assert f["perf.top_symbol"] == "native_queued_spin_lock_slowpath" and f["perf.top_pct"] == 82.91
    assert f["perf.spinlock_pct"] == 82.91
    assert [e["command"] for e in f["perf.top"]] == ["nfsd", "swapper", "nfsd", "nfsd"]
    assert "perf.event" not in f


def test_x86_intel_iommu_perf_top_quoted_printable_header():
    f = parse("x86-perf-top-intel-iommu-clflush-pfn_to_dma_pte-thunderbolt-net-qp.txt")
    assert f["perf.top_symbol"] == "clflush_cache_range" and f["perf.top_pct"] == 7.36
    # clflush_cache_range counts (intel_iommu symbols present) + pfn_to_dma_pte, intel_iommu_*, dma_pte_*,
    # alloc_iova_fast, iommu_*, __iommu_*, cache_tag_flush_range_np
    assert f["perf.iommu_pct"] == 20.82
    assert f["perf.spinlock_pct"] == 3.87  # _raw_spin_lock_irqsave 2.74 + _raw_spin_lock 1.13
    assert f["perf.event"] == "cycles"
    assert f["perf.entries"] == 47


def test_clflush_alone_is_not_iommu():
    f = parsers.run(KIND, "  5.00%  [kernel]  [k] clflush_cache_range\n  1.00%  [kernel]  [k] memcpy\n")
    assert f["perf.iommu_pct"] == 0.0


def test_children_self_columns_use_self():
    text = (
        "# Samples: 2K of event 'cycles'\n"
        "# Children      Self  Command  Shared Object      Symbol\n"
        "    90.00%     0.00%  python   [kernel.kallsyms]  [k] entry_SYSCALL_64\n"
        "    30.00%    24.00%  qemu     [kernel.kallsyms]  [k] arm_smmu_cmdq_issue_cmdlist\n"
        "            |\n"
        "            ---arm_smmu_cmdq_issue_cmdlist\n"
        "    10.00%    10.00%  python   libc.so.6          [.] memcpy\n"
    )
    f = parsers.run(KIND, text)
    assert f["perf.top_symbol"] == "arm_smmu_cmdq_issue_cmdlist"
    assert f["perf.smmu_cmdq_pct"] == 24.0
    assert f["perf.samples"] == 2000
    assert [e["pct"] for e in f["perf.top"]] == [24.0, 10.0, 0.0]


@pytest.mark.parametrize("text", ["", "\n\n", "Samples: 0 of event 'cycles'\n", "just some words\n"])
def test_empty_or_not_perf(text):
    with pytest.raises(ParseError):
        parsers.run(KIND, text)


@pytest.mark.parametrize("path", files("perf"), ids=lambda p: p.name)
def test_detect(path):
    assert parsers.detect(load("perf/" + path.name)) == KIND


def test_declared_facts():
    declared = set(parsers.get(KIND).facts)
    for path in files("perf"):
        out = parsers.run(KIND, load("perf/" + path.name))
        assert set(out) <= declared
        for name in out:
            assert facts.spec(name) is not None


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_random_text_only_parse_error(text):
    try:
        parsers.get(KIND).func(text)
    except ParseError:
        pass


def test_perf_sample_source_runs_for_real():
    from tests.integration.conftest import unavailable
    from troubleshooter.probe import measure

    if shutil.which("perf") is None:
        unavailable("perf is not installed (Debian: linux-perf; .ci/run installs it)")
    from troubleshooter import sources
    from troubleshooter.probe.targets import LocalTarget

    src = sources.get("perf-sample")
    assert src.active and src.root and src.parser == KIND
    m = measure.perf_sample(LocalTarget(), sample_s=1)
    if m.evidence.status.value == "permission-denied":
        pytest.skip(m.evidence.reason)
    assert m.evidence.ok, m.evidence.describe()
    assert not m.parse_error
    assert m.facts["perf.entries"] > 0
    assert m.facts["perf.event"] in ("cpu-clock", "cycles", "task-clock")
    assert m.facts["perf.samples"] > 0
    assert 0 < m.facts["perf.top_pct"] <= 100
    assert not list(__import__("pathlib").Path("/tmp").glob("troubleshooter-perf.*"))  # tmpfile removed


def test_perf_sample_permission_denied_says_why(tmp_path):
    import dataclasses
    import os
    from pathlib import Path

    from troubleshooter import sources
    from troubleshooter.sources.base import Params
    from troubleshooter.probe.targets import LocalTarget

    fake = Path(__file__).resolve().parents[1] / "fakes" / "paranoid"
    src = sources.get("perf-sample")
    src = dataclasses.replace(src, env=src.env + (("PATH", f"{fake}:{os.environ.get('PATH', '/usr/bin:/bin')}"),))
    ev = LocalTarget().run(src, Params(sample_s=1))
    assert ev.status.value == "permission-denied"
    assert "perf_event_paranoid" in ev.reason and "root or CAP_PERFMON" in ev.reason
