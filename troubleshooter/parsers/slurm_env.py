"""The Slurm part of an environment: ``env | grep ^SLURM`` pasted from inside a job or step.

Real sample (``srun --gres=gpu:1 env | grep SLURM`` in a Slurm 22.05.8 step, trimmed)::

    SLURM_JOB_ID=12
    SLURM_JOB_NODELIST=node1
    SLURM_JOB_NUM_NODES=1
    SLURM_STEP_ID=0
    SLURM_PROCID=0
    SLURM_LOCALID=0
    SLURM_NTASKS=1
    SLURMD_NODENAME=node1
    SLURM_JOB_GPUS=0

What it tells: whether the context is inside the job's allocation (``SLURM_JOB_ID``) and inside a step
(``SLURM_STEP_ID``, set by srun), on which node, as which task. The checks must run inside the job's
allocation, container and launcher, not on the login node: ``slurm.in_job`` false means they did not.

The ``env`` parser gives the same ``slurm.*`` facts from a whole environment; this kind exists so that a
paste holding only ``SLURM_*`` lines is recognised (detection prefers it over ``env`` only then).

>>> parse("SLURM_JOB_ID=7\\nSLURM_PROCID=3")["slurm.procid"]
3
"""

from __future__ import annotations

from troubleshooter.parsers.base import ParseError, parser
from troubleshooter.parsers.env import SLURM_FACTS, _looks_like_env_lines, slurm_facts, split_environ

FACTS = [*SLURM_FACTS, ("env.slurm", "dict", "", "SLURM_* and SLURMD_* variables")]


def _detect(text: str) -> float:
    if "\x00" in text:
        return 0.0
    ratio, names = _looks_like_env_lines(text)
    if names and ratio >= 0.6 and all(n.startswith(("SLURM_", "SLURMD_")) for n in names):
        return 0.9
    return 0.0


@parser(
    "slurm-env",
    detect=_detect,
    summary="Slurm variables of a job's environment (env | grep SLURM)",
    facts=FACTS,
    command="env | grep ^SLURM   (inside the job: srun --jobid=J --overlap env)",
)
def parse(text: str) -> dict[str, object]:
    pairs, _ = split_environ(text)
    env = {k: v for k, v in pairs}
    slurm = {k: v for k, v in sorted(env.items()) if k.startswith(("SLURM_", "SLURMD_"))}
    if not slurm and not any(k in env for k in ("PATH", "HOME", "USER", "PWD")):
        # neither Slurm variables nor an environment that shows their absence
        raise ParseError("no SLURM_* variables found (expected env | grep SLURM from inside a job)")
    f = slurm_facts(env)
    f["env.slurm"] = slurm
    return f
