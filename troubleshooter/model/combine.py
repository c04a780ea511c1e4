"""Derived facts: values that need more than one source (the effective NCCL setting, say).

Each rule reads facts already in the set and adds a documented fact; none overrides a parsed one.
"""

from __future__ import annotations

import re

from troubleshooter.model import fabric_measure, gpu_shapes, roce_qos
from troubleshooter.model.facts import Fact, FactSet, declare

declare("derived", [
    ("nccl.effective.*", "string", "", "the value NCCL would use for a variable: the environment, else /etc/nccl.conf; absent when neither sets it (NCCL's default applies)"),
    ("nccl.ib_qps_effective", "number", "count", "NCCL_IB_QPS_PER_CONNECTION as NCCL would use it (environment, nccl.conf, else NCCL's default of 1)"),
    ("nccl.ib_hca_selected", "list", "", "the RDMA ports (dev:port) the effective NCCL_IB_HCA selects among those present"),
    ("nccl.ib_hca_selects_none", "bool", "", "NCCL_IB_HCA is set but selects none of the ports present here (NCCL then falls back)"),
    ("nccl.hca_transport_outliers", "list", "", "HCAs of a minority link layer in NCCL's NET/IB list ('mlx5_bond_0:1 (RoCE among 8 IB)'): a bonded or front-end RoCE port taken as one more rail beside the fabric's IB HCAs; absent unless one layer has a clear majority of at least two"),
    ("nccl.roce_hcas", "list", "", "the HCAs NCCL's NET/IB list marks RoCE ('irdma0:1'): the job's RDMA runs over Ethernet, where GIDs, the lossless class and the MTU must be set up end to end"),
    ("nccl.ib_hca_spec_problems", "list", "", "mistakes in the NCCL_IB_HCA value itself (a '^' or '=' inside the list, '=^', spaces, port 0), whatever devices are present"),
    ("numa.proc.remote_pct", "number", "%", "share of the training process's memory on NUMA nodes other than those its CPUs are on (needs the CPU binding: numactl --show, taskset -p or /proc/PID/status, with the CPU-to-node map); for a process not bound to a node, the share off the node holding most of it"),
    ("numa.proc.cpu_nodes", "list", "", "NUMA nodes of the CPUs the training process may run on"),
    ("gpu.xid_classes", "list", "", "classes of the Xid codes in the kernel log (decision_trees/xid.yaml): application, follow-on, memory, interconnect, bus, firmware, hardware; corrected for an NVLink Xid the driver marked Nonfatal"),
    ("gpu.xid_node_codes", "list", "", "Xid codes that point at the node (memory, interconnect, bus, firmware, hardware), not at the application"),
    ("gpu.xid_app_only", "bool", "", "every Xid in the log is an application fault or a follow-on of one (13, 31, 43, 45 ...)"),
    ("ib.hca_models", "dict", "", "RDMA device -> NIC model (ConnectX-6 ...), from ibstat's CA type, ibv_devinfo's vendor_part_id, or lspci when the node has one InfiniBand-capable model"),
    ("ib.ports_below_rated", "list", "", "Active InfiniBand ports whose lanes trained below the speed their NIC model runs at ('mlx5_0:1 at 4X EDR, ConnectX-6 runs HDR'); absent when the model or the lane speed is not known"),
    ("ib.ib_ports_edr_or_slower", "list", "", "Active InfiniBand ports whose lanes run at EDR (25 Gb/s) or slower: below the HDR/NDR/XDR that GPU-cluster HCAs since ConnectX-6 run"),
    ("nccl.version_code", "number", "", "NCCL's version as one comparable number, as NCCL_VERSION_CODE (2.21.5 -> 22105)"),
    ("topo.nics_per_gpu", "number", "ratio", "NICs per GPU in nvidia-smi topo -m (1 on rail-optimized GPU fabrics; well under 0.5 means the NICs are not a GPU fabric)"),
    ("topo.job_gpu_numa_nodes", "number", "count", "distinct NUMA nodes of the GPUs the job was given (CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS, SLURM_JOB_GPUS or NVIDIA_VISIBLE_DEVICES as indexes into nvidia-smi topo -m): more than 1 means the job's GPUs sit on both sockets"),
    ("nccl.socket_ifname_selected", "list", "", "the interfaces with an address that NCCL_SOCKET_IFNAME (environment, nccl.conf or NCCL's own log) selects among those ip addr / ifconfig list"),
    ("nccl.socket_ifname_selects_none", "bool", "", "NCCL_SOCKET_IFNAME is set but selects no interface with an address here (NCCL: 'no socket interface found')"),
    ("container.image_plain_cuda", "bool", "", "the job's container image is NVIDIA's plain CUDA image (nvidia/cuda base, runtime or devel), which ships no RDMA userspace (libibverbs, the mlx5 provider): NCCL in it cannot use IB or RoCE until they are installed"),
    ("packages.nccl_versions_differ", "list", "", "NCCL packages whose version differs between two package listings of one side or of two nodes ('nvidia-nccl-cu12: 2.20.5 in a.txt, 2.19.3 in b.txt'): nodes of one job that load different NCCL releases (a host and the job's container are not compared: their NCCLs differ by design)"),
    ("slurm.plugins.nvml_dropped", "list", "", "builds of one Slurm package that differ in the NVML plugin: one version's file list has gpu_nvml.so, another's (of one side, or of two nodes) lacks it ('slurm-ohpc: gpu_nvml.so in 22.05.2-14.103..., not in 22.05.10-2.1...'): an upgrade or a rebuild that dropped NVML autodetection"),
    ("job.multi_node", "bool", "", "the job spans more than one node: nccl-tests' ranks on several hosts, NCCL log lines from several hosts, SLURM_JOB_NUM_NODES above 1, an mpirun line naming several hosts, or srun -N above 1; false for one host in nccl-tests' rank list, one Slurm node, srun -N 1 or a single srun task; absent when nothing says"),
    ("rdma.expected", "bool", "", "something says the node has or the job wants InfiniBand/RoCE: NCCL_IB_HCA or NCCL_IB_DISABLE=0 set, RDMA devices listed (ibstat, sysfs), an IPoIB interface (ib0) among NCCL's sockets, RDMA devices given to the container, or IB in NCCL's log; absent when nothing does (a workstation's 'Failed to open libibverbs' is not a fault)"),
    ("gdr.peermem_refused", "string", "", "the kernel refused to load the peer-memory module (modprobe's, systemd-modules-load's "
     "or Talos' 'could not insert nvidia_peermem: Invalid argument', or its unknown ib_core symbols): the refusal"),
    ("gdr.peermem_loaded", "bool", "", "a peer-memory module for GPUDirect RDMA (nvidia_peermem, or the older nv_peer_mem) is loaded: from lsmod's rows; false when the whole lsmod shows neither, when a 'lsmod | grep' for an installed peer module printed nothing, or when greps cover both names"),
    ("topo.gpu_numa_nodes", "number", "count", "distinct NUMA nodes the GPUs hang off (topo -m NUMA Affinity): more than 1 means GPUs on both sockets"),
    ("limits.process", "string", "", "the program whose limits limits.* are (slurmd, dockerd, python ...): the process limits.pid names in a ps listing of the same side"),
    ("job.tasks_over_gpus", "string", "", "a launch line starts more tasks on a node than the node shows GPUs ('srun -n5 "
     "on one node, 4 GPUs listed'): extra ranks share a GPU, which an exclusive compute mode refuses"),
    ("gpu.nvlink_bridged_uniform", "bool", "", "every GPU listed is a PCIe card (NVLink only through bridges) and all have "
     "the same number of links up (true: inactive links are the bridges' layout; false: the cards differ, a bridge is "
     "loose or missing); absent for baseboard parts or without names"),
    ("gpu.nvlink_all_inactive_baseboard", "list", "", "GPUs that report all their NVLinks inactive and are parts "
     "that only come on an NVLink baseboard (B200, B300, GB200, H100/H200/H800 SXM, A100/A800 SXM, V100 SXM2): for them "
     "no links is a fault, where a PCIe board without a bridge prints the same by design"),
    ("gpu.uvm_nodes_missing", "bool", "", "a listing of the NVIDIA device nodes shows GPUs and nvidiactl but no nvidia-uvm: "
     "the unified-memory nodes CUDA programs need were not created"),
    ("job.gpus_bound_per_task", "string", "", "the job gives each task its own GPUs: srun's or #SBATCH's --gpus-per-task=N "
     "or a --gpu-bind other than none, as written"),
    ("job.ranks_launched", "number", "count", "processes the launch line starts: mpirun's -np, or srun's -n/--ntasks "
     "(--ntasks-per-node times -N)"),
    ("gpu.processes_crowded", "string", "", "a process listing (nvidia-smi's Processes table, gpustat) shows two or more "
     "processes doing work on one GPU (2 GiB or more each) while another GPU of the listing holds none that does: "
     "'GPU 0: 2 working processes (36804, 3370 MiB); GPU 1: contexts only (416, 416 MiB)'"),
    ("gpu.processes_crowded_see_all", "bool", "", "with gpu.processes_crowded: the GPU left without work holds as many "
     "small contexts as the crowded GPU holds working processes (the same PIDs where the listing gives them), so each "
     "process sees every GPU and works on the first: ranks not given a GPU each"),
    ("rdma.perftest_vs_port", "list", "", "each perftest bandwidth run against the rate of the port it ran on ('mlx5_0 (RDMA_Write BW): "
     "92.5 Gb/s of a 100 Gb/s port (92%)'): a good run reaches roughly 90% or more; a bidirectional run counts both directions; "
     "absent without the device's port rate (ibstat, ibstatus or sysfs on the same side)"),
    ("rdma.perftest_port_pct", "number", "%", "the lowest of those percentages: perftest's best average bandwidth as a share of its port's rate"),
    ("rdma.gdr_below_other_runs", "list", "", "perftest devices whose run from GPU memory reached under 70% of another run on the same device "
     "(host memory, or a GPU nearer the NIC): 'mlx5_2: 105.1 Gb/s from GPU memory, 232.07 Gb/s in another run on the same "
     "device (45%)'; the GPU-to-NIC path crosses the CPU or goes up to the root complex; [] when compared and none is"),
    ("rdma.enomem", "list", "", "messages saying an RDMA queue creation or memory registration failed with ENOMEM ('Cannot allocate memory'), from UCX, NCCL and the verbs tools; [] when their output was read and none says so"),
])

#: derived fact -> the parsed facts it is read from: a rule reading the derived fact reads them (the tree linter's
#: "signal fact read by no rule" follows this)
READS: dict[str, tuple[str, ...]] = {}

#: where RDMA resource creation failing with ENOMEM is printed, and how (UCX also says "failed to register")
_VERBS_ENOMEM = re.compile(r"(?i)(ibv_|mlx5dv_|reg_mr)[^']{0,200}(Cannot allocate memory|ENOMEM)|Libfabric error: \(-12\) Cannot allocate memory")
_UCX_ENOMEM = re.compile(r"(?i)(ibv_|mlx5dv_|reg_mr|register)[^']{0,200}(Cannot allocate memory|ENOMEM)")
_OPEN_OR_UAR = re.compile(r"ibv_open_device|devx_alloc_uar")
_ENOMEM = {"ucx.errors": _UCX_ENOMEM, "ucx.warnings": _UCX_ENOMEM, "nccl.warnings": _VERBS_ENOMEM,
           "rdma.verbs_errors": _VERBS_ENOMEM}
READS["rdma.enomem"] = tuple(_ENOMEM)
READS.update(roce_qos.READS)
READS["rdma.perftest_vs_port"] = READS["rdma.perftest_port_pct"] = ("perftest.runs", "ib.ports")
READS["rdma.gdr_below_other_runs"] = ("perftest.runs",)
READS["nccl.hca_transport_outliers"] = ("nccl.hca_transports",)
READS["nccl.roce_hcas"] = ("nccl.hca_transports",)
READS["slurm.plugins.nvml_dropped"] = ("slurm.plugins.gpu_nvml", "slurm.plugins.package")
READS["job.tasks_over_gpus"] = ("slurm.srun.options", "gpu.count")
READS["job.ranks_launched"] = ("mpi.launch.np", "slurm.srun.options")
READS["job.gpus_bound_per_task"] = ("slurm.srun.options", "script.sbatch")
READS["gpu.uvm_nodes_missing"] = ("gpu.dev_node_count", "gpu.dev_control_nodes")
READS["gpu.nvlink_all_inactive_baseboard"] = ("gpu.nvlink_all_inactive", "gpu.nvlink_gpus")
READS["gpu.nvlink_bridged_uniform"] = ("gpu.nvlink_gpus",)
READS["gpu.processes_crowded"] = ("gpu.processes",)
READS["gpu.processes_crowded_see_all"] = ("gpu.processes",)

NCCL_DEFAULTS = {"NCCL_IB_QPS_PER_CONNECTION": "1"}


def apply(fs: FactSet) -> None:
    env = {k[len("env.var."):]: f.value for k, f in fs.items() if k.startswith("env.var.NCCL_")}
    conf = {k[len("nccl_conf.var."):]: f.value for k, f in fs.items() if k.startswith("nccl_conf.var.")}
    for name in sorted(set(env) | set(conf)):
        value, src = (env[name], fs[f"env.var.{name}"].source) if name in env else (conf[name], fs[f"nccl_conf.var.{name}"].source)
        key = f"nccl.effective.{name}"
        if key not in fs:
            fs.add(Fact(key, str(value), "", src, "", 0.0))
    logged = fs.get("nccl.env_set")  # NCCL's own "NCCL_X set by environment to V": what it used
    if logged is not None and isinstance(logged.value, dict):
        for name, value in sorted(logged.value.items()):
            key = f"nccl.effective.{name}"
            if key not in fs and isinstance(name, str) and name.startswith("NCCL_"):
                fs.add(Fact(key, str(value), "", f"inferred: NCCL's log says {name} set by environment", "", 0.0))
    version = fs.get("nccl.version")
    if version is not None and "nccl.version_code" not in fs:
        parts = str(version.value).split(".")
        if len(parts) >= 3 and all(p.isdigit() for p in parts[:3]):
            major, minor, patch = (int(p) for p in parts[:3])
            fs.add(Fact("nccl.version_code", major * 10000 + minor * 100 + patch, "", version.source, "", 0.0))
    _hca(fs)
    _ib_rated(fs)
    _socket_ifname(fs)
    _topo(fs)
    _topo_file(fs)
    _numa_remote(fs)
    _xids(fs)
    _image(fs)
    _scope(fs)
    _tasks_over_gpus(fs)
    _ranks_launched(fs)
    _gpus_per_task(fs)
    _uvm_nodes(fs)
    gpu_shapes.nvlink_baseboard(fs)
    gpu_shapes.nvlink_bridged(fs)
    gpu_shapes.processes_crowded(fs)
    _peermem(fs)
    _rdma_enomem(fs)
    roce_qos.retry_exceeded(fs)
    roce_qos.non_roce_hcas(fs)
    roce_qos.rdma_priority(fs)
    fabric_measure.perftest_vs_port(fs)
    fabric_measure.gpu_memory_vs_other_runs(fs)
    _limits_process(fs)
    avail = fs.get("cpu.deep_cstates_available")
    if avail is not None and avail.value is False and "cpu.deep_cstates_enabled" not in fs:
        fs.add(Fact("cpu.deep_cstates_enabled", False, "", "inferred: no deep idle state is offered at all", "", 0.0))
    if "nccl.ib_qps_effective" not in fs and (env or conf or "env.names" in fs):
        raw = env.get("NCCL_IB_QPS_PER_CONNECTION", conf.get("NCCL_IB_QPS_PER_CONNECTION", NCCL_DEFAULTS["NCCL_IB_QPS_PER_CONNECTION"]))
        try:
            fs.add(Fact("nccl.ib_qps_effective", int(str(raw).strip()), "count", "derived", "", 0.0))
        except ValueError:
            pass


def socket_ifname_selects(spec: str, names: list[str]) -> list[str]:
    """The interfaces NCCL_SOCKET_IFNAME selects, in NCCL's syntax: a comma list of name prefixes; a leading
    '^' excludes them instead; a leading '=' asks for exact names.

    >>> socket_ifname_selects("eth", ["lo", "eth0", "eth1"]), socket_ifname_selects("^docker,lo", ["lo", "docker0", "ib0"])
    (['eth0', 'eth1'], ['ib0'])
    >>> socket_ifname_selects("=eth0", ["eth0", "eth01"]), socket_ifname_selects("ens3", ["eth0"])
    (['eth0'], [])
    """
    spec = spec.strip()
    exclude = spec.startswith("^")
    spec = spec[1:] if exclude else spec
    exact = spec.startswith("=")
    spec = spec[1:] if exact else spec
    items = [p.strip() for p in spec.split(",") if p.strip()]
    def hit(n: str) -> bool:
        return any(n == p if exact else n.startswith(p) for p in items)
    return [n for n in names if hit(n) != exclude]


def _socket_ifname(fs: FactSet) -> None:
    ifs = fs.get("net.interfaces")
    if ifs is None or "nccl.socket_ifname_selects_none" in fs or not isinstance(ifs.value, list):
        return
    spec = fs.get("nccl.effective.NCCL_SOCKET_IFNAME")
    value = spec.value if spec is not None else None
    src = spec.source if spec is not None else ""
    if value is None:
        logged = fs.get("nccl.env_set")
        if logged is not None and isinstance(logged.value, dict) and "NCCL_SOCKET_IFNAME" in logged.value:
            value, src = logged.value["NCCL_SOCKET_IFNAME"], logged.source
    if value is None or not str(value).strip():
        return
    usable = [d.get("name") for d in ifs.value if isinstance(d, dict) and (d.get("ipv4") or d.get("ipv6"))]
    chosen = socket_ifname_selects(str(value), [n for n in usable if isinstance(n, str)])
    why = f"inferred: NCCL_SOCKET_IFNAME={value} ({src}) against the interfaces of {ifs.source}"
    fs.add(Fact("nccl.socket_ifname_selected", chosen, "", why, "", 0.0))
    fs.add(Fact("nccl.socket_ifname_selects_none", not chosen, "", why, "", 0.0))


def _hca(fs: FactSet) -> None:
    from troubleshooter.model import ibhca

    tr = fs.get("nccl.hca_transports")
    if tr is not None and isinstance(tr.value, dict):  # NCCL's NET/IB list: which HCAs are RoCE, which layer stands out
        layers = {h: str(t) for h, t in tr.value.items()}
        if "nccl.roce_hcas" not in fs:
            fs.add(Fact("nccl.roce_hcas", [h for h, t in layers.items() if t.startswith("RoCE")], "",
                        "inferred: NCCL's NET/IB list", "", 0.0))
        values = list(layers.values())
        major = max(set(values), key=values.count) if values else ""
        n = values.count(major)
        if "nccl.hca_transport_outliers" not in fs and len(set(values)) > 1 and n >= 2 and n > len(values) - n:
            fs.add(Fact("nccl.hca_transport_outliers", [f"{h} ({t} among {n} {major})" for h, t in layers.items()
                                                        if t != major], "", "inferred: NCCL's NET/IB list", "", 0.0))

    spec_fact = fs.get("nccl.effective.NCCL_IB_HCA")
    if spec_fact is not None and "nccl.ib_hca_spec_problems" not in fs:
        fs.add(Fact("nccl.ib_hca_spec_problems", ibhca.spec_problems(str(spec_fact.value)), "", "inferred: NCCL's "
                    "NCCL_IB_HCA syntax (troubleshooter/model/ibhca.py)", "", 0.0))
    ports_fact = fs.get("ib.ports")
    if spec_fact is None or ports_fact is None or "nccl.ib_hca_selected" in fs:
        return
    ports = [(p.get("device"), int(p.get("port") or 1)) for p in ports_fact.value if isinstance(p, dict) and p.get("device")]
    if not ports:
        return
    chosen = ibhca.match_hca(str(spec_fact.value), ports)
    fs.add(Fact("nccl.ib_hca_selected", [f"{d}:{p}" for d, p in chosen], "", "derived", "", 0.0))
    fs.add(Fact("nccl.ib_hca_selects_none", not chosen, "", "derived", "", 0.0))


def _ib_rated(fs: FactSet) -> None:
    """Which InfiniBand ports run below their NIC model's lane speed (troubleshooter/model/hca.py)."""
    from troubleshooter.model import hca
    from troubleshooter.model.hca import LANE_GBPS

    ports, lanes = fs.get("ib.ports"), fs.get("ib.port_lanes")
    if ports is None or not isinstance(ports.value, list) or "ib.hca_models" in fs:
        return
    models: dict[str, str] = {}
    parts = fs.get("ib.ca_types")
    for dev, part in (parts.value.items() if parts is not None and isinstance(parts.value, dict) else []):
        model = hca.model_of_part(part)
        if model:
            models[str(dev)] = model
    pci = fs.get("pci.nic_models")
    ib_models = sorted({m for m in (pci.value if pci is not None and isinstance(pci.value, list) else [])
                        if hca.lane_speed_of(m)})
    if len(ib_models) == 1:  # one InfiniBand-capable model on the node: every RDMA device is one of them
        for p in ports.value:
            if isinstance(p, dict) and p.get("device"):
                models.setdefault(p["device"], ib_models[0])
    src = "inferred: NIC model (CA type, vendor_part_id or lspci) and the ports' lane speed"
    if models:
        fs.add(Fact("ib.hca_models", models, "", src, "", 0.0))
    lane_of = lanes.value if lanes is not None and isinstance(lanes.value, dict) else {}
    active_ib = [p for p in ports.value if isinstance(p, dict) and p.get("state") == "Active"
                 and p.get("link_layer") == "InfiniBand"]
    slow, below, judged = [], [], False
    for p in active_ib:
        key = f"{p.get('device')}:{p.get('port')}"
        lane = lane_of.get(key) or {}
        gbps = lane.get("lane_gbps")
        if not isinstance(gbps, (int, float)):
            continue
        shown = f"{lane.get('width', '?')}X {lane.get('lane_speed') or f'{gbps:g} Gb/s per lane'}"
        if gbps <= LANE_GBPS["EDR"]:
            slow.append(f"{key} at {shown}")
        rated = hca.lane_speed_of(models.get(str(p.get("device"))))
        if rated:
            judged = True
            if gbps < LANE_GBPS[rated]:
                below.append(f"{key} at {shown}; {models[str(p.get('device'))]} runs {rated}")
    if any(isinstance((lane_of.get(f"{p.get('device')}:{p.get('port')}") or {}).get("lane_gbps"), (int, float))
           for p in active_ib):
        fs.add(Fact("ib.ib_ports_edr_or_slower", slow, "", "inferred: the ports' lane speed", "", 0.0))
    if judged:
        fs.add(Fact("ib.ports_below_rated", below, "", src, "", 0.0))


def _topo(fs: FactSet) -> None:
    gpus, nics, numa = fs.get("topo.gpus"), fs.get("topo.nics"), fs.get("topo.gpu_numa")
    if gpus is not None and nics is not None and isinstance(gpus.value, list) and gpus.value \
            and isinstance(nics.value, list) and "topo.nics_per_gpu" not in fs:
        fs.add(Fact("topo.nics_per_gpu", round(len(nics.value) / len(gpus.value), 3), "ratio", gpus.source, "", 0.0))
    if numa is not None and isinstance(numa.value, dict) and numa.value and "topo.gpu_numa_nodes" not in fs:
        nodes = {v for v in numa.value.values() if isinstance(v, int) and v >= 0}
        if nodes:
            fs.add(Fact("topo.gpu_numa_nodes", len(nodes), "count", numa.source, "", 0.0))
    if numa is not None and isinstance(numa.value, dict) and "topo.job_gpu_numa_nodes" not in fs:
        # a node's layout is not a job's allocation: only the GPUs the job was given say whether it spans sockets
        for var in ("CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "NVIDIA_VISIBLE_DEVICES"):
            given = fs.get(f"env.var.{var}")
            if given is None:
                continue
            idx = [t.strip() for t in str(given.value).split(",") if t.strip()]
            if not idx or not all(t.isdigit() for t in idx):
                continue  # UUIDs, "all": not indexes
            nodes = {numa.value.get(f"GPU{t}") for t in idx}
            if None in nodes or len(idx) < 2:
                continue
            fs.add(Fact("topo.job_gpu_numa_nodes", len(nodes), "count", f"inferred: {var} and nvidia-smi topo -m", "", 0.0))
            break


def _topo_file(fs: FactSet) -> None:
    """What pasted outputs imply about NCCL's topology file on this side (the tool's own probe says it directly).

    A topology XML attached for a side was read there, so that side has a topology file; an environment listing
    says whether NCCL_TOPO_FILE is set in it."""
    if "nccl.topo_file.visible" not in fs and any(k.startswith("nccl_topo.") for k in fs):
        src = "inferred: an NCCL topology XML was attached for this side"
        fs.add(Fact("nccl.topo_file.visible", True, "", src, "", 0.0))
        if "nccl.topo_file.parse_ok" not in fs:
            fs.add(Fact("nccl.topo_file.parse_ok", True, "", src, "", 0.0))
    env_path = fs.get("env.var.NCCL_TOPO_FILE")
    if env_path is not None and "nccl.topo_file.path" not in fs and str(env_path.value).strip():
        fs.add(Fact("nccl.topo_file.path", str(env_path.value).strip(), "",
                    "inferred: NCCL loads the file NCCL_TOPO_FILE names", "", 0.0))
    if "nccl.topo_file.from_env" not in fs and "env.names" in fs:
        fs.add(Fact("nccl.topo_file.from_env", "env.var.NCCL_TOPO_FILE" in fs, "",
                    "inferred: the environment listing of this side", "", 0.0))


#: NVIDIA's CUDA images (nvidia/cuda:12.6.3-devel-ubuntu22.04, nvcr.io/nvidia/cuda:...): CUDA and NCCL, no rdma-core
_PLAIN_CUDA = re.compile(r"^(?:(?:docker\.io|nvcr\.io|registry\.hub\.docker\.com)/)?nvidia/cuda(?::|@|$)")


def _image(fs: FactSet) -> None:
    images = []
    for name in ("docker.image", "k8s.images"):
        f = fs.get(name)
        if f is not None:
            images += f.value if isinstance(f.value, list) else [f.value]
    if images and "container.image_plain_cuda" not in fs:
        plain = any(isinstance(i, str) and _PLAIN_CUDA.match(i.strip()) for i in images)
        fs.add(Fact("container.image_plain_cuda", plain, "", f"inferred from the image {images[0]}", "", 0.0))


PEERMEM = ("nvidia_peermem", "nv_peer_mem")


def _peermem(fs: FactSet) -> None:
    refused = next((r for r in fs.get_value("kmod.insert_failed") or [] if str(r).split(":", 1)[0] in PEERMEM), None)
    symbols = fs.get_value("kmod.unknown_symbols") or {}
    if refused is None and isinstance(symbols, dict):
        refused = next((f"{m}: unknown symbols {', '.join(symbols[m][:3])}" for m in PEERMEM if symbols.get(m)), None)
    if refused and "gdr.peermem_refused" not in fs:
        fs.add(Fact("gdr.peermem_refused", str(refused), "", "inferred: the kernel refused to load it", "", 0.0))
    if "gdr.peermem_loaded" in fs:
        return
    if refused:
        fs.add(Fact("gdr.peermem_loaded", False, "", f"inferred: the kernel refused to load it ({refused})", "", 0.0))
        return
    loaded = fs.get_value("kmod.loaded") or []
    installed = [m for m in fs.get_value("kmod.installed") or [] if m in PEERMEM]
    greps = fs.get_value("kmod.not_loaded") or []
    missed = {m for m in PEERMEM if any(p in m for p in greps)}  # a grep that found nothing matches no loaded module
    if any(m in loaded for m in PEERMEM):
        fs.add(Fact("gdr.peermem_loaded", True, "", "inferred: lsmod lists it", "", 0.0))
    elif fs.get_value("kmod.listing_complete") is True:
        fs.add(Fact("gdr.peermem_loaded", False, "", "inferred: the whole lsmod lists neither nvidia_peermem nor nv_peer_mem", "", 0.0))
    elif missed and (missed == set(PEERMEM) or any(m in missed for m in installed)):
        fs.add(Fact("gdr.peermem_loaded", False, "", f"inferred: lsmod | grep printed nothing for {', '.join(sorted(missed))}"
                    + (f" (installed: {', '.join(installed)})" if installed else ""), "", 0.0))


def _limits_process(fs: FactSet) -> None:
    pid, procs = fs.get_value("limits.pid"), fs.get_value("ps.processes")
    if "limits.process" in fs or not isinstance(pid, int) or not isinstance(procs, list):
        return
    name = next((p.get("name") for p in procs if isinstance(p, dict) and p.get("pid") == pid), None)
    if isinstance(name, str) and name:
        fs.add(Fact("limits.process", name, "", f"inferred: PID {pid} is {name} in the ps listing", "", 0.0))


def _rdma_enomem(fs: FactSet) -> None:
    """One fact for "RDMA could not get memory", read by memlock-limit and kernel-cma-rdma-enomem alike."""
    if "rdma.enomem" in fs:
        return
    read, hits = fs.messages_matching(_ENOMEM)
    if not read:
        return
    # (a DMA-BUF registration maps GPU memory: it is not counted against the locked-memory limit, so its ENOMEM is not
    # memlock's: NCCL asking for more than the GPU can map, vllm-project/vllm#19613's oversized NCCL_BUFFSIZE)
    # (opening the device or allocating its doorbell pages is neither a queue nor a registration: ENOMEM there is the
    # adapter's BAR out of UAR pages, hca-uar-space-exhausted, with many processes per adapter; the limit is not asked)
    hits = [m for m in hits if "reg_dmabuf_mr" not in m and not _OPEN_OR_UAR.search(m)]
    fs.add(Fact("rdma.enomem", hits, "", f"inferred from {', '.join(read)}", "", 0.0))


def _scope(fs: FactSet) -> None:
    """Whether the job spans nodes, and whether RDMA is there to use: NCCL on one node needs no network, and a
    machine without RDMA hardware is not missing any."""
    if "job.multi_node" not in fs:
        nodes, hosts, slurm = fs.get_value("nccl_tests.nodes"), fs.get_value("nccl.hosts"), fs.get_value("slurm.num_nodes")
        multi, why = None, ""
        if isinstance(nodes, (int, float)):
            multi, why = nodes > 1, f"nccl-tests ranks on {int(nodes)} host(s)"
        elif isinstance(hosts, list) and len(hosts) > 1:
            multi, why = True, f"NCCL log lines from {len(hosts)} hosts"
        elif isinstance(slurm, (int, float)):
            multi, why = slurm > 1, f"SLURM_JOB_NUM_NODES={int(slurm)}"
        elif isinstance(mpi := fs.get_value("mpi.launch.hosts"), list) and len(mpi) > 1:
            multi, why = True, f"the mpirun line places ranks on {len(mpi)} hosts"
        elif isinstance(opts := fs.get_value("slurm.srun.options"), dict):
            nodes_opt, tasks = _srun_int(opts, "-N", "--nodes"), _srun_int(opts, "-n", "--ntasks")
            if nodes_opt is not None:
                multi, why = nodes_opt > 1, f"srun asks for {nodes_opt} node(s)"
            elif tasks == 1:
                multi, why = False, "srun runs one task (one node)"
        if multi is not None:
            fs.add(Fact("job.multi_node", multi, "", f"inferred: {why}", "", 0.0))
    if "rdma.expected" not in fs:
        why = ""
        ifaces = fs.get_value("nccl.socket_interfaces") or []
        nets = fs.get_value("nccl.nets") or []
        if "nccl.effective.NCCL_IB_HCA" in fs:
            why = "NCCL_IB_HCA is set"
        elif str(fs.get_value("nccl.effective.NCCL_IB_DISABLE") or "").strip() == "0":
            why = "NCCL_IB_DISABLE=0 is set"
        elif (fs.get_value("ib.device_names") or fs.get_value("ib.ports") or fs.get_value("ib.sysfs_present") is True
              or fs.get_value("ib.dev_infiniband_visible") is True):
            why = "RDMA devices are listed"
        elif any(isinstance(i, str) and re.match(r"^ib[a-z]?\d", i) for i in ifaces):
            why = "an IPoIB interface is among NCCL's sockets"
        elif any(m in (fs.get_value("kmod.installed") or []) for m in PEERMEM) or any(
                m in (fs.get_value("kmod.loaded") or []) for m in ("mlx5_ib", "mlx4_ib", "ib_uverbs")):
            why = "the node has RDMA kernel modules"
        # (--privileged gives a container every device the host has: it does not say the host has RDMA)
        elif fs.get_value("k8s.rdma_devices") is True or fs.get_value("docker.rdma_devices_named") is True:
            why = "the container is given RDMA devices"
        elif any(n in ("IB", "IBext") for n in nets if isinstance(n, str)) or fs.get_value("nccl.hcas"):
            why = "NCCL's log names IB devices"
        elif fs.get_value("packages.ofed"):
            why = f"NVIDIA's RDMA stack is installed ({fs.get_value('packages.ofed')})"
        if why:
            fs.add(Fact("rdma.expected", True, "", f"inferred: {why}", "", 0.0))


def _srun_int(opts: dict[str, object], *names: str) -> int | None:
    """The first of srun's options ``names`` the line gives, as a number (None when absent or not a plain number)."""
    v = next((opts[n] for n in names if n in opts), None)
    return int(v) if isinstance(v, str) and v.isdigit() else None


def _tasks_over_gpus(fs: FactSet) -> None:
    """srun's tasks per node (--ntasks-per-node, or -n over -N) against the GPUs the same side lists."""
    opts, gpus = fs.get_value("slurm.srun.options"), fs.get_value("gpu.count")
    if "job.tasks_over_gpus" in fs or not isinstance(opts, dict) or not isinstance(gpus, int) or gpus < 1:
        return
    per_node = _srun_int(opts, "--ntasks-per-node")
    tasks, nodes = _srun_int(opts, "-n", "--ntasks"), _srun_int(opts, "-N", "--nodes")
    if per_node is None and tasks is not None and (nodes or 1) == 1:
        per_node = tasks  # one node (no -N, or -N1): every task on it
    if per_node is not None and per_node > gpus:
        fs.add(Fact("job.tasks_over_gpus", f"{per_node} tasks per node, {gpus} GPUs", "",
                    "inferred: the srun line's task count and the GPUs listed", "", 0.0))


def _uvm_nodes(fs: FactSet) -> None:
    count, control = fs.get_value("gpu.dev_node_count"), fs.get_value("gpu.dev_control_nodes")
    if "gpu.uvm_nodes_missing" in fs or not isinstance(count, int) or count < 1 or not isinstance(control, list):
        return
    if "nvidiactl" in control:  # the listing covers the driver's nodes, not only a GPU or two named on the line
        fs.add(Fact("gpu.uvm_nodes_missing", "nvidia-uvm" not in control, "",
                    "inferred: the device listing's driver nodes", "", 0.0))


def _gpus_per_task(fs: FactSet) -> None:
    if "job.gpus_bound_per_task" in fs:
        return
    for name in ("slurm.srun.options", "script.sbatch"):
        opts = fs.get_value(name)
        if not isinstance(opts, dict):
            continue
        per, bind = str(opts.get("--gpus-per-task", "")), str(opts.get("--gpu-bind", ""))
        given = [f"--gpus-per-task={per}"] if per.isdigit() and int(per) > 0 else []
        given += [f"--gpu-bind={bind}"] if bind and not bind.startswith(("none", "verbose,none")) else []
        if given:
            fs.add(Fact("job.gpus_bound_per_task", " ".join(given), "", f"inferred: {name}", "", 0.0))
            return


def _ranks_launched(fs: FactSet) -> None:
    if "job.ranks_launched" in fs:
        return
    np_, opts = fs.get_value("mpi.launch.np"), fs.get_value("slurm.srun.options")
    n, src = (np_, "mpirun's -np") if isinstance(np_, int) else (None, "")
    if n is None and isinstance(opts, dict):
        per, nodes = _srun_int(opts, "--ntasks-per-node"), _srun_int(opts, "-N", "--nodes")
        n = _srun_int(opts, "-n", "--ntasks") or (per * (nodes or 1) if per else None)
        src = "srun's task count"
    if isinstance(n, int):
        fs.add(Fact("job.ranks_launched", n, "count", f"inferred: {src}", "", 0.0))


def _cpulist(text: str) -> set[int]:
    """'0-7,56-63' -> {0..7, 56..63}; a malformed part is skipped."""
    out: set[int] = set()
    for part in str(text).replace(" ", "").split(","):
        lo, _, hi = part.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            a, b = int(lo), int(hi or lo)
            if b - a <= 1 << 16:
                out.update(range(a, b + 1))
    return out


def _numa_remote(fs: FactSet) -> None:
    """Remote memory needs both where the pages are (numastat -p) and where the threads run (the CPU binding)."""
    node_mb = fs.get("numa.proc.node_mb")
    if node_mb is None or not isinstance(node_mb.value, dict) or "numa.proc.remote_pct" in fs:
        return
    mem = {str(k): float(v) for k, v in node_mb.value.items() if isinstance(v, (int, float))}
    total = sum(mem.values())
    if total <= 0:
        return
    cpu_nodes: set[str] | None = None
    how = ""
    bind = fs.get("numa.cpubind") or fs.get("numa.nodebind")
    if bind is not None and isinstance(bind.value, list) and bind.value:
        cpu_nodes, how = {str(n) for n in bind.value}, "numactl --show"
    else:
        allowed = fs.get("proc.cpus_allowed_list")
        node_map: dict[str, str] = {}
        lscpu_map, numactl_map = fs.get("numa.node_cpus"), fs.get("numa.nodes")
        if lscpu_map is not None and isinstance(lscpu_map.value, dict):
            node_map = {str(n): str(v) for n, v in lscpu_map.value.items()}
        elif numactl_map is not None and isinstance(numactl_map.value, dict):
            node_map = {str(n): str(v.get("cpus", "")) for n, v in numactl_map.value.items() if isinstance(v, dict)}
        if allowed is not None and node_map:
            cpus = _cpulist(allowed.value)
            cpu_nodes = {n for n, lst in node_map.items() if cpus & _cpulist(lst)}
            how = "the CPUs it may run on and the CPU-to-node map"
    if cpu_nodes is None and len(mem) == 1:
        cpu_nodes, how = set(mem), "a single NUMA node"
    if not cpu_nodes:
        return  # unknown: where the threads run decides what is remote
    fs.add(Fact("numa.proc.cpu_nodes", sorted(cpu_nodes, key=lambda n: (len(n), n)), "", f"inferred from {how}", "", 0.0))
    if set(mem) <= cpu_nodes and len(cpu_nodes) > 1:
        off = fs.get("numa.proc.off_main_pct")  # not bound: the pages off its main node are remote to its threads
        value = float(off.value) if off is not None else round(100.0 * (total - max(mem.values())) / total, 2)
        src = f"inferred: not bound to one node ({how}); pages off the node holding most"
    else:
        value = round(100.0 * sum(v for n, v in mem.items() if n not in cpu_nodes) / total, 2)
        src = f"inferred: memory outside the nodes of its CPUs ({how})"
    fs.add(Fact("numa.proc.remote_pct", value, "%", src, "", 0.0))


_XID_CLASSES: dict[int, str] | None = None


def xid_catalogue() -> dict[int, str]:
    """Xid code -> class, from decision_trees/xid.yaml (read once)."""
    global _XID_CLASSES
    if _XID_CLASSES is None:
        from troubleshooter import locations, yamlio

        path = locations.trees_dir() / "xid.yaml"
        doc = yamlio.load(path, cached=True) if path.exists() else {}
        _XID_CLASSES = {int(k): str(v.get("class", "hardware")) for k, v in (doc.get("xids") or {}).items()}
    return _XID_CLASSES


def _xids(fs: FactSet) -> None:
    # the kernel log's, else those the NVIDIA device plugin's health check saw (NVML's critical Xid events)
    codes = fs.get("dmesg.xid_codes") or fs.get("k8s_device_plugin.xid_codes")
    if codes is None or not isinstance(codes.value, list) or "gpu.xid_classes" in fs:
        return
    cat = xid_catalogue()
    held = fs.get("dmesg.xid_nonfatal_codes")
    nonfatal = held.value if held is not None and isinstance(held.value, list) else []
    # unknown code: the node; an NVLink Xid the driver marked Nonfatal on every line: corrected, not a fault to act on
    classes = {c: "corrected" if c in nonfatal else cat.get(int(c), "hardware")
               for c in codes.value if isinstance(c, int)}
    src = "inferred: Xid codes classed by decision_trees/xid.yaml"
    fs.add(Fact("gpu.xid_classes", sorted(set(classes.values())), "", src, "", 0.0))
    node = sorted(c for c, k in classes.items() if k not in ("application", "follow-on", "corrected"))
    fs.add(Fact("gpu.xid_node_codes", node, "", src, "", 0.0))
    app = bool(classes) and set(classes.values()) <= {"application", "follow-on"}
    fs.add(Fact("gpu.xid_app_only", app, "", src, "", 0.0))
