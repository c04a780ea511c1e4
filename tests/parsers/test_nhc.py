"""nhc parser: NHC failure lines on a real capture (exact values)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_azure_nhc_nccl_allreduce_below_threshold():
    text = load("nhc/aznhc-h200-nccl-allreduce-15gbps-nhc2010.txt")
    assert parsers.detect(text) == "nhc"
    assert parsers.run("nhc", text) == {
        "nhc.failed_checks": ["check_nccl_allreduce"],
        "nhc.messages": ["NCCL allreduce, BUS BW (expected >=431.0 GB/s, but measured 15.1043 GB/s)"],
        "nhc.fault_codes": ["NHC2010"], "nhc.expected_gbps": 431.0, "nccl_tests.collective": "all_reduce",
        "nccl_tests.busbw_at_max_size_gbps": 15.1043}


def test_lbnl_nhc_failure_without_a_figure_and_no_failure_at_all():
    f = parsers.run("nhc", "ERROR:  nhc:  Health check failed:  check_fs_mount:  /home not mounted\n")
    assert f == {"nhc.failed_checks": ["check_fs_mount"], "nhc.messages": ["/home not mounted"], "nhc.fault_codes": []}
    with pytest.raises(ParseError):
        parsers.run("nhc", "Health checks completed with exit code: 0.\n")
