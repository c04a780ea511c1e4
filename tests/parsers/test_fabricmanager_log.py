"""fabricmanager-log parser: NVIDIA Fabric Manager's own log, on real captures (exact values)."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_a_healthy_hgx_log_of_multicast_teams_with_one_corrected_nvswitch_error():
    text = load("fabricmanager-log/gpud-hgx-multicast-teams-then-nvswitch-nonfatal-12028.txt")
    assert parsers.detect(text) == "fabricmanager-log"
    assert parsers.run("fabricmanager-log", text) == {
        "fm.log.errors": ["detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 "
                          "physical id 3 port 61"],
        "fm.log.nvswitch_nonfatal": 1}


def test_the_host_fabric_manager_giving_up_on_the_gpus_local_instances_with_its_time_cut():
    text = load("fabricmanager-log/ciinfra552-fm-started-from-cloud-init-local-instances-not-finished.txt")
    assert parsers.detect(text) == "fabricmanager-log"
    facts = parsers.run("fabricmanager-log", text)
    assert facts["fm.log.config_failed"] == ["not all local fabric manager instances finished their configuration",
                                             "fabric manager error handler is called for unhandled config error",
                                             "failed to configure all the available GPUs or NVSwitches"]
    assert len(facts["fm.log.errors"]) == 3 and "fm.log.configured" not in facts


def test_a_gb200_gpu_nvlink_fatal_error_as_a_grep_of_the_switch_trays_log_shows_it():
    text = load("fabricmanager-log/oci-gb200-runbook-nmx-gpu-nvl-fatal-error-block.txt")
    assert parsers.detect(text) == "fabricmanager-log"
    facts = parsers.run("fabricmanager-log", text)
    assert facts["fm.log.gpu_nvl_fatal"] == 1
    assert facts["fm.log.errors"] == ["Fabric Manager detected GPU NVL Fatal error on :"]
    assert "fm.log.nvswitch_fatal" not in facts


def test_other_bracketed_logs_are_refused():
    with pytest.raises(parsers.ParseError):
        parsers.run("fabricmanager-log", "2024-01-01 12:00:00 error: something\n")
    # a level word alone is no fabric manager's log
    assert parsers.get("fabricmanager-log").detect("[ERROR] could not open file\n") == 0.0
