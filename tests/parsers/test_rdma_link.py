"""rdma-link parser: iproute2's rdma link, old and new formats (exact values on a real capture)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_old_format_with_index_prefix_and_a_port_down():
    text = load("rdma-link/old-iproute2-index-prefix-iwarp-and-connectx4-one-down.txt")
    assert parsers.detect(text) == "rdma-link"
    f = parsers.run("rdma-link", text)
    assert f["ib.device_names"] == ["i40iw0", "i40iw1", "mlx5_0", "mlx5_1"]
    assert f["ib.down_ports"] == ["i40iw0:1", "mlx5_0:1"] and f["ib.active_ports"] == 2
    assert f["ib.ports"][2] == {"device": "mlx5_0", "port": 1, "state": "Down", "phys_state": "Disabled"}
    assert f["ib.netdev_map"] == {"mlx5_0:1": {"netdev": "ens803f0", "state": "Down"},
                                  "mlx5_1:1": {"netdev": "ens803f1", "state": "Up"}}


def test_new_format_with_infiniband_fields_before_the_state():
    f = parsers.run("rdma-link", "link mlx5_2/1 subnet_prefix fe80:0000:0000:0000 lid 12 sm_lid 1 lmc 0 state ACTIVE "
                                 "physical_state LINK_UP\nlink rocep1s0f0/1    state ACTIVE physical_state LINK_UP netdev enp1s0f0np0\n")
    assert f["ib.down_ports"] == [] and f["ib.device_names"] == ["mlx5_2", "rocep1s0f0"]
    assert f["ib.netdev_map"] == {"rocep1s0f0:1": {"netdev": "enp1s0f0np0", "state": "Up"}}
    with pytest.raises(ParseError):
        parsers.run("rdma-link", "the link state is fine\n")
