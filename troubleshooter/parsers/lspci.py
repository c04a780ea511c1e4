"""``lspci`` (pciutils): the PCI devices (GPUs, RDMA NICs, PCIe switches), and with ``-vv`` their PCIe link and
Access Control Services (ACS) settings. People paste it whole, filtered (``lspci | grep Mellanox``), as the
bare lines of ``lspci -vvv | grep ACSCtl``, or as ``lspci -vv -s BDF | grep -i gt``; each form is read.

Real samples (NVIDIA/nccl#304; NVIDIA/nccl-tests#152; a folding rig's notes; NVIDIA/nccl#19)::

    ACSCtl:	SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
    0e:00.0 Infiniband controller: Mellanox Technologies MT28908 Family [ConnectX-6]
    Card: 01:00.0 VGA compatible controller: NVIDIA Corporation TU106 [GeForce RTX 2060 Rev. A] (rev a1)
    		LnkCap:	Port #0, Speed 8GT/s, Width x16, ASPM L0s L1, Exit Latency L0s <1us, L1 <4us
    		LnkSta:	Speed 8GT/s (ok), Width x8 (downgraded)
    03:00.0 PCI bridge: PLX Technology, Inc. PEX 8747 48-Lane, 5-Port PCI Express Gen 3 (8.0 GT/s) Switch (rev ca)

What matters for training speed:

- ACS *P2P request/completion redirect* (``ReqRedir+`` / ``CmpltRedir+``, which the kernel turns on with the
  IOMMU) makes a PCIe switch send peer-to-peer traffic between GPUs, or between a GPU and its NIC (GPUDirect
  RDMA), up to the root complex and through the IOMMU: NCCL then hangs, fails with IB completion errors, or runs
  at a fraction of P2P bandwidth. NCCL's troubleshooting guide asks for exactly this listing. ``SrcValid+``
  alone (source validation, no redirect) is counted apart: it does not reroute traffic.
- A link trained narrower than the device and slot support (x8 on an x16 GPU or NIC) halves its host bandwidth
  for good: a riser, seating, bifurcation or BIOS problem. A lower *speed* is what an idle GPU does to save
  power (it retrains under load): reported, not a fault by itself.
- The RDMA NIC model (``[ConnectX-6]``, or the part number on older pci.ids) gives the InfiniBand speed its
  links should train at (:mod:`troubleshooter.model.hca`).

>>> f = parse("ACSCtl:\\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\\n")
>>> f["pci.acs_redirect_count"], f["pci.acs_lines"]
(1, 1)
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("pci.devices", "list", "", "devices listed: {bdf, class, name} (vendor:device ids kept in the name when -nn was used)"),
    ("pci.nic_models", "list", "", "RDMA NIC models named in the device list (ConnectX-6, ConnectX-7, BlueField-3 ...), distinct, in order"),
    ("pci.gpu_names", "list", "", "sorted distinct NVIDIA GPU names in the listing"),
    ("pci.ib_nics", "list", "", "Mellanox/NVIDIA adapters listed as an 'Infiniband controller' or 'Network controller' (not "
     "'Ethernet controller'; ConnectX-3 virtual functions show so): {bdf, class, model}; an RDMA driver should serve each"),
    ("pci.unreadable", "list", "", "devices whose configuration space reads as all ones ('(rev ff)', '!!! Unknown header type 7f'): listed by the kernel, no longer answering on the bus; {bdf, name}"),
    ("pci.gpus_unreadable", "list", "", "NVIDIA GPUs (VGA or 3D controller functions) among pci.unreadable, by bus address: a GPU that has fallen off the bus"),
    ("pci.links", "list", "", "PCIe links shown (LnkSta, with LnkCap when printed): {bdf, name, speed_gts, speed_max_gts, width, width_max} (bdf and name empty for bare link lines)"),
    ("pci.links_width_degraded", "list", "", "links trained narrower than their capability: {bdf, name, width, width_max}"),
    ("pci.links_speed_below_max", "list", "", "links running below their maximum speed (normal for an idle GPU, which retrains under load): {bdf, name, speed_gts, speed_max_gts}"),
    ("pci.acs_lines", "number", "count", "ACSCtl lines shown (one per port that has ACS)"),
    ("pci.acs_redirect_count", "number", "count", "ports with ACS P2P redirect on (ReqRedir+ or CmpltRedir+): peer-to-peer traffic below them goes up to the root complex and the IOMMU"),
    ("pci.acs_redirect", "list", "", "bus addresses of those ports, where the listing shows them"),
    ("pci.acs_srcvalid_only", "number", "count", "ports with ACS source validation on but no P2P redirect"),
]

_DEVICE = re.compile(r"^\s*(?:Card:\s*)?((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+([0-9A-Za-z][^:]*?)"
                     r"(?:\s\[[0-9a-fA-F]{4}\])?:\s+(.(?:.*\S)?)\s*$")
_BARE = re.compile(r"^\s*((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s*$")
_ACS = re.compile(r"^\s*ACSCtl:\s*(.*)$")
_LNKCAP = re.compile(r"LnkCap:\s*(?:Port #\d+,\s*)?Speed ([\d.]+)GT/s(?:\s*\(\w+\))?,\s*Width x(\d+)")
_LNKSTA = re.compile(r"LnkSta:\s*Speed ([\d.]+)GT/s(?:\s*\(\w+\))?,\s*Width x(\d+)")
# "[ConnectX-6 Dx]", and the first of a family pair: "[ConnectX-3/ConnectX-3 Pro Virtual Function]" is ConnectX-3
_MODEL = re.compile(r"\[((?:ConnectX|BlueField)-?\s?\d+\w*(?:\s?(?:Dx|Lx|Ex|VPI))?)(?:\]|/[^\]]*\])", re.IGNORECASE)
# Mellanox part numbers -> model, for lists that print no bracket (older pci.ids)
_PARTS = {"MT27500": "ConnectX-3", "MT27520": "ConnectX-3 Pro", "MT27700": "ConnectX-4", "MT27710": "ConnectX-4 Lx", "MT27800": "ConnectX-5", "MT28800": "ConnectX-5 Ex",
          "MT28908": "ConnectX-6", "MT2892": "ConnectX-6 Dx", "MT28841": "ConnectX-6", "MT2894": "ConnectX-6 Lx",
          "MT2910": "ConnectX-7", "MT2914": "ConnectX-8", "MT42822": "BlueField-2", "MT43244": "BlueField-3"}
_REV_FF = re.compile(r"\(rev ff\)")  # the revision byte of a function that reads all ones
_NIC_CLASS = re.compile(r"ethernet|infiniband|network", re.IGNORECASE)
_IB_CLASS = re.compile(r"^(?:infiniband|network) controller$", re.IGNORECASE)


def _detect(text: str) -> float:
    head = text[:65536]
    if re.search(r"^[^\S\n]*ACSCtl:\s*SrcValid[+-]", head, re.MULTILINE):
        return 0.95
    lines = head.split("\n", 4000)[:4000]
    devices = sum(1 for ln in lines if _DEVICE.match(ln) and re.search(r"controller|bridge|Device|device", ln))
    if devices >= 1 and re.search(r"^[^\S\n]*(LnkCap|LnkSta|Capabilities|Kernel driver in use):", head, re.MULTILINE):
        return 0.95
    if devices >= 2 or (devices and re.search(r"(bridge|controller)(?: \[[0-9a-f]{4}\])?: ", head, re.IGNORECASE)):
        return 0.85
    if re.search(r"^[^\S\n]*LnkSta:\s*Speed\s", head, re.MULTILINE):
        return 0.85
    return 0.0


def _num(s: str) -> float | int:
    v = float(s)
    return int(v) if v == int(v) else v


@parser(
    "lspci",
    detect=_detect,
    summary="lspci [-vv]: PCI devices (GPUs, RDMA NICs, switches), PCIe link speed/width, ACS redirect",
    facts=FACTS,
    command="sudo lspci -vv | grep -E '^[0-9a-f]|LnkCap:|LnkSta:|ACSCtl:'",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "lspci output (one line per device, -vv blocks, or ACSCtl / LnkSta lines)")
    devices: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    redirect_ports: list[str] = []
    acs = redirect = srcvalid_only = 0
    dead: list[str] = []  # bus addresses whose config space reads all ones
    bdf = name = ""
    listed = False  # device lines, or bare addresses heading -vv blocks
    cap: tuple[float | int, int] | None = None
    for raw in text.split("\n"):
        line = raw.lstrip("> ") if raw.startswith(">") else raw
        m = _DEVICE.match(line)
        if m:
            bdf, name, cap, listed = m.group(1).lower(), m.group(3), None, True
            devices.append({"bdf": bdf, "class": m.group(2).strip(), "name": name})
            if _REV_FF.search(name) and bdf not in dead:
                dead.append(bdf)
            continue
        b = _BARE.match(line)
        if b:
            bdf, name, cap, listed = b.group(1).lower(), "", None, True
            continue
        if "Unknown header type 7f" in line and bdf and bdf not in dead:
            dead.append(bdf)
            continue
        m = _ACS.match(line)
        if m:
            flags = m.group(1)
            acs += 1
            if "ReqRedir+" in flags or "CmpltRedir+" in flags:
                redirect += 1
                if bdf and bdf not in redirect_ports:
                    redirect_ports.append(bdf)
            elif "SrcValid+" in flags:
                srcvalid_only += 1
            continue
        c = _LNKCAP.search(line)
        if c:
            cap = (_num(c.group(1)), int(c.group(2)))
            continue
        s = _LNKSTA.search(line)
        if s:
            link: dict[str, Any] = {"bdf": bdf, "name": name, "speed_gts": _num(s.group(1)), "width": int(s.group(2))}
            if cap:
                link["speed_max_gts"], link["width_max"] = cap
            links.append(link)
    if not devices and not acs and not links:
        raise ParseError("no device line (BB:DD.F class: name), ACSCtl or LnkSta line: this is not lspci output")
    models: list[str] = []
    ib_nics: list[dict[str, str]] = []
    gpus: set[str] = set()
    for d in devices:
        if _NIC_CLASS.search(d["class"]):
            mm = _MODEL.search(d["name"])
            model = mm.group(1) if mm else next((v for k, v in _PARTS.items() if k in d["name"]), None)
            if model and model not in models:
                models.append(model)
            if _IB_CLASS.search(d["class"]) and re.search(r"Mellanox|NVIDIA", d["name"]):
                ib_nics.append({"bdf": d["bdf"], "class": d["class"], "model": model or ""})
        if "NVIDIA" in d["name"] and ("3D controller" in d["class"] or "VGA" in d["class"]):
            gm = re.search(r"\[([^\]]+)\]", d["name"])
            gpus.add(gm.group(1) if gm else d["name"])
    facts: dict[str, Any] = {
        "pci.links": links,
        "pci.links_width_degraded": [{"bdf": ln["bdf"], "name": ln["name"], "width": ln["width"], "width_max": ln["width_max"]}
                                     for ln in links if "width_max" in ln and ln["width"] < ln["width_max"]],
        "pci.links_speed_below_max": [{"bdf": ln["bdf"], "name": ln["name"], "speed_gts": ln["speed_gts"],
                                       "speed_max_gts": ln["speed_max_gts"]} for ln in links
                                      if "speed_max_gts" in ln and ln["speed_gts"] < ln["speed_max_gts"]],
    }
    if listed:
        facts.update({"pci.devices": devices, "pci.nic_models": models, "pci.gpu_names": sorted(gpus), "pci.ib_nics": ib_nics})
        names = {d["bdf"]: d for d in devices}
        facts["pci.unreadable"] = [{"bdf": b, "name": names[b]["name"] if b in names else ""} for b in dead]
        facts["pci.gpus_unreadable"] = [b for b in dead if b in names and "NVIDIA" in names[b]["name"]
                                        and ("VGA" in names[b]["class"] or "3D controller" in names[b]["class"])]
    if acs:
        facts.update({"pci.acs_lines": acs, "pci.acs_redirect_count": redirect, "pci.acs_redirect": redirect_ports,
                      "pci.acs_srcvalid_only": srcvalid_only})
    return facts
