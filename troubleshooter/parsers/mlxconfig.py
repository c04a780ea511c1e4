"""NVIDIA/Mellanox NIC firmware settings as ``mlxconfig -d DEV query`` prints them (also grepped, and the table
``mlxconfig ... set`` shows before it applies a change).

Real sample (a ConnectX-6 VPI card switched from IB to Ethernet; tests/data/mlxconfig)::

    Device type:    ConnectX6
    Name:           MCX653105A-ECA_Ax
    Description:    ConnectX-6 VPI adapter card; 100Gb/s (HDR100; EDR IB and 100GbE); single-port QSFP56; ...
    Device:         /dev/mst/mt4123_pciconf0

    Configurations:                              Next Boot
             LINK_TYPE_P1                        IB(1)
             MAX_ACC_OUT_READ                    0
             ATS_ENABLED                         False(0)

Each setting's value is the one in force at the next boot (``Next Boot``; with ``-e``, ``Current``); a ``set``
table's ``New`` column is a change not yet applied and is given apart. With several devices (``Device #2:``),
the first one's settings are the facts and every device is listed.

What it means: firmware settings that bound what the NIC does whatever the host says: ``LINK_TYPE_P*`` (IB(1)
or ETH(2): RoCE versus InfiniBand), ``MAX_ACC_OUT_READ`` (outstanding PCIe reads, which caps RDMA read
bandwidth on some platforms), ``ATS_ENABLED`` (address translation for GPUDirect in VMs),
``ADVANCED_PCI_SETTINGS``, ``PCI_WR_ORDERING``, SR-IOV settings.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("mlxconfig.devices", "list", "", "devices listed: {device, type, name, description}"),
    ("mlxconfig.param.*", "string", "", "one firmware setting of the (first) device, as printed (IB(1), False(0), 0 ...): the value at next boot"),
    ("mlxconfig.pending", "dict", "", "settings a `set` is about to change: name -> new value (not applied before a reboot or reset)"),
]

_HEAD = re.compile(r"^\s*(Device type|Name|Description|Device):\s+(.(?:.*\S)?)\s*$")
_DEVNO = re.compile(r"^\s*Device #(\d+):\s*$")
_COLS = re.compile(r"^\s*Configurations:\s+(.*\S|)\s*$")
_PARAM = re.compile(r"^\s+([A-Z][A-Z0-9_]*(?:\[\d+\])?)\s{2,}(\S+)(?:\s{2,}(\S+))?(?:\s{2,}(\S+))?\s*$")


def _detect(text: str) -> float:
    head = text[:262144]
    if re.search(r"^[^\S\n]*Configurations:\s+(?:Default\s+)?(?:Current\s+)?Next Boot", head, re.MULTILINE):
        return 0.9
    if "mlxconfig" in head and len(re.findall(r"^[^\S\n]+[A-Z][A-Z0-9_]+_P\d\s{2,}\S+", head, re.MULTILINE)) >= 1:
        return 0.8
    if len(re.findall(r"^[^\S\n]+(?:LINK_TYPE_P\d|MAX_ACC_OUT_READ|ATS_ENABLED|SRIOV_EN|NUM_OF_VFS|ADVANCED_PCI_SETTINGS|PCI_WR_ORDERING)\s{2,}\S+",
                      head, re.MULTILINE)) >= 2:
        return 0.75
    return 0.0


@parser(
    "mlxconfig",
    detect=_detect,
    summary="NIC firmware settings: mlxconfig -d DEV query (LINK_TYPE, MAX_ACC_OUT_READ, ATS_ENABLED ...)",
    facts=FACTS,
    command="sudo mlxconfig -d /dev/mst/mt4123_pciconf0 query",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "mlxconfig query output")
    devices: list[dict[str, str]] = []
    cur: dict[str, str] | None = None
    cols: list[str] = ["Next Boot"]
    params: dict[str, str] = {}
    pending: dict[str, str] = {}
    dev_index = 0
    for raw in text.split("\n"):
        line = raw.rstrip()
        if _DEVNO.match(line):
            dev_index += 1
            cur = None
            continue
        h = _HEAD.match(line)
        if h:
            key = {"Device type": "type", "Name": "name", "Description": "description", "Device": "device"}[h.group(1)]
            if cur is None or key in cur:
                cur = {}
                devices.append(cur)
            cur[key] = h.group(2)
            continue
        c = _COLS.match(line)
        if c:
            cols = re.split(r"\s{2,}", c.group(1)) or ["Next Boot"]
            continue
        p = _PARAM.match(line)
        if p and dev_index <= 1:
            values = [v for v in p.groups()[1:] if v is not None]
            named = dict(zip(cols, values))
            value = named.get("Next Boot") or named.get("Current") or values[0]
            params.setdefault(p.group(1), value)
            if "New" in named:
                pending[p.group(1)] = named["New"]
    if not params and not devices:
        raise ParseError("no mlxconfig device block and no setting line ('LINK_TYPE_P1   IB(1)') found")
    facts: dict[str, Any] = {"mlxconfig.devices": devices}
    for k, v in params.items():
        facts[f"mlxconfig.param.{k}"] = v
    if pending:
        facts["mlxconfig.pending"] = pending
    return facts
