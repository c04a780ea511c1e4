"""Derived facts about GPUs that read one source's whole listing: NVLinks down on a part that only comes on an NVLink
baseboard, PCIe cards whose bridges explain their inactive links, and processes crowded on one GPU. Their declarations
and the facts they read are in :mod:`troubleshooter.model.combine`, which calls them."""

from __future__ import annotations

import re

from troubleshooter.model.facts import Fact, FactSet


# parts sold only on NVLink baseboards (SXM/HGX, NVL72): PCIe cards, NVL PCIe boards and a standalone GH200 are not
_NVLINK_ONLY = re.compile(r"\b(?:G?B[123]00|H100 80GB HBM3|H100 SXM|H200(?! NVL)|H800(?! PCIe)|H20\b|A100-SXM|A800-SXM|"
                          r"V100-SXM|Tesla V100-SXM)", re.IGNORECASE)
# PCIe cards, whose NVLinks (if any) come through bridges between pairs
_PCIE_CARD = re.compile(r"PCIe|\bNVL\b|RTX|Quadro|\bA(?:10|16|30|40)\b|\bL40|A6000|A5000|A4000|TITAN", re.IGNORECASE)


def nvlink_baseboard(fs: FactSet) -> None:
    if "gpu.nvlink_all_inactive_baseboard" in fs:
        return
    down, gpus = fs.get_value("gpu.nvlink_all_inactive"), fs.get_value("gpu.nvlink_gpus")
    if not isinstance(down, list) or not down or not isinstance(gpus, list):
        return
    names = {g.get("index"): str(g.get("name") or "") for g in gpus if isinstance(g, dict)}
    hit = [f"GPU {i}: {names[i]}" for i in down if _NVLINK_ONLY.search(names.get(i, ""))]
    if hit:
        fs.add(Fact("gpu.nvlink_all_inactive_baseboard", hit, "", "inferred: all NVLinks inactive on an NVLink-baseboard part", "", 0.0))


def nvlink_bridged(fs: FactSet) -> None:
    """PCIe cards use only the links their NVLink bridges join (an H100 PCIe with three bridges: 12 of 18; none: 0):
    inactive links there are the build, unless the cards differ in how many are up (a loose or missing bridge)."""
    gpus = fs.get_value("gpu.nvlink_gpus")
    if "gpu.nvlink_bridged_uniform" in fs or not isinstance(gpus, list) or len(gpus) < 2:
        return
    cards = [g for g in gpus if isinstance(g, dict)]
    names = [str(g.get("name") or "") for g in cards]
    if len(cards) != len(gpus) or not all(n and not _NVLINK_ONLY.search(n) and _PCIE_CARD.search(n) for n in names):
        return
    active = {g.get("active") for g in cards}
    fs.add(Fact("gpu.nvlink_bridged_uniform", len(active) == 1, "",
                f"inferred: {len(cards)} PCIe cards ({names[0]}) with {sorted(a for a in active if a is not None)} active links", "", 0.0))


#: a process holding this much of a GPU's memory is doing its work there; a CUDA context alone (PyTorch's, JAX's, a
#: rank touching a GPU it does not use) holds some 300-1500 MiB
_WORKING_MIB = 2048
_CONTEXT_MIB = 64


def processes_crowded(fs: FactSet) -> None:
    """Ranks that each see every GPU and were not told which to use run on the first one (mpi4jax#194: GPU 0 held both
    processes' work, GPU 1 only their contexts). The opposite shape, one working process per GPU with extra contexts
    on GPU 0 (ranks that touched the first GPU before choosing theirs), is not this and gives nothing."""
    procs = fs.get_value("gpu.processes")
    if "gpu.processes_crowded" in fs or not isinstance(procs, list) or len(procs) < 3:
        return
    by_gpu: dict[str, list[dict]] = {}
    for p in procs:
        # a display server's few MiB (Xorg, gdm: type G, or 4M in gpustat) is no CUDA process of the job
        if isinstance(p, dict) and p.get("gpu") is not None and isinstance(p.get("mem_mib"), (int, float)) \
                and p["mem_mib"] >= _CONTEXT_MIB and p.get("type") != "G":
            by_gpu.setdefault(str(p["gpu"]), []).append(p)
    working = {g: [p for p in ps if p["mem_mib"] >= _WORKING_MIB] for g, ps in by_gpu.items()}
    crowded = [g for g, ws in working.items() if len(ws) >= 2]
    idle = [g for g, ws in working.items() if not ws]
    if len(crowded) != 1 or not idle:
        return
    g = crowded[0]
    heavy = working[g]
    mib = ", ".join(str(int(p["mem_mib"])) for p in heavy)
    rest = "; ".join(f"GPU {h}: contexts only ({', '.join(str(int(p['mem_mib'])) for p in by_gpu[h])} MiB)" for h in idle)
    fs.add(Fact("gpu.processes_crowded", f"GPU {g}: {len(heavy)} working processes ({mib} MiB); {rest}", "",
                "inferred: the process listing's memory per GPU", "", 0.0))
    pids = {p.get("pid") for p in heavy}
    if None in pids:  # gpustat without -p: the count of contexts stands for the processes
        see_all = all(len(by_gpu[h]) == len(heavy) for h in idle)
    else:
        see_all = all({p.get("pid") for p in by_gpu[h]} == pids for h in idle)
    fs.add(Fact("gpu.processes_crowded_see_all", see_all, "", "inferred: the processes on the GPUs left without work",
                "", 0.0))
