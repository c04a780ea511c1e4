"""Kernel-side sources: boot parameters."""

from troubleshooter.sources.base import source

source(
    id="cmdline",
    parser="cmdline",
    family="kernel",
    argv=["cat", "/proc/cmdline"],
    timeout_s=5,
    summary="kernel command line",
    why="C-state limits (max_cstate, idle=poll), IOMMU passthrough and CPU isolation are set here, "
    "and each costs or recovers a few percent of training throughput.",
)
