"""An srun command line: what the step asked Slurm for (GPUs, a pyxis container), read from the line a person
pasted above the output it printed.

Real sample (NVIDIA/deepops#1102, a two-task step on a Slurm 21.08.5 cluster)::

    srun --nodes=1 --ntasks=2 --gpus-per-task=1 nvidia-smi -L

The paste reader gives every srun line it finds after a prompt to this kind, whatever command srun runs (as it gives
a docker run line to docker-run): a step that asked for GPUs (``--gres=gpu:A100:1``, ``--gpus``, ``--gpus-per-*``)
ran on a node with GPUs, and a step with ``--container-image`` or ``--container-name`` ran in a pyxis/enroot
container. Options are read up to the command srun runs; that command's own options are not srun's.

>>> parse("srun -p gpu --gres=gpu:A100:1 --container-name=c ls")["slurm.srun.gpu_request"]
['--gres=gpu:A100:1']
"""

from __future__ import annotations

from typing import Any

from troubleshooter.parsers import _srun
from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("slurm.srun.gpu_request", "list", "", "the srun options that ask for GPUs, as written (--gres=gpu:A100:1, "
     "--gpus-per-task=1); [] when the line asks for none"),
    ("slurm.srun.asks_for_gpus", "bool", "", "the srun line asks for GPUs (--gres=gpu..., --gpus, -G, --gpus-per-*): "
     "the step runs on a node with GPUs"),
    ("slurm.srun.container", "bool", "", "the step runs in a pyxis/enroot container (--container-image or "
     "--container-name)"),
    ("slurm.srun.options", "dict", "", "srun's options on the line, as written: name -> value ('' for a flag)"),
]


@parser(
    "srun",
    detect=lambda text: 0.0,  # a command line, given by the paste reader; never guessed from output
    summary="an srun command line: the GPUs and the pyxis container the step asked for",
    facts=FACTS,
    command="the srun line as typed, above its output",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "an srun command line")
    line = _srun.command_line(text)
    read = _srun.options(line) if len(line) < 100_000 else None
    if read is None:
        raise ParseError("no srun command line")
    opts, _ = read
    gpus = _srun.asks_for_gpus(opts)
    return {"slurm.srun.gpu_request": gpus, "slurm.srun.asks_for_gpus": bool(gpus),
            "slurm.srun.container": _srun.in_container(opts), "slurm.srun.options": opts}
