"""``ibstat`` (infiniband-diags): every RDMA device (CA), its ports, their state and link rate.

Real sample (H20 node, ConnectX-7, from ../shared/corpus/lscpu-ibstat; TAB or space indented)::

    CA 'mlx5_0'
            CA type: MT4129
            Number of ports: 1
            Firmware version: 28.43.2026
            Hardware version: 0
            Node GUID: 0xa088c2030074cfda
            System image GUID: 0xa088c2030074cfda
            Port 1:
                    State: Active
                    Physical state: LinkUp
                    Rate: 400
                    Base lid: 50
                    LMC: 0
                    SM lid: 1
                    Capability mask: 0xa751e848
                    Port GUID: 0xa088c2030074cfda
                    Link layer: InfiniBand

What matters for training speed: a port that is not ``Active`` / ``LinkUp`` carries no traffic (NCCL
skips it, or rings through a slower rail); ``Rate`` below the fabric's nominal speed (a 400G NDR port at
200, an HDR port training at 10 with ``Physical state: Disabled``) caps inter-node bandwidth; the link
layer tells InfiniBand from RoCE (``Ethernet``), which need different NCCL settings (GID index, traffic
class). Pasted excerpts are often cut inside the last CA block: what is there is read, nothing is
invented (a port whose ``Rate`` line was cut off has no ``rate_gbps``).

The ib.* summary facts are shared with ``ibv-devinfo`` and ``ib-sysfs`` (:func:`summarize`).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.model.hca import LANE_GBPS
from troubleshooter.parsers.base import ParseError, parser, require_text, to_number

# Facts every InfiniBand/RoCE parser (ibstat, ibv-devinfo, ib-sysfs) produces from devices and ports.
COMMON_FACTS = [
    ("ib.devices", "list", "", "RDMA devices: {name, ca_type / vendor_part_id, fw, board_id, ports: [port numbers]} (keys omitted when not shown)"),
    ("ib.device_names", "list", "", "RDMA device names in the order listed (mlx5_0, mlx5_bond_0, ...)"),
    ("ib.ports", "list", "", "every port: {device, port, state, phys_state, rate_gbps, link_layer} (ibv-devinfo adds active_mtu; keys omitted when not shown)"),
    ("ib.ca_types", "dict", "", "RDMA device -> its PCI part (ibstat's CA type MT4123, ibv_devinfo's vendor_part_id, sysfs hca_type); kept apart from ib.devices so that a second tool's listing of the same ports does not drop it"),
    ("ib.port_lanes", "dict", "", "'dev:port' -> {width, lane_gbps, lane_speed (EDR, HDR ...)} where the tool prints them (ibstatus and sysfs '(4X EDR)', ibv_devinfo -v active_width/active_speed; ibstat's Rate alone cannot tell 4X EDR from 2X HDR)"),
    ("ib.active_ports", "number", "count", "ports whose state is Active"),
    ("ib.down_ports", "list", "", "'dev:port' of ports whose state is known and not Active (Down, Initializing, Armed)"),
    ("ib.rates_gbps", "list", "Gb/s", "sorted distinct link rates of the Active ports"),
    ("ib.min_active_rate_gbps", "number", "Gb/s", "the slowest Active port's link rate"),
    ("ib.rates_mixed", "bool", "", "Active ports of the same link layer run at different rates: some port trained below its siblings (all ports at one lower rate is the fabric's speed; an Ethernet NIC beside InfiniBand rails, or a port whose link layer is not shown, is not compared)"),
    ("ib.link_layers", "list", "", "sorted distinct link layers (InfiniBand, Ethernet = RoCE)"),
]

FACTS = list(COMMON_FACTS) + [
    ("ib.ibstat_failed_devices", "list", "", "devices ibstat gave up on ('ibpanic: ... stat of IB device 'mlx5_an0' failed'): an RDMA device name with no InfiniBand port behind it here, such as Azure's accelerated-networking Ethernet VF mlx5_an0"),
]
_IBPANIC = re.compile(r"ibpanic: (?:(?!ibpanic: ).)*?stat of IB device '([^']+)' failed")

_STATE_WORDS = {
    "DOWN": "Down",
    "INIT": "Initializing",
    "INITIALIZE": "Initializing",
    "INITIALIZING": "Initializing",
    "ARMED": "Armed",
    "ACTIVE": "Active",
    "ACTIVE_DEFER": "ActiveDefer",
    "ACTIVEDEFER": "ActiveDefer",
    "NOP": "Nop",
}
_PHYS_WORDS = {
    "LINKUP": "LinkUp",
    "LINK_UP": "LinkUp",
    "DISABLED": "Disabled",
    "POLLING": "Polling",
    "SLEEP": "Sleep",
    "LINKERRORRECOVERY": "LinkErrorRecovery",
    "LINK_ERROR_RECOVERY": "LinkErrorRecovery",
    "PORTCONFIGURATIONTRAINING": "PortConfigurationTraining",
    "PORT_CONFIGURATION_TRAINING": "PortConfigurationTraining",
    "PHYTEST": "PhyTest",
    "PHY_TEST": "PhyTest",
}


_LANES = re.compile(r"\((\d+)X\s+(SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR)\)", re.IGNORECASE)


def set_lanes(port: dict[str, Any], rate_text: str) -> None:
    """``100 Gb/sec (4X EDR)`` -> port width 4 and lane_speed EDR: the rate alone cannot tell a 4X EDR link
    (an HDR port that trained at EDR speed) from a 2X HDR one (an HDR100 card, by design)."""
    m = _LANES.search(rate_text)
    if m:
        port["width"], port["lane_speed"] = int(m.group(1)), m.group(2).upper()


def set_port_state_field(port: dict[str, Any], key: str, value: str) -> bool:
    """state / phys_state / link_layer in the words ibstat uses, whatever tool printed them; True if handled."""
    norm = {"state": norm_state, "phys_state": norm_phys_state, "link_layer": norm_link_layer}.get(key)
    if norm is None:
        return False
    port[key] = norm(value)
    return True


def norm_state(value: str) -> str:
    """'Active', 'PORT_ACTIVE (4)', '4: ACTIVE' -> 'Active' (ibstat's words)."""
    v = re.sub(r"\(\d+\)\s*$", "", value.strip()).strip()
    v = re.sub(r"^\d+:\s*", "", v)
    key = v.upper().removeprefix("PORT_").replace(" ", "")
    return _STATE_WORDS.get(key, v)


def norm_phys_state(value: str) -> str:
    """'LinkUp', 'LINK_UP (5)', '5: LinkUp' -> 'LinkUp'."""
    v = re.sub(r"\(\d+\)\s*$", "", value.strip()).strip()
    v = re.sub(r"^\d+:\s*", "", v)
    return _PHYS_WORDS.get(v.upper().replace(" ", ""), v)


def norm_link_layer(value: str) -> str:
    v = value.strip()
    return {"IB": "InfiniBand", "INFINIBAND": "InfiniBand", "ETHERNET": "Ethernet"}.get(v.upper(), v)


def summarize(devices: list[dict[str, Any]], ports: list[dict[str, Any]]) -> dict[str, Any]:
    """The ib.* facts shared by ibstat, ibv-devinfo and ib-sysfs."""
    lanes: dict[str, dict[str, Any]] = {}
    for p in ports:
        lane = {k: p.pop(k) for k in ("width", "lane_speed", "lane_gbps") if k in p}
        if lane.get("lane_speed") in LANE_GBPS:
            lane["lane_gbps"] = LANE_GBPS[lane["lane_speed"]]
        if "lane_gbps" in lane:
            lanes[f"{p['device']}:{p['port']}"] = lane
    active = [p for p in ports if p.get("state") == "Active"]
    facts: dict[str, Any] = {
        "ib.devices": devices,
        "ib.device_names": [d["name"] for d in devices],
        "ib.ports": ports,
        "ib.active_ports": len(active),
        "ib.down_ports": [f"{p['device']}:{p['port']}" for p in ports if p.get("state") not in (None, "Active")],
        "ib.link_layers": sorted({p["link_layer"] for p in ports if p.get("link_layer")}),
    }
    rates = sorted({p["rate_gbps"] for p in active if isinstance(p.get("rate_gbps"), (int, float))})
    facts["ib.rates_gbps"] = rates
    if rates:
        facts["ib.min_active_rate_gbps"] = rates[0]
        by_layer: dict[str, set[float]] = {}
        for p in active:
            if p.get("link_layer") and isinstance(p.get("rate_gbps"), (int, float)):
                by_layer.setdefault(p["link_layer"], set()).add(p["rate_gbps"])
        facts["ib.rates_mixed"] = any(len(r) > 1 for r in by_layer.values())
    if lanes:
        facts["ib.port_lanes"] = lanes
    parts = {d["name"]: str(d.get("ca_type") or d.get("vendor_part_id")) for d in devices
             if d.get("name") and (d.get("ca_type") or d.get("vendor_part_id"))}
    if parts:
        facts["ib.ca_types"] = parts
    return facts


_CA = re.compile(r"^CA:?\s+'([^']+)'\s*$")  # "CA: 'mlx4_0'" is what `ibstat CA PORT` prints
_PORT = re.compile(r"^Port\s+(\d+)\s*:\s*$")
_KV = re.compile(r"^([A-Za-z](?:[A-Za-z ]*[A-Za-z])?)\s*:\s*(.*)$")
_DEVICE_KEYS = {"CA type": "ca_type", "Firmware version": "fw"}


def _detect(text: str) -> float:
    head = text[:65536]
    cas = len(re.findall(r"^[^\S\n]*CA:?\s+'[^']+'\s*$", head, re.MULTILINE))
    if not cas and _IBPANIC.search(head):
        return 0.8
        # a port block quoted without its CA line: "Port 1:" with ibstat's own port keys under it
        if re.search(r"^[^\S\n]*Port \d+:\s*$", head, re.MULTILINE) and sum(
                k in head for k in ("Physical state:", "Rate:", "Link layer:", "Port GUID:", "Capability mask:",
                                    "SM lid:")) >= 3:
            return 0.7
        return 0.0
    hits = sum(k in head for k in ("CA type:", "Number of ports:", "Firmware version:", "Physical state:", "Link layer:", "Port GUID:"))
    if hits >= 3:
        return 0.95
    return 0.6 if hits else 0.3


@parser(
    "ibstat",
    detect=_detect,
    summary="ibstat: RDMA devices (CA), port state, physical state, rate and link layer",
    facts=FACTS,
    command="ibstat",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "ibstat output (CA '...' blocks); ibstat prints nothing when no RDMA device is visible here")
    devices: list[dict[str, Any]] = []
    ports: list[dict[str, Any]] = []
    dev: dict[str, Any] | None = None
    port: dict[str, Any] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(">"):  # mail-quoted paste
            line = line.lstrip("> \t")
        if not line:
            continue
        m = _CA.match(line)
        if m:
            dev = {"name": m.group(1), "ports": []}
            devices.append(dev)
            port = None
            continue
        m = _PORT.match(line)
        if dev is None and m:
            dev = {"name": "(not shown)", "ports": []}  # a port block quoted without its CA line
            devices.append(dev)
        if dev is None:
            continue  # prompt lines, "Log ibstat:", "=======" before the first CA
        if m:
            port = {"device": dev["name"], "port": int(m.group(1))}
            dev["ports"].append(port["port"])
            ports.append(port)
            continue
        m = _KV.match(line)
        if not m:
            continue
        key, value = m.group(1).strip(), m.group(2).strip()
        if key in _DEVICE_KEYS and port is None:
            if value:
                dev[_DEVICE_KEYS[key]] = value
        elif port is not None and value:
            if key == "State":
                port["state"] = norm_state(value)
            elif key == "Physical state":
                port["phys_state"] = norm_phys_state(value)
            elif key == "Rate":
                rate = to_number(value.split()[0])
                if rate is not None:
                    port["rate_gbps"] = rate
            elif key == "Link layer":
                port["link_layer"] = norm_link_layer(value)
    failed = list(dict.fromkeys(m.group(1) for m in _IBPANIC.finditer(text)))
    if not devices and failed:
        return {"ib.ibstat_failed_devices": failed}
    if not devices:
        raise ParseError("no CA '...' block found: this is not ibstat output")
    facts = summarize(devices, ports)
    if failed:
        facts["ib.ibstat_failed_devices"] = failed
    return facts
