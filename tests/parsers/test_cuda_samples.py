"""cuda-samples parser: deviceQuery and the NVML example's device list, on real captures (exact values)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_devicequery_two_architectures_without_peer_access():
    text = load("cuda-samples/devicequery-rtx2080ti-and-p100-no-peer-access.txt")
    assert parsers.detect(text) == "cuda-samples"
    assert parsers.run("cuda-samples", text) == {
        "cuda_samples.program": "deviceQuery", "gpu.count": 2,
        "gpu.names": ["NVIDIA GeForce RTX 2080 Ti", "Tesla P100-PCIE-12GB"],
        "cuda_samples.peer_access": {"0->1": False, "1->0": False}, "cuda_samples.peer_access_none": True,
        "cuda_samples.driver_cuda_version": "11.5", "cuda_samples.runtime_cuda_version": "11.5",
        "cuda_samples.result": "PASS"}


def test_nvml_example_device_list_with_the_users_own_lines_left_alone():
    text = load("cuda-samples/nvml-example-2x-rtx2080ti-extended-nvlink-query-cut.txt")
    assert parsers.detect(text) == "cuda-samples"
    assert parsers.run("cuda-samples", text) == {
        "cuda_samples.program": "nvml-example", "gpu.count": 2,
        "gpu.names": ["GeForce RTX 2080 Ti", "GeForce RTX 2080 Ti"],
        "cuda_samples.bus_ids": ["00000000:01:00.0", "00000000:02:00.0"]}


def test_a_numbered_list_alone_is_not_a_sample():
    with pytest.raises(ParseError):
        parsers.run("cuda-samples", "Found 2 devices\n0. my laptop [00000000:01:00.0]\n")
