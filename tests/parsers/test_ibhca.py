"""NCCL_IB_HCA matching (troubleshooter.model.ibhca), checked against NCCL's documented examples.

NCCL env.rst, NCCL_IB_HCA: "Define to be a list of prefixes to filter interfaces to be used by NCCL.
Using the ^ symbol, NCCL will exclude interfaces starting with any prefix in that list of prefix.
Specific ports can also be specified using ':'. Examples: mlx5 : Use all ports of all cards starting
with mlx5. mlx5_0:1,mlx5_1:1 : Use ports 1 of cards mlx5_0 and mlx5_1. ^mlx5_1:2 : Do not use port 2
of card mlx5_1."  And: "A second optional prefix = indicates that the tokens are exact names ...
=mlx5_0:1,mlx5_1:1 : Use ports 1 of cards mlx5_0 and mlx5_1. ^=mlx5_1,mlx5_4 : Do not use cards mlx5_1
and mlx5_4."
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from troubleshooter.model.ibhca import explain, match_hca, parse_spec

# two dual-port cards, a 12-HCA H100 node's names, a bonded RoCE device
DUAL = [("mlx5_0", 1), ("mlx5_0", 2), ("mlx5_1", 1), ("mlx5_1", 2), ("mlx4_0", 1)]
NODE = [(f"mlx5_{i}", 1) for i in range(12)] + [("mlx5_bond_0", 1)]


def test_doc_prefix_all_ports_of_all_cards():
    # "mlx5 : Use all ports of all cards starting with mlx5."
    assert match_hca("mlx5", DUAL) == DUAL[:4]


def test_doc_ports_1_of_two_cards():
    # "mlx5_0:1,mlx5_1:1 : Use ports 1 of cards mlx5_0 and mlx5_1."
    assert match_hca("mlx5_0:1,mlx5_1:1", DUAL) == [("mlx5_0", 1), ("mlx5_1", 1)]


def test_doc_exclude_one_port():
    # "^mlx5_1:2 : Do not use port 2 of card mlx5_1."
    assert match_hca("^mlx5_1:2", DUAL) == [("mlx5_0", 1), ("mlx5_0", 2), ("mlx5_1", 1), ("mlx4_0", 1)]


def test_doc_exact_ports():
    # "=mlx5_0:1,mlx5_1:1 : Use ports 1 of cards mlx5_0 and mlx5_1."
    assert match_hca("=mlx5_0:1,mlx5_1:1", NODE) == [("mlx5_0", 1), ("mlx5_1", 1)]


def test_doc_exclude_exact_cards():
    # "^=mlx5_1,mlx5_4 : Do not use cards mlx5_1 and mlx5_4."
    got = match_hca("^=mlx5_1,mlx5_4", NODE)
    assert ("mlx5_1", 1) not in got and ("mlx5_4", 1) not in got
    assert ("mlx5_10", 1) in got and ("mlx5_11", 1) in got and ("mlx5_bond_0", 1) in got
    assert len(got) == len(NODE) - 2


def test_prefix_without_equals_also_takes_mlx5_10_and_11():
    assert match_hca("mlx5_1", NODE) == [("mlx5_1", 1), ("mlx5_10", 1), ("mlx5_11", 1)]
    assert match_hca("^mlx5_1", NODE) == [p for p in NODE if p not in [("mlx5_1", 1), ("mlx5_10", 1), ("mlx5_11", 1)]]


def test_exclude_bonded_device_as_in_the_ml_engineering_advice():
    # NCCL_IB_HCA=^mlx5_bond_0:1 to drop a bonded RoCE port from an IB list
    assert match_hca("^mlx5_bond_0:1", NODE) == NODE[:-1]


def test_unset_empty_and_bare_caret():
    assert match_hca(None, NODE) == NODE
    assert match_hca("", NODE) == NODE  # empty list matches everything
    assert match_hca("^", NODE) == []  # ...and a bare ^ inverts that
    assert match_hca(",,", NODE) == NODE


def test_c_parsing_quirks():
    assert parse_spec("mlx5_0:,mlx5_1:2:0:1").entries == (("mlx5_0", -1), ("mlx5_1", 2))
    assert parse_spec("mlx5_0:x").entries == (("mlx5_0", 0),)  # atoi("x") == 0: no port 0 exists
    assert match_hca("mlx5_0:x", DUAL) == []
    assert match_hca("mlx5_0:-1", DUAL) == [("mlx5_0", 1), ("mlx5_0", 2)]  # -1 means any port
    assert match_hca("mlx5_0, mlx5_1", DUAL) == [("mlx5_0", 1), ("mlx5_0", 2)]  # " mlx5_1" never matches
    assert match_hca("=^mlx5_0", DUAL) == []  # '=' then '^' is an exact name "^mlx5_0"
    assert parse_spec("^=a").exclude and parse_spec("^=a").exact


def test_nccl_ib_hca_from_the_roce_corpus_log():
    # NCCL_IB_HCA set to mlx5_0,mlx5_1,mlx5_2,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_11 -> NCCL used exactly these 8
    spec = "mlx5_0,mlx5_1,mlx5_2,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_11"
    ports = [(f"mlx5_{i}", 1) for i in range(12)]
    got = match_hca(spec, ports)
    # prefix semantics: mlx5_1 also takes mlx5_10 (and mlx5_11, listed anyway)
    assert got == [("mlx5_0", 1), ("mlx5_1", 1), ("mlx5_2", 1), ("mlx5_5", 1), ("mlx5_6", 1), ("mlx5_7", 1),
                   ("mlx5_8", 1), ("mlx5_10", 1), ("mlx5_11", 1)]


def test_explain_points_out_mistakes():
    e = explain("mlx5_1, mlx5_9:0", NODE)
    assert e["selected"] == [("mlx5_1", 1), ("mlx5_10", 1), ("mlx5_11", 1)]
    assert e["unmatched_entries"] == [" mlx5_9:0"]
    text = " ".join(e["problems"])
    assert "spaces" in text and "port number is 0" in text and "also selects mlx5_10, mlx5_11" in text
    nothing = explain("=mlx5_99", NODE)
    assert nothing["selected"] == [] and any("No device found" in p for p in nothing["problems"])


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="^=,:mlx5_01b -", max_size=20))
def test_exclude_is_the_complement(spec):
    body = spec.lstrip("^")
    inc = match_hca(body, NODE + DUAL)
    exc = match_hca("^" + body, NODE + DUAL)
    assert sorted(inc + exc) == sorted(NODE + DUAL)
    assert not set(inc) & set(exc)
    explain(spec, NODE)  # never raises
