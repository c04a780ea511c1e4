"""InfiniBand port error counters: ``perfquery`` (basic and ``-x``), ``ibqueryerrors``, and the counter files under
``/sys/class/infiniband/<dev>/ports/<n>/counters`` (``grep . .../counters/*``, or a loop that prints each file).

Real samples (treydock/infiniband_exporter's perfquery fixtures; guilbaults/infiniband-exporter#12 and #20;
openucx/ucx#9590; leptonai/gpud#943; prometheus/node_exporter#966; tests/data/ib-counters)::

    # Port extended counters: Lid 1719 port 1 (CapMask: 0x5300 CapMask2: 0x0000002)
    SymbolErrorCounter:..............0
    GUID 0xc42a10300dcf8e2 port 1: [SymbolErrorCounter == 3] [PortXmitWait == 12097916]
       GUID 0xb8599f0300383ec0 port ALL: [SymbolErrorCounter == 19817 (19.353K)] [LinkDownedCounter == 37 (37.000)] ...
    /sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:0

Read: per port, the physical-layer error counters (symbol errors, link error recovery, link downed, local link
integrity, receive errors, remote physical errors), the congestion counters (transmit discards, transmit wait), and
counters stuck at the top of their width (255, 65535, 2^32-1: saturated, a lower bound), 'N/A (no PMA)' read as no
value (a device without a performance-management agent, iWARP's).

What it means here: these counters count since the last reset (a reboot, perfquery -R), so one reading says how
much went wrong since then, not whether it still does. Symbol errors and link error recoveries come from the
physical link (a cable, a transceiver, a port); a link downed count also grows each time the other end reboots.
Only counts that grow between two readings under load name a failing link. Transmit wait and discards are
congestion, not errors.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

# one name per counter, as perfquery and ibqueryerrors print it, with the sysfs file that holds it
_NAMES = {
    "SymbolErrorCounter": "symbol_error", "LinkErrorRecoveryCounter": "link_error_recovery",
    "LinkDownedCounter": "link_downed", "PortRcvErrors": "port_rcv_errors",
    "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors",
    "PortRcvSwitchRelayErrors": "port_rcv_switch_relay_errors", "PortXmitDiscards": "port_xmit_discards",
    "PortXmitConstraintErrors": "port_xmit_constraint_errors", "PortRcvConstraintErrors": "port_rcv_constraint_errors",
    "LocalLinkIntegrityErrors": "local_link_integrity_errors",
    "ExcessiveBufferOverrunErrors": "excessive_buffer_overrun_errors", "VL15Dropped": "VL15_dropped",
    "PortXmitWait": "port_xmit_wait",
}
_BY_FILE = {v.lower(): k for k, v in _NAMES.items()}
#: the counters a failing physical link raises
PHYSICAL = ("SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "LocalLinkIntegrityErrors",
            "PortRcvErrors", "PortRcvRemotePhysicalErrors")
# the basic PortCounters' widths (IBA 16.1.3.5): a value at the top is saturated; perfquery -x widens most to 64 bits
_MAX = {"SymbolErrorCounter": 65535, "LinkErrorRecoveryCounter": 255, "LinkDownedCounter": 255,
        "PortRcvErrors": 65535, "PortRcvRemotePhysicalErrors": 65535, "PortRcvSwitchRelayErrors": 65535,
        "PortXmitDiscards": 65535, "LocalLinkIntegrityErrors": 15, "ExcessiveBufferOverrunErrors": 15,
        "PortXmitWait": 4294967295}

FACTS = [
    ("ib.counter_ports", "list", "", "the ports whose counters the output holds ('Lid 1719 port 1', 'mlx5_0/1', "
     "'0xb8599f0300383ec0/ALL')"),
    ("ib.physical_error_ports", "list", "", "ports with physical-layer error counts since the last reset, as 'PORT: "
     "SymbolErrorCounter=19817, LinkDownedCounter=37' (symbol errors, link error recovery, link downed, local link "
     "integrity, receive errors, remote physical errors)"),
    ("ib.symbol_errors_max", "number", "count", "the largest SymbolErrorCounter of a port"),
    ("ib.link_downed_max", "number", "count", "the largest LinkDownedCounter of a port (it also counts the other end's "
     "reboots)"),
    ("ib.counters_saturated", "list", "", "counters at the top of their width ('mlx5_1/1 LinkDownedCounter=255'): "
     "their count is at least that"),
    ("ib.xmit_discards_max", "number", "count", "the largest PortXmitDiscards (packets dropped for congestion or a "
     "timeout)"),
    ("ib.counters_no_pma", "list", "", "ports whose counter files read 'N/A (no PMA)': the device keeps no port "
     "counters (no performance-management agent, as iWARP's i40iw)"),
]

_PQ_HEAD = re.compile(r"^# Port (?:extended )?counters: (.*?)(?:\s*\(CapMask.*)?$")
_PQ_LINE = re.compile(r"^\s*([A-Za-z0-9]+):\.{2,}\s*(\S+)")
_IQE_LINE = re.compile(r"^\s*GUID (0x[0-9a-fA-F]+) port (\w+):\s*(\[.*)$")
_IQE_PAIR = re.compile(r"\[(\w+) == (\d+)")
_SYSFS = re.compile(r"/?(?:sys/class/infiniband|infiniband)/([\w.-]+)/ports/(\d+)/counters/(\w+):\s*(.*)$")
_LOOP = re.compile(r"^=== \./(\w+) ===$")
_LOOP_DIR = re.compile(r"/sys/class/infiniband/([\w.-]+)/ports/(\d+)/counters")


def _detect(text: str) -> float:
    head = text[:262144]
    if re.search(r"(?m)^# Port (?:extended )?counters: ", head) and re.search(r"SymbolErrorCounter:\.{3,}", head):
        return 0.9
    if re.search(r"(?m)^[^\S\n]*GUID 0x[0-9a-fA-F]+ port \w+: \[\w+ == \d+", head):
        return 0.9
    if re.search(r"/ports/\d+/counters/(?:symbol_error|link_downed|port_rcv_errors|port_xmit_discards|"
                 r"link_error_recovery|excessive_buffer_overrun_errors)\b", head):
        return 0.85
    if len(re.findall(r"(?m)^=== \./(?:symbol_error|link_downed|port_rcv_errors|link_error_recovery) ===$", head)) >= 2:
        return 0.85
    return 0.0


def _ports(text: str, no_pma: dict[str, bool]) -> dict[str, dict[str, int]]:
    ports: dict[str, dict[str, int]] = {}
    port = ""
    loop_port = ""
    pending = ""
    for raw in text.split("\n")[:500000]:
        ln = raw.rstrip("\r")
        if len(ln) > 20000:
            continue
        if m := _PQ_HEAD.match(ln.strip()):
            port = m.group(1).strip() or "port"
            continue
        if (m := _PQ_LINE.match(ln)) and m.group(1) in _NAMES and port:
            if m.group(2).isdigit():
                ports.setdefault(port, {})[m.group(1)] = int(m.group(2))
            continue
        if m := _IQE_LINE.match(ln):
            key = f"{m.group(1)}/{m.group(2)}"
            for name, val in _IQE_PAIR.findall(m.group(3)):
                if name in _NAMES:
                    ports.setdefault(key, {})[name] = int(val)
            continue
        if m := _SYSFS.search(ln):
            name = _BY_FILE.get(m.group(3).lower())
            key = f"{m.group(1)}/{m.group(2)}"
            if name and m.group(4).strip().isdigit():
                ports.setdefault(key, {})[name] = int(m.group(4).strip())
            elif m.group(4).strip().startswith("N/A (no PMA)"):
                no_pma.setdefault(key, True)
            continue
        if m := _LOOP_DIR.search(ln):
            loop_port = f"{m.group(1)}/{m.group(2)}"
            continue
        if m := _LOOP.match(ln.strip()):
            pending = _BY_FILE.get(m.group(1).lower(), "")
            continue
        if pending and ln.strip():
            if ln.strip().isdigit():
                ports.setdefault(loop_port or "port", {})[pending] = int(ln.strip())
            pending = ""
    return {p: c for p, c in ports.items() if c}


@parser(
    "ib-counters",
    detect=_detect,
    summary="InfiniBand port error counters (perfquery, ibqueryerrors, sysfs counters): physical errors, saturation",
    facts=FACTS,
    command="perfquery -x   (per port: perfquery -x <lid> <port>; or grep . /sys/class/infiniband/*/ports/*/counters/*)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "InfiniBand port counters (perfquery, ibqueryerrors or the sysfs counters)")
    no_pma: dict[str, bool] = {}
    ports = _ports(text, no_pma)
    if not ports and no_pma:
        return {"ib.counter_ports": [], "ib.physical_error_ports": [], "ib.counters_saturated": [],
                "ib.counters_no_pma": list(no_pma)[:64]}
    if not ports:
        raise ParseError("no port counter with a number (perfquery's 'SymbolErrorCounter:....0', ibqueryerrors' "
                         "'[SymbolErrorCounter == 3]', or /sys/class/infiniband/*/ports/*/counters/*)")
    physical: list[str] = []
    saturated: list[str] = []
    for port, counts in ports.items():
        bad = [f"{n}={counts[n]}" for n in PHYSICAL if counts.get(n)]
        if bad:
            add_clipped(physical, f"{port}: {', '.join(bad)}", 32, 300)
        for n, v in counts.items():
            if _MAX.get(n) == v:
                add_clipped(saturated, f"{port} {n}={v}", 32, 120)

    def biggest(name: str) -> int | None:
        vals = [c[name] for c in ports.values() if name in c]
        return max(vals) if vals else None

    facts: dict[str, Any] = {"ib.counter_ports": list(ports)[:64], "ib.physical_error_ports": physical,
                             "ib.counters_saturated": saturated}
    for fact, name in (("ib.symbol_errors_max", "SymbolErrorCounter"), ("ib.link_downed_max", "LinkDownedCounter"),
                       ("ib.xmit_discards_max", "PortXmitDiscards")):
        v = biggest(name)
        if v is not None:
            facts[fact] = v
    return facts
