"""The facts the nccl-debug kind declares (nccl-channels declares some of the same, from here), and the tally of
IB channels both kinds keep."""

from __future__ import annotations

import re

MAX_WARNINGS = 20
VERSION = re.compile(r"\bNCCL version (\d+\.\d+\.\d+)")  # also read from framework tracebacks (cuda_errors, torch_distributed)

FACTS = [
    ("nccl.version", "string", "", "NCCL version from the log ('NCCL version 2.18.3+cuda12.2' -> 2.18.3)"),
    ("nccl.net", "string", "", "network transport NCCL used: IB, Socket, or the plugin's network (Libfabric, IBext, ...); the most frequent when ranks differ"),
    ("nccl.nets", "list", "", "every network transport named in the log, sorted (more than one: ranks disagree)"),
    ("nccl.net_plugin", "string", "", "external net plugin NCCL loaded (e.g. 'AWS Libfabric', 'IBext_v8'); absent when none loaded"),
    ("nccl.net_plugin_failed", "bool", "", "a net plugin failed to load or set itself up: a load error other than a missing file, NCCL's \"Failed to initialize NET plugin\", aws-ofi-nccl's init warnings (a fabric/domain/endpoint not opened, an option not set, no protocol)"),
    ("nccl.net_plugin_absent", "bool", "", "the log says no external net plugin was found and NCCL used its internal one (normal on IB/RoCE, wrong on AWS EFA)"),
    ("nccl.socket_fallback", "bool", "", "NCCL's network is Socket (TCP) for at least one rank"),
    ("nccl.ib_no_device", "bool", "", "NCCL found no usable IB/RoCE device ('NET/IB : No device found.' or libibverbs could not be opened)"),
    ("nccl.ibverbs_missing", "bool", "", "NCCL could not open libibverbs.so ('Failed to open libibverbs.so[.1]'): the RDMA "
     "userspace libraries are not installed where NCCL runs, so it cannot use IB/RoCE whatever devices are there"),
    ("nccl.ofi_no_provider", "bool", "", "the aws-ofi-nccl (Libfabric) plugin found no provider for its NICs ('NET/OFI OFI "
     "fi_getinfo() call failed: No data available', 'Couldn't find any optimal provider'): no EFA (or other "
     "Libfabric) device where NCCL runs; absent when the log does not say"),
    ("nccl.hcas", "list", "", "RDMA ports NCCL says it uses ('NET/IB : Using [0]mlx5_0:1/IB ...' -> 'mlx5_0:1'), in NCCL's order"),
    ("nccl.hca_transports", "dict", "", "'mlx5_0:1' -> IB or RoCE, as NCCL lists them"),
    ("nccl.topo_file_used", "string", "", "topology file path NCCL loaded, or that NCCL_TOPO_FILE was set to"),
    ("nccl.topo_file_loaded", "bool", "", "true: NCCL logged 'Loading topology file' (GRAPH subsystem) and no topology-file error; false: a topology-file error; absent when the log shows neither"),
    ("nccl.topo_file_error", "string", "", "the warning when the topology file failed to open or parse (NCCL then autodetects)"),
    ("nccl.topo_max_bw", "number", "GB/s", "maxBw of NCCL's topology print ('=== System : maxBw 48.0 totalBw 370.8 ===', NCCL_DEBUG_SUBSYS=GRAPH)"),
    ("nccl.topo_total_bw", "number", "GB/s", "totalBw of NCCL's topology print"),
    ("nccl.topo_min_pci_bw", "number", "GB/s", "slowest PCI link in NCCL's topology print (PCI[0.2] in a VM with emulated switches: NCCL routes around it badly)"),
    ("nccl.channels", "number", "count", "most channels NCCL reported ('24 coll channels', 'Channel 00/24 :')"),
    ("nccl.affinity_masks", "dict", "", "GPU -> the CPU masks NCCL set for its threads, in order, distinct ('Setting "
     "affinity for GPU 0 to ff': the process's own binding intersected with the GPU's local CPUs)"),
    ("nccl.affinity_cpus_min", "number", "count", "CPUs in the narrowest mask NCCL set for a GPU"),
    ("nccl.affinity_distinct", "number", "count", "distinct CPU masks NCCL set over all GPUs (one mask for all: the machine's "
     "CPUs may be all there are; several narrow ones: each rank was bound apart)"),
    ("nccl.affinity_spread", "number", "ratio", "for a GPU given masks of different widths in the log (two runs, two "
     "launchers): the widest mask's CPUs over the narrowest's, largest over the GPUs; absent when each GPU got one"),
    ("nccl.rings", "number", "count", "distinct rings (channel ring prints 'Channel NN/MM : ranks', or 'Ring NN' lines in old logs)"),
    ("nccl.trees", "number", "count", "distinct tree indices in 'Trees [i] ...' lines"),
    ("nccl.env_set", "dict", "", "NCCL_* variables NCCL reports as set ('NAME set by environment to VALUE'); last value wins"),
    ("nccl.warnings", "list", "", f"NCCL WARN messages, deduplicated, at most {MAX_WARNINGS}"),
    ("nccl.warn_sites", "list", "", "source files of NCCL's WARN lines ('transport/nvls.cc'), in order seen: which part of NCCL failed"),
    ("nccl.gdr_disabled_hcas", "list", "", "HCAs for which NCCL logged 'GPU Direct RDMA Disabled' (traffic staged through host memory)"),
    ("nccl.gdr_enabled", "bool", "", "NCCL logged 'GPU Direct RDMA Enabled' for some HCA"),
    ("nccl.ib_channels_gdr", "number", "count", "channel lines over InfiniBand/RoCE with GPUDirect RDMA ('via NET/IB/0/GDRDMA')"),
    ("nccl.ib_channels_no_gdr", "number", "count", "channel lines over InfiniBand/RoCE without it ('via NET/IB/1'): "
     "staged through host memory"),
    ("nccl.channels_via_shm", "number", "count", "channel lines through host shared memory ('via SHM/direct/direct'): "
     "GPUs of one node not talking peer to peer"),
    ("nccl.channels_via_p2p", "number", "count", "channel lines peer to peer ('via P2P/IPC', 'via P2P/CUMEM', 'via P2P/direct pointer')"),
    ("nccl.local_links_same_gpu", "number", "count", "channel lines that join two ranks on the same GPU (cudaDev or "
     "bus id in the brackets) through P2P or shared memory ('6[6] -> 10[2]' beside '2[2] -> 3[3] via P2P/IPC': ranks "
     "2 and 10 both on device 2): ranks NCCL took for one machine's that are not"),
    ("nccl.ib_recv_channels_no_gdr", "number", "count", "receiving channel lines over InfiniBand/RoCE without GPUDirect "
     "RDMA ('[receive] via NET/IB/1'): a receiver uses it wherever the GPU is close enough to the NIC "
     "(NCCL_NET_GDR_LEVEL); only a sender may also skip it by choice (NCCL_NET_GDR_READ)"),
    ("nccl.no_socket_interface", "bool", "", "NCCL found no usable IP interface for its bootstrap and sockets ('Bootstrap : no socket interface found', 'no usable listening interface', 'Socket creation failed : Address family not supported'); absent when the log does not say"),
    ("nccl.socket_interfaces", "list", "", "network interfaces NCCL uses for its sockets and bootstrap ('NET/Socket : Using [0]eth0:...', 'Bootstrap : Using ...', the IB transport's 'OOB ib0:...')"),
    ("nccl.bootstrap_failed", "bool", "", "an error came back through NCCL's bootstrap ('bootstrap.cc:270 -> 2'): its TCP "
     "connections between ranks failed; absent when the log does not say"),
    ("nccl.errors", "list", "", "error lines: completion errors, unhandled system/cuda errors, internal errors, remote errors"),
    ("cuda.error_codes", "list", "", "cudaError_t names of the CUDA calls NCCL's WARN and error lines say failed "
     "(\"Cuda failure 35 'CUDA driver version is insufficient ...'\" -> cudaErrorInsufficientDriver); absent when none"),
    ("cuda.error_numbers", "list", "", "their CUDA error numbers"),
    ("nccl.ranks", "number", "count", "communicator size (largest nranks seen)"),
    ("nccl.hosts", "list", "", "sorted distinct host names of the log prefixes"),
    ("nccl.init_complete", "bool", "", "some communicator logged 'Init COMPLETE'; false when init started (Init START) or failed (init.cc:N -> err) without completing; absent otherwise"),
]


_LINK = re.compile(r"\b(\d+)\[([0-9a-fA-F]+)\] -> (\d+)\[([0-9a-fA-F]+)\]")


def link_devices(host: str, msg: str, devices: dict[tuple[str, str], set[str]]) -> None:
    """Note the ranks on each device of a P2P/SHM channel line ('6[6] -> 10[2] via P2P/IPC'): (host, device) -> ranks.
    Lines without their host prefix are left out: two machines' logs pasted together would look like one's."""
    m = _LINK.search(msg) if host else None
    if m and len(devices) < 4096:
        devices.setdefault((host, m.group(2).lower()), set()).add(m.group(1))
        devices.setdefault((host, m.group(4).lower()), set()).add(m.group(3))


def count_ib_channel(counts: list[int], gdr: bool, receive: bool) -> None:
    """Tally one channel over NET/IB into ``counts`` = [without GPUDirect RDMA, with it, receiving without]."""
    counts[gdr] += 1
    if not gdr and receive:
        counts[2] += 1


def ib_channel_facts(counts: list[int]) -> dict[str, int]:
    """The nccl.ib_channels_* facts of a tally by :func:`count_ib_channel` (none when no IB channel was seen)."""
    if not (counts[0] or counts[1]):
        return {}
    return {"nccl.ib_channels_gdr": counts[1], "nccl.ib_channels_no_gdr": counts[0],
            "nccl.ib_recv_channels_no_gdr": counts[2]}


def mask_cpus(mask: str) -> int:
    """CPUs in an affinity NCCL printed: a hex mask in 32-bit groups ('ffffffff,00000000') or a CPU list ('0-23,48-71')."""
    if "-" in mask:  # a CPU list
        n = 0
        for part in mask.split(","):
            lo, _, hi = part.partition("-")
            n += int(hi) - int(lo) + 1 if hi else 1
        return n
    return bin(int(mask.replace(",", ""), 16)).count("1")
