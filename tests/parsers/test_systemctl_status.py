"""systemctl-status parser: the fabric manager's service state and log errors, on real captures."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_a_killed_fabric_manager_in_a_scripts_output():
    f = parsers.run("systemctl-status", load("systemctl-status/hgx-fm-killed-fabric-completed-script-output.txt"))
    assert f["systemd.units"] == {"nvidia-fabricmanager.service": {
        "loaded": "loaded", "enabled": "enabled", "active": "failed", "detail": "Result: signal"}}
    assert f["systemd.failed_units"] == ["nvidia-fabricmanager.service"]
    assert f["fm.service_state"] == "failed"


def test_a_running_fabric_manager():
    text = load("systemctl-status/rhelai-h100-fm-active-running.txt")
    assert parsers.detect(text) == "systemctl-status"
    f = parsers.run("systemctl-status", text)
    assert f["fm.service_state"] == "active"
    assert f["systemd.units"]["nvidia-fabricmanager.service"]["detail"] == "running"
    assert "fm.log_errors" not in f  # "Connected to 1 node." is no error


def test_the_version_mismatch_log_line():
    f = parsers.run("systemctl-status", load("systemctl-status/fm-version-mismatch-journal-lines.txt"))
    assert f["fm.log_errors"] == [
        "fabric manager NVIDIA GPU driver interface version 580.127.05 doesn't match with driver version 580.120"]
    assert "fm.service_state" not in f  # no unit block: its state is not known


def test_unit_not_found_and_other_text():
    f = parsers.run("systemctl-status", "Unit nvidia-fabricmanager.service could not be found.\n")
    assert f["fm.service_state"] == "not-found"
    with pytest.raises(ParseError):
        parsers.run("systemctl-status", "active\n")


def test_the_fabric_managers_dont_match_wording():
    f = parsers.run("systemctl-status", load("systemctl-status/gpuoperator544-fm-version-dont-match-line.txt"))
    assert f["fm.log_errors"] == ["fabric manager NVIDIA GPU driver interface version 530.30.02 don't match with "
                                  "driver version 530.41.03. Please update with matching NVIDIA driver package."]


# The fabric manager's own words that it did not start, whatever prefix the line has (or none)

def test_the_nvl5_start_up_check_refusing_without_ib_umad_in_a_journal():
    text = load("systemctl-status/canvos700-b200-fm-precheck-ib-umad-not-loaded-journal.txt")
    assert parsers.detect(text) == "systemctl-status"
    f = parsers.run("systemctl-status", text)
    assert f["fm.start_failures"] == ["ib-umad-not-loaded", "cannot-start"]
    assert f["fm.log_errors"] == ['Kernel module "ib_umad" has not been loaded, fabric manager cannot be started']
    assert "fm.service_state" not in f  # no unit block


def test_the_same_check_quoted_alone():
    f = parsers.run("systemctl-status", load("systemctl-status/b200-al2-fm-ib-umad-not-loaded-quoted.txt"))
    assert f["fm.start_failures"] == ["ib-umad-not-loaded", "cannot-start"]


def test_nvlsm_without_ib_umad_behind_a_talos_node_address():
    f = parsers.run("systemctl-status", load("systemctl-status/siderolabs-docs581-talos-nvlsm-ib-umad-not-loaded.txt"))
    assert f["fm.start_failures"] == ["nvlsm-no-umad"]
    assert f["fm.log_errors"][0].startswith("nvlsm: ibwarn: [15] umad_init: can't read ABI version")


def test_the_nvlink_subnet_manager_package_missing():
    f = parsers.run("systemctl-status", load("systemctl-status/b300-nvlsm-package-missing-quoted.txt"))
    assert f["fm.start_failures"] == ["nvlsm-missing"]


def test_a_rejected_config_item_behind_a_redacted_node_address():
    text = load("systemctl-status/talosext511-fm-config-item-invalid-node-ip.txt")
    assert parsers.detect(text) == "systemctl-status"
    f = parsers.run("systemctl-status", text)
    assert f["fm.start_failures"] == ["config-invalid"]
    assert f["fm.config_invalid_items"] == ["FABRIC_NODE_CONFIG_FILE"]
    assert f["fm.log_errors"] == ["fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value"]


def test_the_version_mismatch_quoted_bare_and_wrapped():
    f = parsers.run("systemctl-status", load("systemctl-status/pytorch129749-fm-version-mismatch-quoted-bare.txt"))
    assert f["fm.start_failures"] == ["version-mismatch"]
    assert f["fm.log_errors"] == ["NVIDIA GPU driver interface version 550.90.07 don't match with driver version 550.54.15"]
    f = parsers.run("systemctl-status", load("systemctl-status/p5e-fm-version-mismatch-wrapped-quoted.txt"))
    assert f["fm.log_errors"] == ["fabric manager NVIDIA GPU driver interface version 610.57.04 don't match with driver "
                                  "version 595.71.05"]
    assert f["fm.start_failures"] == ["version-mismatch"]


def test_the_start_script_reporting_the_daemon_exited():
    f = parsers.run("systemctl-status", load("systemctl-status/h200-fm-version-mismatch-start-script-failed-journal.txt"))
    assert f["fm.start_failures"] == ["version-mismatch", "exited"]
    assert f["fm.log_errors"][1] == ('"/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg" '
                                     'failed! Exit code: 1')


@pytest.mark.parametrize("text", [
    "ib_umad                49152  0\nib_core               536576  1 ib_umad\n",  # lsmod: the module loaded
    "the fabric manager could not be reached\n",
    "ibacm[1796]: ibwarn: [1796] umad_init: can't read ABI version from /sys/class/infiniband_mad/abi_version "
    "(No such file or directory): is ib_umad module loaded?\n",  # rdma-core's ibacm, not the NVLink subnet manager
])
def test_other_words_are_not_the_fabric_managers(text):
    assert parsers.get("systemctl-status").detect(text) < parsers.DETECT_MIN
    with pytest.raises(ParseError):
        parsers.run("systemctl-status", text)


@pytest.mark.parametrize("rel", ["systemctl-status/gpuoperator610-a40-nvlink-bridge-nv-warn-nothing-to-do-journal.txt",
                                 "systemctl-status/cubestudio29-rtx4090-start-sh-nv-warn-nothing-to-do-journal.txt"])
def test_the_nvswitch_driver_having_nothing_to_do_is_read_as_no_nvswitch(rel):
    # two A40s with a bridge, two RTX 4090s: no NVSwitch for the fabric manager to manage (helper-gathered captures)
    f = parsers.run("systemctl-status", load(rel))
    assert "no-nvswitch" in f["fm.start_failures"]
