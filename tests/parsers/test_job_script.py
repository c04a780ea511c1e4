"""job-script parser: exported variables, #SBATCH directives and launchers, on a real capture (exact values)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_launch_script_with_commented_and_computed_exports():
    text = load("job-script/pytorch111424-slurm-launch-exports-modules.txt")
    assert parsers.detect(text) == "job-script"
    assert parsers.run("job-script", text) == {
        "script.exports": ["HYDRA_FULL_ERROR", "NCCL_DEBUG", "NCCL_IB_DISABLE", "NCCL_IB_CUDA_SUPPORT",
                           "CUDA_DEVICE_MAX_CONNECTIONS", "NCCL_SOCKET_IFNAME", "MASTER_PORT", "WORLD_SIZE", "MASTER_ADDR"],
        "script.unresolved": ["MASTER_PORT", "WORLD_SIZE", "MASTER_ADDR"], "script.sbatch": {}, "script.launchers": [],
        "env.var.HYDRA_FULL_ERROR": "1", "env.var.NCCL_DEBUG": "INFO", "env.var.NCCL_IB_DISABLE": "0",
        "env.var.NCCL_IB_CUDA_SUPPORT": "1", "env.var.CUDA_DEVICE_MAX_CONNECTIONS": "1",
        "env.var.NCCL_SOCKET_IFNAME": "^lo,docker,virbr,vmnet,vboxnet,wl,ww,ppp,eth,bond"}


def test_sbatch_directives_quotes_and_launchers():
    f = parsers.run("job-script", "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH -N 2\n#SBATCH --exclusive\n"
                                  "export NCCL_IB_HCA='=mlx5_0:1'\nexport A=\"$HOME/x\"\nexport B='$lit'\n"
                                  "srun --container-image=img torchrun --nproc_per_node=8 train.py\n")
    assert f["script.sbatch"] == {"--nodes": "2", "-N": "2", "--exclusive": ""}
    assert f["env.var.NCCL_IB_HCA"] == "=mlx5_0:1" and f["env.var.B"] == "$lit" and "env.var.A" not in f
    assert f["script.unresolved"] == ["A"] and f["script.launchers"] == ["srun", "torchrun"]


def test_prose_is_not_a_script():
    with pytest.raises(ParseError):
        parsers.run("job-script", "we exported the variables as the docs say\n")
