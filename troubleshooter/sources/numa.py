"""NUMA and process-placement sources: the node layout, allocation counters, where the training process's
memory lives, and which CPUs and memory nodes it (or the context we run in) may use."""

from troubleshooter.sources.base import source

# Prints /proc/<$1>/status, then the cpuset and cgroup files with '==> NAME <==' markers the proc-status
# parser reads. $1 is 'self' or the training process id, passed as an argument, never put into the script.
# The cpuset cgroup's effective CPUs: cgroup v1 (/sys/fs/cgroup/cpuset<path>/cpuset.effective_cpus) or v2
# (cpuset.cpus.effective in the process's cgroup or the nearest ancestor that has one). No braces: the
# source machinery fills {placeholders} in every argv element, the script included.
PROC_STATUS_SCRIPT = r"""
p=$1
cat "/proc/$p/status" || exit 1
echo "==> cpuset <=="
cat "/proc/$p/cpuset" 2>/dev/null
echo "==> cgroup <=="
cat "/proc/$p/cgroup" 2>/dev/null
cs=$(sed 's:/$::' "/proc/$p/cpuset" 2>/dev/null)
cg=$(sed -n 's/^0:://p' "/proc/$p/cgroup" 2>/dev/null | sed 's:/$::')
f=""
if [ -r "/sys/fs/cgroup/cpuset$cs/cpuset.effective_cpus" ]; then
  f="/sys/fs/cgroup/cpuset$cs/cpuset.effective_cpus"
else
  d="/sys/fs/cgroup$cg"
  while [ "$d" != /sys/fs ] && [ "$d" != / ]; do
    if [ -r "$d/cpuset.cpus.effective" ]; then f="$d/cpuset.cpus.effective"; break; fi
    d=$(dirname "$d")
  done
fi
if [ -n "$f" ]; then
  echo "==> cpuset.cpus.effective $f <=="
  cat "$f"
fi
exit 0
"""

source(
    id="numactl-hardware",
    parser="numactl",
    family="numa",
    argv=["numactl", "--hardware"],
    timeout_s=10,
    needs="numactl",
    package="numactl",
    summary="NUMA nodes: CPUs, memory, free memory, distances",
    why="Memoryless or CPU-less nodes, a node nearly out of free memory, and large distances decide how much "
    "a process pays for memory that is not on its own node.",
)

source(
    id="numa-balancing",
    parser="sysctl",
    family="numa",
    argv=["sysctl", "kernel.numa_balancing"],
    timeout_s=5,
    needs="sysctl",
    package="procps",
    summary="whether the kernel's automatic NUMA balancing is on (kernel.numa_balancing)",
    why="With it on, the kernel scans the training process's memory in the process's own threads "
    "(task_numa_work) and migrates pages: stalls of milliseconds in the host side of NCCL and the data path.",
)

source(
    id="numastat",
    parser="numastat",
    family="numa",
    argv=["numastat"],
    timeout_s=10,
    needs="numastat",
    package="numactl",
    summary="system-wide NUMA allocation counters (numa_hit, numa_miss, other_node)",
    why="A high share of numa_miss / other_node pages means allocations land away from the CPUs that use "
    "them: remote memory on every access.",
)

source(
    id="numastat-proc",
    parser="numastat",
    family="numa",
    argv=["numastat", "-p", "{pid}"],
    timeout_s=15,
    needs="numastat",
    package="numactl",
    summary="the training process's memory per NUMA node (numastat -p PID)",
    why="Case 2 found ~18% of the training process's memory on a remote node (no NUMA binding); binding it "
    "with numactl recovered part of a 12% gap.",
)

source(
    id="proc-status-self",
    parser="proc-status",
    family="numa",
    argv=["sh", "-c", PROC_STATUS_SCRIPT, "sh", "self"],
    timeout_s=5,
    summary="CPUs and memory nodes the context we run in may use, its cpuset and cgroup",
    why="Run inside the job's container or allocation, this shows the CPU set the training processes "
    "inherit: too few cores, or cores shared with host services, stall the data loaders.",
)

source(
    id="proc-status",
    parser="proc-status",
    family="numa",
    argv=["sh", "-c", PROC_STATUS_SCRIPT, "sh", "{pid}"],
    timeout_s=5,
    summary="the training process's allowed CPUs and memory nodes, threads, context switches, cpuset",
    why="Where the training process may run and allocate, and how often it is preempted: case 2's data "
    "loaders shared cores with hypervisor housekeeping threads.",
)
