"""nvidia-smi-csv parser: --query-gpu CSV, with units in values, repeated samples, bitmask and per-reason columns."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.diagnosis.pasted import EvidenceFacts
from troubleshooter.parsers import ParseError


def test_timestamped_samples_keep_each_gpus_last_one():
    text = load("nvidia-smi-csv/timestamped-2gpu-samples-units-in-values.txt")
    assert parsers.detect(text) == "nvidia-smi-csv"
    f = parsers.run("nvidia-smi-csv", text)
    assert f["gpu.count"] == 2 and f["gpu.temp_max_c"] == 62
    assert [(d["index"], d["sm_clock_mhz"], d["mem_clock_mhz"], d["power_w"], d["temp_c"]) for d in f["gpu.devices"]] == [
        (0, 1965, 3996, 912.1, 61), (1, 1965, 3996, 905.3, 62)]
    assert "gpu.throttled" not in f and "gpu.pcie_degraded" not in f  # not queried: unknown, not fine


def test_reason_bitmask_and_pcie_columns():
    f = parsers.run("nvidia-smi-csv",
                    "index, name, clocks.sm [MHz], clocks.max.sm [MHz], clocks_event_reasons.active, pcie.link.gen.current, "
                    "pcie.link.gen.max, pcie.link.width.current, pcie.link.width.max\n"
                    "0, NVIDIA H100 80GB HBM3, 1980, 1980, 0x0000000000000001, 5, 5, 16, 16\n"
                    "1, NVIDIA H100 80GB HBM3, 1410, 1980, 0x0000000000000044, 5, 5, 8, 16\n")
    assert f["gpu.throttle_reasons"] == ["hw_thermal_slowdown", "sw_power_cap"] and f["gpu.throttled"] == [1]
    assert f["gpu.pcie_degraded"] == [{"index": 1, "gen": 5, "gen_max": 5, "width": 8, "width_max": 16}]
    g = parsers.run("nvidia-smi-csv", "index, clocks_throttle_reasons.hw_slowdown, clocks_throttle_reasons.sw_power_cap\n"
                                      "0, Active, Not Active\n")
    assert g["gpu.throttle_reasons"] == ["hw_slowdown"]


def test_noheader_needs_its_command_line(tmp_path):
    with pytest.raises(ParseError):
        parsers.run("nvidia-smi-csv", "0, 1980, 1980, 0x0000000000000000\n")
    p = tmp_path / "q.txt"
    p.write_text("$ nvidia-smi --query-gpu=index,clocks.sm,clocks.max.sm,clocks_event_reasons.active --format=csv,noheader,nounits\n"
                 "0, 1980, 1980, 0x0000000000000000\n1, 1410, 1980, 0x0000000000000008\n")
    ef = EvidenceFacts.from_specs([str(p)])
    # 0x8: HW slowdown (SW power cap, 0x4, at the default power limit would be a loaded GPU in its budget)
    assert ef.lookup("gpu.throttled") == [1] and ef.lookup("gpu.sm_clock_ratio_min") == 0.7121


def test_a_row_cut_short_is_said_not_misread():
    with pytest.raises(ParseError):
        parsers.run("nvidia-smi-csv", "index, name, temperature.gpu\n0, NVIDIA H100 80GB HBM3\n")
