"""Kernel log and kernel build configuration: GPU errors (Xid), IOMMU faults and mode, SMMU/CMDQV probe,
and whether the running kernel was built with the features Grace VMs need."""

from troubleshooter.sources.base import source

# The running kernel's config: /boot/config-$(uname -r) (Debian, Ubuntu, RHEL) or /proc/config.gz
# (CONFIG_IKCONFIG_PROC). Nothing from outside is put into the script.
KERNEL_CONFIG_SCRIPT = r"""
r=$(uname -r)
if [ -r "/boot/config-$r" ]; then
  exec cat "/boot/config-$r"
elif [ -r /proc/config.gz ]; then
  exec gzip -dc /proc/config.gz
fi
echo "no kernel config found at /boot/config-$r or /proc/config.gz" >&2
exit 3
"""

source(
    id="dmesg",
    parser="dmesg",
    family="kernel",
    argv=["dmesg"],
    timeout_s=15,
    needs="dmesg",
    package="util-linux",
    root=True,  # kernel.dmesg_restrict=1 (the default on Debian and Ubuntu) limits it to root / CAP_SYSLOG
    # The ring buffer is at most 2^25 bytes (CONFIG_LOG_BUF_SHIFT <= 25): keep all of it, so neither the
    # boot lines (IOMMU mode, SMMU/CMDQV probe, command line) nor the latest Xid errors are cut.
    max_bytes=32 * 1024 * 1024,
    summary="kernel log: NVIDIA Xid errors, GPUs fallen off the bus, IOMMU faults and mode, SMMU/CMDQV probe",
    why="Xid errors and IOMMU page faults explain stalls and crashes; on Grace VMs the SMMU/CMDQV lines "
    "show whether invalidations go through the accelerated command queues (case 1: ~12%).",
)

source(
    id="kernel-config",
    parser="kernel-config",
    family="kernel",
    argv=["sh", "-c", KERNEL_CONFIG_SCRIPT],
    timeout_s=10,
    max_bytes=4 * 1024 * 1024,
    summary="the running kernel's build configuration (/boot/config-RELEASE or /proc/config.gz)",
    why="CMDQV (CONFIG_TEGRA241_CMDQV), IOMMUFD and SMMUv3 support and the page size are build-time "
    "choices: a Grace host or guest kernel without them cannot use the accelerated SMMU path.",
)
