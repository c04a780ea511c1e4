import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.model.evidence import Status
from troubleshooter.parsers import ParseError
from troubleshooter.parsers.cpuidle import is_deep
from troubleshooter.sources import Params, get as get_source
from troubleshooter.probe.targets import LocalTarget

KIND = "cpuidle"
BASE = "/sys/devices/system/cpu"


def parse(text):
    return parsers.run(KIND, text)


def test_this_sandbox_haltpoll_capture():
    f = parse(load("cpuidle/this-sandbox-haltpoll.txt"))
    assert f["cpu.cstate_driver"] == "haltpoll"
    assert f["cpu.cstates.available"] == ["POLL", "haltpoll idle"]
    assert f["cpu.cstates.enabled"] == ["POLL", "haltpoll idle"]
    assert f["cpu.cstates.disabled"] == []
    assert f["cpu.deepest_enabled_cstate"] == "haltpoll idle"
    assert f["cpu.deep_cstates_available"] is False
    assert f["cpu.deep_cstates_enabled"] is False
    assert f["cpu.cpuidle_cpus"] == 2
    assert f["cpu.cstates.usage"] == {"POLL": 0, "haltpoll idle": 59943 + 76971}
    assert f["cpu.cstates.time_pct"] == {"POLL": 0.0, "haltpoll idle": 100.0}
    assert f["cpu.cstates.latency_us"] == {"POLL": 0, "haltpoll idle": 1}


def server(ncpu=4, disable_c6_on=(), drop_c6_on=()):
    """Synthetic (built here, not captured) intel_idle server: POLL, C1, C1E, C6 as on Sapphire Rapids."""
    states = [("POLL", 0, 10, 1000), ("C1", 1, 5000, 2_000_000), ("C1E", 2, 3000, 3_000_000), ("C6", 170, 2000, 15_000_000)]
    lines = []
    for field in ("name", "disable", "latency", "usage", "time"):
        for cpu in range(ncpu):
            for idx, (name, lat, usage, t) in enumerate(states):
                if name == "C6" and cpu in drop_c6_on:
                    continue
                value = {"name": name, "disable": int(name == "C6" and cpu in disable_c6_on), "latency": lat,
                         "usage": usage, "time": t}[field]
                lines.append(f"{BASE}/cpu{cpu}/cpuidle/state{idx}/{field}:{value}")
    lines.append(f"{BASE}/cpuidle/current_driver:intel_idle")
    return "\n".join(lines) + "\n"


def test_intel_idle_server_all_enabled():
    f = parse(server())
    assert f["cpu.cstate_driver"] == "intel_idle"
    assert f["cpu.cstates.available"] == ["POLL", "C1", "C1E", "C6"]
    assert f["cpu.cstates.enabled"] == ["POLL", "C1", "C1E", "C6"]
    assert f["cpu.deepest_enabled_cstate"] == "C6"
    assert f["cpu.deep_cstates_enabled"] is True
    assert f["cpu.cstates.usage"] == {"POLL": 40, "C1": 20000, "C1E": 12000, "C6": 8000}
    total = 4 * (1000 + 2_000_000 + 3_000_000 + 15_000_000)
    assert f["cpu.cstates.time_pct"]["C6"] == round(4 * 15_000_000 * 100 / total, 2)
    assert f["cpu.cstates.latency_us"]["C6"] == 170


def test_c6_disabled_on_one_cpu_is_not_deep_enabled():
    f = parse(server(disable_c6_on=(2,)))
    assert f["cpu.cstates.disabled"] == ["C6"]
    assert f["cpu.cstates.enabled"] == ["POLL", "C1", "C1E"]
    assert f["cpu.deepest_enabled_cstate"] == "C1E"
    assert f["cpu.deep_cstates_available"] is True
    assert f["cpu.deep_cstates_enabled"] is False


def test_c6_missing_on_one_cpu_is_not_deep_enabled():
    f = parse(server(drop_c6_on=(3,)))
    assert f["cpu.deep_cstates_enabled"] is False


@pytest.mark.parametrize("name,driver,deep", [
    ("C1", "intel_idle", False), ("C1E", "intel_idle", False), ("C1E-SPR", "intel_idle", False),
    ("POLL", "intel_idle", False), ("C3", "intel_idle", True), ("C6", "intel_idle", True),
    ("C6S", "intel_idle", True), ("C7s", "intel_idle", True), ("C10", "intel_idle", True),
    ("C6-SKX", "intel_idle", True), ("C2", "intel_idle", False), ("C2", "acpi_idle", True),
    ("haltpoll idle", "haltpoll", False), ("WFI", "psci_idle", False),
])
def test_deep_rule(name, driver, deep):
    assert is_deep(name, driver) is deep


@pytest.mark.parametrize("text", ["", "\n\n", "hello\n", f"{BASE}/cpuidle/current_driver:none\n",
                                  f"{BASE}/cpu0/cpufreq/scaling_governor:performance\n"])
def test_empty_or_no_states(text):
    with pytest.raises(ParseError):
        parse(text)


def test_no_states_message():
    with pytest.raises(ParseError, match="no cpuidle states exposed"):
        parse(f"{BASE}/cpuidle/current_driver:none\n")



def test_synthetic_detected():
    assert parsers.detect(server()) == KIND



def test_source_runs_here():
    """The probe against this machine's own /sys: the driver and the states it exposes (SANDBOX.md's machines show
    POLL and 'haltpoll idle' under haltpoll; others expose none, driver 'none', which must read as that, not fail)."""
    import glob
    from pathlib import Path

    src = get_source("cpuidle")
    assert src.argv[:2] == ("sh", "-c") and 1 in src.accept_rc and 2 in src.accept_rc
    ev = LocalTarget().run(src, Params())
    assert ev.status is Status.OK, ev.reason
    driver_file = Path(f"{BASE}/cpuidle/current_driver")
    driver = driver_file.read_text().strip() if driver_file.exists() else "none"
    names = sorted({Path(p).read_text().strip() for p in glob.glob(f"{BASE}/cpu0/cpuidle/state*/name")})
    if not names:
        with pytest.raises(ParseError, match="no cpuidle states exposed"):
            parse(ev.text)
        return
    f = parse(ev.text)
    assert f["cpu.cstate_driver"] == driver
    assert sorted(f["cpu.cstates.available"]) == names
