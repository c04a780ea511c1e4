"""``ethtool IFACE`` (link settings) and ``ethtool -S IFACE`` (the driver's counters): an Ethernet port's speed
against the speeds it and its link partner advertise, whether it has a link, and the physical-layer error counters
of ConnectX (mlx5) ports. RoCE fabrics and cloud NICs are Ethernet: this is where a port that trained at 100 Gb/s
on a 400 Gb/s card shows.

Real samples (tests/data/ethtool; the layout is ethtool's dump_link_usettings and dump_link_caps)::

    Settings for ens1f0np0:
            Supported ports: [ Backplane ]
            Supported link modes:   1000baseKX/Full
                                    100000baseCR4/Full
            Advertised link modes:  1000baseKX/Full
                                    100000baseCR4/Full
            Speed: 100000Mb/s
            Duplex: Full
            Link detected: yes

    NIC statistics:
         rx_crc_errors_phy: 12
         link_down_events_phy: 3

What it means here: a port links at the fastest mode both ends advertise. A speed below what the port advertises
is a switch port set lower or a link that trained down (cable, transceiver); 'Link detected: no' is no link at all.
The _phy counters count since the driver loaded: CRC and symbol errors come from the cable or the optics.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("net.ethtool_links", "dict", "", "interface -> {speed_mbps, link_detected, advertised_max_mbps, "
     "partner_max_mbps, supported_max_mbps, duplex}, from ethtool IFACE"),
    ("net.links_not_detected", "list", "", "interfaces ethtool says have no link ('Link detected: no')"),
    ("net.links_below_advertised", "list", "", "interfaces with a link whose speed is below the fastest mode they "
     "advertise (and their link partner advertises, when ethtool shows it): 'ens1f0np0: 100000Mb/s, advertises "
     "400000'"),
    ("net.fec_active", "dict", "", "interface -> its active FEC encoding from ethtool --show-fec ('None', 'RS', "
     "'BaseR'): a 100G-and-faster link without FEC shows its bit errors as drops"),
    ("net.phy_error_ports", "list", "", "interfaces (or 'nic' when the paste does not name it) with non-zero "
     "physical-layer error counters in ethtool -S, as 'ens1f0np0: rx_crc_errors_phy=12' (rx_crc_errors_phy, "
     "rx_symbol_err_phy, rx_pcs_symbol_err_phy, link_down_events_phy)"),
]

_QUOTE = re.compile(r"^(?:>[ \t]?)+")
_FEC_HEAD = re.compile(r"^\s*FEC parameters for ([\w.:@-]+):\s*$")
_FEC_ACTIVE = re.compile(r"^\s*Active FEC encoding:\s*(.(?:.*\S)?)\s*$")
_SETTINGS = re.compile(r"^\s*Settings for ([\w.:@-]+):\s*$")
_MODE = re.compile(r"\b(\d+)base[A-Za-z][\w-]*(?:/(?:Full|Half))?")
_SPEED = re.compile(r"^\s*Speed:\s*(\d+)\s*Mb/s", re.I)
_LISTS = {"supported link modes": "supported", "advertised link modes": "advertised",
          "link partner advertised link modes": "partner"}
_PHY = ("rx_crc_errors_phy", "rx_symbol_err_phy", "rx_pcs_symbol_err_phy", "link_down_events_phy")
_STAT = re.compile(r"^\s*([a-z][\w]*_phy)\s*:\s*(\d+)\s*$")
_STAT_HEAD = re.compile(r"^\s*NIC statistics:\s*$")
_CMD_IFACE = re.compile(r"\bethtool\s+(?:-S\s+|--statistics\s+)?([A-Za-z][\w.:@-]*)")


def _detect(text: str) -> float:
    head = text[:262144]
    if "Settings for " not in head and "NIC statistics:" not in head and "_phy: " not in head and "FEC" not in head:
        return 0.0
    if re.search(r"(?m)^[^\S\n]*FEC parameters for [\w.:@-]+:\s*$", head) and "Active FEC encoding:" in head:
        return 0.6  # ethtool --show-fec: a few lines, which a longer output around them outweighs
    if re.search(r"(?m)^(?:>\s?)*\s*Settings for [\w.:@-]+:\s*$", head) and re.search(
            r"(?m)^(?:>\s?)*\s*(?:Link detected:|Speed:|Supported link modes:)", head):
        return 0.9
    if re.search(r"(?m)^[^\S\n]*NIC statistics:\s*$", head) and re.search(r"(?m)^[^\S\n]+[a-z][\w]*: \d+\s*$", head):
        return 0.8
    if len(re.findall(r"(?m)^[^\S\n]*(?:rx|tx|link)_\w+_phy: \d+\s*$", head)) >= 2:
        return 0.8  # ethtool -S grepped for the port's physical counters (no 'NIC statistics:' line)
    return 0.0


@parser(
    "ethtool",
    detect=_detect,
    summary="ethtool IFACE / ethtool -S IFACE: an Ethernet (RoCE) port's speed against the modes it advertises, "
            "its link, and its physical-layer error counters",
    facts=FACTS,
    command="ethtool <iface>; ethtool -S <iface> | grep -E '_phy:'   (each RDMA netdev: ibdev2netdev lists them)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "ethtool output")
    links: dict[str, dict[str, Any]] = {}
    modes: dict[str, dict[str, list[int]]] = {}
    phy: dict[str, dict[str, int]] = {}
    iface = ""
    fec_iface = ""
    fec: dict[str, str] = {}
    stats_iface = ""
    in_list = ""
    in_stats = False
    saw_phy = False  # any _phy counter line, zero or not: the counters were read
    for raw in text.split("\n")[:200000]:
        ln = _QUOTE.sub("", raw.rstrip("\r"))  # an e-mail's or a forum's quote markers ('> ')
        if len(ln) > 4000:
            continue
        saw_phy = saw_phy or ("_phy" in ln and _STAT.match(ln) is not None)
        if m := _FEC_HEAD.match(ln):
            fec_iface = m.group(1)
            continue
        if fec_iface and (m := _FEC_ACTIVE.match(ln)):
            fec[fec_iface] = m.group(1)
            continue
        if m := _SETTINGS.match(ln):
            iface, in_list, in_stats = m.group(1), "", False
            links.setdefault(iface, {})
            modes.setdefault(iface, {})
            continue
        if m := _CMD_IFACE.search(ln):
            # the command line starts the block it names: `ethtool -S X | grep _phy` after an `ethtool X` settings
            # block is counters again (its grepped lines have no 'NIC statistics:' header to say so)
            stats_iface = m.group(1)
            in_stats, in_list = bool(re.search(r"\s(?:-S|--statistics)\s", ln)), ""
            if in_stats:
                iface = ""
            continue
        if _STAT_HEAD.match(ln):
            in_stats, in_list = True, ""
            continue
        if (m := _STAT.match(ln)) and (in_stats or not iface):  # a _phy counter (with or without its header)
            if m.group(1) in _PHY and int(m.group(2)):
                phy.setdefault(stats_iface or "nic", {})[m.group(1)] = int(m.group(2))
            continue
        if in_stats:
            if re.match(r"^\s+[\w\[\]:.-]+: \S", ln):
                continue
            in_stats = False
        if not iface:
            continue
        key, sep, rest = ln.strip().partition(":")
        lk = key.strip().lower()
        if sep and lk in _LISTS:
            in_list = _LISTS[lk]
            modes[iface].setdefault(in_list, []).extend(int(g) for g in _MODE.findall(rest))
            continue
        if in_list and not sep and _MODE.search(ln):  # a continuation line of the list
            modes[iface][in_list].extend(int(g) for g in _MODE.findall(ln))
            continue
        in_list = ""
        if m := _SPEED.match(ln):
            links[iface]["speed_mbps"] = int(m.group(1))
        elif lk == "link detected":
            links[iface]["link_detected"] = rest.strip().lower() == "yes"
        elif lk == "duplex":
            links[iface]["duplex"] = rest.strip()
    if not links and not phy and not fec:
        raise ParseError("no 'Settings for IFACE:' block, no _phy counter ('rx_crc_errors_phy: 0') and no 'FEC "
                         "parameters for IFACE:' block")
    not_detected: list[str] = []
    below: list[str] = []
    for name, info in links.items():
        for what, values in modes.get(name, {}).items():
            if values:
                info[f"{what}_max_mbps"] = max(values)
        if info.get("link_detected") is False:
            not_detected.append(name)
        speed, adv, partner = info.get("speed_mbps"), info.get("advertised_max_mbps"), info.get("partner_max_mbps")
        if info.get("link_detected") and speed and adv and adv > speed and (partner is None or partner > speed):
            add_clipped(below, f"{name}: {speed}Mb/s, advertises {adv}"
                        + (f" (link partner {partner})" if partner else ""), 32, 200)
    facts: dict[str, Any] = {}
    if fec:
        facts["net.fec_active"] = fec
    if links:
        facts.update({"net.ethtool_links": links, "net.links_not_detected": not_detected,
                      "net.links_below_advertised": below})
    if phy or saw_phy:
        facts["net.phy_error_ports"] = [f"{name}: {', '.join(f'{k}={v}' for k, v in c.items())}"
                                        for name, c in phy.items()][:32]
    return facts
