"""``lspci`` (pciutils): the PCI devices (GPUs, RDMA NICs, PCIe switches), and with ``-vvv`` their PCIe link and
Access Control Services (ACS) settings. People paste it whole, filtered (``lspci | grep Mellanox``), or as the
bare lines of ``lspci -vvv | grep ACSCtl``; each form is read.

Real samples (NVIDIA/nccl#304; deepseek-ai/3FS#283; NVIDIA/nccl#19)::

    ACSCtl:	SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-
    86:00.0 Ethernet controller: Mellanox Technologies MT2892 Family [ConnectX-6 Dx]
    03:00.0 PCI bridge: PLX Technology, Inc. PEX 8747 48-Lane, 5-Port PCI Express Gen 3 (8.0 GT/s) Switch (rev ca)

What matters for training speed: with ACS *P2P request/completion redirect* on (``ReqRedir+`` / ``CmpltRedir+``,
which the kernel turns on with the IOMMU), a PCIe switch sends peer-to-peer traffic between GPUs, or between a
GPU and its NIC (GPUDirect RDMA), up to the root complex and through the IOMMU: NCCL then hangs, fails with IB
completion errors, or runs at a fraction of P2P bandwidth. NCCL's troubleshooting guide asks for exactly this
listing. ``SrcValid+`` alone (source validation, no redirect) is counted apart: it does not reroute traffic.
The RDMA NIC model (``[ConnectX-6]``) gives the InfiniBand speed its links should train at
(:mod:`troubleshooter.model.hca`). A link's ``LnkSta`` below its ``LnkCap`` is recorded but not judged: GPUs drop
their PCIe speed when idle (``2.5GT/s (downgraded)`` at idle is power saving, not a fault).

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
    ("pci.nic_models", "list", "", "sorted distinct RDMA NIC models named by lspci (ConnectX-6, ConnectX-7, BlueField-3 ...)"),
    ("pci.gpu_names", "list", "", "sorted distinct NVIDIA GPU names in the listing"),
    ("pci.acs_lines", "number", "count", "ACSCtl lines shown (one per port that has ACS)"),
    ("pci.acs_redirect_count", "number", "count", "ports with ACS P2P redirect on (ReqRedir+ or CmpltRedir+): peer-to-peer traffic below them goes up to the root complex and the IOMMU"),
    ("pci.acs_redirect_ports", "list", "", "bus addresses of those ports, where the listing shows them"),
    ("pci.acs_srcvalid_only", "number", "count", "ports with ACS source validation on but no P2P redirect"),
    ("pci.links", "list", "", "PCIe links shown: {bdf (when shown), cap_speed, cap_width, speed, width, downgraded}"),
]

_DEVICE = re.compile(r"^(?:[0-9a-fA-F]{4}:)?([0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+([^:]+?)(?:\s\[[0-9a-fA-F]{4}\])?:\s+(.+?)\s*$")
_ACS = re.compile(r"^\s*ACSCtl:\s*(.*)$")
_LNKCAP = re.compile(r"^\s*LnkCap:.*?Speed\s+([\d.]+GT/s).*?Width\s+x(\d+)")
_LNKSTA = re.compile(r"^\s*LnkSta:\s*Speed\s+([\d.]+GT/s)(\s*\(downgraded\))?.*?Width\s+x(\d+)(\s*\(downgraded\))?")
_MODEL = re.compile(r"\[(ConnectX-\d+(?: (?:Dx|Lx|Ex|VPI))?|BlueField(?:-\d)?)[^\]]*\]|\b(BlueField-\d)\b|\b(ConnectX-\d+(?: (?:Dx|Lx|Ex))?)\b")
_RDMA_CLASS = ("Infiniband controller", "Ethernet controller", "Network controller")


def _detect(text: str) -> float:
    head = text[:65536]
    if re.search(r"^\s*ACSCtl:\s*SrcValid[+-]", head, re.MULTILINE):
        return 0.95
    devices = len(re.findall(r"^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7] [A-Za-z][^:\n]*: \S", head, re.MULTILINE))
    if devices >= 1 and re.search(r"^\s*(LnkCap|LnkSta|Capabilities|Kernel driver in use):", head, re.MULTILINE):
        return 0.95
    if devices >= 2 or (devices and re.search(r"(bridge|controller)(?: \[[0-9a-f]{4}\])?: ", head)):
        return 0.85
    if re.search(r"^\s*LnkSta:\s*Speed\s", head, re.MULTILINE):
        return 0.7
    return 0.0


@parser(
    "lspci",
    detect=_detect,
    summary="lspci [-vvv]: PCI devices (GPUs, RDMA NICs, switches), PCIe links and ACS redirect",
    facts=FACTS,
    command="sudo lspci -vvv",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "lspci output (one line per device, or -vvv blocks, or ACSCtl lines)")
    devices: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    redirect_ports: list[str] = []
    acs = redirect = srcvalid_only = 0
    current: dict[str, Any] | None = None
    cap: tuple[str, int] | None = None
    for raw in text.split("\n"):
        line = raw.lstrip("> ") if raw.startswith(">") else raw
        m = _DEVICE.match(line)
        if m and not line[:1].isspace():
            current = {"bdf": m.group(1), "class": m.group(2).strip(), "name": m.group(3)}
            devices.append(current)
            cap = None
            continue
        m = _ACS.match(line)
        if m:
            flags = m.group(1)
            acs += 1
            if "ReqRedir+" in flags or "CmpltRedir+" in flags:
                redirect += 1
                if current is not None:
                    redirect_ports.append(current["bdf"])
            elif "SrcValid+" in flags:
                srcvalid_only += 1
            continue
        m = _LNKCAP.match(line)
        if m:
            cap = (m.group(1), int(m.group(2)))
            continue
        m = _LNKSTA.match(line)
        if m:
            link: dict[str, Any] = {"speed": m.group(1), "width": int(m.group(3)),
                                    "downgraded": bool(m.group(2) or m.group(4))}
            if cap:
                link["cap_speed"], link["cap_width"] = cap
            if current is not None:
                link["bdf"] = current["bdf"]
            links.append(link)
    if not devices and not acs and not links:
        raise ParseError("no device line (BB:DD.F class: name), ACSCtl or LnkSta line: this is not lspci output")
    models, gpus = set(), set()
    for d in devices:
        if d["class"] in _RDMA_CLASS or d["class"].startswith(_RDMA_CLASS):
            mm = _MODEL.search(d["name"])
            if mm:
                models.add(next(g for g in mm.groups() if g))
        if "NVIDIA" in d["name"] and ("3D controller" in d["class"] or "VGA" in d["class"]):
            gm = re.search(r"\[([^\]]+)\]", d["name"])
            gpus.add(gm.group(1) if gm else d["name"])
    facts: dict[str, Any] = {"pci.devices": devices, "pci.links": links}
    if devices:
        facts["pci.nic_models"] = sorted(models)
        facts["pci.gpu_names"] = sorted(gpus)
    if acs:
        facts.update({"pci.acs_lines": acs, "pci.acs_redirect_count": redirect,
                      "pci.acs_redirect_ports": redirect_ports, "pci.acs_srcvalid_only": srcvalid_only})
    return facts
