"""PCI devices as ``lspci`` prints them: the device list (also grepped), and the link lines of ``lspci -vv``.

Real samples (tests/data/lspci)::

    0e:00.0 Infiniband controller: Mellanox Technologies MT28908 Family [ConnectX-6]

(``lspci | grep Connect`` on a node whose HDR links came up at 100 Gb/s, NVIDIA/nccl-tests#152) and::

    Card: 01:00.0 VGA compatible controller: NVIDIA Corporation TU106 [GeForce RTX 2060 Rev. A] (rev a1)
    		LnkCap:	Port #0, Speed 8GT/s, Width x16, ASPM L0s L1, Exit Latency L0s <1us, L1 <4us
    		LnkSta:	Speed 8GT/s (ok), Width x8 (downgraded)

(``lspci -vv -s BDF | grep -i gt`` in a folding rig's notes). Read: each device's address, class and name; the
NIC model in brackets (ConnectX-6 ...), which gives the HCA's rated link speed; for each device printing
``LnkCap`` and ``LnkSta``, the link's speed and width against its capability; ``ACSCtl`` redirect bits.

What it means: a link trained at a narrower width than the device and slot support (x8 on an x16 GPU or NIC)
halves its host bandwidth for good: a riser, seating, bifurcation or BIOS problem. A lower *speed* on an idle
GPU is power saving (it retrains under load): it is reported (``pci.links_speed_below_max``) but is no fault
by itself. ACS request/completion redirect on a bridge sends peer-to-peer traffic up to the root complex (NCCL
asks for ACS off between GPUs on bare metal).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("pci.devices", "list", "", "PCI devices listed: {bdf, class, name}"),
    ("pci.nic_models", "list", "", "NIC models named in the device list (ConnectX-6, ConnectX-7, BlueField-3 ...), distinct, in order"),
    ("pci.links", "list", "", "devices printing LnkCap and LnkSta: {bdf, name, speed_gts, speed_max_gts, width, width_max}"),
    ("pci.links_width_degraded", "list", "", "links trained narrower than their capability: {bdf, name, width, width_max}"),
    ("pci.links_speed_below_max", "list", "", "links running below their maximum speed (normal for an idle GPU, which retrains under load): {bdf, name, speed_gts, speed_max_gts}"),
    ("pci.acs_redirect", "list", "", "devices (bridges) whose ACSCtl has request or completion redirect on (ReqRedir+ / CmpltRedir+)"),
]

_DEV = re.compile(r"^\s*(?:Card:\s*)?((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+([A-Za-z][^:]*?):\s+(.+?)\s*$")
_BARE = re.compile(r"^\s*((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s*$")
_CAP = re.compile(r"LnkCap:\s*(?:Port #\d+,\s*)?Speed ([\d.]+)GT/s(?:\s*\(\w+\))?,\s*Width x(\d+)")
_STA = re.compile(r"LnkSta:\s*Speed ([\d.]+)GT/s(?:\s*\(\w+\))?,\s*Width x(\d+)")
_ACS = re.compile(r"ACSCtl:.*\b(ReqRedir\+|CmpltRedir\+)")
_MODEL = re.compile(r"\[((?:ConnectX|BlueField)-?\s?\d+\w*(?:\s?(?:Dx|Lx|Ex|VPI))?)\]", re.IGNORECASE)
# Mellanox part numbers -> model, for lists that print no bracket (older pci.ids)
_PARTS = {"MT27700": "ConnectX-4", "MT27710": "ConnectX-4 Lx", "MT27800": "ConnectX-5", "MT28800": "ConnectX-5 Ex",
          "MT28908": "ConnectX-6", "MT2892": "ConnectX-6 Dx", "MT28841": "ConnectX-6", "MT2894": "ConnectX-6 Lx",
          "MT2910": "ConnectX-7", "MT2914": "ConnectX-8", "MT42822": "BlueField-2", "MT43244": "BlueField-3"}


def _detect(text: str) -> float:
    head = text[:262144]
    lines = head.split("\n", 4000)[:4000]
    devs = sum(1 for ln in lines if _DEV.match(ln) and re.search(r"controller|bridge|Device|device", ln))
    links = sum(1 for ln in lines if "LnkSta:" in ln)
    if links:
        return 0.85
    if devs >= 1 and re.search(r"\b(?:controller|bridge):", head, re.IGNORECASE):
        return 0.7 if devs == 1 else 0.85
    return 0.0


def _num(s: str) -> float | int:
    v = float(s)
    return int(v) if v == int(v) else v


@parser(
    "lspci",
    detect=_detect,
    summary="PCI devices (lspci, also grepped) and their link speed/width and ACS (lspci -vv)",
    facts=FACTS,
    command="sudo lspci -vv | grep -E '^[0-9a-f]|LnkCap:|LnkSta:|ACSCtl:'",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "lspci output")
    devices: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    caps: dict[str, tuple[float, int]] = {}
    stas: dict[str, tuple[float, int]] = {}
    acs: list[str] = []
    for raw in text.split("\n"):
        line = raw.rstrip()
        m = _DEV.match(line)
        if m:
            cur = {"bdf": m.group(1).lower(), "class": m.group(2).strip(), "name": m.group(3)}
            devices.append(cur)
            continue
        m = _BARE.match(line)
        if m:
            cur = {"bdf": m.group(1).lower(), "class": "", "name": ""}
            continue
        if cur is None:
            continue
        c = _CAP.search(line)
        if c:
            caps[cur["bdf"]] = (float(c.group(1)), int(c.group(2)))
            continue
        s = _STA.search(line)
        if s:
            stas[cur["bdf"]] = (float(s.group(1)), int(s.group(2)))
            continue
        if "ACSCtl:" in line and _ACS.search(line) and cur["bdf"] not in acs:
            acs.append(cur["bdf"])
    names = {d["bdf"]: d["name"] for d in devices}
    links = []
    for bdf, (smax, wmax) in caps.items():
        if bdf not in stas:
            continue
        sp, wd = stas[bdf]
        links.append({"bdf": bdf, "name": names.get(bdf, ""), "speed_gts": _num(str(sp)), "speed_max_gts": _num(str(smax)),
                      "width": wd, "width_max": wmax})
    if not devices and not links:
        raise ParseError("no PCI device line ('0e:00.0 Infiniband controller: ...') and no LnkCap/LnkSta pair found")
    models: list[str] = []
    for d in devices:
        mm = _MODEL.search(d["name"])
        model = mm.group(1) if mm else next((v for k, v in _PARTS.items() if k in d["name"]), None)
        if model and model not in models and re.search(r"ethernet|infiniband|network", d["class"], re.IGNORECASE):
            models.append(model)
    return {
        "pci.devices": devices,
        "pci.nic_models": models,
        "pci.links": links,
        "pci.links_width_degraded": [{"bdf": ln["bdf"], "name": ln["name"], "width": ln["width"], "width_max": ln["width_max"]}
                                     for ln in links if ln["width"] < ln["width_max"]],
        "pci.links_speed_below_max": [{"bdf": ln["bdf"], "name": ln["name"], "speed_gts": ln["speed_gts"],
                                       "speed_max_gts": ln["speed_max_gts"]} for ln in links
                                      if ln["speed_gts"] < ln["speed_max_gts"]],
        "pci.acs_redirect": acs,
    }
