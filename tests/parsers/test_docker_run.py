"""docker-run parser: container launch lines on real captures (exact values), and their place in a transcript."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.diagnosis import intake
from troubleshooter.parsers import ParseError


def test_multiline_launch_for_multinode_ib():
    text = load("docker-run/oneflow-dlperf-multinode-ib-privileged-shm16g-memlock.txt")
    assert parsers.detect(text) == "docker-run"
    assert parsers.run("docker-run", text) == {
        "docker.runs": 1, "docker.image": "oneflow:WDL", "docker.shm_size_mb": 16384, "docker.memlock": "-1",
        "docker.memlock_unlimited": True, "docker.network": "host", "docker.privileged": True,
        "docker.rdma_devices": True, "docker.rdma_devices_named": True,
        "docker.cap_add": ["IPC_LOCK"], "docker.shm_limited": False,
        "docker.nvidia_runtime_used": False}


def test_mpirun_launching_docker_with_rdma_devices_and_env():
    f = parsers.run("docker-run", load("docker-run/slurm-mpirun-docker-run-uverbs-rdma-cm-memlock.txt"))
    assert f == {"docker.runs": 1, "docker.image": "jyoo332/astra-sim-gent:mpi_0324", "docker.network": "host",
                 "docker.memlock": "-1:-1", "docker.memlock_unlimited": True, "env.var.RDMA_PORT": "1",
                 "env.var.RDMA_DRIVER": "mlx5_0", "docker.privileged": False, "docker.rdma_devices": True,
                 "docker.rdma_devices_named": True,
                 "docker.shm_limited": True, "docker.nvidia_runtime_used": False}


def test_a_transcript_gives_the_launch_line_and_the_containers_output():
    text = ("user@gpu1:~$ docker run --rm --gpus all \\\n   --shm-size=1g nvcr.io/nvidia/pytorch:24.01-py3 nvidia-smi topo -m\n"
            "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV12\t0-63\t0\nGPU1\tNV12\t X \t0-63\t0\n")
    blocks = intake.split(text)
    assert [(b.kind, b.side, b.line) for b in blocks] == [("docker-run", "container", 1), ("nvidia-smi-topo", "container", 3)]
    f = parsers.run("docker-run", blocks[0].text)
    assert f["docker.shm_size_mb"] == 1024 and f["docker.gpus"] == "all" and f["docker.shm_limited"] is False
    assert f["docker.rdma_devices"] is False and "docker.network" not in f


def test_inside_bash_c_quotes_and_network_none():
    f = parsers.run("docker-run", 'ssh node1 "docker run -d --network none --ipc=host img sleep 1"\n')
    assert f["docker.network"] == "none" and f["docker.ipc"] == "host" and f["docker.image"] == "img"
    with pytest.raises(ParseError):
        parsers.run("docker-run", "we run everything in docker, it is fine\n")


def test_a_run_through_the_nvidia_runtime_after_the_hooks_refusal():
    f = parsers.run("docker-run", load("docker-run/dcgmexp101-jetson-runtime-nvidia-started-then-docker-ps-empty.txt"))
    assert (f["docker.gpus"], f["docker.nvidia_runtime_used"]) == ("runtime=nvidia", True)
    f = parsers.run("docker-run", load("nvidia-container-cli/hook-without-runtime-dcgmexp101-jetson-gpus-all-csv-mode.txt"))
    assert (f["docker.gpus"], f["docker.nvidia_runtime_used"]) == ("all", False)
