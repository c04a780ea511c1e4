"""Attach to the real context from the app: what runs here (jobs, containers, training processes), and the
target that choosing one of them, or giving a log, makes.

The app calls these from a worker thread (discovery runs commands with timeouts) and renders what they return.
"""

from __future__ import annotations

from troubleshooter.probe import discover
from troubleshooter.probe.discover import Context, Finding  # noqa: F401  (re-exported for the app)
from troubleshooter.probe.targetspec import TargetSpec, from_args


def running_contexts(run=None) -> list[Finding]:
    """This user's running Slurm jobs, the containers on this node, the training processes (each search says
    in words why it found nothing: not installed, no daemon, timed out, none running)."""
    return discover.everything(run) if run is not None else discover.everything()


def attach(context_args: tuple[str, ...] | list[str], base: TargetSpec) -> TargetSpec:
    """The target after choosing a context: the options it carries applied to ``base`` by the command line's
    own parser. Checked by making it once (raises with what is wrong: no such job, a bad prefix ...)."""
    spec = from_args(context_args, base)
    spec.make()
    return spec


def with_log(base: TargetSpec, kind: str, path: str) -> TargetSpec:
    """``base`` with a log given (kind ``steps-log`` or ``nccl-log``), as --steps-log / --nccl-log would."""
    opt = {"steps-log": "--steps-log", "nccl-log": "--nccl-log"}[kind]
    return from_args([opt, path], base)
