"""dcgm-diag parser: dcgmi diag tables (whole, and a fragment), exact values on a real capture."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_r3_with_a_targeted_power_failure_on_one_gpu():
    text = load("dcgm-diag/a10g-4gpu-r3-targeted-power-fail-gpu1.txt")
    assert parsers.detect(text) == "dcgm-diag"
    f = parsers.run("dcgm-diag", text)
    assert f["dcgm.version"] == "3.3.9" and f["gpu.driver_version"] == "570.195.03"
    assert f["dcgm.results"]["Targeted Power"] == ["Pass - GPUs: 0, 2, 3", "Fail - GPU: 1"]
    assert f["dcgm.results"]["EUD Test"] == ["Skip - All"] and len(f["dcgm.results"]) == 16
    assert f["dcgm.failed_tests"] == ["Targeted Power"] and f["dcgm.failed_gpus"] == [1]
    assert f["dcgm.messages"] == ["GPU 1 Max power of 224.1 did not reach desired power minimum target_power_min_ratio "
                                  "of 224.2 for GPU 1 Verify that the clock speeds and GPU utilization are high."]
    assert f["dcgm.all_passed"] is False


def test_a_pasted_fragment_without_the_frame():
    f = parsers.run("dcgm-diag", "| GPU Memory                | Pass - GPUs: 1, 2, 3                           |\n"
                                 "|                           | Fail - GPU: 0                                  |\n")
    assert f["dcgm.failed_gpus"] == [0] and f["dcgm.failed_tests"] == ["GPU Memory"]
    with pytest.raises(ParseError):
        parsers.run("dcgm-diag", "| name | value |\n| a | b |\n")
