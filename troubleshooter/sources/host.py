"""Host identity sources: memory and huge pages, CPU time since boot (steal), virtualization and page size."""

from troubleshooter.sources.base import source

source(
    id="meminfo",
    parser="meminfo",
    family="host",
    argv=["cat", "/proc/meminfo"],
    timeout_s=5,
    summary="/proc/meminfo: memory size, huge pages",
    why="Huge pages (preallocated or transparent) cut TLB misses on the host side of the data path; a VM "
    "without them sees many more dTLB misses (reference case 1).",
)

source(
    id="procstat",
    parser="procstat",
    family="host",
    argv=["cat", "/proc/stat"],
    timeout_s=5,
    summary="/proc/stat: CPU time since boot (steal, iowait)",
    why="Steal time is the hypervisor running something else on our CPUs: it shows up as stalls and a long "
    "tail of slow steps (reference case 2).",
)

# Each line has a fallback for a missing tool; nothing is interpolated. systemd-detect-virt --vm only:
# its container check trusts /.dockerenv, which some hosts have without being containers.
VIRT_SCRIPT = """
if command -v systemd-detect-virt >/dev/null 2>&1; then
  echo "virt=$(systemd-detect-virt --vm 2>/dev/null)"
fi
for f in sys_vendor product_name; do
  if [ -r /sys/class/dmi/id/$f ]; then echo "dmi_$f=$(cat /sys/class/dmi/id/$f 2>/dev/null)"; fi
done
if [ -r /sys/hypervisor/type ]; then echo "sys_hypervisor_type=$(cat /sys/hypervisor/type 2>/dev/null)"; fi
if grep -q '^flags' /proc/cpuinfo 2>/dev/null; then
  if grep -m1 '^flags' /proc/cpuinfo | grep -qw hypervisor; then echo cpu_hypervisor_flag=yes
  else echo cpu_hypervisor_flag=no; fi
fi
ps=$(getconf PAGESIZE 2>/dev/null)
if [ -n "$ps" ]; then echo "page_size=$ps"
else echo "page_size_smaps_kb=$(grep -m1 '^KernelPageSize:' /proc/self/smaps 2>/dev/null | sed 's/^KernelPageSize: *//')"; fi
echo "kernel_release=$(uname -r 2>/dev/null || cat /proc/sys/kernel/osrelease)"
echo "arch=$(uname -m 2>/dev/null)"
exit 0
"""

source(
    id="virt",
    parser="virt",
    family="host",
    argv=["sh", "-c", VIRT_SCRIPT],
    timeout_s=10,
    summary="virtualization (systemd-detect-virt --vm, DMI, CPUID flag), page size, kernel release, arch",
    why="In a VM, IOMMU invalidations and hypervisor housekeeping cost training time (reference cases 1 "
    "and 2); the page size (4K vs 64K on Grace) and kernel release decide which fixes apply.",
)
