"""Slurm: the job's record and its node's record, from the controller.

The job id comes from ``Params.extra["job"]`` (the ``--job`` option), the node from ``Params.extra["node"]``;
a source whose id is not given is skipped with the reason. The ``SLURM_*`` variables of a step come from
the ``env-self`` source (the ``env`` parser gives the ``slurm.*`` facts).
"""

from troubleshooter.sources.base import source

source(
    id="scontrol-job",
    parser="scontrol-job",
    family="slurm",
    argv=["scontrol", "-d", "show", "job", "{job}"],
    timeout_s=10,
    needs="scontrol",
    package="slurm-client",
    summary="the Slurm job's record (state, nodes, CPUs, GRES)",
    why="which nodes, CPUs and GPUs the job holds and why it waits; the per-node comparison and the in-job "
    "probes need the nodelist.",
)

source(
    id="scontrol-node",
    parser="scontrol-node",
    family="slurm",
    argv=["scontrol", "show", "node", "{node}"],
    timeout_s=10,
    needs="scontrol",
    package="slurm-client",
    summary="the Slurm node's record (sockets, cores, GRES, state)",
    why="a node described with the wrong socket/core layout gets wrong CPU binding and GPU affinity.",
)
