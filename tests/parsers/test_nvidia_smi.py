import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import troubleshooter.sources.gpu  # noqa: F401  (declares the gpu sources)
from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.model.evidence import Status
from troubleshooter.parsers import ParseError
from troubleshooter.sources import SOURCES, Params
from troubleshooter.probe.targets import LocalTarget

GH200 = "nvidia-smi/gh200-480gb-nvidia-smi-570.txt"
GB300 = "nvidia-smi/oci-gb300-nvidia-smi-580.txt"
V100 = "nvidia-smi/v100-sxm2-4gpu-driver418-old-table.txt"
A40 = "nvidia-smi/a40x10-driver550-table-and-q-idle-p8-sw-power-cap-active-dram-ce-remapped.txt"
TABLE_FILES = [GH200, GB300, V100]


def parse(text):
    return parsers.run("nvidia-smi", text)


def test_gh200_single_gpu():
    f = parse(load(GH200))
    assert f == {
        "gpu.driver_version": "570.124.06",
        "gpu.cuda_version": "12.8",
        "gpu.count": 1,
        "gpu.names": ["NVIDIA GH200 480GB"],
        "gpu.devices": [{"index": 0, "name": "NVIDIA GH200 480GB", "bus_id": "00000000:DD:00.0", "temp_c": 33,
                         "perf_state": "P0", "power_w": 86.0, "power_limit_w": 700.0, "mem_used_mib": 1,
                         "mem_total_mib": 97871, "util_pct": 0}],
        "gpu.persistence_off": [],
        "gpu.idle_p0_no_persistence": [],  # idle at P0 is a data-center GPU's normal state with persistence on
        "gpu.compute_exclusive": [],  # 'Default' compute mode
        "gpu.processes": [],  # "No running processes found"
    }


def test_gb300_domain_prefixed_bus_ids():
    f = parse(load(GB300))
    assert f["gpu.driver_version"] == "580.105.08"
    assert f["gpu.cuda_version"] == "13.0"
    assert f["gpu.count"] == 4
    assert f["gpu.names"] == ["NVIDIA GB300"] * 4
    assert [d["bus_id"] for d in f["gpu.devices"]] == [
        "00000008:06:00.0", "00000009:06:00.0", "00000018:06:00.0", "00000019:06:00.0"]
    assert [d["power_w"] for d in f["gpu.devices"]] == [237.0, 233.0, 238.0, 234.0]
    assert [d["temp_c"] for d in f["gpu.devices"]] == [33, 33, 35, 34]
    assert {d["power_limit_w"] for d in f["gpu.devices"]} == {1400.0}
    assert {d["mem_total_mib"] for d in f["gpu.devices"]} == {284208}
    assert f["gpu.persistence_off"] == []


def test_v100_old_layout_truncated_names_persistence_off():
    f = parse(load(V100))
    assert f["gpu.driver_version"] == "418.67"
    assert f["gpu.cuda_version"] == "10.1"
    assert f["gpu.count"] == 4
    assert f["gpu.names"] == ["Tesla V100-SXM2..."] * 4  # as printed: the old table cuts names
    assert f["gpu.devices"][1] == {"index": 1, "name": "Tesla V100-SXM2...", "bus_id": "00000000:8B:00.0",
                                   "temp_c": 36, "perf_state": "P0", "power_w": 61.0, "power_limit_w": 300.0,
                                   "mem_used_mib": 10, "mem_total_mib": 16130, "util_pct": 0}
    assert f["gpu.persistence_off"] == [0, 1, 2, 3]


def test_a40_table_part_of_the_combined_file():
    f = parse(load(A40))
    assert f["gpu.count"] == 10
    assert f["gpu.driver_version"] == "550.127.05"
    assert [d["power_w"] for d in f["gpu.devices"]] == [23.0, 24.0, 15.0, 24.0, 24.0, 24.0, 15.0, 24.0, 15.0, 16.0]
    assert {d["perf_state"] for d in f["gpu.devices"]} == {"P8"}
    assert f["gpu.devices"][9]["bus_id"] == "00000000:D6:00.0"
    assert f["gpu.persistence_off"] == []


def test_na_cells():
    text = (
        "| NVIDIA-SMI 535.54.03    Driver Version: 535.54.03    CUDA Version: N/A |\n"
        "|   0  NVIDIA H100 80GB HBM3          Off | 00000000:18:00.0 Off |                    0 |\n"
        "| N/A   N/A    P0            N/A /  N/A  |      0MiB / 81559MiB |     N/A      Default |\n"
    )
    f = parse(text)
    assert "gpu.cuda_version" not in f
    assert f["gpu.devices"][0]["power_w"] is None and f["gpu.devices"][0]["temp_c"] is None
    assert f["gpu.devices"][0]["util_pct"] is None
    assert f["gpu.persistence_off"] == [0]


@pytest.mark.parametrize("text", ["", "  \n", "No devices were found\n"])
def test_empty_or_no_gpu_rows_fails(text):
    with pytest.raises(ParseError):
        parse(text)


def test_the_header_alone_gives_the_driver_and_says_nothing_of_the_gpus():
    # TransformerEngine#1923's one pasted line (tests/realworld/cases/ao-te1923...): the table was not pasted
    text = load("nvidia-smi/te1923-header-line-alone.txt")
    assert parse(text) == {"gpu.driver_version": "535.129.03", "gpu.cuda_version": "12.2"}


@pytest.mark.parametrize("rel", TABLE_FILES)
def test_detect(rel):
    assert parsers.detect(load(rel)) == "nvidia-smi"


@pytest.mark.parametrize("rel", TABLE_FILES + [A40])
def test_declared_facts(rel):
    assert set(parse(load(rel))) <= set(parsers.get("nvidia-smi").facts)


def test_source_not_installed_here():
    ev = LocalTarget().run(SOURCES["nvidia-smi"], Params())
    assert ev.status is Status.NOT_INSTALLED
    assert ev.reason.startswith("nvidia-smi is not installed")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_random_text_only_parse_error(text):
    try:
        parsers.get("nvidia-smi").func(text)
    except ParseError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(load(GB300).split("\n")), max_size=30))
def test_shuffled_table_lines_only_parse_error(lines):
    try:
        parsers.get("nvidia-smi").func("\n".join(lines))
    except ParseError:
        pass


def test_idle_gpus_held_at_p0_without_persistence_mode():
    f = parsers.run("nvidia-smi", load("nvidia-smi/shinecluster54-rtx3070-idle-p0-persistence-off.txt"))
    assert f["gpu.persistence_off"] == [0, 1, 2] and f["gpu.idle_p0_no_persistence"] == [0, 1, 2]
    assert [d["power_w"] for d in f["gpu.devices"]] == [48.0, 51.0, 48.0]
    # an idle A40 node at P8 (persistence off or not) is not held up
    f = parsers.run("nvidia-smi", load("nvidia-smi/a40x10-driver550-table-and-q-idle-p8-sw-power-cap-active-dram-ce-remapped.txt"))
    assert f.get("gpu.idle_p0_no_persistence", []) == []


def test_compute_mode_exclusive_process_in_an_indented_table():
    f = parse(load("nvidia-smi/cscs-gh200x4-e-process-srun-environment-indented.txt"))
    assert f["gpu.count"] == 4 and f["gpu.compute_exclusive"] == [0, 1, 2, 3]
    assert "gpu.inforom_corrupted" not in f


def test_the_inforom_warning_after_a_normal_table():
    f = parse(load("nvidia-smi/gpuop-p100-inforom-corrupted-warning-rc14.txt"))
    assert f["gpu.inforom_corrupted"] == ["0000:0b:00.0"]
    assert f["gpu.names"] == ["Tesla P100-PCIE..."] and f["gpu.compute_exclusive"] == []


def test_the_processes_table_alone_on_the_host_and_in_the_container():
    host = parse(load("nvidia-smi/nvdocker179-processes-table-host.txt"))
    assert host == {"gpu.processes": [{"gpu": 0, "pid": 28290, "type": "C", "name": "python", "mem_mib": 1012}]}
    assert parse(load("nvidia-smi/nvdocker179-processes-table-container.txt")) == {"gpu.processes": []}


def test_one_gpus_rows_quoted_without_the_banner() -> None:
    # azhpc-diagnostics#77 quoted GPU 1's rows (power ERR!): read, and not taken for the node's GPU count
    text = load("nvidia-smi/azhpcdiag77-v100-gpu1-rows-alone-power-err.txt")
    assert parsers.detect(text) == "nvidia-smi"
    f = parsers.run("nvidia-smi", text)
    assert f["gpu.devices"][0]["index"] == 1 and f["gpu.devices"][0]["power_w"] is None
    assert f["gpu.devices"][0]["power_limit_w"] == 250.0 and f["gpu.devices"][0]["mem_used_mib"] == 593
    assert "gpu.count" not in f
