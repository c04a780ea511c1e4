import pytest
from hypothesis import given, settings, strategies as st

from troubleshooter.model import facts
from troubleshooter import parsers
from troubleshooter.parsers import ParseError
from tests.corpus import files, load

KIND = "nccl-tests"


def parse(rel):
    return parsers.run(KIND, load("nccl-tests/" + rel))


def test_dgx_spark_two_all_gather_runs_last_is_direct_cable():
    f = parse("dgx-spark-gb10-all_gather-fec-none-slow-v2.18.3.txt")
    assert f["nccl_tests.collective"] == "all_gather"
    assert f["nccl_tests.version"] == "2.18.3"
    assert f["nccl_tests.run_count"] == 2
    assert [r["avg_busbw_gbps"] for r in f["nccl_tests.runs"]] == [21.4033, 2.82151]
    assert f["nccl_tests.runs"][0]["busbw_at_max_size_gbps"] == 22.14
    assert f["nccl_tests.avg_busbw_gbps"] == 2.82151
    assert f["nccl_tests.max_busbw_gbps"] == 2.83
    assert f["nccl_tests.busbw_at_max_size_gbps"] == 2.82
    assert f["nccl_tests.max_size_bytes"] == 4294967296
    assert f["nccl_tests.ranks"] == 2 and f["nccl_tests.nodes"] == 2
    assert f["nccl_tests.gpus"] == ["NVIDIA GB10"]
    assert f["nccl_tests.wrong_total"] == 0 and f["nccl_tests.out_of_bounds"] == 0
    assert f["nccl_tests.failed"] is False
    rows = f["nccl_tests.rows"]
    assert len(rows) == 3
    assert rows[0] == {
        "size_bytes": 1073741824, "count": 134217728, "type": "float", "redop": "none", "root": -1,
        "oop_time_us": 191408.0, "oop_algbw_gbps": 5.61, "oop_busbw_gbps": 2.8, "oop_wrong": 0, "oop_error": None,
        "ip_time_us": 190310.0, "ip_algbw_gbps": 5.64, "ip_busbw_gbps": 2.82, "ip_wrong": 0, "ip_error": None,
    }


def test_aws_old_format_interleaved_info_two_nodes():
    f = parse("aws-p3dn-v100-efa-2node-nccl2.4.8-interleaved-info.txt")
    assert "nccl_tests.collective" not in f  # no binary name nor 'Collective test starting' printed
    assert len(f["nccl_tests.rows"]) == 28
    assert f["nccl_tests.avg_busbw_gbps"] == 2.80613
    assert f["nccl_tests.busbw_at_max_size_gbps"] == 8.82
    assert f["nccl_tests.max_busbw_gbps"] == 8.95
    assert f["nccl_tests.ranks"] == 16 and f["nccl_tests.nodes"] == 2
    assert f["nccl_tests.gpus"] == ["Tesla V100-SXM2-32GB"]
    assert f["nccl_tests.nccl_version"] == "2.4.8+cuda10.0"
    assert "nccl_tests.wrong_total" not in f  # old 'error' column is a magnitude, not a count
    last = f["nccl_tests.rows"][-1]
    assert last["oop_error"] == 5e-07 and last["oop_wrong"] is None and last["root"] is None
    assert f["nccl_tests.failed"] is False


def test_azure_k80_old_format():
    f = parse("azure-k80-old-format-error-column-nccl-info-interleaved.txt")
    assert len(f["nccl_tests.rows"]) == 7
    assert f["nccl_tests.avg_busbw_gbps"] == 2.54225
    assert f["nccl_tests.busbw_at_max_size_gbps"] == 2.56
    assert f["nccl_tests.max_size_bytes"] == 2147483648
    assert f["nccl_tests.ranks"] == 4 and f["nccl_tests.nodes"] == 1
    assert f["nccl_tests.gpus"] == ["Tesla K80"]


def test_a100_markdown_stripped_header_truncated_before_rows():
    f = parse("a100-sxm4-8rank-header-hash-stripped-by-markdown-fork-columns.txt")
    assert f["nccl_tests.collective"] == "all_reduce"
    assert f["nccl_tests.ranks"] == 8 and f["nccl_tests.nodes"] == 1
    assert f["nccl_tests.gpus"] == ["NVIDIA A100-SXM4-40GB"]
    assert f["nccl_tests.rows"] == []
    for absent in ("nccl_tests.avg_busbw_gbps", "nccl_tests.max_busbw_gbps", "nccl_tests.failed"):
        assert absent not in f


def test_h200_three_runs_last_is_vm_with_topo_file():
    f = parse("h200-baremetal-vs-kvm-vm-passthrough-collapse.txt")
    assert f["nccl_tests.run_count"] == 3
    runs = f["nccl_tests.runs"]
    assert [r["avg_busbw_gbps"] for r in runs] == [475.782, 27.5091, 52.7626]
    assert [r["busbw_at_max_size_gbps"] for r in runs] == [488.81, 54.97, 105.6]
    assert runs[0]["ranks"] == 16 and runs[0]["nodes"] == 2 and runs[1]["rows"] == 6
    assert f["nccl_tests.collective"] == "all_reduce"
    assert f["nccl_tests.avg_busbw_gbps"] == 52.7626
    assert f["nccl_tests.max_busbw_gbps"] == 107.63
    assert f["nccl_tests.max_size_bytes"] == 8153726976
    assert "nccl_tests.ranks" not in f  # the third run prints no rank list: not borrowed


def test_rccl_lumi_old_format():
    f = parse("lumi-eap-mi100-rccl-tests-2node-old-format.txt")
    assert f["nccl_tests.collective"] == "all_reduce"
    assert len(f["nccl_tests.rows"]) == 25
    assert f["nccl_tests.avg_busbw_gbps"] == 2.31741
    assert f["nccl_tests.busbw_at_max_size_gbps"] == 7.66
    assert f["nccl_tests.max_busbw_gbps"] == 7.67
    assert f["nccl_tests.gpus"] == ["Device 738c"]
    assert f["nccl_tests.nodes"] == 2


def test_oci_gb200_reformatted_rows_five_runs():
    f = parse("oci-gb200-nvl72-reformatted-rows-graphics-device.txt")
    assert f["nccl_tests.run_count"] == 5
    runs = f["nccl_tests.runs"]
    assert runs[0]["ranks"] == 4 and runs[0]["busbw_at_max_size_gbps"] == 663.34
    assert [r.get("avg_busbw_gbps") for r in runs] == [None, None, 196.15, 44.2453, 26.0343]
    assert f["nccl_tests.busbw_at_max_size_gbps"] == 62.49
    assert f["nccl_tests.avg_busbw_gbps"] == 26.0343
    assert f["nccl_tests.rows"][-1]["ip_wrong"] is None  # N/A
    assert f["nccl_tests.wrong_total"] == 0
    assert "nccl_tests.collective" not in f


def test_oci_gb300_elided_rank_lists_and_alltoall_last():
    f = parse("oci-gb300-nvl72-allreduce-alltoall-truncated-by-author.txt")
    runs = f["nccl_tests.runs"]
    assert [r["collective"] for r in runs] == ["all_reduce"] * 4 + ["alltoall"]
    assert [r["ranks"] for r in runs] == [4, 8, 64, 128, 4]
    assert "nodes" not in runs[2]  # rank list elided with '...'
    assert runs[3]["busbw_at_max_size_gbps"] == 738.39
    assert f["nccl_tests.collective"] == "alltoall"
    assert f["nccl_tests.busbw_at_max_size_gbps"] == 627.69
    assert f["nccl_tests.max_busbw_gbps"] == 680.7
    assert f["nccl_tests.nccl_version"] == "2.28.7+cuda13.0"
    assert f["nccl_tests.gpus"] == ["NVIDIA GB300"]


def test_rtx3090_failed_run_with_wrong_values():
    f = parse("rtx3090-2node-inc-mtu256-wrong-values-FAILED.txt")
    assert f["nccl_tests.run_count"] == 3
    assert [r["failed"] for r in f["nccl_tests.runs"]] == [False, False, True]
    assert f["nccl_tests.failed"] is True
    assert f["nccl_tests.out_of_bounds"] == 108
    rows = f["nccl_tests.rows"]
    assert rows[0]["oop_wrong"] == 4
    assert rows[18]["oop_wrong"] == 1048580  # '1.04858e+06'
    assert f["nccl_tests.wrong_total"] == sum(r["oop_wrong"] + r["ip_wrong"] for r in rows)
    assert f["nccl_tests.avg_busbw_gbps"] == 3.02663
    assert f["nccl_tests.runs"][1]["avg_busbw_gbps"] == 0.0


def test_truncated_mid_row_keeps_complete_rows():
    text = load("nccl-tests/dgx-spark-gb10-all_gather-fec-none-slow-v2.18.3.txt")
    cut = text[: text.index("  2147483648     268435456     float    none      -1  50573.4") + 40]
    f = parsers.run(KIND, cut)
    assert len(f["nccl_tests.rows"]) == 1 and "nccl_tests.avg_busbw_gbps" not in f
    assert "nccl_tests.failed" not in f


@pytest.mark.parametrize("text", ["", "  \n", "hello world\nnothing here\n", "NCCL INFO Bootstrap : Using eth0\n"])
def test_empty_or_not_nccl_tests(text):
    with pytest.raises(ParseError):
        parsers.run(KIND, text)


@pytest.mark.parametrize("path", files("nccl-tests"), ids=lambda p: p.name)
def test_detect(path):
    assert parsers.detect(load("nccl-tests/" + path.name)) == KIND


def test_declared_facts():
    declared = set(parsers.get(KIND).facts)
    for path in files("nccl-tests"):
        out = parsers.run(KIND, load("nccl-tests/" + path.name))
        assert set(out) <= declared, path.name
        for name in out:
            assert facts.spec(name) is not None


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_random_text_only_parse_error(text):
    try:
        parsers.get(KIND).func(text)
    except ParseError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong",
    "  1073741824     134217728     float    none      -1  27211.0   39.46   19.73       0  25806.7   41.61   20.80       0",
    "# Avg bus bandwidth    : 21.4033", "# Out of bounds values : 3 FAILED", "8 2 float sum -1 N/A N/A N/A N/A",
    "#  Rank  0 Group  0 Pid 1 on h device  0 [0x00] GPU", "...", "NCCL version 2.1", "x_perf", "all_gather_perf -b 8",
    "1 2 float sum 1e309 nan inf 1",
]), max_size=12))
def test_structured_fragments_only_parse_error(lines):
    try:
        parsers.get(KIND).func("\n".join(lines))
    except ParseError:
        pass


def test_old_nccl_failure_line_at_init_is_read_as_the_error_the_test_stopped_on():
    f = parsers.run("nccl-tests", load("nccl-tests/old-nccl-failure-unhandled-system-error-at-init-quoted.txt"))
    assert f["nccl_tests.nccl_error"] == "unhandled system error"
    assert f["nccl_tests.run_count"] == 1
    assert "nccl_tests.failed" not in f  # no wrong results: it never ran a collective
    assert "nccl_tests.avg_busbw_gbps" not in f


def test_one_banner_per_process_before_the_rank_list():
    f = parsers.run("nccl-tests", load("nccl-tests/nccltests213-two-banners-each-process-its-own-world.txt"))
    assert f["nccl_tests.banners_at_start"] == 2


def test_a_2018_build_names_the_nccl_it_was_compiled_with_and_its_ranks_have_no_pid():
    f = parse("nccltests5-built-with-nccl1-p100-unhandled-cuda-error.txt")
    assert f["nccl_tests.nccl_built_with"] == "1.0"
    assert "nccl_tests.nccl_version" not in f  # a build of that time prints no runtime version
    assert f["nccl_tests.ranks"] == 8
    assert f["nccl_tests.nodes"] == 1
    assert f["nccl_tests.gpus"] == ["Tesla P100-PCIE-16GB"]
    assert f["nccl_tests.nccl_error"] == "unhandled cuda error"


def test_rows_pasted_without_their_header_are_read_with_the_root_and_wrong_columns():
    # a reporter's comment on nccl-tests#128 quoted only the last two rows of a reduce_scatter_perf table
    text = load("nccl-tests/nccltests128-reduce-scatter-rows-alone-no-header.txt")
    assert parsers.detect(text) == KIND
    f = parsers.run(KIND, text)
    assert [r["size_bytes"] for r in f["nccl_tests.rows"]] == [524288, 1048576]
    assert f["nccl_tests.rows"][1] == {
        "size_bytes": 1048576, "count": 32768, "type": "float", "redop": "sum", "root": -1, "oop_time_us": 84.46,
        "oop_algbw_gbps": 12.42, "oop_busbw_gbps": 10.86, "oop_wrong": 0, "oop_error": None, "ip_time_us": 91.06,
        "ip_algbw_gbps": 11.51, "ip_busbw_gbps": 10.08, "ip_wrong": 0, "ip_error": None}
    assert f["nccl_tests.busbw_at_max_size_gbps"] == 10.86 and f["nccl_tests.max_size_bytes"] == 1048576
    assert f["nccl_tests.wrong_total"] == 0 and "nccl_tests.failed" not in f
    assert "nccl_tests.avg_busbw_gbps" not in f and "nccl_tests.collective" not in f  # nothing said them


def test_old_rows_without_their_header_read_the_last_column_as_an_error_not_a_count():
    # the real Azure K80 capture with every '#' line (banner, header, summary) cut away by hand: the rows alone,
    # with an NCCL INFO line between them; without the root column the last column is 'error' (2e-07)
    text = "\n".join(line for line in load("nccl-tests/azure-k80-old-format-error-column-nccl-info-interleaved.txt")
                     .splitlines() if not line.startswith("#"))
    assert parsers.detect(text) == KIND
    f = parsers.run(KIND, text)
    rows = f["nccl_tests.rows"]
    assert len(rows) == 7 and rows[0]["root"] is None
    assert (rows[0]["oop_error"], rows[0]["oop_wrong"], rows[0]["oop_busbw_gbps"]) == (2e-07, None, 2.53)
    assert f["nccl_tests.busbw_at_max_size_gbps"] == 2.56 and f["nccl_tests.max_size_bytes"] == 2147483648
    assert "nccl_tests.wrong_total" not in f and "nccl_tests.failed" not in f


@pytest.mark.parametrize("text", [
    "      524288         16384     banana     sum      -1    62.66    8.37    7.32      0    61.61    8.51    7.45      0",
    "      524288         16384     float     sum      -1    62.66    8.37",
    "      524288         16384     float     sum      -1    nan    8.37    7.32      0    61.61    8.51    7.45      0",
])
def test_a_line_that_is_not_a_whole_row_is_no_headerless_table(text):
    assert KIND not in [k for _, k in parsers.scores(text)]
    with pytest.raises(ParseError):
        parsers.run(KIND, text)


def test_one_row_in_a_page_of_prose_is_not_taken_for_a_table():
    row = "      524288         16384     float     sum      -1    62.66    8.37    7.32      0    61.61    8.51    7.45      0"
    text = "\n".join(["we ran the test on both clusters", "the first one is fine", row, "and the second is not", "why?"])
    assert KIND not in [k for _, k in parsers.scores(text)]
