"""Derived facts that set a fabric measurement against what the port is rated for: perftest's best average
bandwidth against the rate of the port it ran on (ibstat's, ibstatus' or sysfs' Rate for the same device). Their
declarations and the facts they read are in :mod:`troubleshooter.model.combine`, which calls them."""

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
