"""show_gids parser and the GID lines of ibv_devinfo -v: the same ib.gid* facts."""

import pytest

from tests.corpus import files, load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError

DEVINFO_V = "ibstat/ibv_devinfo-v-cx6-4123-roce-25g-x4-gid-table-v2-ipv4-index3.txt"


def parse(text):
    return parsers.run("show-gids", text)


def test_cx6_second_link_local_pushes_v2_ipv4_gid_to_index_5():
    f = parse(load("show-gids/cx6-mlx5_0-6-gids-v1-v2-ipv4-index5-spectrumscale.txt"))
    assert f["ib.gid_count"] == 6
    assert f["ib.gids"][0] == {"device": "mlx5_0", "port": 1, "index": 0,
                               "gid": "fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8", "version": "v1", "netdev": "ens1f0"}
    assert f["ib.gids"][5] == {"device": "mlx5_0", "port": 1, "index": 5,
                               "gid": "0000:0000:0000:0000:0000:ffff:ac13:003c", "ipv4": "172.19.0.60",
                               "version": "v2", "netdev": "ens1f0"}
    assert [g["version"] for g in f["ib.gids"]] == ["v1", "v2"] * 3
    assert f["ib.gid_v2_ipv4_index"] == {"mlx5_0:1": 5}
    assert f["ib.gid_v2_ipv4_indexes"] == [5]
    assert f["ib.ports_without_v2_ipv4_gid"] == []


def test_two_bonds_truncated_inside_the_second():
    f = parse(load("show-gids/mlx5_bond-2-bonds-ipv4-index3-ucx10420-truncated.txt"))
    assert f["ib.gid_count"] == 7
    assert f["ib.gids"][3] == {"device": "mlx5_bond_0", "port": 1, "index": 3,
                               "gid": "0000:0000:0000:0000:0000:ffff:0a10:1d0d", "ipv4": "10.16.29.13",
                               "version": "v2", "netdev": "bond0"}
    assert f["ib.gid_v2_ipv4_index"] == {"mlx5_bond_0:1": 3}
    assert f["ib.gid_v2_ipv4_indexes"] == [3]
    # the paste was cut before mlx5_bond_1's index-3 row: this capture shows no v2 IPv4 GID for it
    assert f["ib.ports_without_v2_ipv4_gid"] == ["mlx5_bond_1:1"]


def test_error_only_output_no_gids_found_in_a_pod():
    f = parse(load("show-gids/empty-n_gids_found-0-k8s-pod-calico-tab-separated.txt"))
    assert f == {"ib.gids": [], "ib.gid_count": 0, "ib.gid_v2_ipv4_index": {}, "ib.gid_v2_ipv4_indexes": [],
                 "ib.ports_without_v2_ipv4_gid": []}


def test_ibv_devinfo_v_gid_lines_give_the_same_facts():
    f = parsers.run("ibv-devinfo", load(DEVINFO_V))
    assert f["ib.gids"] == [
        {"device": "mlx5_0", "port": 1, "index": 0, "gid": "fe80:0000:0000:0000:ba59:9fff:fe37:8268", "version": "v1"},
        {"device": "mlx5_0", "port": 1, "index": 1, "gid": "fe80::ba59:9fff:fe37:8268", "version": "v2"},
        {"device": "mlx5_0", "port": 1, "index": 2, "gid": "0000:0000:0000:0000:0000:ffff:c0a8:010b",
         "ipv4": "192.168.1.11", "version": "v1"},
        {"device": "mlx5_0", "port": 1, "index": 3, "gid": "::ffff:192.168.1.11", "ipv4": "192.168.1.11",
         "version": "v2"},
    ]
    assert f["ib.gid_count"] == 4
    assert f["ib.gid_v2_ipv4_index"] == {"mlx5_0:1": 3}
    assert f["ib.gid_v2_ipv4_indexes"] == [3]
    # and the port facts of -v: 4X x 25.0 Gbps, RoCE
    assert f["ib.ports"] == [{"device": "mlx5_0", "port": 1, "state": "Active", "active_mtu": 4096,
                              "link_layer": "Ethernet", "phys_state": "LinkUp", "rate_gbps": 100}]
    assert f["ib.vendor_part_ids"] == [4123]


def test_plain_ibv_devinfo_has_no_gid_facts():
    f = parsers.run("ibv-devinfo", load("ibstat/ibv_devinfo-cx7-4129-port-down-in-container-h100-roce.txt"))
    assert not any(k.startswith("ib.gid") for k in f)


def test_ib_link_layer_gids_without_type_and_old_ib_roce_v1_wording():
    text = ("hca_id:\tbnxt_re2\n\ttransport:\tInfiniBand (0)\n\t\tport:\t1\n\t\t\tstate:\tPORT_ACTIVE (4)\n"
            "\t\t\tGID[  0]:\tfe80::b226:28ff:fed3:b0f0, IB/RoCE v1\n"
            "\t\t\tGID[  3]:\t::ffff:192.170.1.101, RoCE v2\n"
            "\t\t\tGID[  4]:\tfe80:0000:0000:0000:0ac0:ebff:fe3b:353c\n")
    f = parsers.run("ibv-devinfo", text)
    assert [g.get("version") for g in f["ib.gids"]] == ["v1", "v2", None]
    assert f["ib.gid_v2_ipv4_index"] == {"bnxt_re2:1": 3}


@pytest.mark.parametrize("text", ["", "DEV PORT INDEX GID IPv4 VER DEV\n---\n", "mlx5_0 1 3 ::ffff:1.2.3.4 v2\n"])
def test_empty_cut_or_headerless(text):
    with pytest.raises(ParseError):
        parse(text)


@pytest.mark.parametrize("path", files("show-gids"), ids=lambda p: p.name)
def test_detected(path):
    assert parsers.detect(load(f"show-gids/{path.name}")) == "show-gids"


def test_a_pasted_transcript_command_names_the_kind():
    from troubleshooter.diagnosis.intake import tool_of
    assert tool_of("show_gids mlx5_0") == "show-gids"


def test_a_gid_table_pasted_alone_is_read_without_claiming_devices():
    """Issue 15: fragments. The GID lines of a real `ibv_devinfo -v`, pasted without their hca_id and port lines,
    still say which index is the RoCE v2 IPv4 GID; no device or port facts are made up for them."""
    full = load("ibstat/ibv_devinfo-v-cx6-4123-roce-25g-x4-gid-table-v2-ipv4-index3.txt")
    fragment = "\n".join(ln for ln in full.splitlines() if "GID[" in ln) + "\n"
    assert parsers.detect(fragment) == "ibv-devinfo"
    f = parsers.run("ibv-devinfo", fragment)
    whole = parsers.run("ibv-devinfo", full)
    assert f["ib.gid_v2_ipv4_indexes"] == whole["ib.gid_v2_ipv4_indexes"]
    assert "ib.ports" not in f and "ib.active_ports" not in f
