"""RDMA NIC models and the InfiniBand speed their links should train at.

A link's rate alone does not say whether it trained down: 100 Gb/s is right for a ConnectX-5 (4X EDR) or an
HDR100 ConnectX-6 (2X HDR), and wrong for a ConnectX-6 whose four lanes came up at EDR speed (a cable, a
transceiver or a switch port that negotiated down). The lane speed (``(4X EDR)`` in ibstatus and sysfs,
``active_speed`` in ibv_devinfo -v) against the model's lane speed does. The model comes from ibstat's
``CA type: MT4123``, ibv_devinfo's ``vendor_part_id: 4123`` or lspci's ``[ConnectX-6]``.

Ethernet-only models (ConnectX-6 Dx / Lx, ConnectX-4 Lx) are left out: an Ethernet port's speed is the
switch's and the optics' choice, not a sign of a fault.

>>> model_of_part(4123), lane_speed_of("ConnectX-7"), lane_speed_of("ConnectX-8")
('ConnectX-6', 'NDR', 'NDR')
"""

from __future__ import annotations

import re

# Gb/s per lane of each InfiniBand speed name (IBTA; FDR10 is 10 Gb/s with 64b/66b)
LANE_GBPS = {"SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.0, "FDR": 14.0, "EDR": 25.0, "HDR": 50.0, "NDR": 100.0,
             "XDR": 200.0}
# PCI device id (decimal, as vendor_part_id and ibstat's MTxxxx print it) -> model (Mellanox/NVIDIA)
_PARTS = {4099: "ConnectX-3", 4103: "ConnectX-3 Pro", 4115: "ConnectX-4", 4119: "ConnectX-5", 4121: "ConnectX-5 Ex",
          4123: "ConnectX-6", 4129: "ConnectX-7", 4131: "ConnectX-8", 41682: "BlueField", 41686: "BlueField-2",
          41692: "BlueField-3"}
# model -> the lane speed its InfiniBand links run at in GPU clusters: the model's own top speed, except where
# the model commonly runs one speed lower by design (ConnectX-8 on Quantum-2 NDR switches, as GB300 NVL72
# systems ship), so a link at that speed is the fabric's choice, not a fault
_LANE = {"ConnectX-3": "FDR", "ConnectX-3 Pro": "FDR", "ConnectX-4": "EDR", "ConnectX-5": "EDR",
         "ConnectX-5 Ex": "EDR", "ConnectX-6": "HDR", "ConnectX-7": "NDR", "ConnectX-8": "NDR", "BlueField": "EDR",
         "BlueField-2": "HDR", "BlueField-3": "NDR"}


def model_of_part(part: int | str | None) -> str | None:
    """4123, '4123' or 'MT4123' -> 'ConnectX-6'; None when unknown (or an Ethernet-only model)."""
    m = re.search(r"(\d+)", str(part or ""))
    return _PARTS.get(int(m.group(1))) if m else None


def lane_speed_of(model: str | None) -> str | None:
    """'ConnectX-6' -> 'HDR'; None for a model not listed (Ethernet-only ones included)."""
    return _LANE.get(model or "")
