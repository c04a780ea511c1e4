"""The contract every parser keeps (SuperBench's and insights-core's shared parser test), checked once for every
registered kind instead of copied into each parser's test file:

- empty or blank input is a ParseError with a message, never an empty success;
- whatever text comes in, only ParseError escapes, and every fact returned is one the parser declares;
- every real capture in tests/data that is detected as a kind parses into declared facts of that kind.

A parser's own test file keeps what is particular to it: exact values from real captures, its pathologies.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from troubleshooter import parsers
from troubleshooter.parsers import ParseError

from ..corpus import DATA, strip_header

KINDS = parsers.kinds()
FILES = sorted(p for p in DATA.rglob("*.txt") if "secrets" not in p.parts)


def undeclared(kind: str, facts: dict) -> list[str]:
    names = parsers.get(kind).facts
    return [k for k in facts if not any(k == n or fnmatch.fnmatchcase(k, n) for n in names)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("text", ["", "\n", "   \n\t\n"], ids=["empty", "newline", "blank"])
def test_empty_input_is_a_parse_error(kind: str, text: str) -> None:
    with pytest.raises(ParseError) as exc:
        parsers.get(kind).func(text)
    assert str(exc.value).strip()


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=1500),
                      st.lists(st.sampled_from(["NCCL INFO", "Xid", "  size ", "Port 1:", "State: Active", "=", ":",
                                                "GPU 0", "#", "CPU%c6", "node0", "\t", "\n", "1", "-1", "x", "...",
                                                "[1,0]<stdout>:", "NCCL WARN"]), max_size=60).map("".join)))
def test_any_text_gives_declared_facts_or_parse_error(kind: str, text: str) -> None:
    p = parsers.get(kind)
    try:
        out = p.func(text)
    except ParseError:
        return
    assert isinstance(out, dict)
    assert not undeclared(kind, out), f"{kind} returned undeclared facts {undeclared(kind, out)}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_every_real_capture_detected_parses_into_declared_facts(path: Path) -> None:
    text = strip_header(path.read_bytes().decode("utf-8", errors="replace"))
    try:
        kind = parsers.detect(text)
    except ParseError:
        return  # not every capture is one tool's output (a mixed paste); the parser's own tests name those
    try:
        out = parsers.get(kind).func(text)
    except ParseError:
        return
    assert not undeclared(kind, out), f"{path.name} as {kind}: undeclared facts {undeclared(kind, out)}"


# Folders of tests/data whose every capture is one kind's output (a file-name prefix picks the kind in host/).
EXPECTED_KIND = {"cpufreq": "cpufreq", "cpuidle": "cpuidle", "lscpu": "lscpu", "turbostat": "turbostat",
                 "host/virt": "virt", "host/proc-meminfo": "meminfo", "host/proc-stat": "procstat",
                 "ibstatus": "ibstatus", "nvlink-status": "nvlink-status", "p2p-bandwidth": "p2p-bandwidth",
                 "show-gids": "show-gids", "cuda-errors": "cuda-errors", "nvidia-smi-q-fragments": "nvidia-smi-q",
                 "limits": "limits", "ucx": "ucx",
                 "torch-distributed/pytorch": "torch-distributed",
                 "train-progress": "train-progress", "cuda-samples": "cuda-samples",
                 "ip-addr": "ip-addr", "docker-run": "docker-run", "k8s-pod": "k8s-pod",
                 "job-script": "job-script", "lspci": "lspci",
                 # (nhc/lbnl-nhc152 is df and then nhc, a transcript: read through intake)
                 "nhc/aznhc": "nhc", "nhc/check-": "nhc", "nhc/collect-": "nhc", "nhc/ib-write": "nhc",
                 "nhc/lbnl-nhc161": "nhc", "rdma-link": "rdma-link", "mlxconfig": "mlxconfig", "nvidia-smi-csv": "nvidia-smi-csv",
                 "python-traceback": "python-traceback", "dcgm-diag": "dcgm-diag", "verbs-errors": "verbs-errors",
                 "nccl-channels": "nccl-channels", "cpupower": "cpupower", "openmpi": "openmpi", "df": "df", "packages": "packages",
                 "docker-info": "docker-info", "systemctl-status": "systemctl-status", "nvshmem": "nvshmem",
                 "kmod/gpud39": "kmod", "kernel-tracing/funclatency": "funclatency",
                 "kernel-tracing/perf-script": "perf-script", "sysctl": "sysctl",
                 "hami-core/hami-user-guide": "hami-core", "nvbandwidth": "nvbandwidth",
                 # (fi-info/awsofi1020's bare "-61" is fi_info's only by its command line: read through intake)
                 "fi-info/p4d": "fi-info", "fi-info/eks": "fi-info", "fi-info/libfabric": "fi-info",
                 "fi-info/efa-": "fi-info", "fi-info/sglang": "fi-info",
                 "nvidia-installer": "nvidia-installer",
                 # (the others hold a docker run line or kubectl's events beside the error: test_image_pull.py)
                 "image-pull/nvdocker1768": "image-pull", "image-pull/sdx23": "image-pull",
                 "nvidia-ctk-cdi": "nvidia-ctk-cdi",
                 "k8s-device-plugin": "k8s-device-plugin",
                 # (ps/trinityx188 is ps and then /proc/PID/limits: read through intake)
                 "ps/ps-": "ps",
                 # (the others beside a docker run line or nvidia-smi's own message are two tools' output: their test
                 # file checks the hook's kind is among the candidates)
                 "nvidia-container-cli/cgroup-devices-dalle105": "nvidia-container-cli",
                 "nvidia-container-cli/driver-library-mismatch-dalle104": "nvidia-container-cli",
                 "nvidia-container-cli/driver-library-mismatch-labdao": "nvidia-container-cli",
                 "nvidia-container-cli/driver-not-loaded-kubeflow": "nvidia-container-cli",
                 "nvidia-container-cli/mount-error-enroot111": "nvidia-container-cli",
                 "nvidia-container-cli/mount-error-nvdocker825": "nvidia-container-cli",
                 "nvidia-container-cli/other-": "nvidia-container-cli",
                 "nvidia-container-cli/requirement-cuda-vitisai103": "nvidia-container-cli",
                 "nvidia-container-cli/requirement-other-": "nvidia-container-cli",
                 "nvidia-container-cli/unknown-device-": "nvidia-container-cli",
                 "slurm-conf": "slurm-conf", "dev-nvidia": "dev-nvidia",
                 "slurm-log": "slurm-log", "slurm-plugins": "slurm-plugins", "configure-log": "configure-log",
                 "bandwidth-test": "bandwidth-test", "cgroup": "cgroup", "loader": "loader", "roce-qos": "roce-qos"}


def _expected(path: Path) -> str | None:
    rel = path.relative_to(DATA)
    for key, kind in EXPECTED_KIND.items():
        folder, _, prefix = key.partition("/")
        if rel.parts[0] == folder and rel.name.startswith(prefix):
            return kind
    return None


@pytest.mark.parametrize("path", [p for p in FILES if _expected(p)], ids=lambda p: str(p.relative_to(DATA)))
def test_real_captures_are_detected_as_their_kind(path: Path) -> None:
    text = strip_header(path.read_bytes().decode("utf-8", errors="replace"))
    assert parsers.detect(text) == _expected(path)
