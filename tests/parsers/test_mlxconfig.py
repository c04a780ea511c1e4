"""mlxconfig parser: query output (grepped) and a set's table, from a real transcript (exact values)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.diagnosis import intake
from troubleshooter.parsers import ParseError


def test_transcript_of_a_grepped_query_then_a_set():
    text = load("mlxconfig/cx6-query-grep-link-and-set-link-type-transcript.txt")
    assert parsers.detect(text) == "mlxconfig"
    blocks = [b for b in intake.split(intake.clean(text)) if b.kind == "mlxconfig"]
    assert [b.line for b in blocks] == [2, 11]
    q = parsers.run("mlxconfig", blocks[0].text)
    assert q["mlxconfig.param.LINK_TYPE_P1"] == "IB(1)" and q["mlxconfig.param.KEEP_ETH_LINK_UP_P1"] == "True(1)"
    assert q["mlxconfig.devices"] == [] and "mlxconfig.pending" not in q
    s = parsers.run("mlxconfig", blocks[1].text)
    assert s["mlxconfig.devices"] == [{"type": "ConnectX6", "name": "MCX653105A-ECA_Ax", "device": "/dev/mst/mt4123_pciconf0",
                                       "description": "ConnectX-6 VPI adapter card; 100Gb/s (HDR100; EDR IB and 100GbE); "
                                                      "single-port QSFP56; PCIe3.0 x16; tall bracket; ROHS R6"}]
    assert s["mlxconfig.param.LINK_TYPE_P1"] == "IB(1)" and s["mlxconfig.pending"] == {"LINK_TYPE_P1": "ETH(2)"}


def test_prose_is_not_mlxconfig():
    with pytest.raises(ParseError):
        parsers.run("mlxconfig", "we set LINK_TYPE to ETH with mlxconfig\n")
