"""iblinkinfo: every fabric link's width, lane speed and state, from real captures (an EDR cluster's grep, two QDR
fabrics with their unused switch ports), and the tool's own 'Could be' where a link trained below its ends."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError

KIND = "iblinkinfo"
EDR = "iblinkinfo/hpl-edr-sb7700-grep-up-transcript.txt"


def test_an_edr_clusters_grepped_links_all_at_full_width_and_speed() -> None:
    text = load(EDR)
    assert parsers.detect(text) == KIND
    assert parsers.run(KIND, text) == {
        "ib.fabric_port_lines": 6, "ib.fabric_active_links": 6,
        "ib.fabric_link_speeds": {"4X 25.78125 Gbps (EDR, 100 Gb/s)": 6},
        "ib.fabric_links_below_capable": [], "ib.fabric_ca_ports_not_active": [],
        "ib.fabric_links_narrow": [], "ib.fabric_links_slower": []}


@pytest.mark.parametrize("rel,lines,active", [
    # 32 switch ports with no cable are Down/ Polling: a switch's spare ports, no host port among them
    ("iblinkinfo/notes-qdr-4-hosts-infiniscale-iv-32-unused-ports-down-polling.txt", 40, 8),
    # a host with both ports cabled lists its second port under the same CA: header
    ("iblinkinfo/teaker-qdr-8-hosts-dual-port-host-link-info-label.txt", 27, 18),
])
def test_qdr_fabrics_with_unused_switch_ports(rel: str, lines: int, active: int) -> None:
    text = load(rel)
    assert parsers.detect(text) == KIND
    f = parsers.run(KIND, text)
    assert f["ib.fabric_port_lines"] == lines and f["ib.fabric_active_links"] == active
    assert f["ib.fabric_link_speeds"] == {"4X 10.0 Gbps (QDR, 40 Gb/s)": active}
    assert f["ib.fabric_ca_ports_not_active"] == [] and f["ib.fabric_links_narrow"] == []
    assert f["ib.fabric_links_below_capable"] == [] and f["ib.fabric_links_slower"] == []


def test_a_link_that_lost_lanes_and_one_that_trained_slower() -> None:
    # the real EDR capture with two of its lines changed to what iblinkinfo prints for such links (its printf:
    # width, lane speed, and get_max_msg's 'Could be 4X' in the last parentheses); no public capture shows one
    text = load(EDR)
    text = text.replace('==( 4X      25.78125 Gbps Active/  LinkUp)==>       1    1[  ] "n01 HCA-1" ( )',
                        '==( 1X      25.78125 Gbps Active/  LinkUp)==>       1    1[  ] "n01 HCA-1" (Could be 4X )')
    text = text.replace('==( 4X      25.78125 Gbps Active/  LinkUp)==>       3    1[  ] "mgt mlx5_0" ( )',
                        '==( 4X         14.0625 Gbps Active/  LinkUp)==>       3    1[  ] "mgt mlx5_0" ( )')
    f = parsers.run(KIND, text)
    assert f["ib.fabric_links_below_capable"] == ["LID 2 port 18 -> n01 HCA-1: could be 4X"]
    assert f["ib.fabric_links_narrow"] == ["LID 2 port 18 (1X) -> n01 HCA-1"]
    assert f["ib.fabric_links_slower"] == [
        "LID 2 port 36 at 4X 14.0625 Gbps (FDR, 56 Gb/s) -> mgt mlx5_0; most at 4X 25.78125 Gbps (EDR, 100 Gb/s)"]


def test_a_down_host_port_is_listed_and_a_switchs_is_not() -> None:
    text = load("iblinkinfo/notes-qdr-4-hosts-infiniscale-iv-32-unused-ports-down-polling.txt")
    text = text.replace("    0x0002c903000d7aad      5    1[  ] ==( 4X          10.0 Gbps Active/ LinkUp)==>       2    4[  ]"
                        ' "Infiniscale-IV Mellanox Technologies" ( )',
                        '    0x0002c903000d7aad      5    1[  ] ==(                Down/ Polling)==>             [  ] "" ( )')
    f = parsers.run(KIND, text)
    assert f["ib.fabric_ca_ports_not_active"] == ["kube-node-100 HCA-1 port 1 Down/Polling"]
    assert f["ib.fabric_active_links"] == 7


def test_line_mode_names_each_ports_node_on_its_line() -> None:
    text = load("iblinkinfo/links-script-line-mode-edr-switchib-example-input.txt")
    assert parsers.detect(text) == KIND
    f = parsers.run(KIND, text)
    assert f["ib.fabric_port_lines"] == 4 and f["ib.fabric_active_links"] == 3
    assert f["ib.fabric_link_speeds"] == {"4X 25.78125 Gbps (EDR, 100 Gb/s)": 3}
    assert f["ib.fabric_ca_ports_not_active"] == []  # the Down port is the switch's (no CA: header says otherwise)
    # the same capture with one host's link at 2X and iblinkinfo's verdict on it (as the test above)
    text = text.replace('Active/  LinkUp)==>  0xec0d9a030002b810    496   15[  ] "SwitchIB Mellanox Technologies" ( )',
                        'Active/  LinkUp)==>  0xec0d9a030002b810    496   15[  ] "SwitchIB Mellanox Technologies" (Could be 4X )')
    text = text.replace('"                quorum01 HCA-2"    558    1[  ] ==( 4X', '"                quorum01 HCA-2"    558    1[  ] ==( 2X')
    f = parsers.run(KIND, text)
    assert f["ib.fabric_links_below_capable"] == ["quorum01 HCA-2 port 1 -> SwitchIB Mellanox Technologies: could be 4X"]
    assert f["ib.fabric_links_narrow"] == ["quorum01 HCA-2 port 1 (2X) -> SwitchIB Mellanox Technologies"]
    assert f["ib.fabric_link_speeds"] == {"4X 25.78125 Gbps (EDR, 100 Gb/s)": 2, "2X 25.78125 Gbps (EDR, 50 Gb/s)": 1}


def test_not_iblinkinfo() -> None:
    with pytest.raises(ParseError):
        parsers.run(KIND, "CA 'mlx5_0'\n\tCA type: MT4123\n")
