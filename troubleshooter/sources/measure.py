"""Active measurements that run load on the target (only with ``--measure``).

``perf-sample`` samples every CPU for ``sample_s`` seconds with call graphs and reports the self overhead
per (command, shared object, symbol): the signal of case 1 (24% of host cycles in
``arm_smmu_cmdq_issue_cmdlist``). nccl-tests runs and sweeps are NOT declared here: they are invoked
explicitly through :mod:`troubleshooter.probe.measure`.

The script is fixed (no value is interpolated into it; ``sample_s`` is its positional argument). It records
into a ``mktemp`` file that it always removes, and when ``perf record`` fails for lack of privilege it says
so with the ``kernel.perf_event_paranoid`` value on its last stderr line, which becomes the evidence reason
(status permission-denied).
"""

from troubleshooter.model import facts as _facts
from troubleshooter.sources.base import source

# No braces in the script: Source.render_argv formats arguments that contain them.
PERF_SAMPLE_SCRIPT = r"""
if ! command -v perf >/dev/null 2>&1; then echo "sh: perf: not found" >&2; exit 127; fi
t=$(mktemp /tmp/troubleshooter-perf.XXXXXX) || exit 1
trap 'rm -f "$t" "$t.old" "$t.err"' EXIT
trap 'exit 143' TERM INT
perf record -a -g -o "$t" -- sleep "$1" >/dev/null 2>"$t.err"
rc=$?
cat "$t.err" >&2
if [ "$rc" -ne 0 ]; then
  p=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown)
  if grep -q -i -e paranoid -e "permission denied" -e "not permitted" -e "Access to performance monitoring" "$t.err"; then
    echo "perf record: permission denied (kernel.perf_event_paranoid=$p): system-wide sampling needs root or CAP_PERFMON, or perf_event_paranoid <= 0" >&2
  fi
  exit "$rc"
fi
perf report --stdio -i "$t" --no-children --sort comm,dso,sym 2>/dev/null
"""

PERF_SAMPLE_MARGIN_S = 60

PERF_SAMPLE = source(
    id="perf-sample",
    parser="perf-report",
    family="measure",
    argv=["sh", "-c", PERF_SAMPLE_SCRIPT, "perf-sample", "{sample_s}"],
    # Covers sample_s up to 60 s plus the report; troubleshooter.probe.measure.perf_sample() sets
    # sample_s + PERF_SAMPLE_MARGIN_S for a given duration.
    timeout_s=120,
    needs="perf",
    package="linux-perf (Debian) / linux-tools-$(uname -r) (Ubuntu)",
    root=True,
    active=True,
    summary="system-wide CPU profile (perf record -a -g, then perf report --stdio --no-children)",
    why="Where the CPUs spend their cycles: a share in arm_smmu_cmdq_issue_cmdlist (serialised SMMU "
    "command queue in a VM, case 1), spinlock slow paths or IOMMU map/unmap costs training throughput "
    "in ways no GPU tool shows.",
)

# Facts produced by troubleshooter.probe.measure itself (no parser reads them from a tool's output).
_facts.declare(
    "cpu-microbench",
    [("cpu.single_thread_score", "number", "ops/s",
      "single-thread CPU microbenchmark (a fixed Python loop) in operations per second: compare across nodes "
      "to tell 'the CPU is slow' from 'the CPU is busy elsewhere'")],
)
