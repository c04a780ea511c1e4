"""Derived facts that set a fabric measurement against what the port can do: perftest's best average bandwidth
against the rate of the port it ran on (ibstat's, ibstatus' or sysfs' Rate for the same device), and a run from GPU
memory against the other runs on the same device. Their declarations and the facts they read are in
:mod:`troubleshooter.model.combine`, which calls them."""

from __future__ import annotations

from troubleshooter.model.facts import Fact, FactSet


def perftest_vs_port(fs: FactSet) -> None:
    runs, ports = fs.get_value("perftest.runs"), fs.get_value("ib.ports")
    if "rdma.perftest_vs_port" in fs or not isinstance(runs, list) or not isinstance(ports, list):
        return
    rates: dict[str, list[float]] = {}
    for p in ports:
        if isinstance(p, dict) and p.get("state") == "Active" and isinstance(p.get("rate_gbps"), (int, float)):
            rates.setdefault(str(p.get("device")), []).append(float(p["rate_gbps"]))
    said, pcts = [], []
    for r in runs:
        if not isinstance(r, dict) or r.get("kind") != "bw" or not isinstance(r.get("bw_avg_gbps"), (int, float)):
            continue
        port = rates.get(str(r.get("device")))
        if not port or len(port) != 1:  # the device's one active port (perftest prints no port number by default)
            continue
        rated = port[0] * (2 if r.get("bidirectional") else 1)  # a bidirectional figure counts both directions
        pct = round(100 * r["bw_avg_gbps"] / rated)
        pcts.append(pct)
        said.append(f"{r.get('device')} ({r.get('test') or 'perftest'}): {r['bw_avg_gbps']:g} Gb/s of a {port[0]:g} Gb/s "
                    f"port{' each way' if r.get('bidirectional') else ''} ({pct}%)")
    if said:
        src = "inferred: perftest's best average against the Rate its device's port shows"
        fs.add(Fact("rdma.perftest_vs_port", said, "", src, "", 0.0))
        fs.add(Fact("rdma.perftest_port_pct", min(pcts), "%", src, "", 0.0))


#: a run from GPU memory below this share of the best other run on the same device is the GPU's path that is slow
GDR_SHARE_MIN = 0.7


def gpu_memory_vs_other_runs(fs: FactSet) -> None:
    """GPUDirect RDMA moves data between the NIC and the GPU over PCIe: from a GPU on the NIC's PCIe switch it runs
    close to the rate the same NIC reaches from host memory; from a GPU across the CPU interconnect, or with peer
    traffic sent up to the root complex (ACS), it runs far below. A run's memory is GPU only where the paste shows it
    (perftest's CUDA lines or --use_cuda); the run it is set against is host memory or a GPU nearer the NIC: either
    way that NIC did better than from this GPU."""
    runs = fs.get_value("perftest.runs")
    if "rdma.gdr_below_other_runs" in fs or not isinstance(runs, list):
        return
    best: dict[tuple[str, bool, bool], float] = {}
    for r in runs:
        if isinstance(r, dict) and r.get("kind") == "bw" and isinstance(r.get("bw_avg_gbps"), (int, float)) and r.get("device"):
            key = (str(r["device"]), bool(r.get("bidirectional")), r.get("gpu_memory") is True)
            best[key] = max(best.get(key, 0.0), float(r["bw_avg_gbps"]))
    said, judged = [], False
    for (dev, bidir, gpu), bw in sorted(best.items()):
        other = best.get((dev, bidir, False))
        if not gpu or not other:
            continue
        judged = True
        if bw < GDR_SHARE_MIN * other:
            said.append(f"{dev}: {bw:g} Gb/s from GPU memory, {other:g} Gb/s in another run on the same device "
                        f"({round(100 * bw / other)}%)")
    if judged:
        fs.add(Fact("rdma.gdr_below_other_runs", said, "", "inferred: perftest runs on one device, from GPU memory and "
                    "from memory not shown to be a GPU's", "", 0.0))
