"""Fabric collectives, measured (active: only with --measure). They run nccl-tests on the target, so
the binaries must be there: on PATH, or in the directory given with --nccl-tests-dir.

On a Slurm target this is one task on one node: it measures the node's own fabric path (NVLink and its
HCAs loop-back). A multi-node collective needs the job's MPI launcher; see docs/measure.md.
"""

from troubleshooter.sources.base import source

_FIND = r"""
d="$1"; shift
b="$1"; shift
if [ -n "$d" ] && [ "$d" != "-" ] && [ -x "$d/$b" ]; then exe="$d/$b"; else exe=$(command -v "$b") || { echo "sh: $b: not found" >&2; exit 127; }; fi
"""

ALLGATHER_SCRIPT = _FIND + r"""
exec "$exe" -b 64M -e 1G -f 2 -g 1 "$@"
"""

SWEEP_SCRIPT = _FIND + r"""
for q in 1 2 4 8; do
  for r in 1 2; do
    echo "#@ sweep NCCL_IB_QPS_PER_CONNECTION=$q repeat=$r"
    NCCL_IB_QPS_PER_CONNECTION=$q "$exe" -b 64M -e 1G -f 2 -g 1 "$@" 2>&1
  done
done
"""

source(
    id="nccl-allgather",
    parser="nccl-tests",
    family="collectives",
    argv=["sh", "-c", ALLGATHER_SCRIPT, "nccl-allgather", "{nccl_tests_dir}", "all_gather_perf"],
    timeout_s=300,
    needs="all_gather_perf",
    package="nccl-tests (build from github.com/NVIDIA/nccl-tests against the job's NCCL)",
    active=True,
    summary="nccl-tests all_gather_perf, 64 MB to 1 GB",
    why="AllGather bus bandwidth at the workload's large message sizes: the collective case 3 found "
    "exposed at scale (~28 GB/s vs ~61 GB/s once tuned).",
)

source(
    id="nccl-sweep-qps",
    parser="nccl-sweep",
    family="collectives",
    argv=["sh", "-c", SWEEP_SCRIPT, "nccl-sweep-qps", "{nccl_tests_dir}", "all_gather_perf"],
    timeout_s=1800,
    needs="all_gather_perf",
    package="nccl-tests",
    active=True,
    summary="all_gather_perf under NCCL_IB_QPS_PER_CONNECTION = 1, 2, 4, 8 (twice each)",
    why="Whether more queue pairs per connection help on THIS fabric at these sizes; a value is "
    "recommended only when measured better beyond noise (case 3's lesson: don't raise QPS everywhere).",
)
