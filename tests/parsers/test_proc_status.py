import os
import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from troubleshooter.model import facts as factreg
from troubleshooter import parsers, sources
from troubleshooter.model.evidence import Status
from troubleshooter.parsers import ParseError
from troubleshooter.sources.numa import PROC_STATUS_SCRIPT
from troubleshooter.probe.targets import LocalTarget
from tests.corpus import load

KIND = "proc-status"
LOCAL = "proc_status/debian12-vm-self-cgroup-v1-cpuset-2cpus.txt"


def parse(text):
    return parsers.run(KIND, text)


def test_real_capture_with_markers():
    f = parse(load(LOCAL))
    assert f["proc.name"] == "cat"
    assert f["proc.pid"] == 8022 and f["proc.ppid"] == 8021
    assert f["proc.state"] == "R"
    assert f["proc.threads"] == 1
    assert f["proc.cpus_allowed_list"] == "0-1" and f["proc.cpus_allowed_count"] == 2
    assert f["proc.mems_allowed_list"] == "0" and f["proc.mems_allowed_count"] == 1
    assert f["proc.voluntary_ctxt_switches"] == 0 and f["proc.nonvoluntary_ctxt_switches"] == 1
    assert f["proc.nonvoluntary_ctxt_pct"] == 100.0
    assert f["proc.vm_rss_kb"] == 1656 and f["proc.hugetlb_kb"] == 0
    assert f["proc.cpuset"] == "/"
    assert f["proc.cgroup"] == "/"  # the '0::/' line wins over the v1 'cpuset:' one
    assert f["proc.cgroup_cpus"] == "0-1" and f["proc.cgroup_cpus_count"] == 2


def test_status_alone_case2_style_pinning():
    text = ("Name:\tpython3\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4242\nPPid:\t1\nThreads:\t57\n"
            "Cpus_allowed:\tff000000,000000ff\nCpus_allowed_list:\t0-7,56-63\nMems_allowed_list:\t0-1\n"
            "voluntary_ctxt_switches:\t1000\nnonvoluntary_ctxt_switches:\t3000\n")
    f = parse(text)
    assert f["proc.cpus_allowed_list"] == "0-7,56-63" and f["proc.cpus_allowed_count"] == 16
    assert f["proc.mems_allowed_count"] == 2
    assert f["proc.nonvoluntary_ctxt_pct"] == 75.0
    assert "proc.cpuset" not in f and "proc.cgroup_cpus" not in f


def test_cgroup_v1_only_cpuset_path():
    text = ("Name:\tx\nPid:\t1\n==> cpuset <==\n/slurm/uid_0/job_7/step_0\n==> cgroup <==\n"
            "4:cpuset:/slurm/uid_0/job_7/step_0\n1:cpu,cpuacct:/\n"
            "==> cpuset.cpus.effective /sys/fs/cgroup/cpuset/slurm/uid_0/job_7/step_0/cpuset.effective_cpus <==\n8-15\n")
    f = parse(text)
    assert f["proc.cpuset"] == "/slurm/uid_0/job_7/step_0"
    assert f["proc.cgroup"] == "/slurm/uid_0/job_7/step_0"
    assert f["proc.cgroup_cpus"] == "8-15" and f["proc.cgroup_cpus_count"] == 8


@pytest.mark.parametrize("text", ["", "\n", "Name: only a name\n", "Cpus_allowed_list: 0-3\n"])
def test_empty_or_not_status(text):
    with pytest.raises(ParseError):
        parse(text)


def test_detected():
    assert parsers.detect(load(LOCAL)) == KIND


def test_declared_facts():
    p = parsers.get(KIND)
    for name in parse(load(LOCAL)):
        assert name in p.facts, name
        assert factreg.spec(name) is not None


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(), st.binary().map(lambda b: b.decode("utf-8", errors="replace")),
                 st.lists(st.sampled_from(["Name:\tx", "Pid:\t12", "Pid:\t", "Cpus_allowed_list:\t0-99999999",
                                           "Cpus_allowed_list:\t3-1", "==> cpuset <==", "==> cgroup <==",
                                           "==> cpuset.cpus.effective /x <==", "0::/", "x:cpuset:/a", ""]))
                 .map("\n".join)))
def test_only_parse_errors(text):
    try:
        parse(text)
    except ParseError:
        pass


def test_script_finds_cgroup_v2_effective_cpus_in_an_ancestor(tmp_path):
    # the fixed script against a fake /proc and /sys/fs/cgroup: cgroup v2 only, the leaf has no cpuset file
    proc = tmp_path / "proc" / "77"
    proc.mkdir(parents=True)
    (proc / "status").write_text("Name:\ttrainer\nPid:\t77\nCpus_allowed_list:\t0-3\n")
    (proc / "cpuset").write_text("/job/step\n")
    (proc / "cgroup").write_text("0::/job/step\n")
    cg = tmp_path / "cg"
    (cg / "job" / "step").mkdir(parents=True)
    (cg / "job" / "cpuset.cpus.effective").write_text("0-3\n")
    script = PROC_STATUS_SCRIPT.replace("/sys/fs/cgroup", str(cg)).replace("/proc/", f"{tmp_path}/proc/")
    out = subprocess.run(["sh", "-c", script, "sh", "77"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    f = parse(out.stdout)
    assert f["proc.cgroup"] == "/job/step" and f["proc.cgroup_cpus"] == "0-3"


def test_real_sources_here():
    params = sources.Params(pid=os.getpid())
    ev = LocalTarget().run(sources.get("proc-status"), params)
    assert ev.status is Status.OK, ev.reason
    f = parse(ev.text)
    assert f["proc.pid"] == os.getpid()
    assert f["proc.cpus_allowed_count"] == len(os.sched_getaffinity(0))
    assert "proc.cgroup" in f
    ev = LocalTarget().run(sources.get("proc-status-self"), params)
    assert ev.status is Status.OK, ev.reason
    assert parse(ev.text)["proc.cpus_allowed_count"] == len(os.sched_getaffinity(0))


def test_missing_process_is_an_error():
    ev = LocalTarget().run(sources.get("proc-status"), sources.Params(pid=2 ** 22 + 12345))
    assert ev.status is Status.ERROR and "No such file or directory" in ev.reason


def test_skipped_without_pid():
    ev = LocalTarget().run(sources.get("proc-status"), sources.Params())
    assert ev.status is Status.SKIPPED
