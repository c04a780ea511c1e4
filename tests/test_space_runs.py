"""A run of spaces widened inside the lines of every real capture in tests/data, read end to end as
`diagnose --evidence FILE` reads a file: the paste's cleaning, every kind's detector, the parsers of what it finds.

A pattern that retries a run of spaces at each of its places is quadratic in the run: a lazy group before trailing
whitespace, or \\s* / \\s+ before a group that may itself start with a space, once the line fails later. Such
lines are what people paste (columns padded for alignment, a ticket system's indentation, a paste whose rank prefix
the cleaning removed). The first pass of this test found them in 40 parsers, in detectors (nccl-tests, nhc,
k8s-device-plugin: 130 CPU-s on one capture of "Failed to initialize NVML") and in the cleaning itself. Each capture
is read as it is and then widened; the widened read may cost more, in proportion to its size, not to its square.
tests/test_hardening.py holds the same check at 1 MB behind each parser's own prefix.
"""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path

import hypothesis
import hypothesis.strategies as st
import pytest

from tests import corpus
from troubleshooter import parsers
from troubleshooter.diagnosis.pasted import EvidenceFacts, PastedError
from troubleshooter.parsers.base import SHELL_LIMIT, shell_words

DATA = Path(__file__).parent / "data"
CAPTURES = sorted(p for p in DATA.rglob("*") if p.is_file() and "secrets" not in p.parts)
WIDE = 2000  # spaces in each widened run
LINES = 60  # lines widened per capture, spread over the whole of it
_BETWEEN_WORDS = re.compile(r"(?<=\S) (?=\S)")


def widen(text: str) -> str:
    """One space in every k-th line becomes WIDE spaces: the line's first space between words, its last, or the one
    after its first ': ' or '= ', in turn (where parsers' keys end and their values begin)."""
    lines = text.split("\n")
    step = max(1, -(-len(lines) // LINES))
    for i in range(0, len(lines), step):
        line = lines[i]
        places = [m.start() for m in _BETWEEN_WORDS.finditer(line)]
        places = places[:1] + places[-1:] + [j + 1 for j in (line.find(": "), line.find("= ")) if j >= 0][:1]
        if places:
            at = places[(i // step) % len(places)]
            lines[i] = line[:at] + " " * WIDE + line[at + 1:]
    return "\n".join(lines)


def _read(path: Path) -> float:
    t0 = time.process_time()
    try:
        EvidenceFacts.from_specs([str(path)])
    except PastedError:
        pass  # nothing in it read as a tool's output: still a bounded answer
    return time.process_time() - t0


def test_widening_makes_long_runs() -> None:
    text = "Model name:            Intel(R) Xeon(R)\nx\n"
    wide = widen(text)
    assert " " * WIDE in wide and wide.replace(" " * WIDE, " ") == text


@pytest.mark.parametrize("capture", CAPTURES, ids=[str(p.relative_to(DATA)) for p in CAPTURES])
def test_a_widened_capture_reads_in_linear_time(capture: Path, tmp_path: Path) -> None:
    text = capture.read_bytes().decode("utf-8", errors="replace")
    plain = tmp_path / capture.name
    plain.write_text(text)
    wide = tmp_path / ("wide-" + capture.name)
    wide.write_text(widen(text))
    base = _read(plain)
    took = _read(wide)
    # WIDE x LINES more characters (120 KB): under 0.5 CPU-s when every pattern is linear in them (the most, 0.44 s,
    # is an NCCL log whose every line names an error: each is searched for CUDA's and NCCL's error words); one
    # quadratic pattern on a dozen lines costs seconds (nvlink-status 44 s, k8s-device-plugin 130 s, mlxlink 3 s)
    assert took < 1.0 + 3 * base, f"{capture.relative_to(DATA)}: {took:.2f} CPU-s widened, {base:.2f} as captured"


# The same in the other direction: a run of blank or blank-looking lines (a paste with its empty lines, a log with a
# blank line per step), or one long run of tabs at a line's start. ^\s* under re.MULTILINE crosses line ends, so from
# every line start it ran over all the blank lines that follow (20,000 blank lines after an nvidia-smi capture took
# 180 CPU-s to read, 160 of them in the detectors); two whitespace runs side by side (\s*#?\s*, \s*>?\s*) split a run
# of tabs every possible way. Every kind's parser, every detector and the whole read, on each shape.
BLANK_RUNS = {
    "blank lines": "\n" * 20000,
    "whitespace-only lines": " \n" * 20000,
    "a run of tabs at a line's start": "\t" * 20000,
    "a run of tabs before a quote mark": "\t" * 20000 + "> ",
    # and runs of the characters rules and numbers are made of: a dashed rule then a word split three ways in
    # nvidia-smi-q's banner test (800 dashes took 0.8 CPU-s, cubic), a digit run retried \d+ from each of its
    # digits in unanchored searches (openmpi's and step-times' detectors, 3 CPU-s each on 20,000; nvidia-container-cli's
    # script-name pattern on its whitespace-free copy of the text, 2 CPU-s)
    "a dashed rule and a word": "-" * 20000 + " ",
    "a run of '#'": "#" * 20000 + " ",
    "a run of digits": "0" * 20000 + " ",
}


def _read_every_way(text: str, tmp_path: Path) -> float:
    """CPU-s for every kind's parser, every detector, and the whole read of ``text`` as a pasted file."""
    path = tmp_path / "paste.txt"
    path.write_text(text)
    t0 = time.process_time()
    for kind in parsers.kinds():
        try:
            parsers.get(kind).func(text)
        except parsers.ParseError:
            pass
    parsers.scores(text)
    return time.process_time() - t0 + _read(path)


@pytest.mark.parametrize("shape", sorted(BLANK_RUNS))
def test_a_run_of_blank_lines_or_leading_blanks_is_linear(shape: str, tmp_path: Path) -> None:
    text = (DATA / "nvidia-smi" / "a40x10-driver550-table-and-q-idle-p8-sw-power-cap-active-dram-ce-remapped.txt").read_text()
    text = text + BLANK_RUNS[shape] + "x\n"
    took = _read_every_way(text, tmp_path)
    assert took < 4.0, f"{shape}: {took:.1f} CPU-s"


# Runs of one short token, each next to the words a pattern waits for. An unanchored search that starts a [\w.-]+ or
# [^:\s]* run at each character of a long run, or a lazy .*? from each repeat of its own literal, is quadratic in the
# run: UCX's line pattern on a long dotted path before "UCX" (0.85 CPU-s at 4,000 repeats), ibstat's "ibpanic: ...
# stat of IB device" on repeated "ibpanic: " (3 CPU-s, in the detectors and the read), nvidia-smi-topo's device
# names on a header with a long word, the traceback detector's nccl\w+Error on a run of "nccl". Each shape sits after
# a real capture of the kind that reads it, so that its parser and detector reach the line. (slurm-conf's key=value
# pattern and nvidia-installer's compile-error pattern had the same shape; both parsers cut lines before them.)
REPEATS = 20000
REPEATED_TOKENS = {
    "a dotted path before UCX": ("ucx/", "[cn01:4071:0] " + "a." * REPEATS + " UCX x"),
    "ibpanic repeated": ("ibstat/", "ibpanic: " * REPEATS),
    "a long word in a topology header": (  # alone: the parser reads the first header it finds
        "", "\tGPU0\tNIC0\t" + "NIC" * REPEATS + "\tCPU Affinity\tNUMA Affinity\n GPU0\t X \tSYS\t0-1\t0"),
    "nccl repeated in a traceback": ("python-traceback/", "RuntimeError: " + "nccl" * REPEATS + " x"),
    # alone: the known-harmless messages' detector ran [\w-]* from each word of a hyphenated run looking for "PCIe"
    # (10 CPU-s), nvidia-installer's module-name pattern from each "nvidia" (22 CPU-s)
    "a long hyphenated run": ("", "a-" * REPEATS),
    "nvidia- repeated": ("", "nvidia-" * REPEATS),
    # bpftool's program list: the flags word tried at each length under the name's \S+ (18 CPU-s at 6,000 "multi")
    "a long flags word in bpftool's list": ("cgroup/", "    284      cgroup_device   " + "multi" * REPEATS + "  sd_devices"),
    # NCCL's net plugin failure: .* from each "NET/Plugin" to the line's end (0.7 CPU-s at 6,000, a minute at 60,000)
    "NET/Plugin repeated in an NCCL log": (
        "nccl-debug/", "node1:2662:2857 [0] NCCL INFO " + "NET/Plugin:" * REPEATS + " No plugin found (libnccl-net.so)"),
    # NVSHMEM's source locations: \S+? from each repeat of the source tree to the word's end (6 CPU-s at 3,000).
    # Half the repeats: the tree is 35 characters, so 350 KB (2.5 CPU-s read every way at 700 KB, too near the bound
    # for a loaded worker; 7.6 on the old code at this size)
    "an NVSHMEM source tree repeated": (
        "nvshmem/", "/sgl-workspace/nvshmem/src/modules/" * (REPEATS // 2) + "bootstrap_uid.cpp:90: non-zero status: -6"),
    # a fence of backticks: the loader's ld patterns started at each of them (15 CPU-s at 9,000)
    "a long fence": ("", "`" * REPEATS),
}


def _capture(folder: str) -> str:
    """The first capture in tests/data/FOLDER, header stripped; nothing for a shape read alone."""
    return corpus.load(str(corpus.files(folder)[0].relative_to(DATA))) if folder else ""


@pytest.mark.parametrize("shape", sorted(REPEATED_TOKENS))
def test_a_run_of_one_token_is_linear(shape: str, tmp_path: Path) -> None:
    folder, run = REPEATED_TOKENS[shape]
    text = _capture(folder) + "\n" + run + "\n"
    took = _read_every_way(text, tmp_path)
    assert took < 4.0, f"{shape}: {took:.1f} CPU-s"


def test_a_long_power_cell_in_the_gpu_table_is_linear() -> None:
    """nvidia-smi's table: the power cell read as draw / cap from each of its characters (4.7 CPU-s at 20,000)."""
    text = (DATA / "nvidia-smi" / "a40x10-driver550-table-and-q-idle-p8-sw-power-cap-active-dram-ce-remapped.txt").read_text()
    line = next(ln for ln in text.split("\n") if "W /  300W" in ln)
    text = text.replace(line, line.replace("23W /  300W", "W" * REPEATS), 1)
    t0 = time.process_time()
    facts = parsers.get("nvidia-smi").func(text)
    took = time.process_time() - t0
    assert took < 1.0, f"{took:.1f} CPU-s"
    assert facts["gpu.devices"][0]["power_w"] is None  # a cell with no draw / cap in it gives none


# shlex builds each word a character at a time: quadratic in one long word. Every pasted line split as shell words
# (prompts, launch lines, grep commands) goes through parsers.base.shell_words, which gives shlex's words.
_SHELL_ALPHABET = " \t\r\n\x0b\xa0ab=-#'\"\\$|"


@hypothesis.settings(max_examples=3000, deadline=None)
@hypothesis.given(st.text(alphabet=_SHELL_ALPHABET, max_size=24), st.booleans())
def test_shell_words_are_shlex_words(line: str, comments: bool) -> None:
    try:
        expected: object = shlex.split(line, comments=comments)
    except ValueError:
        expected = ValueError
    try:
        got: object = shell_words(line, comments=comments)
    except ValueError:
        got = ValueError
    assert got == expected


def test_a_long_prompt_line_is_linear(tmp_path: Path) -> None:
    """A 180 KB word where a prompt is (1.3 CPU-s in shlex; a megabyte took minutes)."""
    text = (DATA / "bandwidth-test" / "cuda-demo-t4-v100-two-runs.txt").read_text()
    line = next(ln for ln in text.split("\n") if ln.startswith("ecs-user@"))
    path = tmp_path / "paste.txt"
    path.write_text(text.replace(line, "ecs-user@iZ2ze59179jmm5xn1azmt" * 30000 + line[30:], 1))
    assert _read(path) < 4.0
    assert shell_words("a 'b c'" + " d" * 5) == ["a", "b c", "d", "d", "d", "d", "d"]
    with pytest.raises(ValueError):
        shell_words("'" + "x" * (SHELL_LIMIT + 1) + "'")


def test_a_driver_name_repeated_in_a_kernel_log_line_is_linear() -> None:
    """The kernel log's IOMMU patterns ran \\S* from each repeat of "arm-smmu" in one word (10 CPU-s at 3,000)."""
    text = (DATA / "dmesg" / "grace-smmuv3-cmdqv-companion-found-vcmdq-alloc-failed-fallback-lkml.txt").read_text()
    text = text.replace("    arm-smmu-v3: found companion", "    " + "arm-smmu-v3:" * REPEATS + " found companion", 1)
    t0 = time.process_time()
    facts = parsers.get("dmesg").func(text)
    assert time.process_time() - t0 < 1.0
    assert facts["dmesg.cmdqv_fallback"] is True
