"""Fabric sources: InfiniBand / RoCE devices and ports, as seen from the target, and NCCL's own log.

Run them inside the job's context (container, Slurm step): a container that lacks ``/dev/infiniband``
shows no verbs devices even when the host has eight HCAs, and NCCL then falls back to sockets.
"""

from troubleshooter.sources.base import source

# Fixed script (a literal: nothing is interpolated), read-only; the globs must expand on the target.
# Its marker lines are the ones troubleshooter.parsers.ib_sysfs looks for (a test checks they agree).
IB_SYSFS_SCRIPT = """\
echo '== ib-sysfs: /sys/class/infiniband =='
if [ -d /sys/class/infiniband ]; then
  grep -H . /sys/class/infiniband/*/fw_ver /sys/class/infiniband/*/hca_type \
    /sys/class/infiniband/*/board_id /sys/class/infiniband/*/ports/*/state \
    /sys/class/infiniband/*/ports/*/phys_state /sys/class/infiniband/*/ports/*/rate \
    /sys/class/infiniband/*/ports/*/link_layer 2>/dev/null
else
  echo '(absent)'
fi
echo '== ib-sysfs: /dev/infiniband =='
if [ -d /dev/infiniband ]; then
  ls -1 /dev/infiniband
else
  echo '(absent)'
fi
exit 0
"""

source(
    id="ib-sysfs",
    parser="ib-sysfs",
    family="fabric",
    argv=["sh", "-c", IB_SYSFS_SCRIPT],
    timeout_s=10,
    needs="sh",
    summary="RDMA devices and ports from /sys/class/infiniband, and /dev/infiniband",
    why="Shows, with no tool installed, whether RDMA ports exist, are Active and at full rate, and whether "
    "the verbs device nodes reach this context: without them NCCL falls back to TCP sockets.",
)

source(
    id="ibstat",
    parser="ibstat",
    family="fabric",
    argv=["ibstat"],
    timeout_s=15,
    needs="ibstat",
    package="infiniband-diags",
    summary="ibstat: RDMA devices, port state, rate, link layer",
    why="A port that is Down, or Active at a lower rate than the fabric (HDR at 100, NDR at 200), caps "
    "inter-node bandwidth for every collective that crosses it.",
)

source(
    id="ibv-devinfo",
    parser="ibv-devinfo",
    family="fabric",
    argv=["ibv_devinfo", "-v"],
    timeout_s=15,
    needs="ibv_devinfo",
    package="ibverbs-utils",
    summary="ibv_devinfo -v: RDMA devices as the verbs library opens them in this context",
    why="What a process here (the job's container) can really open: the host may list HCAs that the "
    "container cannot use, and NCCL then silently uses sockets.",
)

source(
    id="ibdev2netdev",
    parser="ibdev2netdev",
    family="fabric",
    argv=["ibdev2netdev"],
    timeout_s=10,
    needs="ibdev2netdev",
    package="mlnx-ofed-kernel-utils (MLNX_OFED / DOCA-OFED)",
    summary="ibdev2netdev: RDMA port -> network interface",
    why="Ties NCCL_IB_HCA names (mlx5_N) to NCCL_SOCKET_IFNAME names (ibpXs0, enpXs0f0np0) and shows "
    "which RoCE netdevs are down.",
)

# NCCL's log is not produced by running anything here: it comes from a pasted file, or from a log the
# user points at with Params.extra["nccl_log"] (skipped when not given). No workload is started.
source(
    id="nccl-debug-log",
    parser="nccl-debug",
    family="fabric",
    argv=["cat", "{nccl_log}"],
    timeout_s=10,
    summary="an NCCL_DEBUG=INFO log file the user names",
    why="NCCL says which network (IB or Socket), plugin, HCAs and topology file it really used, and "
    "warns when a topology file fails to load.",
)
