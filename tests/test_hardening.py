"""Every parser under hostile text: only ParseError escapes, in bounded time; the streaming path of the
big-log kinds gives the same facts as the str path (issue 7)."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from troubleshooter import parsers
from troubleshooter.parsers import ParseError

DATA = Path(__file__).parent / "data"
KINDS = parsers.kinds()
FILES = sorted(p for p in DATA.rglob("*") if p.is_file() and "secrets" not in p.parts)


def call(kind: str, text: str) -> None:
    """The parser function itself (not parsers.run, which would hide a bug as a ParseError)."""
    try:
        out = parsers.get(kind).func(text)
    except ParseError:
        return
    assert isinstance(out, dict)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=2000))
def test_random_text(kind: str, text: str) -> None:
    call(kind, text)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=4000))
def test_binary_garbage(kind: str, data: bytes) -> None:
    call(kind, data.decode("utf-8", errors="replace"))
    call(kind, data.decode("latin-1"))  # non-UTF-8 bytes decoded the other way


@pytest.mark.parametrize("kind", KINDS)
def test_truncated_real_outputs(kind: str) -> None:
    rnd = random.Random(kind)
    for f in FILES:
        text = f.read_bytes().decode("utf-8", errors="replace")
        for cut in {0, 1, len(text) // 2, len(text) - 1, *(rnd.randrange(len(text) + 1) for _ in range(3))}:
            call(kind, text[:cut])
            call(kind, text[cut:])


# The bounds are on this process's CPU time, not the wall clock: a backtracking expression burns CPU, while a
# neighbour's load (the other test worker, a scorer) only stretches the wall time (k8s-pod once took 4.0 s of wall
# time against the 3 s bound while two test runs shared the 2 cores; alone it passes in a fraction of that).
@pytest.mark.parametrize("kind", KINDS)
def test_huge_single_line(kind: str) -> None:
    t0 = time.process_time()
    call(kind, "x" * (5 << 20))
    assert time.process_time() - t0 < 10


# lines shaped to make a backtracking regular expression go quadratic or worse
ADVERSARIAL = [
    "a:1:1 [0] " * 50_000,
    " " * (1 << 20) + "x",
    "NCCL INFO " + "9" * (1 << 20),
    "=" * (1 << 20),
    "1 " * (1 << 19),
    "a," * (1 << 19),
    "[" * (1 << 20),
    "Rank 0 " + "Pid 1 on h device 0 [" * 40_000,
    "\t".join(["x"] * (1 << 19)),
]


@pytest.mark.parametrize("kind", KINDS)
def test_no_catastrophic_backtracking(kind: str) -> None:
    for line in ADVERSARIAL:
        line = line[: 1 << 20]
        t0 = time.process_time()
        call(kind, line)
        took = time.process_time() - t0
        assert took < 3.0, f"{kind}: {took:.1f} CPU-s on {line[:40]!r}..."


@pytest.mark.parametrize("kind", sorted(parsers.STREAMS) or ["nccl-debug", "nccl-tests"])
def test_stream_equals_str_on_every_corpus_file(kind: str) -> None:
    assert parsers.streams(kind)
    compared = 0
    for f in FILES:
        text = f.read_bytes().decode("utf-8", errors="replace")
        try:
            want = parsers.run(kind, text)
        except ParseError as exc:
            want = ("error", str(exc))
        try:
            got = parsers.run_file(kind, f)
        except ParseError as exc:
            got = ("error", str(exc))
        assert got == want, f
        compared += not isinstance(want, tuple)
    assert compared >= 5  # the kind's own corpus parses


def test_stream_memory_bounded(tmp_path: Path) -> None:
    """Repeating the corpus 200x: the lists stay capped, counters count everything."""
    import tracemalloc

    from troubleshooter.parsers import nccl_tests

    corpus = "".join(f.read_text(errors="replace") + "\n" for f in sorted((DATA / "nccl-tests").iterdir()))
    one = parsers.run("nccl-tests", corpus)
    big = tmp_path / "big.log"
    with big.open("w") as out:
        for _ in range(200):
            out.write(corpus)
    tracemalloc.start()
    facts = parsers.run_file("nccl-tests", big)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert facts["nccl_tests.run_count"] == 200 * one["nccl_tests.run_count"]
    assert len(facts["nccl_tests.runs"]) <= nccl_tests.MAX_RUNS
    assert facts["nccl_tests.rows"] == one["nccl_tests.rows"]
    assert peak < 20 << 20


def test_run_file_missing_is_parse_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError):
        parsers.run_file("nccl-debug", tmp_path / "nope.log")


def test_stream_memory_bounded_by_the_longest_line(tmp_path: Path) -> None:
    """A file of one huge line (no newline anywhere) streams in memory bounded by the longest line read, not the
    file: each streaming kind gets the line's head and the same answer as for that head alone (issue 14)."""
    import tracemalloc

    big = tmp_path / "one-line.log"
    head = "h1:1:1 [0] NCCL INFO Using network IB " + "x" * 100
    with big.open("w") as out:
        out.write(head)
        chunk = "y" * (1 << 20)
        for _ in range(24):  # 24 MiB on one line
            out.write(chunk)
        out.write("\nh1:1:1 [0] NCCL INFO Using network Socket\n")
    lines = list(parsers.iter_lines(big, max_line=4096))
    assert len(lines) == 2 and lines[0] == (head + "y" * 4096)[:4096] and lines[1].endswith("Socket")
    for kind in sorted(parsers.STREAMS):
        tracemalloc.start()
        try:
            parsers.run_file(kind, big)
        except ParseError:
            pass
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 12 * parsers.MAX_LINE + (4 << 20), (kind, peak)


# A run of spaces inside a line, behind the words a parser looks for: a lazy group followed by \s* or \s+ tried the
# whole run again at each of its places (64 KB took 31 CPU-s in dcgm-exporter; 16 KB ~0.45 s in openmpi, gpustat,
# torch-distributed), and so did \s* or \s+ before a group that may start with a space, when the line then failed
# (nvlink-status's "GPU 0:" line took 44 CPU-s on 3,000 spaces; perf report's call-graph lines 20 CPU-s, its detector
# too). Each case is one kind's own prefix, read by its parser and by every kind's detector; the bound is on this
# process's CPU time. tests/test_space_runs.py widens a space in every line of every real capture the same way.
SPACE_RUNS = [
    ("dcgm-exporter", "Starting dcgm-exporter\nINFO[0000] x", ""),
    ("dcgm-exporter", "Starting dcgm-exporter\n2025/03/03 06:51:55 INFO x", ""),
    ("nvidia-ctk-cdi", "WARN[0000] Could not locate x", ""),
    ("openmpi", "ORTE_ERROR_LOG: x", ""),
    ("openmpi", "Signal: x", ""),
    ("gpustat", "[1] x", ""),
    ("torch-distributed", "[c10d] The client socket has timed out after 1s while trying to connect to (x", ""),
    ("torch-distributed", "RuntimeError: NCCL error: x", ""),
    ("lscpu", "Model name: x", ""),
    ("mlxconfig", "Device type: x", ""),
    ("mlxconfig", "Configurations: x", ""),
    ("mlxlink", "Physical state: x", ""),
    ("mlxlink", "==== x", ""),
    ("dcgm-diag", "|----- x", ""),
    ("nvlink-status", "GPU 0: x", ""),
    ("perf-report", "- 89.34%", ""),
    ("nvidia-smi", "|   0  x", ""),
    ("fabricmanager-log", "[INFO] x", ""),
    ("fi-info", "  fabric: x", ""),
    ("fi-info", "x: y", ""),
    ("bandwidth-test", "Device 0: x", ""),
    ("nvbandwidth", "CUDA Runtime Version: x", ""),
    ("slurm-client", "srun: error: Unable to create step for job 1: x", ""),
    ("k8s-node-conditions", "  Type: x", ""),
    ("k8s-device-plugin", "Failed to initialize NVML:", ""),
    ("ibv-devinfo", "GID[  0]:  fe80::1, x", ""),
    ("lspci", "00:00.0 VGA compatible controller: x", ""),
    ("ps", "root 1 0.0 0.0 1 1 ? S 10:00 0:00 x", ""),
    ("ucx", "[1.0] [host:1:0] ucp.c:1 UCX ERROR x", ""),
    ("selinux", "Source Context  x", ""),
    ("nccl1-tests", "Rank 0 uses device 0 [0x00] x", ""),
    ("cgroup", "1 cgroup_device multi", " z w v"),
    ("pyxis", "pyxis: x", ""),
    ("docker-info", "Server Version: x", ""),
]


@pytest.mark.parametrize("kind,prefix,rest", SPACE_RUNS)
def test_a_run_of_spaces_inside_a_line_is_linear(kind: str, prefix: str, rest: str) -> None:
    text = prefix + " " * (1 << 20) + "y" + rest + "\n"
    t0 = time.process_time()
    call(kind, text)
    parsers.scores(text)
    took = time.process_time() - t0
    assert took < 1.5, f"{kind}: {took:.1f} CPU-s"
