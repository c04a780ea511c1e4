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


def given(value: str) -> str:
    """An option's value that must say something: ``--bundle "$B"`` with B unset would otherwise mean "here",
    and the sweep would run on this machine as if that were what was asked."""
    if not value.strip():
        raise argparse.ArgumentTypeError("is empty (a variable that was not set?)")
    return value


# The command-line form of a TargetSpec, shared by the headless verbs and the app's own arguments.
def add_target_options(p: argparse.ArgumentParser, *, bundle: bool = True) -> None:
    g = p.add_argument_group("where to run (default: here)")
    if bundle:
        g.add_argument("--bundle", type=given, metavar="PATH", help="replay a captured bundle (directory or .tar.gz)")
    g.add_argument("--job", type=given, metavar="J", help="run inside running Slurm job J (srun --jobid J --overlap)")
    g.add_argument("--node", type=given, metavar="N", help="with --job: the node of the allocation to run on")
    g.add_argument("--container-name", type=given, metavar="C", help="with --job: the pyxis container of the job")
    g.add_argument("--exec", dest="exec_prefix", type=given, metavar="PREFIX",
                   help="run inside a container or wrapper, e.g. 'docker exec trainer' (with --job: inside the step)")
    g.add_argument("--pid", type=int, metavar="PID", help="the training process (numastat -p, its environment)")
    g.add_argument("--steps-log", type=given, metavar="FILE", help="a training log with step times (Megatron/NeMo/Lightning, CSV, one per line)")
    g.add_argument("--nccl-log", type=given, metavar="FILE", help="an NCCL_DEBUG=INFO log of the job")
    g.add_argument("--nccl-tests-dir", type=given, metavar="DIR", help="where all_gather_perf & co. live (for --measure)")
    p.add_argument("--profile", metavar="ID", help="reference profile (h100, h200, b200, gb200, gb300, generic; default: from the GPUs seen)")


#: the options that say where probes run (a new place replaces all of them; --pid and the logs stay)
PLACE = ("bundle", "job", "node", "container_name", "exec_prefix")
EXTRA = ("steps_log", "nccl_log", "nccl_tests_dir")


def from_namespace(args: argparse.Namespace) -> TargetSpec:
    """The TargetSpec that parsed target options name (the app's arguments, a context's options)."""
    spec = TargetSpec(bundle=getattr(args, "bundle", None), job=args.job, node=args.node,
                      container_name=args.container_name, exec_prefix=args.exec_prefix, pid=args.pid)
    for opt in EXTRA:
        if getattr(args, opt, None):
            spec.extra[opt] = getattr(args, opt)
    return spec


def from_args(argv: list[str] | tuple[str, ...], base: TargetSpec | None = None) -> TargetSpec:
    """``base`` with the target options in ``argv`` applied (``["--job", "4242"]``), parsed by the command line's
    own parser: a context chosen in the app names its target exactly as ``troubleshooter --job 4242`` would.
    Naming a place (--job, --exec, --bundle ...) replaces the old place; --pid and the logs are kept unless given.
    Raises ValueError for options the command line would reject."""
    p = argparse.ArgumentParser(prog="troubleshooter", add_help=False, exit_on_error=False)
    add_target_options(p)
    try:
        ns, rest = p.parse_known_args(list(argv))
    except (argparse.ArgumentError, SystemExit) as exc:
        raise ValueError(f"bad target options {' '.join(argv)}: {exc}") from None
    if rest:
        raise ValueError(f"not target options: {' '.join(rest)}")
    given = from_namespace(ns)
    out = dataclasses.replace(base, extra=dict(base.extra)) if base is not None else TargetSpec()
    if any(getattr(given, f) for f in PLACE):
        for f in PLACE:
            setattr(out, f, getattr(given, f))
    if given.pid is not None:
        out.pid = given.pid
    out.extra.update(given.extra)
    return out
