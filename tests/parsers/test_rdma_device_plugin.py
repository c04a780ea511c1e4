"""The RDMA shared device plugin's log: its refusal of an exclusive RDMA netns, its start-up failures."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_the_plugin_refuses_an_exclusive_rdma_netns():
    f = parsers.run("rdma-device-plugin", load("rdma-device-plugin/rdmasdp87-exiting-incorrect-rdma-netns.txt"))
    assert f == {"rdma_dp.netns_exclusive": True,
                 "rdma_dp.errors": ["Exiting.. can not change : incorrect RDMA subsystem network namespace"]}


def test_other_text_is_not_the_plugins_log():
    with pytest.raises(ParseError):
        parsers.run("rdma-device-plugin", "Exiting normally\n")
