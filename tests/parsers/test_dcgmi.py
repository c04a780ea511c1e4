"""dcgmi parser: DCGM's discovery, health report, NVLink link status and errors, on real captures (exact values)."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_discovery_with_the_gpus_named_and_with_names_nvml_did_not_give():
    text = load("dcgmi/kempnerpulse15-discovery-l-8-gpus-active-nvswitch-module-denylisted-exit-223.txt")
    assert parsers.detect(text) == "dcgmi"
    assert parsers.run("dcgmi", text) == {"dcgm.gpus_found": 8, "dcgm.gpu_names": ["NVIDIA H100 80GB HBM3"]}
    null = parsers.run("dcgmi", load("dcgmi/dcgm229-discovery-l-h100-sxm-name-null.txt"))
    assert null == {"dcgm.gpus_found": 4, "dcgm.gpu_names": ["<<<NULL>>>"] * 3}  # the excerpt stops at GPU 2


def test_the_health_report_as_a_table_and_as_json():
    table = parsers.run("dcgmi", load("dcgmi/nvsentinel1481-a100pcie-health-c-nvlink-links-down.txt"))
    assert table == {"dcgm.health_overall": "Failure", "dcgm.nvlink_links_down": 2,
                     "dcgm.health_incidents": ["GPU 0's NvLink link 0 is currently down ...",
                                               "GPU 0's NvLink link 1 is currently down ..."]}
    text = load("dcgmi/dcgm263-dmon-xider-120-health-json-healthy-gpu-needs-reset.txt")
    assert parsers.detect(text) == "dcgmi"
    assert parsers.run("dcgmi", text) == {"dcgm.health_overall": "Healthy"}  # the watches miss the pending reset


def test_nvlink_link_status_with_every_link_down():
    facts = parsers.run("dcgmi", load("dcgmi/dcgm198-nvlink-link-status-all-down-diag-r2-passes.txt"))
    assert facts == {"dcgm.nvlink_down": {"0": 18, "1": 18}, "dcgm.nvlink_links_down": 36}


@pytest.mark.parametrize("rel, first", [
    ("dcgmi/dcgmexporter193-discovery-l-unable-to-connect-host-engine-openstack-vm.txt",
     "Error: unable to establish a connection to the specified host: localhost"),
    ("dcgmi/dcgm176-health-check-watches-not-enabled.txt", "Error: Health watches not enabled. Please enable watches."),
    ("dcgmi/dcgm50-dmon-e-1002-rtx-a4000-error-setting-watches-33-module-not-loaded.txt",
     "Error setting watches. Result: -33: This request is serviced by a module of DCGM that is not currently loaded"),
])
def test_dcgmis_own_errors(rel, first):
    text = load(rel)
    assert parsers.detect(text) == "dcgmi"
    assert parsers.run("dcgmi", text)["dcgm.cli_errors"][0] == first


def test_other_text_is_refused():
    with pytest.raises(parsers.ParseError):
        parsers.run("dcgmi", "| Diagnostic | Result |\n")
