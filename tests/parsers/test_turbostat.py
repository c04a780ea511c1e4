import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.model.evidence import Evidence, Status
from troubleshooter.parsers import ParseError
from troubleshooter.probe.runner import classify
from troubleshooter.sources import Params, get as get_source
from troubleshooter.probe.targets import LocalTarget

KIND = "turbostat"


def parse(text):
    return parsers.run(KIND, text)


def test_westmere_debug_preamble_and_table():
    f = parse(load("turbostat/westmere-debug-preamble-node-minus1.txt"))
    assert f["cpu.turbostat_version"] == "20.03.20"
    assert f["cpu.max_turbo_mhz"] == 2933.3
    assert f["cpu.all_core_turbo_mhz"] == 2666.6
    assert f["cpu.max_efficiency_mhz"] == 1200.0
    assert f["cpu.base_mhz"] == 2399.9
    assert f["cpu.pkg_cstate_limit"] == "pc6"
    assert f["cpu.idle_driver"] == "intel_idle"
    assert f["cpu.idle_governor"] == "menu"
    assert f["cpu.cpufreq_driver"] == "acpi-cpufreq"
    assert f["cpu.cpufreq_governor"] == "ondemand"
    assert f["cpu.freq.boost"] is True
    assert f["cpu.cstates.available"] == ["POLL", "C1", "C1E", "C3", "C6"]
    assert f["cpu.turbostat_columns"][:4] == ["Node", "Core", "CPU", "Avg_MHz"]
    assert len(f["cpu.turbostat_columns"]) == 25
    assert f["cpu.turbostat_cpus"] == 4
    assert (f["cpu.busy_mhz"], f["cpu.avg_mhz"], f["cpu.tsc_mhz"], f["cpu.busy_pct"]) == (1493, 395, 2430, 26.14)
    assert (f["cpu.c1_pct"], f["cpu.c6_pct"]) == (1.50, 0.0)  # C1%/C6% columns win over CPU%c1/CPU%c6
    assert (f["cpu.hw_c1_pct"], f["cpu.hw_c6_pct"]) == (28.45, 0.0)
    assert f["cpu.cstate_pct"] == {"POLL": 0.0, "C1": 1.5, "C1E": 0.59, "C3": 73.54, "C6": 0.0}
    assert f["cpu.busy_cores"] == 1
    assert f["cpu.busy_cores_mhz"] == 1574  # CPU 1 at 50.12% busy
    assert "cpu.idle_cores_c6_pct" not in f  # no CPU under 10% busy
    assert "cpu.pkg_watt" not in f


def test_client_jitter_line_and_fused_header_are_repaired():
    f = parse(load("turbostat/client-jitter-line-fused-header-gfxwattramwatt.txt"))
    cols = f["cpu.turbostat_columns"]
    assert cols[-5:] == ["CorWatt", "GFXWatt", "RAMWatt", "PKG_%", "RAM_%"]  # 'GFXWattRAMWatt' split
    assert "Totl%C0" in cols and "Any%C0" in cols  # not split: not a fused pair of unit columns
    assert f["cpu.turbostat_cpus"] == 6  # excerpt ends after CPU 6 (CPUs 3 and 7 cut off)
    assert (f["cpu.busy_mhz"], f["cpu.avg_mhz"], f["cpu.tsc_mhz"], f["cpu.busy_pct"]) == (1562, 63, 2808, 4.06)
    assert f["cpu.pkg_watt"] == 4.98
    assert (f["cpu.c1_pct"], f["cpu.c6_pct"]) == (7.84, 1.29)
    assert (f["cpu.hw_c1_pct"], f["cpu.hw_c6_pct"]) == (16.61, 1.78)
    assert f["cpu.cstate_pct"]["C10"] == 60.30
    assert f["cpu.busy_cores"] == 0
    assert "cpu.busy_cores_mhz" not in f
    assert f["cpu.idle_cores_c6_pct"] == 1.28  # mean of C6% 0.83 1.10 2.00 1.43 0.95 1.38


def test_epyc_preamble_only_gives_preamble_facts():
    f = parse(load("turbostat/epyc7313-milan-2s-acpi_idle-c1-c2-only-preamble.txt"))
    assert f == {
        "cpu.idle_driver": "acpi_idle",
        "cpu.idle_governor": "menu",
        "cpu.cpufreq_driver": "acpi-cpufreq",
        "cpu.cpufreq_governor": "schedutil",
        "cpu.freq.boost": True,
        "cpu.cstates.available": ["POLL", "C1", "C2"],
    }


def test_ryzen_quoted_printable_and_wrapped_rows():
    f = parse(load("turbostat/ryzen7840hs-quoted-printable-mangled-amd-pstate-guided.txt"))
    assert f["cpu.turbostat_version"] == "2024.04.08"
    assert f["cpu.cpufreq_driver"] == "amd-pstate"
    assert f["cpu.cpufreq_governor"] == "ondemand"
    assert f["cpu.idle_driver"] == "acpi_idle"
    assert f["cpu.cstates.available"] == ["POLL", "C1", "C2", "C3"]
    assert f["cpu.turbostat_columns"] == ["Core", "CPU", "Avg_MHz", "Busy%", "Bzy_MHz", "TSC_MHz", "IPC", "IRQ",
                                          "POLL", "C1", "C2", "C3", "POLL%", "C1%", "C2%", "C3%", "CorWatt", "PkgWatt"]
    assert f["cpu.turbostat_cpus"] == 16
    assert (f["cpu.busy_mhz"], f["cpu.avg_mhz"], f["cpu.tsc_mhz"], f["cpu.busy_pct"]) == (4667, 481, 3798, 10.30)
    assert f["cpu.pkg_watt"] == 28.87
    assert f["cpu.c1_pct"] == 0.31
    assert "cpu.c6_pct" not in f  # AMD acpi_idle: C1..C3 only
    assert f["cpu.cstate_pct"] == {"POLL": 0.01, "C1": 0.31, "C2": 5.88, "C3": 83.78}
    assert f["cpu.busy_cores"] == 1
    assert f["cpu.busy_cores_mhz"] == 5011  # CPU 13, 56.38% busy
    assert "cpu.idle_cores_c6_pct" not in f


def test_spr_kvm_guest_quoted_printable_nan_and_histograms():
    f = parse(load("turbostat/spr-kvm-guest-8vcpu-qp-mangled-llc-nan-cstate-histogram.txt"))
    assert f["cpu.pkg_cstate_limit"] == "pc0"
    assert f["cpu.idle_driver"] == "intel_idle"
    assert f["cpu.cstates.available"] == ["POLL", "C1", "C1E", "C6"]
    cols = f["cpu.turbostat_columns"]
    assert cols[:8] == ["usec", "Time_Of_Day_Seconds", "Core", "CPU", "APIC", "X2APIC", "Avg_MHz", "Busy%"]
    assert cols[-6:] == ["POLL%", "C1%", "C1E%", "C6%", "CPU%c1", "CPU%c6"]
    assert "LLC%hit" in cols  # its values are -nan: no fact is made from them
    assert f["cpu.turbostat_cpus"] == 8
    assert (f["cpu.busy_mhz"], f["cpu.avg_mhz"], f["cpu.tsc_mhz"], f["cpu.busy_pct"]) == (3502, 17, 2400, 0.49)
    assert (f["cpu.c1_pct"], f["cpu.c6_pct"], f["cpu.hw_c1_pct"], f["cpu.hw_c6_pct"]) == (0.0, 99.70, 0.35, 99.00)
    assert "cpu.pkg_watt" not in f  # RAPL disabled in the guest
    assert "cpu.max_turbo_mhz" not in f
    assert f["cpu.busy_cores"] == 0
    assert f["cpu.idle_cores_c6_pct"] == 99.70


SERVER = (
    "Package\tCore\tCPU\tAvg_MHz\tBusy%\tBzy_MHz\tTSC_MHz\tIRQ\tC1%\tC6%\tCPU%c1\tCPU%c6\tPkgWatt\n"
    "{rows}"
)


def _interval(busy0, mhz0):
    rows = (
        f"-\t-\t-\t1500\t50.00\t3000\t2000\t100\t45.00\t0.00\t48.00\t0.00\t350.00\n"
        f"0\t0\t0\t{busy0 * 30:.0f}\t{busy0:.2f}\t{mhz0}\t2000\t50\t1.00\t0.00\t1.00\t0.00\t350.00\n"
        f"0\t1\t1\t30\t1.00\t3000\t2000\t50\t98.00\t0.00\t98.00\t0.00\n"
    )
    return SERVER.format(rows=rows)


def test_last_complete_interval_wins_over_a_truncated_one():
    # case-2 shape: busy cores pegged at 3.0 GHz, idle cores in C1 not C6
    text = _interval(90.0, 2900) + _interval(99.0, 3000) + _interval(10.0, 1000).rsplit("\n", 3)[0] + "\n"
    f = parse(text)
    assert f["cpu.turbostat_cpus"] == 2
    assert f["cpu.busy_cores_mhz"] == 3000
    assert f["cpu.idle_cores_c6_pct"] == 0.0
    assert f["cpu.c1_pct"] == 45.0 and f["cpu.pkg_watt"] == 350.0


def test_summary_only_and_header_once():
    f = parse("Avg_MHz\tBusy%\tBzy_MHz\tTSC_MHz\n100\t5.00\t2000\t2400\n200\t10.00\t2100\t2400\n")
    assert (f["cpu.busy_mhz"], f["cpu.busy_pct"], f["cpu.turbostat_cpus"]) == (2100, 10.0, 0)


def test_space_separated_and_max_turbo_ratio_lines():
    text = (
        "35 * 100.0 = 3500.0 MHz max turbo 1 active cores\n"
        "30 * 100.0 = 3000.0 MHz max turbo 56 active cores\n"
        "Core CPU Avg_MHz Busy% Bzy_MHz TSC_MHz CPU%c1 CPU%c6\n"
        "-    -   1000    33.33  3000    2000    60.00  6.67\n"
    )
    f = parse(text)
    assert f["cpu.max_turbo_mhz"] == 3500.0
    assert f["cpu.all_core_turbo_mhz"] == 3000.0
    assert (f["cpu.c1_pct"], f["cpu.c6_pct"]) == (60.0, 6.67)  # from CPU%c1/CPU%c6 when C1%/C6% are absent


@pytest.mark.parametrize("text", ["", " \n\t\n", "hello world\n", "Core CPU\n0 0\n",
                                  "turbostat: Failed to set rlimit: Operation not permitted\n"])
def test_empty_or_not_turbostat(text):
    with pytest.raises(ParseError):
        parse(text)




def test_rlimit_failure_classifies_as_permission_denied():
    msg = b"turbostat: Failed to set rlimit: Operation not permitted\n"
    # as this source runs it (stderr merged into stdout by its script) and as plain turbostat prints it
    for out, err in ((msg, b""), (b"", msg)):
        ev = classify(Evidence("turbostat", Status.OK, stdout=out, stderr=err, rc=1, argv=["sh", "-c", "turbostat"]))
        assert ev.status is Status.PERMISSION_DENIED
        assert ev.reason == "turbostat: Failed to set rlimit: Operation not permitted"


def test_source_runs_here():
    src = get_source("turbostat")
    assert src.root and src.needs == "turbostat" and "linux-cpupower" in src.package
    assert "--num_iterations" in src.argv[-1] and "--interval" in src.argv[-1]
    ev = LocalTarget().run(src, Params())
    # this machine: linux-cpupower installed but no CAP_SYS_RESOURCE (SANDBOX.md), or not installed at all
    assert ev.status in (Status.PERMISSION_DENIED, Status.NOT_INSTALLED), (ev.status, ev.reason)
    if ev.status is Status.PERMISSION_DENIED:
        assert "Failed to set rlimit: Operation not permitted" in ev.reason
    else:
        assert ev.reason.startswith("turbostat is not installed (package linux-cpupower")
