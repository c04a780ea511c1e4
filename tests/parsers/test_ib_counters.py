"""ib-counters parser: InfiniBand port error counters from perfquery, ibqueryerrors and sysfs, on real captures
(exact values)."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_perfquery_x_of_two_healthy_ports():
    text = load("ib-counters/treydockibexp-fixture-perfquery-x-two-ports-healthy-xmitwait.txt")
    assert parsers.detect(text) == "ib-counters"
    assert parsers.run("ib-counters", text) == {
        "ib.counter_ports": ["Lid 1719 port 1", "Lid 1719 port 2"], "ib.physical_error_ports": [],
        "ib.counters_saturated": [], "ib.symbol_errors_max": 0, "ib.link_downed_max": 0, "ib.xmit_discards_max": 0}


def test_the_older_basic_counters_under_watch():
    text = load("ib-counters/unknownsrc2014-watch-perfquery-l-7-1-mlx4-fdr-basic-counters.txt")
    assert parsers.detect(text) == "ib-counters"
    facts = parsers.run("ib-counters", text)
    assert facts["ib.counter_ports"] == ["Lid 7 port 1"] and facts["ib.physical_error_ports"] == []


def test_ibqueryerrors_lines_per_port_and_for_a_switchs_ports_all():
    facts = parsers.run("ib-counters", load("ib-counters/ibexporter20-ibqueryerrors-guid-symbolerrorcounter-portxmitwait.txt"))
    assert facts["ib.physical_error_ports"] == ["0xc42a10300dcf8e2/1: SymbolErrorCounter=3",
                                                "0xc42a10300dd0bea/1: SymbolErrorCounter=4"]
    assert facts["ib.symbol_errors_max"] == 4 and "ib.link_downed_max" not in facts
    switch = parsers.run("ib-counters", load("ib-counters/ibexporter12-ibqueryerrors-details-switch-port-all-symbol-linkdowned-xmitwait.txt"))
    assert switch["ib.physical_error_ports"] == ["0xb8599f0300383ec0/ALL: SymbolErrorCounter=19817, LinkDownedCounter=37"]
    assert switch["ib.xmit_discards_max"] == 8  # congestion, not a physical error
    ucx = parsers.run("ib-counters", load("ib-counters/ucx9590-ibqueryerrors-c-s-xmwait-port-all-linkdowned-rcverrors-discards.txt"))
    assert ucx["ib.physical_error_ports"] == ["0x1070fd0300370ea2/ALL: LinkDownedCounter=25, PortRcvErrors=26"]


def test_sysfs_counters_printed_by_a_loop_with_saturated_ones():
    facts = parsers.run("ib-counters", load("ib-counters/gpud943-sysfs-ib-counters-saturated-link-downed-255-xmit-discards-65535.txt"))
    assert facts["ib.counter_ports"] == ["mlx5_1/1"]
    assert facts["ib.link_downed_max"] == 255 and facts["ib.symbol_errors_max"] == 0
    assert sorted(facts["ib.counters_saturated"]) == [
        "mlx5_1/1 ExcessiveBufferOverrunErrors=15", "mlx5_1/1 LinkDownedCounter=255", "mlx5_1/1 PortXmitDiscards=65535",
        "mlx5_1/1 PortXmitWait=4294967295"]


def test_a_device_without_a_performance_management_agent():
    facts = parsers.run("ib-counters", load("ib-counters/nodeexp966-sysfs-counters-i40iw-na-no-pma.txt"))
    assert facts["ib.counters_no_pma"] == ["i40iw0/1"] and facts["ib.counter_ports"] == []


def test_other_text_is_refused():
    with pytest.raises(parsers.ParseError):
        parsers.run("ib-counters", "SymbolErrorCounter: 3\n")
