"""NHC / AzNHC verdict lines (real captures, wrapped and truncated as posted)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def parse(name):
    return parsers.run("nhc", load(f"nhc/{name}"))


def test_eight_ib_write_bw_passes_and_a_cut_sudo_line():
    f = parse("ib-write-bw-gdr-8x-ndr-passed-aznhc152.txt")
    assert len(f["nhc.results"]) == 8
    assert f["nhc.results"][0] == {"check": "check_ib_bw_gdr", "passed": True,
                                   "message": "IB write bandwidth test IB_WRITE_BW passed for IB=mlx5_ib3, IB BW=399.71 Gbps"}
    assert f["nhc.passed_checks"] == ["check_ib_bw_gdr"] and f["nhc.failed_checks"] == []
    assert f["nhc.fault_codes"] == [] and "nhc.exit_code" not in f
    # the cut "sudo: unable to resolve host 750a289a40c3: Name or s" after the last verdict is sudo's, not the
    # rest of that verdict's message
    assert f["nhc.results"][-1]["message"] == "IB write bandwidth test IB_WRITE_BW passed for IB=mlx5_ib5, IB BW=399.61 Gbps"


def test_a_long_rewrapped_message_is_read_in_linear_time():
    # the fault code was searched for in the whole message once per continuation line: 31 CPU-s for 8,000 lines
    import time
    text = ("ERROR:  nhc:  Health check failed:  check_ecc: GPU id 3: SRAM Uncorrectable ECC\n"
            + "error count detected, (0,1).\n" * 20000 + "FaultCode: NHC2019\n")
    t0 = time.process_time()
    f = parsers.run("nhc", text)
    assert time.process_time() - t0 < 1.0
    assert f["nhc.fault_codes"] == ["NHC2019"]
    assert f["nhc.messages"][0].startswith("GPU id 3: SRAM Uncorrectable ECC error count detected, (0,1). error count")
    assert f["nhc.messages"][0].endswith("(0,1)")


def test_ecc_failure_rewrapped_by_the_notes_is_joined():
    f = parse("check-ecc-sram-uncorrectable-wrapped-aks-notes.txt")
    assert f["nhc.results"] == [{"check": "check_ecc", "passed": False, "fault_code": "NHC2019",
                                 "message": "GPU id 3: SRAM Uncorrectable ECC error count detected, (0,1)"}]
    assert f["nhc.failed_checks"] == ["check_ecc"] and f["nhc.fault_codes"] == ["NHC2019"]


def test_allreduce_error_and_exit_code():
    f = parse("collect-nccl-allreduce-error-code-3-aznhc-troubleshooting.txt")
    assert f["nhc.failed_checks"] == ["collect_nccl_allreduce_data"]
    assert f["nhc.results"][0]["message"] == "nccl_allreduce returned error code 3"
    assert f["nhc.fault_codes"] == ["NHCNA"] and f["nhc.exit_code"] == 1


def test_detected():
    assert parsers.detect(load("nhc/check-ecc-sram-uncorrectable-wrapped-aks-notes.txt")) == "nhc"


def test_not_nhc():
    with pytest.raises(ParseError):
        parsers.run("nhc", "ERROR: something else\n")


def test_failures_as_the_rules_read_them():
    f = parse("check-ecc-sram-uncorrectable-wrapped-aks-notes.txt")
    assert f["nhc.failures"] == ["check_ecc: GPU id 3: SRAM Uncorrectable ECC error count detected, (0,1)"]


def test_ecc_failure_is_a_gpu_memory_finding_and_nvlink_list_is_not_a_cause():
    from tests.corpus import DATA
    from troubleshooter.diagnosis.pasted import EvidenceFacts
    from troubleshooter.service.diagnose import diagnose

    ef = EvidenceFacts.from_specs([str(DATA / "nhc/check-ecc-sram-uncorrectable-wrapped-aks-notes.txt")])
    walk, _ = diagnose("below-reference", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
    assert "gpu-memory-errors" in [c.cause for c in walk.conclusions]
    ef = EvidenceFacts.from_specs([str(DATA / "nhc/ib-write-bw-gdr-8x-ndr-passed-aznhc152.txt")])
    walk, _ = diagnose("below-reference", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
    assert walk.conclusions == []


def test_azure_nhc_nccl_allreduce_below_threshold():
    text = load("nhc/aznhc-h200-nccl-allreduce-15gbps-nhc2010.txt")
    assert parsers.detect(text) == "nhc"
    f = parsers.run("nhc", text)
    assert f["nhc.failed_checks"] == ["check_nccl_allreduce"]
    assert f["nhc.messages"] == ["NCCL allreduce, BUS BW (expected >=431.0 GB/s, but measured 15.1043 GB/s)"]
    assert f["nhc.fault_codes"] == ["NHC2010"] and f["nhc.expected_gbps"] == 431.0
    assert f["nccl_tests.collective"] == "all_reduce" and f["nccl_tests.busbw_at_max_size_gbps"] == 15.1043


def test_lbnl_nhc_failure_without_a_figure():
    f = parsers.run("nhc", "ERROR:  nhc:  Health check failed:  check_fs_mount:  /home not mounted\n")
    assert f["nhc.failed_checks"] == ["check_fs_mount"] and f["nhc.messages"] == ["/home not mounted"]
    assert f["nhc.fault_codes"] == [] and "nccl_tests.busbw_at_max_size_gbps" not in f


def test_lbnl_nhc_debug_run_three_failures_and_the_count_line_is_not_a_continuation():
    # mej/nhc#152: the "ERROR:  nhc:  3 health checks failed." line and the closing fence are NHC's / the paste's
    # own lines, not the last failure's message re-wrapped
    f = parse("lbnl-nhc152-ad-three-failures-tmp-full.txt")
    assert f["nhc.results"] == [
        {"check": "check_hw_cpuinfo", "passed": False, "message": "Actual CPU socket count (1) does not match expected (2)."},
        {"check": "check_hw_physmem", "passed": False,
         "message": "Actual RAM size (0 kB) less than minimum allowed (263504064 kB)."},
        {"check": "check_hw_eth", "passed": False, "message": "Ethernet device ib0 not detected."},
    ]
    assert f["nhc.failed_checks"] == ["check_hw_cpuinfo", "check_hw_eth", "check_hw_physmem"]


def test_nhc_own_failures_have_no_check_name_in_syslog_and_on_the_console():
    # mej/nhc#161: "Script timed out." is NHC's own failure (its TIMEOUT), not a check named "Script"
    text = load("nhc/lbnl-nhc161-syslog-and-console-script-timed-out.txt")
    assert parsers.detect(text) == "nhc"
    f = parsers.run("nhc", text)
    assert [(r["check"], r["message"]) for r in f["nhc.results"]] == [
        ("nhc", "Script timed out."), ("nhc", "Terminated by signal SIGTERM."), ("nhc", "Script timed out.")]
    assert f["nhc.failed_checks"] == ["nhc"]


def test_timestamp_prefix_of_nhc_log_lines():
    # nhc's log()/dbg() put "[$SECONDS] - " before each line when timestamps are on (mej/nhc, the nhc script); the
    # nhc#152 capture's lines with that prefix, as such a run prints them
    lines = load("nhc/lbnl-nhc152-ad-three-failures-tmp-full.txt").splitlines()
    run = "\n".join(f"[1705939176] - {ln}" for ln in lines if ln.startswith(("DEBUG:", "ERROR:")))
    assert parsers.detect(run) == "nhc"
    assert parsers.run("nhc", run)["nhc.results"] == parse("lbnl-nhc152-ad-three-failures-tmp-full.txt")["nhc.results"]
