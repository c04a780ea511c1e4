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

D = "nvidia-smi-topo/"
GPUS8 = [f"GPU{i}" for i in range(8)]
MLX = [f"mlx5_{i}" for i in range(10)]


def parse(text):
    return parsers.run("nvidia-smi-topo", text)


def test_a100_tabs_ten_nics_legend():
    f = parse(load(D + "a100-epyc-8numa-tabs-10nic-pxb.txt"))
    assert f["topo.gpus"] == GPUS8
    assert f["topo.nics"] == MLX
    assert f["topo.gpu_numa"] == {"GPU0": 3, "GPU1": 3, "GPU2": 1, "GPU3": 1, "GPU4": 7, "GPU5": 7, "GPU6": 5, "GPU7": 5}
    assert f["topo.gpu_cpu_affinity"]["GPU0"] == "48-63,176-191"
    assert f["topo.gpu_cpu_affinity"]["GPU7"] == "80-95,208-223"
    assert f["topo.gpu_nearest_nic"] == {
        "GPU0": {"nic": "mlx5_0", "link": "PXB"}, "GPU1": {"nic": "mlx5_0", "link": "PXB"},
        "GPU2": {"nic": "mlx5_2", "link": "PXB"}, "GPU3": {"nic": "mlx5_2", "link": "PXB"},
        "GPU4": {"nic": "mlx5_4", "link": "PXB"}, "GPU5": {"nic": "mlx5_4", "link": "PXB"},
        "GPU6": {"nic": "mlx5_6", "link": "PXB"}, "GPU7": {"nic": "mlx5_6", "link": "PXB"}}
    assert f["topo.gpus_without_near_nic"] == []
    assert f["topo.nvlink_all"] is True
    assert f["topo.gpu_pairs_sys"] == 0
    assert f["topo.matrix"]["GPU0"]["GPU5"] == "NV12"
    assert f["topo.matrix"]["mlx5_8"] == {**{g: "SYS" for g in GPUS8}, **{n: "SYS" for n in MLX[:8]}, "mlx5_9": "PIX"}
    assert len(f["topo.matrix"]) == 18 and all(len(r) == 17 for r in f["topo.matrix"].values())


def test_a100_mangled_columns_read_as_the_clean_one():
    f = parse(load(D + "a100-epyc-nps4-mangled-columns-nic7nic8.txt"))
    assert f["topo.gpus"] == GPUS8
    assert f["topo.nics"] == MLX  # "NIC7NIC8" split, names through the NIC Legend
    assert f["topo.matrix"]["GPU6"]["mlx5_7"] == "PXB"  # from the fused cell "PXBSYS"
    assert f["topo.matrix"]["GPU6"]["mlx5_8"] == "SYS"
    assert f["topo.matrix"]["mlx5_7"]["mlx5_6"] == "PIX"  # row "... PIX      X SYS      SYS"
    assert f["topo.matrix"]["mlx5_7"]["mlx5_8"] == "SYS"
    assert f["topo.matrix"]["mlx5_9"]["mlx5_8"] == "PIX"  # "SYSPIX"
    assert all(len(r) == 17 for r in f["topo.matrix"].values())
    assert f["topo.gpu_numa"] == {"GPU0": 3, "GPU1": 3, "GPU2": 1, "GPU3": 1, "GPU4": 7, "GPU5": 7, "GPU6": 5, "GPU7": 5}
    assert f["topo.gpu_cpu_affinity"]["GPU2"] == "8-15,72-79"
    assert f["topo.gpu_nearest_nic"]["GPU6"] == {"nic": "mlx5_6", "link": "PXB"}
    assert f["topo.gpus_without_near_nic"] == []
    assert f["topo.nvlink_all"] is True
    assert f["topo.gpu_pairs_sys"] == 0


def test_dgx1_hybrid_cube_mesh_old_format():
    f = parse(load(D + "dgx1-v100-hybrid-cube-mesh-old-format-mlx5-cols.txt"))
    assert f["topo.gpus"] == GPUS8
    assert f["topo.nics"] == MLX[:4]
    assert "topo.gpu_numa" not in f  # no NUMA Affinity column in this format
    assert f["topo.gpu_cpu_affinity"] == {**{g: "0-19,40-59" for g in GPUS8[:4]}, **{g: "20-39,60-79" for g in GPUS8[4:]}}
    assert f["topo.gpu_nearest_nic"] == {
        "GPU0": {"nic": "mlx5_0", "link": "PIX"}, "GPU1": {"nic": "mlx5_0", "link": "PIX"},
        "GPU2": {"nic": "mlx5_1", "link": "PIX"}, "GPU3": {"nic": "mlx5_1", "link": "PIX"},
        "GPU4": {"nic": "mlx5_2", "link": "PIX"}, "GPU5": {"nic": "mlx5_2", "link": "PIX"},
        "GPU6": {"nic": "mlx5_3", "link": "PIX"}, "GPU7": {"nic": "mlx5_3", "link": "PIX"}}
    assert f["topo.gpus_without_near_nic"] == []
    assert f["topo.nvlink_all"] is False
    assert f["topo.gpu_pairs_sys"] == 12
    assert f["topo.matrix"]["GPU3"]["GPU4"] == "SYS"
    assert f["topo.matrix"]["GPU0"]["GPU3"] == "NV2"


def test_h100_vm_single_nic_sys_everywhere():
    f = parse(load(D + "h100x8-kvm-vm-single-mlx5-nic-sys-empty-affinity-vllm-collect-env.txt"))
    assert f["topo.gpus"] == GPUS8
    assert f["topo.nics"] == ["mlx5_0"]
    assert f["topo.gpu_numa"] == {**{g: 0 for g in GPUS8[:4]}, **{g: 1 for g in GPUS8[4:]}}
    assert f["topo.gpu_cpu_affinity"] == {**{g: "0-103" for g in GPUS8[:4]}, **{g: "104-207" for g in GPUS8[4:]}}
    assert f["topo.gpu_nearest_nic"] == {g: {"nic": "mlx5_0", "link": "SYS"} for g in GPUS8}
    assert f["topo.gpus_without_near_nic"] == GPUS8
    assert f["topo.nvlink_all"] is True
    assert f["topo.gpu_pairs_sys"] == 0
    assert f["topo.matrix"]["mlx5_0"] == {g: "SYS" for g in GPUS8}


def test_rtx4090_pcie_all_sys_no_legend():
    f = parse(load(D + "rtx4090-8gpu-pcie-all-sys.txt"))
    assert f["topo.gpus"] == GPUS8
    assert f["topo.nics"] == ["NIC0", "NIC1"]  # no NIC Legend in the paste
    assert f["topo.gpu_numa"] == {**{g: 0 for g in GPUS8[:4]}, **{g: 1 for g in GPUS8[4:]}}
    assert f["topo.gpu_cpu_affinity"]["GPU4"] == "56-111,168-223"
    assert f["topo.gpu_nearest_nic"]["GPU6"] == {"nic": "NIC0", "link": "PHB"}
    assert f["topo.gpu_nearest_nic"]["GPU0"] == {"nic": "NIC0", "link": "SYS"}
    assert f["topo.gpus_without_near_nic"] == ["GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "GPU7"]
    assert f["topo.nvlink_all"] is False
    assert f["topo.gpu_pairs_sys"] == 28
    assert f["topo.matrix"]["NIC1"] == {**{g: "SYS" for g in GPUS8}, "GPU6": "PHB", "NIC0": "PIX"}


def test_h20_vm_gpu_numa_id_column_no_legend():
    f = parse(load(D + "tencent-h20-vm-8gpu-8nic-gpu-numa-id.txt"))
    assert f["topo.gpus"] == GPUS8
    assert f["topo.nics"] == [f"NIC{i}" for i in range(8)]
    assert f["topo.gpu_numa"] == {**{g: 0 for g in GPUS8[:4]}, **{g: 1 for g in GPUS8[4:]}}
    assert f["topo.gpu_cpu_affinity"] == {**{g: "0-63" for g in GPUS8[:4]}, **{g: "64-127" for g in GPUS8[4:]}}
    assert f["topo.gpu_nearest_nic"] == {f"GPU{i}": {"nic": f"NIC{7 - i}", "link": "PIX"} for i in range(8)}
    assert f["topo.gpus_without_near_nic"] == []
    assert f["topo.nvlink_all"] is True
    assert f["topo.gpu_pairs_sys"] == 0


def test_v100_driver418_partial_nvlink():
    f = parse(load(D + "v100-sxm2-4gpu-driver418-old-legend-switches.txt"))
    assert f["topo.gpus"] == GPUS8[:4]
    assert f["topo.nics"] == MLX[:4]
    assert "topo.gpu_numa" not in f
    assert f["topo.gpu_cpu_affinity"] == {g: "14-27" for g in GPUS8[:4]}
    assert f["topo.gpu_nearest_nic"] == {
        "GPU0": {"nic": "mlx5_0", "link": "PIX"}, "GPU1": {"nic": "mlx5_0", "link": "PIX"},
        "GPU2": {"nic": "mlx5_2", "link": "PIX"}, "GPU3": {"nic": "mlx5_2", "link": "PIX"}}
    assert f["topo.gpus_without_near_nic"] == []
    assert f["topo.nvlink_all"] is False  # GPU0-GPU3 and GPU1-GPU2 go through NODE
    assert f["topo.gpu_pairs_sys"] == 0
    assert f["topo.matrix"]["GPU0"] == {"GPU1": "NV2", "GPU2": "NV1", "GPU3": "NODE", "mlx5_0": "PIX",
                                        "mlx5_1": "PIX", "mlx5_2": "NODE", "mlx5_3": "NODE"}


def test_empty_cpu_affinity_inside_a_job_is_empty_not_the_next_cell():
    # srun -c32 on a 2-socket node: the job's cores are all on socket 0, so nvidia-smi leaves GPU4-7's CPU Affinity
    # empty; their NUMA node must not slide into the CPU column (it read as CPU "1" before)
    f = parse(load(D + "a100pcie-x8-srun-c32-gpu4-7-empty-cpu-affinity.txt"))
    assert f["topo.gpu_cpu_affinity"] == {f"GPU{i}": "0-15,56-71" for i in range(4)}
    assert f["topo.gpu_numa"] == {"GPU0": 0, "GPU1": 0, "GPU2": 0, "GPU3": 0, "GPU4": 1, "GPU5": 1, "GPU6": 1, "GPU7": 1}
    assert f["topo.gpus_without_cpu_affinity"] == ["GPU4", "GPU5", "GPU6", "GPU7"]
    assert f["topo.gpu_nearest_nic"]["GPU6"] == {"nic": "NIC0", "link": "PHB"}


def test_empty_cpu_affinity_with_tabs_and_with_squeezed_blanks():
    head = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    # nvidia-smi's own TABs (the N/A after a doubled TAB, as in the H100 and 4090 captures): the empty cell is "\t\t"
    tabs = parse(head + "GPU0\t X \tSYS\t0-63\t0\t\tN/A\nGPU1\tSYS\t X \t\t1\t\tN/A\n")
    assert tabs["topo.gpu_cpu_affinity"] == {"GPU0": "0-63"}
    assert tabs["topo.gpu_numa"] == {"GPU0": 0, "GPU1": 1}
    assert tabs["topo.gpus_without_cpu_affinity"] == ["GPU1"]
    # blanks squeezed to one space: which cell is missing cannot be told, so GPU1's affinity stays unknown
    squeezed = parse("GPU0 GPU1 CPU Affinity NUMA Affinity GPU NUMA ID\nGPU0 X SYS 0-63 0 N/A\nGPU1 SYS X 1 N/A\n")
    assert squeezed["topo.gpu_cpu_affinity"] == {"GPU0": "0-63"}
    assert squeezed["topo.gpu_numa"] == {"GPU0": 0}
    assert "topo.gpus_without_cpu_affinity" not in squeezed


def test_gpus_only_no_nics():
    f = parse("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV4\t0-31\t0\nGPU1\tNV4\t X \t0-31\t0\n")
    assert f["topo.nvlink_all"] is True
    assert "topo.gpu_nearest_nic" not in f and "topo.gpus_without_near_nic" not in f
    assert f["topo.nics"] == []


@pytest.mark.parametrize("text", ["", "  \n", "Legend:\n\n  X    = Self\n", "\tGPU0\tGPU1\tCPU Affinity\n"])
def test_empty_or_no_matrix_fails(text):
    with pytest.raises(ParseError):
        parse(text)


@pytest.mark.parametrize("path", files("nvidia-smi-topo"), ids=lambda p: p.name)
def test_detect(path):
    assert parsers.detect(load(D + path.name)) == "nvidia-smi-topo"


@pytest.mark.parametrize("path", files("nvidia-smi-topo"), ids=lambda p: p.name)
def test_declared_facts(path):
    assert set(parse(load(D + path.name))) <= set(parsers.get("nvidia-smi-topo").facts)


def test_source_not_installed_here():
    ev = LocalTarget().run(SOURCES["nvidia-smi-topo"], Params())
    assert ev.status is Status.NOT_INSTALLED
    assert ev.reason.startswith("nvidia-smi is not installed")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_random_text_only_parse_error(text):
    try:
        parsers.get("nvidia-smi-topo").func(text)
    except ParseError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(load(D + "a100-epyc-nps4-mangled-columns-nic7nic8.txt").split("\n")), max_size=30))
def test_shuffled_lines_only_parse_error(lines):
    try:
        parsers.get("nvidia-smi-topo").func("\n".join(lines))
    except ParseError:
        pass


def test_matrix_cut_short_leaves_all_nvlink_unknown():
    # nccl#820's matrix ends inside the GPU6 row: GPU6-GPU7 is shown by neither row, every pair shown is NV12.
    # All-NVLink is neither true nor false there (it was read as false, a fact the paste does not carry)
    f = parse(load(D + "a100-nv12-10nic-cut-in-gpu6-row.txt"))
    assert f["topo.gpus"] == GPUS8
    assert f["topo.matrix"]["GPU0"]["GPU7"] == "NV12"
    assert f["topo.matrix"]["GPU5"]["GPU6"] == "NV12"
    assert "topo.nvlink_all" not in f
    assert f["topo.gpu_pairs_sys"] == 0
