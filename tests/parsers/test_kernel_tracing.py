"""bcc funclatency and perf script, read from real pastes (deepseek-ai/DeepEP#624) with exact values."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_funclatency_of_task_numa_work_in_msecs() -> None:
    text = load("kernel-tracing/funclatency-deepep624-task-numa-work-msecs.txt")
    assert parsers.detect(text) == "funclatency"
    assert parsers.run("funclatency", text) == {
        "funclatency.functions": ["task_numa_work"], "funclatency.unit": "msecs", "funclatency.count": 139,
        "funclatency.max_ms": 31.0, "funclatency.total_ms": 789.0, "funclatency.numa_balancing_max_ms": 31.0}


def test_funclatency_in_usecs_of_another_function_is_not_numa_balancing() -> None:
    text = load("kernel-tracing/funclatency-deepep624-task-numa-work-msecs.txt")
    other = text.replace("task_numa_work", "vfs_read").replace("msecs", "usecs")
    f = parsers.run("funclatency", other)
    assert f["funclatency.functions"] == ["vfs_read"] and f["funclatency.unit"] == "usecs"
    assert f["funclatency.max_ms"] == 0.031 and f["funclatency.total_ms"] == 0.789
    assert "funclatency.numa_balancing_max_ms" not in f


def test_perf_script_chain_inside_numa_balancing_cut_mid_frame() -> None:
    text = load("kernel-tracing/perf-script-deepep624-task-numa-work-stack.txt")
    assert parsers.detect(text) == "perf-script"
    assert parsers.run("perf-script", text) == {
        "perf_script.samples": 1, "perf_script.commands": ["sglang::schedul"], "perf_script.numa_balancing_samples": 1}


@pytest.mark.parametrize("kind", ["funclatency", "perf-script"])
@pytest.mark.parametrize("text", ["", "hello\nworld\n", "NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n",
                                  "x" + " " * 5000 + "1 2.5: 1 cycles:\n    ffffffff81000000 f+0x1 ([k])\n"])
def test_other_text_is_refused(kind: str, text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run(kind, text)
    assert parsers.get(kind).detect(text) < parsers.DETECT_MIN
