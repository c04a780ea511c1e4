import os

import pytest
from hypothesis import given, settings, strategies as st

from troubleshooter.model import facts as factreg
from troubleshooter import parsers, sources
from troubleshooter.model.evidence import Status
from troubleshooter.parsers import ParseError
from troubleshooter.probe.targets import LocalTarget
from tests.corpus import load

KIND = "numastat"


def parse(text):
    return parsers.run(KIND, text)


def test_cpuless_node2_last_table_wins():
    f = parse(load("numa/numastat-cpuless-node2-skewed-miss-before-after-lkml.txt"))
    # the "After Patch" table (the last of the two) is the one reported
    assert f["numa.per_node"]["2"] == {"numa_hit": 0, "numa_miss": 21495942, "numa_foreign": 0,
                                       "interleave_hit": 0, "local_node": 0, "other_node": 21495942}
    assert f["numa.per_node"]["0"]["numa_hit"] == 2523058
    assert f["numa.stat_unit"] == "pages"
    assert f["numa.miss_pct"] == 64.83  # 21656381 / (11748586 + 21656381)
    assert f["numa.other_node_pct"] == 64.97  # 21702821 / (11702144 + 21702821)
    assert not any(k.startswith("numa.proc.") for k in f)


def test_vm_system_counters_and_numastat_c():
    f = parse(load("numa/vm-2node-uneven-cpus-free-191mb-numactl-numastat-c.txt"))
    assert f["numa.per_node"]["1"]["local_node"] == 26412357
    assert f["numa.miss_pct"] == 0.0
    assert f["numa.other_node_pct"] == 0.0  # 1633 of 53395567
    assert f["numa.proc.pid"] == 305 and f["numa.proc.name"] == "test1"
    assert f["numa.proc.node_mb"] == {"0": 42, "1": 58}
    assert f["numa.proc.total_mb"] == 100
    assert f["numa.proc.main_node"] == 1
    assert f["numa.proc.off_main_pct"] == 42.0
    assert f["numa.proc.count"] == 1


def test_numastat_m_token_warnings_truncated():
    f = parse(load("numa/epyc9375f-2s-smt-off-numactl-distance-32-numastat-m-token-warnings.txt"))
    assert f["numa.meminfo"]["MemTotal"] == {"0": 773271.05, "1": 774028.32, "total": 1547299.37}
    assert f["numa.meminfo"]["Active"] == {"0": 12963.05, "1": 11106.09, "total": 24069.15}
    assert sorted(f["numa.meminfo"]) == ["Active", "MemFree", "MemTotal", "MemUsed"]
    assert f["numa.meminfo_min_free_pct"] == 87.79
    assert "numa.miss_pct" not in f


def test_local_numastat_p_two_decimals():
    f = parse(load("numa/local-1node-numastat-p-bash-two-decimals.txt"))
    assert f["numa.proc.pid"] == 3526 and f["numa.proc.name"] == "bash"
    assert f["numa.proc.node_mb"] == {"0": 3.99}
    assert f["numa.proc.total_mb"] == 3.99
    assert f["numa.proc.off_main_pct"] == 0.0


def test_case2_style_remote_share():
    text = ("Per-node process memory usage (in MBs) for PID 4242 (python)\n"
            "                           Node 0          Node 1           Total\n"
            "                  --------------- --------------- ---------------\n"
            "Private                  8200.00         1800.00        10000.00\n"
            "----------------  --------------- --------------- ---------------\n"
            "Total                    8200.00         1800.00        10000.00\n")
    f = parse(text)
    assert f["numa.proc.off_main_pct"] == 18.0 and f["numa.proc.main_node"] == 0


def test_pattern_matching_several_processes():
    text = ("Per-node process memory usage (in MBs)\n"
            "PID              Node 0 Node 1 Total\n"
            "---------------  ------ ------ -----\n"
            "305 (test1)          42     58   100\n"
            "306 (test1)          10      0    10\n"
            "---------------  ------ ------ -----\n"
            "Total                52     58   110\n")
    f = parse(text)
    assert f["numa.proc.count"] == 2 and f["numa.proc.node_mb"] == {"0": 52, "1": 58}
    assert "numa.proc.pid" not in f


def test_pdf_scrambled_is_a_clear_error():
    # numa_hit ... labels on one line, the numbers detached on others: any label->value mapping would be a
    # guess, so the parser refuses instead of inventing figures (numactl reads the --show part of this file)
    with pytest.raises(ParseError, match="scrambled"):
        parse(load("numa/pdf-extracted-numastat-4node-scrambled-columns.txt"))


def test_missing_pid_real_output_is_an_error():
    # numastat -p 99999999 on this machine: exit 0, a header, no table
    with pytest.raises(ParseError, match="no per-node table for PID 99999999"):
        parse("\nPer-node process memory usage (in MBs) for PID 99999999 ((null))\n")


@pytest.mark.parametrize("rel", [
    "numa/epyc7401-8nodes-memory-only-on-2-nodes-lkml.txt",
    "numa/gh200-numactl-hardware-9nodes-gpu-mem-node1-distance-80-255.txt",
    "numa/leonardo-dcgp-spr-snc4-2s-8nodes-numactl-lscpu-e.txt",
])
def test_numactl_only_files_are_not_numastat(rel):
    with pytest.raises(ParseError):
        parse(load(rel))


@pytest.mark.parametrize("text", ["", " \n\n", "node0 node1\n", "numa_hit\n"])
def test_empty_or_not_numastat(text):
    with pytest.raises(ParseError):
        parse(text)


@pytest.mark.parametrize("rel", [
    "numa/numastat-cpuless-node2-skewed-miss-before-after-lkml.txt",
    "numa/local-1node-numastat-p-bash-two-decimals.txt",
])
def test_detected_as_numastat(rel):
    assert parsers.detect(load(rel)) == KIND


def test_mixed_files_go_to_the_tool_printed_first():
    # numactl --hardware first, then numastat: the paste is numactl's (numastat scores lower)
    for rel in ("numa/vm-2node-uneven-cpus-free-191mb-numactl-numastat-c.txt",
                "numa/epyc9375f-2s-smt-off-numactl-distance-32-numastat-m-token-warnings.txt"):
        assert parsers.detect(load(rel)) == "numactl"
        assert parsers.get(KIND).detect(load(rel)) == 0.7


def test_declared_facts():
    p = parsers.get(KIND)
    for rel in ("numa/vm-2node-uneven-cpus-free-191mb-numactl-numastat-c.txt",
                "numa/epyc9375f-2s-smt-off-numactl-distance-32-numastat-m-token-warnings.txt"):
        for name in parse(load(rel)):
            assert name in p.facts, name
            assert factreg.spec(name) is not None


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(), st.binary().map(lambda b: b.decode("utf-8", errors="replace")),
                 st.lists(st.sampled_from(["node0 node1", "Node 0 Node 1 Total", "numa_hit 1 2", "numa_miss 0 x",
                                           "local_node 0 0", "other_node 0 0", "Total 0 0 0", "Total 1e400 -1 nan",
                                           "Per-node process memory usage (in MBs) for PID 1 (x)", "----", ""]))
                 .map("\n".join)))
def test_only_parse_errors(text):
    try:
        parse(text)
    except ParseError:
        pass


@pytest.mark.parametrize("sid", ["numastat", "numastat-proc"])
def test_real_sources_here(sid):
    ev = LocalTarget().run(sources.get(sid), sources.Params(pid=os.getpid()))
    assert ev.status in (Status.OK, Status.NOT_INSTALLED), ev.reason
    if ev.status is Status.NOT_INSTALLED:
        assert "numastat" in ev.reason and "package numactl" in ev.reason
        return
    f = parse(ev.text)
    if sid == "numastat":
        assert "0" in f["numa.per_node"] and "numa.miss_pct" in f
    else:
        assert f["numa.proc.pid"] == os.getpid() and f["numa.proc.total_mb"] > 0
