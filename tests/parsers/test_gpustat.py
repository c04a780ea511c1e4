"""gpustat, read from real captures (tests/data/gpustat), and the process shapes it shows."""

from __future__ import annotations

import pytest

from tests.corpus import files, load
from troubleshooter import parsers
from troubleshooter.diagnosis.intake import tool_of
from troubleshooter.parsers import ParseError

KIND = "gpustat"
D = "gpustat/"


def parse(name: str) -> dict:
    return parsers.run(KIND, load(D + name))


def test_ranks_of_one_job_on_gpu_0() -> None:
    # mpi4jax#194: two ranks, both working on GPU 0; GPU 1 holds a context of each
    f = parse("gpustat-mpi4jax-194-all-on-gpu0.txt")
    assert (f["gpu.count"], f["gpu.names"]) == (2, ["NVIDIA A100-PCIE-40GB"] * 2)
    assert [(p["gpu"], p["mem_mib"], p["label"]) for p in f["gpu.processes"]] == [
        (0, 36804, "user"), (0, 3370, "user"), (1, 416, "user"), (1, 416, "user")]
    assert f["gpu.devices"][0] == {"index": 0, "name": "NVIDIA A100-PCIE-40GB", "temp_c": 29, "util_pct": 0,
                                   "mem_used_mib": 40176, "mem_total_mib": 40960}


def test_header_with_the_driver_and_a_display_server_on_every_gpu() -> None:
    f = parse("issue157_rtx4090_8gpu_user_gdm.txt")
    assert (f["gpu.count"], f["gpu.driver_version"]) == (8, "535.54.03")
    assert [(p["gpu"], p["mem_mib"], p["label"]) for p in f["gpu.processes"] if p["gpu"] == 6] == [(6, 4, "gdm")]
    assert f["gpu.devices"][2]["util_pct"] == 100


def test_old_sign_command_and_pid() -> None:
    # gpustat 0.x prints 'C; -cp prints command/pid
    f = parse("issue97_titanx_cmd_pid_oldC.txt")
    assert f["gpu.processes"] == [{"gpu": 0, "pid": 52046, "mem_mib": 11821, "label": "python"}]
    assert f["gpu.devices"][0]["temp_c"] == 77


def test_user_command_pid_fan_and_power_in_a_nested_quote() -> None:
    f = parse("notes_teslap4_cpu_F_P_json_blockquote.txt")
    assert f["gpu.processes"] == [{"gpu": 0, "pid": 7468, "mem_mib": 1049, "user": "root", "name": "python"}]
    dev = f["gpu.devices"][0]
    assert (dev["fan_pct"], dev["util_pct"], dev["power_w"], dev["power_limit_w"]) == (None, 0, 28, 75)


def test_unknown_memory_and_a_line_cut_short() -> None:
    f = parse("issue95_gtx1080ti_qM_truncated.txt")
    assert [p["mem_mib"] for p in f["gpu.processes"]] == [None, 645, None, None]
    assert f["gpu.count"] == 4  # the fifth line is cut before its values


def test_not_supported_and_some_gpus_only() -> None:
    f = parse("issue138_v100_not_supported.txt")
    assert (f["gpu.count"], f["gpu.processes"]) == (4, [])
    # a README quoting GPUs 6 and 7 of a machine: they are not all its GPUs
    f = parse("code_comment_a100_annotated.txt")
    assert "gpu.count" not in f and [d["index"] for d in f["gpu.devices"]] == [6, 7]


@pytest.mark.parametrize("path", [p for p in files("gpustat") if p.name not in (
    "readme_2016_first_mem_mib.txt", "oneline_squashed_8x3090_in_shell_var.txt", "notes_h200_megatron_indented.txt")],
    ids=lambda p: p.name)
def test_detected(path) -> None:
    assert parsers.detect(load(D + path.name)) == KIND


@pytest.mark.parametrize("text", ["", "hello\n", "| 0 N/A N/A 45545 C python3 5685MiB |\n"])
def test_other_text_is_refused(text) -> None:
    with pytest.raises(ParseError):
        parsers.run(KIND, text)


def test_the_command_names_the_kind() -> None:
    assert tool_of("gpustat -cpu") == KIND
    assert tool_of("srun --pty -- gpustat -i 5") == KIND
