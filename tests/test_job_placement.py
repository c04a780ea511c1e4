"""A node whose PCIe GPUs sit on two sockets is a layout, not a fault; a job given GPUs of both is the cause
(gpus-split-across-sockets). Real topo -m of an 8x RTX 4090 two-socket server; the job's GPU list as env shows it."""

from tests.corpus import DATA
from troubleshooter.diagnosis.pasted import EvidenceFacts
from troubleshooter.service.diagnose import diagnose

TOPO = DATA / "nvidia-smi-topo/rtx4090-8gpu-pcie-all-sys.txt"


def causes(tmp_path, env_text=None):
    specs = [str(TOPO)]
    if env_text is not None:
        env = tmp_path / "env.txt"
        env.write_text(env_text)
        specs.append(str(env))
    ef = EvidenceFacts.from_specs(specs)
    walk, _doc = diagnose("below-reference", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
    fs = ef.factset("target")
    span = fs.get("topo.job_gpu_numa_nodes")
    return [c.cause for c in walk.conclusions], (span.value if span is not None else None)


def test_layout_alone_is_no_cause(tmp_path):
    found, span = causes(tmp_path)
    assert "gpus-split-across-sockets" not in found and span is None


def test_job_given_gpus_of_both_sockets(tmp_path):
    found, span = causes(tmp_path, "CUDA_VISIBLE_DEVICES=3,4\nPATH=/usr/bin\n")
    assert span == 2 and "gpus-split-across-sockets" in found


def test_job_given_gpus_of_one_socket(tmp_path):
    found, span = causes(tmp_path, "CUDA_VISIBLE_DEVICES=0,1\nPATH=/usr/bin\n")
    assert span == 1 and "gpus-split-across-sockets" not in found


def test_uuids_are_not_indexes(tmp_path):
    found, span = causes(tmp_path, "CUDA_VISIBLE_DEVICES=GPU-5f1c2a3b,GPU-77aa10cd\nPATH=/usr/bin\n")
    assert span is None


def test_single_node_system_error_inside_a_container_points_at_shm(tmp_path):
    """NCCL's 'unhandled system error' inside a container on one node (no network involved) is most often
    /dev/shm; on several nodes, or outside a container, it is not claimed."""
    single = DATA / "nccl-tests/azure-k80-old-format-error-column-nccl-info-interleaved.txt"
    error = DATA / "cuda-errors/nccl-error-2-unhandled-system-error-dataparallel-rtx5090-notes.txt"

    def found(specs):
        ef = EvidenceFacts.from_specs(specs)
        walk, _doc = diagnose("below-reference", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
        return [c.cause for c in walk.conclusions]

    assert "shm-too-small" in found([f"container:{single}", f"container:{error}"])
    assert "shm-too-small" not in found([str(single), str(error)])  # not said to be inside a container


def test_reverse_path_error_with_a_recent_nccl_is_not_called_too_old():
    """NCCL's "Failed to find reverse path" names an NCCL older than the hardware only when the version is old
    (or not shown); 2.19.3 with a driver bug (vllm#4062) and RCCL 2.20.5 on MI300X (rccl#1728) are not."""
    for name in ("reverse-path-nccl-2.19.3-driver-535-vllm4062.txt", "reverse-path-rccl-mi300x-nccl-2.20.5-rccl1728.txt"):
        ef = EvidenceFacts.from_specs([str(DATA / "torch-distributed" / name)])
        fs = ef.factset("target")
        said = [*(fs.get("nccl.errors").value if fs.get("nccl.errors") else []),
                *(fs.get("nccl.warnings").value if fs.get("nccl.warnings") else [])]
        assert "Failed to find reverse path" in " ".join(said)
        assert fs.get("nccl.version_code").value in (21903, 22005)
        walk, _doc = diagnose("below-reference", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
        assert "nccl-version-too-old" not in [c.cause for c in walk.conclusions], name


def test_driver_reported_ecc_and_hca_port_error_events_are_findings():
    """A framework's 'CUDA error: uncorrectable ECC error encountered' is the driver's own report (gpu-memory-errors);
    NCCL's 'Got async event : port error' is the HCA saying its link went down (fabric-port-down)."""
    cases = [("cuda-errors/pytorch-uncorrectable-ecc-venado-ddp-notes.txt", "gpu-memory-errors"),
             ("nccl-warn-lines/ib-async-event-port-error-opt175b-notes.txt", "fabric-port-down")]
    for rel, cause in cases:
        ef = EvidenceFacts.from_specs([str(DATA / rel)])
        walk, _doc = diagnose("below-reference", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
        assert [c.cause for c in walk.conclusions] == [cause], rel
