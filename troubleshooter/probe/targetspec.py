"""What a guided session runs against, enough to recreate the target when the session is resumed.

A module of its own (re-exported by :mod:`troubleshooter.service.guide`) so that the app's entry point can build one
without importing the guide and everything behind it before the first frame.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.sources.base import Params


@dataclasses.dataclass
class TargetSpec:
    """Enough to recreate a target when a session is resumed."""

    bundle: str | None = None
    job: str | None = None
    node: str | None = None
    container_name: str | None = None
    exec_prefix: str | None = None
    pid: int | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    def make(self):
        from troubleshooter.probe.targets import make_target

        return make_target(bundle=self.bundle, job=self.job, node=self.node, container_name=self.container_name,
                           exec_prefix=self.exec_prefix)

    def params(self) -> Params:
        from troubleshooter.sources.base import Params

        p = Params(pid=self.pid)
        p.extra.update(self.extra)
        if self.job:
            p.extra.setdefault("job", self.job)
        return p


# The command-line form of a TargetSpec, shared by the headless verbs and the app's own arguments.
def add_target_options(p: argparse.ArgumentParser, *, bundle: bool = True) -> None:
    g = p.add_argument_group("where to run (default: here)")
    if bundle:
        g.add_argument("--bundle", metavar="PATH", help="replay a captured bundle (directory or .tar.gz)")
    g.add_argument("--job", metavar="J", help="run inside running Slurm job J (srun --jobid J --overlap)")
    g.add_argument("--node", metavar="N", help="with --job: the node of the allocation to run on")
    g.add_argument("--container-name", metavar="C", help="with --job: the pyxis container of the job")
    g.add_argument("--exec", dest="exec_prefix", metavar="PREFIX",
                   help="run inside a container or wrapper, e.g. 'docker exec trainer' (with --job: inside the step)")
    g.add_argument("--pid", type=int, metavar="PID", help="the training process (numastat -p, its environment)")
    g.add_argument("--steps-log", metavar="FILE", help="a training log with step times (Megatron/NeMo/Lightning, CSV, one per line)")
    g.add_argument("--nccl-log", metavar="FILE", help="an NCCL_DEBUG=INFO log of the job")
    g.add_argument("--nccl-tests-dir", metavar="DIR", help="where all_gather_perf & co. live (for --measure)")
    p.add_argument("--profile", metavar="ID", help="reference profile (h100, h200, b200, gb200, gb300, generic; default: from the GPUs seen)")
