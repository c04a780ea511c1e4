"""nvidia-smi nvlink -s / -e parser: exact values on real captures, its pathologies."""

import pytest

from tests.corpus import files, load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def parse(text):
    return parsers.run("nvlink-status", text)


def test_v100_gpu3_two_inactive_links_elided_paste():
    f = parse(load("nvlink-status/v100-sxm2-gpu3-links-3-5-inactive-azhpc.txt"))
    assert f["gpu.nvlink_inactive"] == 2
    assert f["gpu.nvlink_active"] == 4
    assert f["gpu.nvlink_inactive_links"] == {"3": [3, 5]}
    assert f["gpu.nvlink_all_inactive"] == []
    assert f["gpu.nvlink_speeds_gbs"] == [25.781]
    assert f["gpu.nvlink_min_speed_gbs"] == 25.781
    # "(UUID: ...)" was redacted by the author: no uuid key
    assert f["gpu.nvlink_gpus"] == [{"index": 3, "name": "Tesla V100-SXM2-32GB", "links": 6, "active": 4,
                                     "inactive": 2, "speeds_gbs": [25.781]}]
    assert "gpu.nvlink_error_counts" not in f


def test_a100_tab_indented_cut_after_gpu2_link0():
    f = parse(load("nvlink-status/a100-sxm4-80gb-12-links-25gbs-tab-indented-truncated.txt"))
    assert f["gpu.nvlink_inactive"] == 0
    assert f["gpu.nvlink_active"] == 25
    assert f["gpu.nvlink_inactive_links"] == {}
    assert f["gpu.nvlink_speeds_gbs"] == [25]
    assert [g["index"] for g in f["gpu.nvlink_gpus"]] == [0, 1, 2]
    assert f["gpu.nvlink_gpus"][0] == {"index": 0, "name": "NVIDIA A100-SXM4-80GB",
                                       "uuid": "GPU-ff8a40d4-abc6-08d1-f939-15848b5d4e05", "links": 12, "active": 12,
                                       "inactive": 0, "speeds_gbs": [25]}
    assert f["gpu.nvlink_gpus"][2]["links"] == 1  # what the paste kept of GPU 2


def test_same_meaning_as_nvml_fact():
    """gpu.nvlink_inactive is declared once, with the meaning NVML's parser gives it."""
    from troubleshooter.model import facts
    assert facts.spec("gpu.nvlink_inactive").type == "number"
    assert "gpu.nvlink_inactive" in parsers.get("nvlink-status").facts
    assert "gpu.nvlink_inactive" in parsers.get("nvml-json").facts


def test_all_links_inactive_message_and_error_counters():
    # the message NVML/nvidia-smi prints for a GPU whose links are all down (NVIDIA/open-gpu-kernel-modules #1150
    # title), and the -e counter lines
    text = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-aaaa)\n\t Link 0: 26.562 GB/s\n\t Link 1: 26.562 GB/s\n"
            "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-bbbb)\n"
            "NVML:Unable to retrieve Nvlink information as all links are inActive\n")
    f = parse(text)
    assert f["gpu.nvlink_all_inactive"] == [1]
    assert "gpu.nvlink_inactive" not in f  # GPU 1's link count is not shown
    assert f["gpu.nvlink_active"] == 2
    errors = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-aaaa)\n\t Link 0: Replay Errors: 0\n\t Link 0: Recovery Errors: 0\n"
              "\t Link 0: CRC Errors: 0\n\t Link 1: Replay Errors: 12\n\t Link 1: Recovery Errors: 1\n\t Link 1: CRC Errors: 0\n")
    f = parse(errors)
    assert f["gpu.nvlink_error_counts"] == {"replay_errors": 12, "recovery_errors": 1, "crc_errors": 0}
    assert f["gpu.nvlink_error_links"] == ["0:1 replay_errors=12", "0:1 recovery_errors=1"]
    assert "gpu.nvlink_inactive" not in f


@pytest.mark.parametrize("text", ["", "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n", "Link: nothing\n"])
def test_empty_or_no_link_lines(text):
    with pytest.raises(ParseError):
        parse(text)


@pytest.mark.parametrize("path", files("nvlink-status"), ids=lambda p: p.name)
def test_detected(path):
    assert parsers.detect(load(f"nvlink-status/{path.name}")) == "nvlink-status"


def test_a_pasted_transcript_command_names_the_kind():
    from troubleshooter.diagnosis.intake import tool_of
    assert tool_of("nvidia-smi nvlink -s") == "nvlink-status"
    assert tool_of("nvidia-smi nvlink --status -i 0") == "nvlink-status"
    assert tool_of("nvidia-smi topo -m") == "nvidia-smi-topo"  # unchanged


def test_e_counters_replay_and_crc_pinned_at_65535_grouped_zero_links():
    f = parse(load("nvlink-status/v100-sxm2-e-replay-crc-65535-grouped-zero-links-after-stress.txt"))
    assert f["gpu.nvlink_error_counts"] == {"replay_errors": 2501, "crc_errors": 65535}
    assert f["gpu.nvlink_error_links"] == ["0:3 replay_errors=2353", "2:0 replay_errors=148", "2:0 crc_errors=65535"]
    assert [g["index"] for g in f["gpu.nvlink_gpus"]] == [0, 2]
    assert f["gpu.nvlink_gpus"][1]["uuid"] == "GPU-d9eeee97-c180-66de-23e0-d995387934dc"
    # -e shows no link state: nothing is said about active or inactive links
    assert "gpu.nvlink_inactive" not in f and "gpu.nvlink_active" not in f


def test_e_after_reset_no_errors_lines_are_read():
    f = parse(load("nvlink-status/v100-sxm2-e-after-reset-no-errors-and-crc-8814.txt"))
    assert f["gpu.nvlink_error_counts"] == {"crc_errors": 8814}
    assert f["gpu.nvlink_error_links"] == ["2:0 crc_errors=8814"]
    only_clean = "GPU 0: Tesla V100-SXM2-32GB-LS (UUID: GPU-5261e3df-82f6-67b4-9953-4e63527e0e9d)\n         Links 0-5: No errors\n"
    f = parse(only_clean)
    assert f["gpu.nvlink_error_counts"] == {} and f["gpu.nvlink_error_links"] == []


def test_all_links_inactive_on_a_b200():
    f = parsers.run("nvlink-status", load("nvlink-status/gpud1085-b200-gpu2-all-links-inactive.txt"))
    assert f["gpu.nvlink_all_inactive"] == [2] and f["gpu.nvlink_gpus"] == [{"index": 2, "name": "NVIDIA B200", "uuid": "GPU-xxx"}]
