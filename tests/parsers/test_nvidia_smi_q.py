import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import troubleshooter.sources.gpu  # noqa: F401  (declares the gpu sources)
from tests.corpus import files, load
from troubleshooter import parsers
from troubleshooter.model.evidence import Status
from troubleshooter.parsers import ParseError
from troubleshooter.sources import SOURCES, Params
from troubleshooter.probe.targets import LocalTarget

A40 = "nvidia-smi/a40x10-driver550-table-and-q-idle-p8-sw-power-cap-active-dram-ce-remapped.txt"
RTX = "nvidia-smi/rtx5080-laptop-driver580-full-q-event-reason-counters.txt"
Q_FILES = [A40, RTX]  # the other files of the directory are the plain table


def parse(text):
    return parsers.run("nvidia-smi-q", text)


def test_a40_table_then_q_sw_power_cap_remapped_rows():
    f = parse(load(A40))
    assert f["gpu.count"] == 10  # "Attached GPUs : 10"; the excerpt holds the first GPU's section only
    assert f["gpu.names"] == ["NVIDIA A40"]
    assert f["gpu.driver_version"] == "550.127.05"
    assert f["gpu.cuda_version"] == "12.4"
    assert f["gpu.devices"] == [{
        "index": 0, "name": "NVIDIA A40", "uuid": "GPU-4e65de01-972e-93cf-b077-181a5378972a",
        "bus_id": "00000000:4F:00.0", "perf_state": "P8", "sm_clock_mhz": 0, "sm_clock_max_mhz": 1740,
        "mem_clock_mhz": 405, "mem_clock_max_mhz": 7251, "power_w": 29.7, "power_limit_w": 300.0,
        "power_default_limit_w": 300.0, "temp_c": 29,
        "clocks_event_reasons": ["sw_power_cap"], "ecc_uncorrected_volatile": 0, "ecc_corrected_volatile": 0,
        "remapped_rows": {"correctable": 2, "uncorrectable": 0, "pending": False, "failure": False},
        "retired_pages": None, "nvlink": None, "pcie_gen": 1, "pcie_gen_max": 4, "pcie_width": 16,
        "pcie_width_max": 16, "persistence_mode": True, "processes": [],
    }]
    assert f["gpu.throttle_reasons"] == ["sw_power_cap"]  # active although the GPU is idle at P8
    # at its default power limit (300 W of 300 W): the power cap is the GPU staying in budget, not clocks held down
    assert f["gpu.power_limit_lowered"] == [] and f["gpu.throttled"] == []
    assert f["gpu.sm_clock_ratio_min"] == 0.0
    assert f["gpu.power_ratio_max"] == 0.099
    assert f["gpu.temp_max_c"] == 29
    assert f["gpu.ecc_uncorrected_total"] == 0
    assert f["gpu.remapped_rows_pending"] == 0
    assert f["gpu.remapped_rows_failure"] == 0
    assert f["gpu.pcie_degraded"] == [{"index": 0, "gen": 1, "gen_max": 4, "width": 16, "width_max": 16}]
    assert f["gpu.persistence_off"] == []
    assert "gpu.nvlink_inactive" not in f


def test_rtx5080_driver580_newest_schema():
    f = parse(load(RTX))
    assert f["gpu.count"] == 1
    assert f["gpu.names"] == ["NVIDIA GeForce RTX 5080 Laptop GPU"]
    assert f["gpu.driver_version"] == "580.173.02"
    assert f["gpu.cuda_version"] == "13.0"
    d = f["gpu.devices"][0]
    assert d["power_w"] == 12.72  # "Average Power Draw", like NVML's power.draw
    assert d["power_limit_w"] == 80.0
    assert d["temp_c"] == 49
    assert (d["sm_clock_mhz"], d["sm_clock_max_mhz"], d["mem_clock_mhz"], d["mem_clock_max_mhz"]) == (427, 3090, 405, 14001)
    assert d["clocks_event_reasons"] == []  # the "Counters" section (accumulated us) is not the active state
    assert d["remapped_rows"] is None and d["retired_pages"] is None  # "N/A" on a client GPU
    assert d["ecc_uncorrected_volatile"] is None
    assert d["processes"][0] == {"pid": 2573, "used_mb": 276, "type": "G"}
    assert [p["pid"] for p in d["processes"]] == [2573, 2829, 3346, 4217, 6013, 12286, 44735]
    assert f["gpu.throttle_reasons"] == []
    assert f["gpu.throttled"] == []
    assert f["gpu.sm_clock_ratio_min"] == 0.1382
    assert f["gpu.power_ratio_max"] == 0.159
    assert f["gpu.temp_max_c"] == 49
    assert f["gpu.pcie_degraded"] == [{"index": 0, "gen": 1, "gen_max": 5, "width": 8, "width_max": 16}]
    assert f["gpu.persistence_off"] == [0]
    for absent in ("gpu.ecc_uncorrected_total", "gpu.remapped_rows_pending", "gpu.nvlink_inactive"):
        assert absent not in f


# Two GPUs in the layout of drivers before R450 ("Clocks Throttle Reasons", "Power Readings" with
# "Enforced Power Limit", ECC per unit under "Single Bit"/"Double Bit" with a Total). Written for this test
# after that layout, with values chosen to exercise every branch; not a capture.
OLD_TWO_GPUS = """
==============NVSMI LOG==============

Timestamp                           : Wed May  5 18:58:36 2021
Driver Version                      : 418.67
CUDA Version                        : 10.1

Attached GPUs                       : 2
GPU 00000000:8A:00.0
    Product Name                    : Tesla V100-SXM2-16GB
    Persistence Mode                : Disabled
    GPU UUID                        : GPU-00000000-0000-0000-0000-000000000000
    PCI
        Bus Id                      : 00000000:8A:00.0
        GPU Link Info
            PCIe Generation
                Max                 : 3
                Current             : 3
            Link Width
                Max                 : 16x
                Current             : 16x
    Performance State               : P0
    Clocks Throttle Reasons
        Idle                        : Not Active
        Applications Clocks Setting : Active
        SW Power Cap                : Not Active
        HW Slowdown                 : Not Active
            HW Thermal Slowdown     : Not Active
            HW Power Brake Slowdown : Not Active
        Sync Boost                  : Not Active
        SW Thermal Slowdown         : Not Active
        Display Clock Setting       : Not Active
    ECC Errors
        Volatile
            Single Bit
                Device Memory       : 4
                Register File       : 0
                Total               : 4
            Double Bit
                Device Memory       : 1
                Register File       : 0
                Total               : 1
    Retired Pages
        Single Bit ECC              : 2
        Double Bit ECC              : 1
        Pending                     : Yes
    Temperature
        GPU Current Temp            : 81 C
    Power Readings
        Power Draw                  : 290.50 W
        Power Limit                 : 300.00 W
        Enforced Power Limit        : 300.00 W
    Clocks
        SM                          : 1290 MHz
        Memory                      : 877 MHz
    Max Clocks
        SM                          : 1530 MHz
        Memory                      : 877 MHz
    Processes
        Process ID                  : 4242
            Type                    : C
            Name                    : python
            Used GPU Memory         : 15000 MiB

GPU 00000000:8B:00.0
    Product Name                    : Tesla V100-SXM2-16GB
    Persistence Mode                : Enabled
    PCI
        Bus Id                      : 00000000:8B:00.0
        GPU Link Info
            PCIe Generation
                Max                 : 3
                Current             : 3
            Link Width
                Max                 : 16x
                Current             : 8x
    Performance State               : P0
    Clocks Throttle Reasons
        Idle                        : Not Active
        SW Power Cap                : Active
        HW Slowdown                 : Active
            HW Thermal Slowdown     : Active
    Temperature
        GPU Current Temp            : 88 C
    Power Readings
        Power Draw                  : 300.10 W
        Enforced Power Limit        : 300.00 W
    Clocks
        SM                          : 945 MHz
    Max Clocks
        SM                          : 1530 MHz
    Processes                       : None
"""


def test_old_driver_two_gpus():
    f = parse(OLD_TWO_GPUS)
    assert f["gpu.count"] == 2
    assert f["gpu.driver_version"] == "418.67"
    assert f["gpu.throttle_reasons"] == ["hw_slowdown", "hw_thermal_slowdown", "sw_power_cap"]
    assert f["gpu.throttled"] == [1]  # applications_clocks_setting on GPU 0 is on purpose
    assert f["gpu.sm_clock_ratio_min"] == round(945 / 1530, 4)
    assert f["gpu.power_ratio_max"] == round(300.10 / 300.0, 4)
    assert f["gpu.temp_max_c"] == 88
    assert f["gpu.ecc_uncorrected_total"] == 1
    assert f["gpu.devices"][0]["ecc_corrected_volatile"] == 4
    assert f["gpu.devices"][0]["retired_pages"] == 3
    assert f["gpu.devices"][0]["processes"] == [{"pid": 4242, "used_mb": 15000, "type": "C"}]
    assert f["gpu.devices"][1]["processes"] == []
    assert f["gpu.pcie_degraded"] == [{"index": 1, "gen": 3, "gen_max": 3, "width": 8, "width_max": 16}]
    assert f["gpu.persistence_off"] == [0]
    assert "gpu.remapped_rows_pending" not in f  # Volta has no row remapping


def test_table_only_files_are_not_q_output():
    with pytest.raises(ParseError):
        parse(load("nvidia-smi/oci-gb300-nvidia-smi-580.txt"))  # table + a grep of -q's VBIOS lines


@pytest.mark.parametrize("text", ["", " \n\n", "==============NVSMI LOG==============\n\nDriver Version : 1\n"])
def test_empty_or_no_gpu_section_fails(text):
    with pytest.raises(ParseError):
        parse(text)


@pytest.mark.parametrize("rel", Q_FILES)
def test_detect(rel):
    assert parsers.detect(load(rel)) == "nvidia-smi-q"


def test_detect_synthetic_without_banner():
    assert parsers.detect(OLD_TWO_GPUS.split("Attached GPUs")[1].split("\n", 1)[1]) == "nvidia-smi-q"


def test_every_corpus_file_of_the_directory_is_q_or_table():
    kinds = {f.name: parsers.detect(load(f"nvidia-smi/{f.name}")) for f in files("nvidia-smi")}
    assert {k for k in kinds.values()} == {"nvidia-smi", "nvidia-smi-q"}


@pytest.mark.parametrize("text", [load(A40), load(RTX), OLD_TWO_GPUS])
def test_declared_facts(text):
    assert set(parse(text)) <= set(parsers.get("nvidia-smi-q").facts)


def test_source_not_installed_here():
    ev = LocalTarget().run(SOURCES["nvidia-smi-q"], Params())
    assert ev.status is Status.NOT_INSTALLED
    assert ev.reason.startswith("nvidia-smi is not installed")
    assert "nvidia-utils" in ev.reason


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_random_text_only_parse_error(text):
    try:
        parsers.get("nvidia-smi-q").func(text)
    except ParseError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(OLD_TWO_GPUS.split("\n")), max_size=40))
def test_shuffled_report_lines_only_parse_error(lines):
    try:
        parsers.get("nvidia-smi-q").func("\n".join(lines))
    except ParseError:
        pass


# Fragments people paste: `nvidia-smi -q -d PERFORMANCE` and `nvidia-smi -q | grep -A8 'Clocks Throttle'`
# (tests/data/nvidia-smi-q-fragments: kept apart from tests/data/nvidia-smi, whose files the fast-path test
# compares with the reference copy of the old parser, which did not read headerless fragments).
PERF = "nvidia-smi-q-fragments/q-d-performance-driver495-one-gpu-idle-active.txt"
GREP = "nvidia-smi-q-fragments/q-grep-A8-clocks-throttle-reasons-fragment-idle-active.txt"


def test_d_performance_reads_the_reasons():
    f = parse(load(PERF))
    assert f["gpu.count"] == 1
    assert f["gpu.driver_version"] == "495.44"
    assert f["gpu.cuda_version"] == "11.5"
    d = f["gpu.devices"][0]
    assert (d["bus_id"], d["perf_state"], d["name"]) == ("00000000:0E:00.0", "P0", None)
    assert d["clocks_event_reasons"] == ["gpu_idle"]
    assert f["gpu.throttle_reasons"] == []  # idle is not a throttle
    assert f["gpu.throttled"] == []


def test_grep_fragment_without_gpu_header():
    f = parse(load(GREP))
    assert [d["clocks_event_reasons"] for d in f["gpu.devices"]] == [["gpu_idle"]]
    assert f["gpu.devices"][0]["bus_id"] is None
    assert f["gpu.throttle_reasons"] == []
    assert f["gpu.throttled"] == []
    assert "gpu.count" not in f and "gpu.names" not in f  # a fragment does not show how many GPUs there are
    assert parsers.detect(load(GREP)) == "nvidia-smi-q"


def test_grep_fragment_of_two_gpus_with_an_active_reason():
    # the same grep on a 2-GPU machine: grep puts "--" between the matches; the second GPU power-capped
    block = load(GREP).split("\n", 1)[1]
    second = block.replace("SW Power Cap                : Not Active", "SW Power Cap                : Active")
    f = parse("$ nvidia-smi -q | grep -A8 'Clocks Throttle'\n" + block + "--\n" + second)
    assert [d["index"] for d in f["gpu.devices"]] == [0, 1]
    assert f["gpu.devices"][1]["clocks_event_reasons"] == ["gpu_idle", "sw_power_cap"]
    assert f["gpu.throttle_reasons"] == ["sw_power_cap"]
    # a grep of the reasons alone shows no power limits: the power cap is listed, not judged a slowdown
    assert f["gpu.throttled"] == [] and "gpu.power_limit_lowered" not in f
    third = block.replace("HW Slowdown                 : Not Active", "HW Slowdown                 : Active")
    f = parse("$ nvidia-smi -q | grep -A8 'Clocks Throttle'\n" + block + "--\n" + third)
    assert f["gpu.throttled"] == [1]


def test_reasons_header_alone_is_still_an_error():
    with pytest.raises(ParseError):
        parse("    Clocks Throttle Reasons\n")


def test_the_fabric_registration_grep_in_a_scripts_output():
    """nvidia-smi -q | grep -i -A 2 Fabric, between a script's banners, with '...' elisions (HGX recovery post)."""
    from troubleshooter.diagnosis import intake

    text = load("systemctl-status/hgx-fm-killed-fabric-completed-script-output.txt")
    block = next(b for b in intake.split(text) if "Fabric" in b.text and "State" in b.text)
    assert parsers.detect(block.text) == "nvidia-smi-q"
    f = parsers.run("nvidia-smi-q", block.text)
    assert f["gpu.fabric_states"] == {"0": "Completed/Success", "1": "Completed/Success", "2": "Completed/Success"}
    assert f["gpu.fabric_incomplete"] == []


def test_a_vgpu_guests_license_section_alone():
    """nvidia-smi -q's 'vGPU Software Licensed Product' section quoted alone (NVIDIA/gpu-operator#220)."""
    text = load("nvidia-smi-q-fragments/gpuoperator220-vgpu-license-section-unlicensed.txt")
    assert parsers.detect(text) == "nvidia-smi-q"
    f = parsers.run("nvidia-smi-q", text)
    assert f["gpu.vgpu_license"] == {"0": "Unlicensed"} and f["gpu.vgpu_unlicensed"] == [0]
    # a licensed guest: the status carries the expiry
    ok = text.replace("Unlicensed", "Licensed (Expiry: 2025-6-18 20:49:9 GMT)")
    g = parsers.run("nvidia-smi-q", ok)
    assert g["gpu.vgpu_license"] == {"0": "Licensed (Expiry: 2025-6-18 20:49:9 GMT)"} and g["gpu.vgpu_unlicensed"] == []


def test_no_vgpu_section_no_license_facts():
    f = parsers.run("nvidia-smi-q", load("nvidia-smi-q-fragments/q-d-performance-driver495-one-gpu-idle-active.txt"))
    assert "gpu.vgpu_license" not in f and "gpu.vgpu_unlicensed" not in f


def test_the_drivers_reset_status_quoted_alone():
    """nvidia-smi -q's 'GPU Reset Status' section quoted alone, indented as in the report (vllm-project/vllm#8847)."""
    text = load("nvidia-smi-q-fragments/vllm8847-gpu-reset-status-reset-required-yes.txt")
    assert parsers.detect(text) == "nvidia-smi-q"
    f = parsers.run("nvidia-smi-q", text)
    assert f["gpu.recovery_actions"] == {"0": "Reset"} and f["gpu.recovery_needed"] == [0]
    # the same section with Drain and Reset Recommended: Yes
    g = parsers.run("nvidia-smi-q", text.replace("Recommended       : No", "Recommended       : Yes"))
    assert g["gpu.recovery_actions"] == {"0": "Drain and Reset"}


def test_the_reset_status_among_key_lines_a_person_picked_from_the_report():
    """A hand-over note's selection of `nvidia-smi -i 2 -q`: the Reset Status section, then single lines at the margin
    ('Fan Speed : System is not in ready state') that are no section read here and no reason to refuse the rest."""
    f = parsers.run("nvidia-smi-q", load("nvidia-smi-q-fragments/rtx3090-i2-q-reset-required-yes-not-ready-key-lines.txt"))
    assert f["gpu.recovery_actions"] == {"0": "Reset"} and f["gpu.recovery_needed"] == [0]
    assert f["gpu.devices"][0]["perf_state"] == "P0"


def test_the_recovery_action_of_driver_570_and_the_deprecated_reset_status():
    f = parsers.run("nvidia-smi-q", load("nvidia-smi-q-fragments/sichek-h200-570-recovery-action-reset-reset-status-deprecated.txt"))
    assert f["gpu.recovery_actions"] == {"0": "Reset"} and f["gpu.recovery_needed"] == [0]
    g = parsers.run("nvidia-smi-q", load("nvidia-smi-q-fragments/sichek-h200-570-recovery-action-none-reset-status-deprecated.txt"))
    assert g["gpu.recovery_actions"] == {"0": "None"} and g["gpu.recovery_needed"] == []


def test_full_reports_whose_gpus_need_no_recovery():
    assert parse(load(A40))["gpu.recovery_actions"] == {"0": "None"}  # Reset Required: No, Drain and Reset: No
    f = parse(load(RTX))  # driver 580: 'GPU Recovery Action : None'
    assert f["gpu.recovery_actions"] == {"0": "None"} and f["gpu.recovery_needed"] == []


@pytest.mark.parametrize("text", [
    "GPU Reset Status\n",
    "Fan Speed                             : System is not in ready state\n",  # a padded line, no section read here
])
def test_a_reset_status_header_or_padded_lines_alone_are_refused(text):
    with pytest.raises(ParseError):
        parse(text)


def test_a_remapped_rows_section_quoted_alone():
    text = load("nvidia-smi-q-fragments/gpud80-remapped-rows-section-alone-pending.txt")
    assert parsers.detect(text) == "nvidia-smi-q"
    f = parsers.run("nvidia-smi-q", text)
    assert f["gpu.devices"][0]["remapped_rows"] == {"correctable": 0, "uncorrectable": 4, "pending": True, "failure": None}
    assert (f["gpu.remapped_rows_pending"], f["gpu.remapped_rows_failure"]) == (1, 0)


@pytest.mark.parametrize("name, uncorrected, corrected", [
    # at the margin of the quote, indented as in the report: SRAM Uncorrectable 1 (Aggregate's 5 is not volatile)
    ("mleng-ecc-errors-section-alone-sram-uncorrectable.txt", 1, 0),
    # the prompt, the poster's comment and ECC Mode above it; DRAM Uncorrectable 2, no SRAM Uncorrectable line
    ("sirzzang-rtxpro6000-q-d-ecc-prompt-no-gpu-header-dram-uncorrectable.txt", 2, 0),
])
def test_an_ecc_errors_section_quoted_without_its_gpu_header(name, uncorrected, corrected):
    text = load(f"nvidia-smi-q-fragments/{name}")
    assert parsers.detect(text) == "nvidia-smi-q"
    f = parsers.run("nvidia-smi-q", text)
    (gpu,) = f["gpu.devices"]
    assert (gpu["ecc_uncorrected_volatile"], gpu["ecc_corrected_volatile"]) == (uncorrected, corrected)
    assert f["gpu.ecc_uncorrected_total"] == uncorrected
    assert gpu["bus_id"] is None and "gpu.count" not in f  # which GPU, and how many the node has, are not shown


def test_an_ecc_mode_section_alone_is_not_a_gpu():
    with pytest.raises(ParseError):
        parse("ECC Mode\n    Current                  : Enabled\n    Pending                  : Enabled\n")
