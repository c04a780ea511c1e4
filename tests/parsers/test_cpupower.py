"""cpupower parser: idle-info and frequency-info on real captures (public notes and blog posts), exact values."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def run(rel):
    text = load(f"cpupower/{rel}")
    assert parsers.detect(text) == "cpupower"
    return parsers.run("cpupower", text)


def test_processor_max_cstate_1_leaves_poll_and_c1():
    f = run("amd-acpi-idle-processor-max-cstate-1-poll-c1-only.txt")
    assert f["cpu.cstate_driver"] == "acpi_idle"
    assert f["cpu.cstates.available"] == ["POLL", "C1"]
    assert (f["cpu.deep_cstates_available"], f["cpu.deep_cstates_enabled"]) == (False, False)
    assert f["cpu.cstates.latency_us"] == {"POLL": 0, "C1": 1}


def test_the_same_machine_without_the_limit_offers_acpi_c2_and_c3():
    f = run("amd-acpi-idle-no-boot-limits-poll-c1-c2-c3.txt")
    assert f["cpu.cstates.available"] == ["POLL", "C1", "C2", "C3"]
    assert f["cpu.cstates.disabled"] == []
    assert f["cpu.deep_cstates_enabled"] is True  # under acpi_idle, C2 and C3 power the core down
    assert f["cpu.cstates.latency_us"]["C3"] == 350


def test_a_disabled_state_is_marked_and_not_enabled():
    f = run("intel-idle-c6-disabled-cloud-host-blog.txt")
    assert f["cpu.cstates.disabled"] == ["C6"]
    assert f["cpu.cstates.enabled"] == ["POLL", "C1", "C1E"]
    assert (f["cpu.deep_cstates_available"], f["cpu.deep_cstates_enabled"]) == (True, False)


def test_frequency_policy_capped_below_the_hardware_limit_with_boost_off():
    f = run("amd-acpi-cpufreq-policy-capped-2.5ghz-boost-inactive.txt")
    assert f == {"cpu.freq.driver": "acpi-cpufreq", "cpu.freq.governor": "performance", "cpu.freq.max_mhz": 5460.0,
                 "cpu.freq.scaling_max_mhz": 2500.0, "cpu.freq.capped": True, "cpu.freq.boost": False}


def test_frequency_info_with_the_authors_comments_after_the_values():
    f = run("intel-pstate-performance-boost-active-blog.txt")
    assert f["cpu.freq.driver"] == "intel_pstate"
    assert (f["cpu.freq.max_mhz"], f["cpu.freq.capped"], f["cpu.freq.boost"]) == (3400.0, False, True)


def test_other_text_is_not_cpupower():
    with pytest.raises(ParseError):
        parsers.run("cpupower", "Setting cpu: 0\n")


def test_ubuntus_wrapper_finding_no_cpupower_for_the_running_kernel():
    text = load("cpupower/deepops215-prolog-cpupower-not-found-for-kernel-4-15-0-42.txt")
    assert parsers.detect(text) == "cpupower"
    assert parsers.run("cpupower", text) == {"cpu.cpupower_missing_for_kernel": "4.15.0-42"}
