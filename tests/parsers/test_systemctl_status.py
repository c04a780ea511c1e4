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
