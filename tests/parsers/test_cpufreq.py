import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.model.evidence import Status
from troubleshooter.parsers import ParseError
from troubleshooter.sources import Params, get as get_source
from troubleshooter.probe.targets import LocalTarget

KIND = "cpufreq"
BASE = "/sys/devices/system/cpu"


def parse(text):
    return parsers.run(KIND, text)


def test_this_sandbox_no_cpufreq_gives_smt_and_vulnerabilities_only():
    f = parse(load("cpufreq/this-sandbox-no-cpufreq-smt-notsupported.txt"))
    assert not any(k.startswith("cpu.freq.") for k in f)
    assert f["cpu.smt_active"] is False
    assert f["cpu.smt_control"] == "notsupported"
    assert len(f["cpu.vulnerabilities"]) == 19
    assert f["cpu.vulnerabilities"]["spec_store_bypass"] == "Vulnerable"
    assert f["cpu.vulnerabilities"]["spectre_v2"].startswith("Mitigation: Retpolines; STIBP: disabled")
    assert f["cpu.mitigated_count"] == 2
    assert f["cpu.vulnerable_count"] == 2


def server(governors=("performance",) * 4, cap=None, no_turbo="0"):
    """Synthetic (built here) intel_pstate server lines in the order grep -H prints them."""
    lines = []
    n = len(governors)
    for field in ("scaling_driver", "scaling_governor", "scaling_max_freq", "cpuinfo_max_freq", "scaling_cur_freq"):
        for cpu in range(n):
            value = {"scaling_driver": "intel_pstate", "scaling_governor": governors[cpu],
                     "scaling_max_freq": cap if cap and cpu == 0 else 3800000, "cpuinfo_max_freq": 3800000,
                     "scaling_cur_freq": 2000000 + 100000 * cpu}[field]
            lines.append(f"{BASE}/cpu{cpu}/cpufreq/{field}:{value}")
    lines += [f"{BASE}/intel_pstate/no_turbo:{no_turbo}", f"{BASE}/smt/active:1", f"{BASE}/smt/control:on",
              f"{BASE}/vulnerabilities/meltdown:Not affected",
              f"{BASE}/vulnerabilities/spectre_v2:Mitigation: Enhanced / Automatic IBRS"]
    return "\n".join(lines) + "\n"


def test_server_performance_turbo_on():
    f = parse(server())
    assert f["cpu.freq.driver"] == "intel_pstate"
    assert f["cpu.freq.governor"] == "performance"
    assert f["cpu.freq.governors"] == ["performance"]
    assert f["cpu.freq.max_mhz"] == 3800
    assert f["cpu.freq.scaling_max_mhz"] == 3800
    assert f["cpu.freq.capped"] is False
    assert f["cpu.freq.cur_mhz_median"] == 2150.0
    assert f["cpu.freq.boost"] is True
    assert f["cpu.freq.cpus"] == 4
    assert f["cpu.smt_active"] is True and f["cpu.smt_control"] == "on"
    assert f["cpu.mitigated_count"] == 1 and f["cpu.vulnerable_count"] == 0


def test_mixed_governors_cap_and_no_turbo():
    f = parse(server(governors=("powersave", "powersave", "performance"), cap=3000000, no_turbo="1"))
    assert f["cpu.freq.governor"] == "powersave"
    assert f["cpu.freq.governors"] == ["performance", "powersave"]
    assert f["cpu.freq.scaling_max_mhz"] == 3000
    assert f["cpu.freq.capped"] is True
    assert f["cpu.freq.boost"] is False


def test_acpi_cpufreq_boost_file():
    f = parse(f"{BASE}/cpu0/cpufreq/scaling_driver:acpi-cpufreq\n{BASE}/cpufreq/boost:0\n")
    assert f["cpu.freq.driver"] == "acpi-cpufreq" and f["cpu.freq.boost"] is False


@pytest.mark.parametrize("text", ["", "  \n", "MemTotal: 1 kB\n", f"{BASE}/cpu0/cpuidle/state0/name:POLL\n"])
def test_empty_or_not_cpufreq(text):
    with pytest.raises(ParseError):
        parse(text)



def test_synthetic_detected():
    assert parsers.detect(server()) == KIND



def test_source_runs_here():
    src = get_source("cpufreq")
    ev = LocalTarget().run(src, Params())
    assert ev.status is Status.OK, ev.reason  # grep exits 2 here (empty cpufreq dir): accepted
    f = parse(ev.text)
    assert "cpu.freq.driver" not in f  # SANDBOX.md: the cpufreq directory is empty
    assert isinstance(f["cpu.vulnerabilities"], dict) and f["cpu.vulnerabilities"]
    assert isinstance(f["cpu.smt_active"], bool)
