"""srun command lines (real ones, above their output or as posted) and what the step asked for."""

from __future__ import annotations

import pytest

from tests.corpus import DATA, load
from troubleshooter import parsers
from troubleshooter.diagnosis.pasted import EvidenceFacts


def _srun_facts(rel: str) -> dict:
    ef = EvidenceFacts.from_specs([str(DATA / rel)])
    assert ("srun", "command") in [(f.kind, f.how) for f in ef.files]
    return {k: f.value for k, f in ef.factset("target").items() if k.startswith("slurm.srun.")}


def test_one_gpu_and_a_pyxis_container_above_the_steps_errors() -> None:
    f = _srun_facts("srun/deepops785-srun-G1-container-image-execve-no-such-file.txt")
    assert f["slurm.srun.gpu_request"] == ["-G 1"] and f["slurm.srun.asks_for_gpus"] is True
    assert f["slurm.srun.container"] is True
    assert f["slurm.srun.options"] == {"-N": "1", "-G": "1", "--ntasks-per-node": "1", "--mpi": "pmix", "--exclusive": "",
                                       "--container-image": "deepops/nccl-tests-tf20.06-ubuntu18.04:latest"}


def test_a_line_continued_with_backslashes_after_a_variable() -> None:
    f = _srun_facts("srun/deepops1179-enroot-restrict-dev-n-srun-gpus-per-task-container.txt")
    assert f["slurm.srun.gpu_request"] == ["--gpus-per-task=1"] and f["slurm.srun.container"] is True
    # the command srun runs keeps its own options (-g 1 is all_reduce_perf's)
    assert "-g" not in f["slurm.srun.options"] and f["slurm.srun.options"]["-w"] == "mlperf1"


def test_no_container_and_the_listing_it_printed() -> None:
    f = _srun_facts("nvidia-smi-status/deepops1102-srun-gpus-per-task-two-tasks-distinct-uuids.txt")
    assert f["slurm.srun.container"] is False and f["slurm.srun.gpu_request"] == ["--gpus-per-task=1"]


@pytest.mark.parametrize("line, gpus", [
    ("srun --gres=gpu:A100:1 --pty bash", ["--gres=gpu:A100:1"]),
    ("srun --gres=nvme:1 hostname", []),  # another generic resource
    ("srun --gres=gpu:0 hostname", []), ("srun -n 4 python train.py --gpus 8", []),  # the program's option
])
def test_what_asks_for_gpus(line: str, gpus: list) -> None:
    assert parsers.run("srun", line)["slurm.srun.gpu_request"] == gpus


@pytest.mark.parametrize("text", ["", "hello\n", "sbatch job.sh\n", "echo srun is great\n"])
def test_other_text_is_refused(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run("srun", text)


def test_a_line_continued_with_backslashes_is_read_whole():
    """NVIDIA/enroot#205 pasted its srun over six lines; read directly (parse srun FILE), as the paste reader joins it."""
    f = parsers.run("srun", load("srun/enroot205-gpus-2-container-image-pty.txt"))
    assert f["slurm.srun.gpu_request"] == ["--gpus=2"]
    assert f["slurm.srun.container"] is True
    assert f["slurm.srun.options"]["--container-image"] == "myimage"


def test_short_options_with_their_values_attached_and_the_cscs_container_engine() -> None:
    # "-t2 -N1 -n5": srun's short options take their value attached as well as apart; --environment= is CSCS's
    # Container Engine starting the step in a container from an environment definition file
    ef = EvidenceFacts.from_specs(["job:" + str(DATA / "srun/cscs-gh200-vectoradd-srun-n5-over-4-exclusive-gpus.txt")])
    f = ef.factset("target")
    assert f.get("slurm.srun.options").value == {"-t": "2", "-N": "1", "-n": "5", "--environment": "vectoradd-cuda"}
    assert f.get("slurm.srun.container").value is True
    assert f.get("gpu.count").value == 4  # nvidia-smi -L with the UUIDs elided ("GPU-...")
    assert f.get("job.tasks_over_gpus").value == "5 tasks per node, 4 GPUs"
