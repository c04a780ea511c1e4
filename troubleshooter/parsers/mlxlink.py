"""``mlxlink`` (NVIDIA MFT / mstflint): a ConnectX port's link as its firmware sees it. What it runs at against what
the port has enabled and the cable supports, the firmware's own troubleshooting verdict, and (``-c``) the BER
counters.

Real samples (tests/data/mlxlink; the layout is mstflint's mlxlink_commander.cpp, unchanged since MFT 4.1x)::

    Operational Info
    ----------------
    State                           : Active
    Physical state                  : LinkUp
    Speed                           : IB-HDR
    Width                           : 2x
    FEC                             : RS-FEC - (544,514) + PLR

    Supported Info
    --------------
    Enabled Link Speed              : 0x00000075 (HDR,EDR,FDR,QDR,SDR)
    Supported Cable Speed           : 0x0000007f (HDR,EDR,FDR,FDR10,QDR,DDR,SDR)

    Troubleshooting Info
    --------------------
    Status Opcode                   : 0
    Group Opcode                    : N/A
    Recommendation                  : No issue was observed

Ethernet ports print '100G', '25GbE' and '(Ext.)' speed lists ('100G_2X,100G_4X,50G_1X ...'). Several ports in one
paste (a loop with '==== mt4123_pciconf0 ====' headers, or prompts) are read each on its own; a grep of some lines
('mlxlink -d mlx5_1 | grep Speed') is read as far as it goes.

What it means here: a port trains to the fastest speed both its enabled speeds and the cable allow, unless the link
partner (the switch port) or the signal keeps it lower. A link at a lower speed than both allow is a link that
trained down (a bad cable or transceiver, a switch port set lower); the firmware's Status Opcode (0: no issue)
and its Recommendation name what it saw. Width is not judged: HDR100 and NDR200 run 2x lanes by design. The BER
counters count since the last clear: effective physical errors (after FEC) on a healthy link stay at 0.
"""

from __future__ import annotations

import json
import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, clip, parser, require_text

# InfiniBand lane speed types, slowest first (the order of IBSupportedSpeeds2Str, reversed)
IB_ORDER = ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR")

FACTS = [
    ("mlxlink.ports", "list", "", "each port mlxlink printed: {port, state, physical_state, speed, width, fec, "
     "enabled, cable, status_opcode, recommendation, effective_errors, effective_ber, link_down}"),
    ("mlxlink.not_active", "list", "", "ports whose State is not Active ('mt4123_pciconf0: State Polling, Physical "
     "state Polling'): no link"),
    ("mlxlink.below_capable", "list", "", "Active ports running slower than the fastest speed both their enabled "
     "speeds and the cable support ('mlx5_1: IB-EDR; enabled and cable both allow HDR'): the link trained down"),
    ("mlxlink.cable_limited", "list", "", "Active ports running below the fastest speed they have enabled because "
     "the cable (or module) supports no faster ('0000:01:00.0: 100G; the port is enabled up to 200G_2X, the cable "
     "supports 100G_4X at most'): a cable slower than the NIC"),
    ("mlxlink.status_problems", "list", "", "ports whose firmware troubleshooting Status Opcode is not 0, with its "
     "Recommendation ('mlx5_0: Status Opcode 25: Cable speed not enabled')"),
    ("mlxlink.error_ports", "list", "", "ports with effective (post-FEC) physical errors or an effective BER of "
     "1E-12 or worse since the counters were last cleared"),
    ("mlxlink.link_down_max", "number", "count", "the largest Link Down Counter of a port (since the last clear)"),
    ("mlxlink.refused", "list", "", "mlxlink's own errors ('-E- ...'): what it could not read"),
]

_KV = re.compile(r"^\s*([A-Za-z](?:[A-Za-z0-9 ./()\[\]_-]*[A-Za-z0-9./()\[\]_-])?)\s*:\s?(.*\S|)\s*$")
_HEADER = re.compile(r"^\s*=+\s*(\S(?:.*?\S)??)\s*=+\s*$")
_DEV = re.compile(r"\bm(?:lx|st)link\b.*?\s-d\s+(\S+)")
_SPEEDS = re.compile(r"0x[0-9a-fA-F]+\s*\(([^)]*)\)")
_BER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*E\s*([-+]?\d+)\s*$", re.I)
_OWN = frozenset({"physical_state", "enabled", "cable", "status_opcode", "group_opcode", "recommendation",
                  "effective_errors", "effective_ber", "raw_ber"})
_FIELDS = {
    "state": "state", "physical state": "physical_state", "speed": "speed", "width": "width", "fec": "fec",
    "enabled link speed": "enabled", "enabled link speed (ext.)": "enabled", "supported cable speed": "cable",
    "supported cable speed (ext.)": "cable", "status opcode": "status_opcode", "group opcode": "group_opcode",
    "recommendation": "recommendation", "effective physical errors": "effective_errors",
    "effective physical ber": "effective_ber", "raw physical ber": "raw_ber", "link down counter": "link_down",
    "link error recovery counter": "link_error_recovery", "time since last clear [min]": "since_clear_min",
    "firmware version": "firmware", "mft version": "mft", "auto negotiation": "auto_negotiation",
}


def _detect(text: str) -> float:
    head = text[:262144]
    if "Link Speed" not in head and "Status Opcode" not in head and "Operational Info" not in head:
        return 0.0
    if head.lstrip().startswith("{") and '"Operational Info"' in head and '"Physical state"' in head:
        return 0.9  # mlxlink --json
    if re.search(r"(?m)^[^\S\n]*Operational Info\s*$", head) and re.search(r"(?m)^[^\S\n]*Physical state\s*:", head):
        return 0.9
    if re.search(r"(?m)^[^\S\n]*(?:Enabled Link Speed|Supported Cable Speed)(?: \(Ext\.\))?\s*:\s*0x[0-9a-fA-F]+ \(", head):
        return 0.85
    if re.search(r"(?m)^[^\S\n]*Status Opcode\s*:\s*\d+", head) and re.search(r"(?m)^[^\S\n]*Recommendation\s*:", head):
        return 0.85
    return 0.0


def _gbps(token: str) -> float | None:
    """'100G_2X' -> 100, '25GbE' -> 25, 'BaseT1000M' -> 1, '2.5G' -> 2.5; None when not an Ethernet speed."""
    t = token.strip().upper()
    if m := re.match(r"^(\d+(?:\.\d+)?)G(?:BE)?(?:_\d+X)?$", t):
        return float(m.group(1))
    if m := re.match(r"^(?:BASETX?)?(\d+)M$", t):
        return float(m.group(1)) / 1000
    return None


def _rank(token: str) -> tuple[str, float] | None:
    """A speed's family and rank: ('ib', index in IB_ORDER) or ('eth', Gb/s); None when unknown (NVLink modes)."""
    t = token.strip().upper()
    if t.startswith("IB-"):
        t = t[3:]
    if t in IB_ORDER:
        return "ib", float(IB_ORDER.index(t))
    g = _gbps(t)
    return ("eth", g) if g is not None else None


def _speed_list(value: str) -> list[str] | None:
    m = _SPEEDS.search(value)
    if not m:
        return None
    return [s.strip() for s in m.group(1).split(",") if s.strip()]


def _number(value: str) -> float | None:
    v = value.strip().replace(",", "")
    try:
        return float(v)
    except ValueError:
        pass
    m = _BER.match(value)
    if m:  # '15E-255': mlxlink's coefficient E-magnitude
        return float(m.group(1)) * 10.0 ** int(m.group(2))
    return None


def _json_records(text: str, refused: list[str]) -> list[dict[str, Any]] | None:
    """mlxlink --json: {"result": {"output": {"Operational Info": {"State": "Active", ...}, "Supported Info":
    {"Enabled Link Speed (Ext.)": {"mask": "0x...", "values": [...]}}}}, "status": {"code": 0, "message": ...}}."""
    body = text.strip()
    if not body.startswith("{") or '"result"' not in body[:2000] or len(body) > 4_000_000:
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    out = doc.get("result", {}).get("output") if isinstance(doc, dict) and isinstance(doc.get("result"), dict) else None
    status = doc.get("status") if isinstance(doc, dict) else None
    if isinstance(status, dict) and status.get("code") not in (0, None):
        add_clipped(refused, clip(str(status.get("message", "")), 240), 16, 300)
    if not isinstance(out, dict):
        return []
    rec: dict[str, Any] = {"port": "port 1"}
    for section in out.values():
        if not isinstance(section, dict):
            continue
        for key, value in section.items():
            field = _FIELDS.get(str(key).strip().lower())
            if field is None:
                continue
            if isinstance(value, dict) and isinstance(value.get("values"), list):
                joined = ",".join(str(v) for v in value["values"])
                value = f"{value.get('mask', '0x0')} ({joined})" if field in ("enabled", "cable") else joined
            rec[field] = str(value).strip()
    return [rec]


def _records(text: str, refused: list[str]) -> list[dict[str, Any]]:
    recs: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    name = ""
    errs: dict[str, list[Any]] = {}  # each -E- message -> [the first device that printed it, how many more did]
    for raw in text.split("\n")[:200000]:
        ln = raw.rstrip("\r")
        if len(ln) > 4000:
            continue
        s = ln.strip()
        if m := _HEADER.match(s):  # '==== mt4123_pciconf0 ====', '==== mlx5_0 FEC Counters ====': its first word
            name, cur = m.group(1).split()[0].rsplit("/", 1)[-1], None
            continue
        if m := _DEV.search(s):
            name, cur = m.group(1).rsplit("/", 1)[-1], None
            continue
        if s.startswith("-E-"):  # the same refusal for every device of a loop: one line, with how many more
            errs.setdefault(s[3:].strip(), [name or "mlxlink", -1])[1] += 1
            continue
        if s == "Operational Info" and cur is not None and "state" in cur:
            cur = None  # a second port's report with no header between them
        m = _KV.match(ln)
        if not m:
            continue
        field = _FIELDS.get(m.group(1).strip().lower())
        if field is None:
            continue
        if cur is None or field in cur:
            cur = {"port": name or f"port {len(recs) + 1}"}
            recs.append(cur)
        cur[field] = m.group(2).strip()
    for msg, (first, more) in errs.items():
        add_clipped(refused, f"{first}{f' (and {more} more)' if more else ''}: {msg}", 16, 300)
    return recs


@parser(
    "mlxlink",
    detect=_detect,
    summary="mlxlink (MFT): a ConnectX port's state, speed against what is enabled and the cable supports, the "
            "firmware's troubleshooting verdict, BER counters",
    facts=FACTS,
    command="sudo mlxlink -d mlx5_0 -c   (each RDMA device; -c adds the BER counters)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "mlxlink output")
    refused: list[str] = []
    # a record is mlxlink's when it has a field only mlxlink prints ('Speed: 1000Mb/s' alone is ethtool's)
    got = _json_records(text, refused)
    recs = [r for r in (got if got is not None else _records(text, refused)) if _OWN.intersection(r)]
    if not recs:
        if refused:
            return {"mlxlink.ports": [], "mlxlink.refused": refused}
        raise ParseError("no mlxlink field ('State : Active', 'Speed : IB-HDR', 'Enabled Link Speed : 0x... (HDR,...)')")
    ports: list[dict[str, Any]] = []
    not_active: list[str] = []
    below: list[str] = []
    cable_limited: list[str] = []
    status: list[str] = []
    errors: list[str] = []
    link_down: list[float] = []
    for r in recs:
        port = r["port"]
        p: dict[str, Any] = {k: v for k, v in r.items() if k in ("port", "state", "physical_state", "speed", "width",
                                                                  "fec", "recommendation", "firmware")}
        enabled, cable = _speed_list(r.get("enabled", "")), _speed_list(r.get("cable", ""))
        if enabled is not None:
            p["enabled"] = enabled
        if cable is not None:
            p["cable"] = cable
        state = r.get("state", "")
        if state and state.lower() != "active":
            phys = r.get("physical_state")
            add_clipped(not_active, f"{port}: State {state}" + (f", Physical state {phys}" if phys else ""), 32, 200)
        active = _rank(r.get("speed", ""))
        if state.lower() in ("active", "") and active and enabled and cable:
            # (name, rank) of the enabled and the cable's speeds of the active speed's family; max keeps the first
            en = [(t, x) for t in enabled if (x := _rank(t)) and x[0] == active[0]]
            cb = [(t, x) for t in cable if (x := _rank(t)) and x[0] == active[0]]
            cable_ranks = {x for _, x in cb}
            capable = [(t, x) for t, x in en if x in cable_ranks]
            if capable:
                top, best = max(capable, key=lambda tx: tx[1][1])
                if best[1] > active[1]:
                    add_clipped(below, f"{port}: {r['speed']}" + (f" {r['width']}" if r.get("width") else "")
                                + f"; enabled speeds and cable both allow {top}", 32, 200)
            if en and cb:
                en_top, fastest = max(en, key=lambda tx: tx[1][1])
                cb_top, cable_best = max(cb, key=lambda tx: tx[1][1])
                if fastest[1] > active[1] >= cable_best[1]:
                    add_clipped(cable_limited, f"{port}: {r['speed']}; the port is enabled up to {en_top}, the "
                                               f"cable supports {cb_top} at most", 32, 200)
        op = r.get("status_opcode", "").strip()
        if op.isdigit():
            p["status_opcode"] = int(op)
            if int(op) != 0:
                rec = r.get("recommendation", "")
                add_clipped(status, f"{port}: Status Opcode {op}" + (f": {clip(rec, 160)}" if rec else ""), 32, 240)
        eff = _number(r.get("effective_errors", ""))
        ber = _number(r.get("effective_ber", ""))
        if eff is not None:
            p["effective_errors"] = eff
        if ber is not None:
            p["effective_ber"] = ber
        if (eff is not None and eff > 0) or (ber is not None and ber >= 1e-12):
            add_clipped(errors, f"{port}: Effective Physical Errors {r.get('effective_errors', '?')}, Effective "
                                f"Physical BER {r.get('effective_ber', '?')}", 32, 200)
        ld = _number(r.get("link_down", ""))
        if ld is not None:
            p["link_down"] = ld
            link_down.append(ld)
        ports.append(p)
    facts: dict[str, Any] = {"mlxlink.ports": ports[:64], "mlxlink.not_active": not_active,
                             "mlxlink.status_problems": status}
    if any(p.get("enabled") and p.get("cable") for p in ports):
        facts["mlxlink.below_capable"] = below
        facts["mlxlink.cable_limited"] = cable_limited
    if any("effective_errors" in p or "effective_ber" in p for p in ports):
        facts["mlxlink.error_ports"] = errors
    if link_down:
        facts["mlxlink.link_down_max"] = int(max(link_down))
    if refused:
        facts["mlxlink.refused"] = refused
    return facts
