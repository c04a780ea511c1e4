"""NCCL 1.x's own tests (all_reduce_test and its siblings), read from real captures (tests/data/nccl1-tests)."""

from __future__ import annotations

import pytest

from tests.corpus import DATA, files, load
from troubleshooter import parsers
from troubleshooter.diagnosis.intake import tool_of
from troubleshooter.parsers import ParseError

KIND = "nccl1-tests"
D = "nccl1-tests/"


def parse(name: str) -> dict:
    return parsers.run(KIND, load(D + name))


@pytest.mark.parametrize("path", files("nccl1-tests"), ids=lambda p: p.name)
def test_detected_as_nccl1_tests_not_nccl_tests(path) -> None:
    assert parsers.detect(load(D + path.name)) == KIND


@pytest.mark.parametrize("name,ranks,gpu", [
    ("nvidia-nccl-issue85-p100-2gpu-all_reduce_test-stalled.txt", 2, "Tesla P100-PCIE-16GB"),
    ("nvidia-nccl-issue117-p100-4gpu-all_reduce_test-hang.txt", 4, "Tesla P100-PCIE-16GB"),
    # Markdown ate the '#' and quoted the rest ('> Using devices')
    ("nvidia-nccl-issue104-m40-8gpu-stalled-quoted.txt", 8, "Tesla M40 24GB"),
])
def test_a_run_that_stopped_after_its_header(name, ranks, gpu) -> None:
    f = parse(name)
    assert (f["nccl_tests.ranks"], f["nccl_tests.nodes"], f["nccl_tests.gpus"]) == (ranks, 1, [gpu])
    assert (f["nccl_tests.no_result"], f["nccl_tests.collective"], f["nccl_tests.nccl1_test"]) == (True, "all_reduce", True)
    assert "nccl_tests.max_busbw_gbps" not in f


def test_the_readme_sample_with_its_device_arrow_lines() -> None:
    f = parse("nvidia-nccl-readme-sample-all_reduce_test-device-arrow-format.txt")
    assert (f["nccl_tests.ranks"], f["nccl_tests.gpus"], f["nccl_tests.no_result"]) == (4, ["GeForce GTX TITAN X"], False)
    assert (f["nccl_tests.max_size_bytes"], f["nccl_tests.busbw_at_max_size_gbps"], f["nccl_tests.max_busbw_gbps"]) == (
        10000000, 9.21, 9.33)


def test_reduce_test_with_its_root_column_and_summary() -> None:
    # a Windows port's README: every '#' gone, trailing Markdown hard breaks
    f = parse("windows-port-readme-reduce_test-rtx5060ti-2gpu-complete.txt")
    assert (f["nccl_tests.collective"], f["nccl_tests.ranks"], f["nccl_tests.gpus"]) == (
        "reduce", 2, ["NVIDIA GeForce RTX 5060 Ti"])
    assert (f["nccl_tests.busbw_at_max_size_gbps"], f["nccl_tests.avg_busbw_gbps"]) == (5.82, 5.77463)
    assert (f["nccl_tests.out_of_bounds"], f["nccl_tests.failed"]) == (0, False)


def test_rows_without_the_device_block() -> None:
    # a blog's table: the author dropped the device block and cut the rows with '...' (trailing tab runs kept)
    f = parse("leotam-blog-2017-04-10-all_reduce_test-no-devices-block.txt")
    assert "nccl_tests.ranks" not in f and f["nccl_tests.no_result"] is False
    assert (f["nccl_tests.busbw_at_max_size_gbps"], f["nccl_tests.max_busbw_gbps"]) == (52.47, 53.02)


def test_one_gpu_and_tiny_sizes_give_no_bandwidth() -> None:
    # nccl#120: one GPU (busbw 0.00 on every row, algbw over 100 GB/s widening its column), the rows cut mid-row
    f = parse("nvidia-nccl-issue120-all_gather_test-stuck-run1.txt")
    assert f["nccl_tests.no_result"] is False and "nccl_tests.max_busbw_gbps" not in f
    # nccl#36: 100 bytes on two GPUs measures latency
    f = parse("nvidia-nccl-issue36-titanx-2gpu-all_reduce_test-100.txt")
    assert (f["nccl_tests.ranks"], f["nccl_tests.max_size_bytes"]) == (2, 100)
    assert "nccl_tests.busbw_at_max_size_gbps" not in f


@pytest.mark.parametrize("text", [
    "", "hello\n",
    "#  Rank  0 Group  0 Pid  1234 on node1 device  0 [0x05] Tesla V100\n",  # the later nccl-tests
    "# nThread 1 nGpus 2 minBytes 8 maxBytes 128\n#      bytes             N    type      op     time  algbw  busbw      res\n",
])
def test_other_text_is_refused(text) -> None:
    with pytest.raises(ParseError):
        parsers.run(KIND, text)
    if text.strip():
        try:
            assert parsers.detect(text) != KIND
        except ParseError:
            pass  # no kind at all


def test_the_command_names_the_kind() -> None:
    assert tool_of("./build/test/single/all_reduce_test 10000000") == KIND
    assert tool_of("sudo ./build/test/single/reduce_scatter_test 1000000 4") == KIND
    assert tool_of("./build/all_reduce_perf -b 8 -e 128M") == "nccl-tests"


def test_a_stopped_run_on_pcie_gpus_is_a_possible_p2p_fault() -> None:
    from tests.test_causes_scope import _found, _suspected
    hang = str(DATA / "nccl1-tests/nvidia-nccl-issue85-p100-2gpu-all_reduce_test-stalled.txt")
    assert _found([hang]) == []
    assert "p2p-iommu-acs" in _suspected([hang])
