"""NCCL topology XML: the file ``NCCL_TOPO_FILE`` names, or what ``NCCL_TOPO_DUMP_FILE`` wrote.

Real sample (AWS p5.48xlarge, aws-ofi-nccl's ``p5.48xl-topo.xml``, trimmed)::

    <system version="1">
      <cpu numaid="0" affinity="00000000,00000000,0000ffff,ffffffff" arch="x86_64" vendor="AuthenticAMD" familyid="25" modelid="17">
        <pci busid="0000:00:00.0" class="0x060400" link_speed="16.0 GT/s PCIe" link_width="16">
          <pci busid="0000:4f:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
            <gpu dev="0" sm="90" rank="0" gdr="1"/>
          </pci>
          <pci busid="0000:50:00.0" class="0x020000" link_speed="16.0 GT/s PCIe" link_width="8">
            <nic>
              <net name="rdmap79s0" dev="0" speed="100000" port="1" latency="0.0" guid="0" maxconn="1024" gdr="1"/>
            </nic>
          </pci>

What it tells: which GPUs and NICs share a PCIe switch and a NUMA node, as NCCL will believe. Cloud VM
images ship such a file because the VM's virtual PCIe tree hides the real one; without it (variable or
mount missing in the container, case 4) NCCL autodetects a flat topology and AllGather/ReduceScatter run
2-4x slower, with no error.

Vendor files may describe devices by PCI class only (Azure's ND v4/v5 files: ``class="0x030200"`` GPU and
``0x020700`` InfiniBand NIC, no ``<gpu>``/``<nic>`` children): such devices are counted, with ``None`` for
what the file does not say. ``speed`` is in Mb/s in the file; ``nic_speeds_gbps`` is in Gb/s.

Parsed with defusedxml: a document declaring entities (billion laughs) or external references is refused
with :class:`ParseError`. Malformed or truncated XML is a ParseError naming the line: NCCL itself refuses such
a file (``XML Parse : expected >`` then ``internal error``), so "the facts of the part that parsed" would
describe a topology NCCL never uses. Shell prompt lines before the first ``<`` are skipped.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from troubleshooter.parsers.base import ParseError, parser, require_text

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

FACTS = [
    ("nccl_topo.version", "number", "", "<system version=...>"),
    ("nccl_topo.cpus", "list", "", "CPU (NUMA) nodes: {numaid, affinity, arch, vendor, familyid, model}"),
    ("nccl_topo.numa_ids", "list", "", "NUMA ids of the CPU nodes, sorted (-1: unknown, as in VMs)"),
    ("nccl_topo.gpus", "list", "", "GPUs: {busid, dev, sm, rank, gdr, numaid}; dev/sm/rank None when the file gives only the PCI class"),
    ("nccl_topo.gpu_count", "number", "count", "number of GPUs the file describes"),
    ("nccl_topo.nets", "list", "", "network devices: {name, busid, dev, speed_mbps, port, gdr, numaid}; None when not in the file"),
    ("nccl_topo.net_count", "number", "count", "number of network devices the file describes"),
    ("nccl_topo.nic_speeds_gbps", "list", "Gb/s", "distinct NIC speeds, sorted; absent when the file gives none"),
    ("nccl_topo.pci_switches", "number", "count", "PCI bridges/switches (class 0x0604xx) in the file"),
    ("nccl_topo.nvlinks", "number", "count", "<nvlink> elements (a dump from an NVLink system has them)"),
]

_GPU_CLASSES = ("0x0300", "0x0302")  # VGA / 3D controller
_NET_CLASSES = ("0x0200", "0x0207")  # Ethernet / InfiniBand


def _detect(text: str) -> float:
    if text.lstrip().startswith("#@ "):
        return 0.0  # a probe's output that embeds a topology (topo-file-probe)
    head = text[:65536]
    if re.search(r"<system\s+version=", head):
        return 0.95 if re.search(r"<(cpu|pci)\b", head) else 0.7
    if re.search(r"<cpu\s[^>]*numaid=", head) and "<pci" in head:
        return 0.6
    return 0.0


def _int(v: str | None) -> int | None:
    if v is None:
        return None
    v = v.strip()
    try:
        return int(v, 16) if v.lower().startswith("0x") else int(v)
    except ValueError:
        return None


def load_xml(text: str) -> tuple[ET.Element, int]:
    """The root element and the number of lines skipped before it. Raises :class:`ParseError`."""
    text = require_text(text, "NCCL topology XML (<system version=...>)")
    lines = text.split("\n")
    skip = 0
    while skip < len(lines) and not lines[skip].lstrip().startswith("<"):
        skip += 1
    if skip == len(lines):
        raise ParseError("no XML element found (expected NCCL topology XML starting with <system>)")
    body = "\n".join(lines[skip:])
    import xml.etree.ElementTree as ET  # here, with defusedxml: ~3 ms of every start-up otherwise

    from defusedxml import DefusedXmlException, DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden
    from defusedxml import ElementTree as SafeET

    try:
        root = SafeET.fromstring(body)
    except EntitiesForbidden as exc:
        if exc.sysid or exc.pubid:
            raise ParseError(f"refused: the document declares an external entity ({exc.name!r} -> {exc.sysid or exc.pubid})") from None
        raise ParseError(f"refused: the document declares entity {exc.name!r} (entity expansion, as in an XML bomb, is not allowed)") from None
    except ExternalReferenceForbidden as exc:
        raise ParseError(f"refused: the document references an external resource ({exc.sysid or exc.pubid})") from None
    except DTDForbidden:
        raise ParseError("refused: the document has a DTD") from None
    except DefusedXmlException as exc:
        raise ParseError(f"refused: unsafe XML ({exc})") from None
    except ET.ParseError as exc:
        line, col = getattr(exc, "position", (0, 0))
        second = [i + 1 + skip for i, ln in enumerate(lines[skip:]) if ln.lstrip().startswith("<system") and i > 0]
        hint = f"; a second <system> document starts at line {second[0]}" if second else ""
        msg = str(exc).split(":")[0]
        kind = "truncated" if "no element found" in msg or "unclosed token" in msg else "not well-formed"
        raise ParseError(f"{kind} topology XML ({msg}, column {col}){hint}; NCCL refuses such a file", line=line + skip) from None
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"unreadable XML: {exc}") from None
    return root, skip


def topo_facts(root: ET.Element) -> dict[str, Any]:
    if root.tag != "system":
        raise ParseError(f"not an NCCL topology: the root element is <{root.tag}>, not <system>")
    cpus: list[dict[str, Any]] = []
    gpus: list[dict[str, Any]] = []
    nets: list[dict[str, Any]] = []
    switches = 0
    nvlinks = 0

    def walk(el: ET.Element, numaid: int | None, busid: str | None) -> None:
        nonlocal switches, nvlinks
        for child in el:
            tag = child.tag
            a = child.attrib
            if tag == "cpu":
                nid = _int(a.get("numaid"))
                cpus.append({"numaid": nid, "affinity": a.get("affinity"), "arch": a.get("arch"), "vendor": a.get("vendor"),
                             "familyid": _int(a.get("familyid")), "model": _int(a.get("modelid"))})
                walk(child, nid, None)
            elif tag == "pci":
                cls = (a.get("class") or "").lower()
                bus = a.get("busid")
                if cls.startswith("0x0604"):
                    switches += 1
                has_gpu = child.find(".//gpu") is not None
                has_net = child.find(".//net") is not None
                if cls.startswith(_GPU_CLASSES) and not has_gpu:
                    gpus.append({"busid": bus, "dev": None, "sm": None, "rank": None, "gdr": None, "numaid": numaid})
                if cls.startswith(_NET_CLASSES) and not has_net:
                    nets.append({"name": None, "busid": bus, "dev": None, "speed_mbps": None, "port": None, "gdr": None, "numaid": numaid})
                walk(child, numaid, bus)
            elif tag == "gpu":
                gpus.append({"busid": busid, "dev": _int(a.get("dev")), "sm": _int(a.get("sm")), "rank": _int(a.get("rank")),
                             "gdr": _int(a.get("gdr")), "numaid": numaid})
                nvlinks += sum(1 for n in child.iter("nvlink"))
            elif tag == "net":
                nets.append({"name": a.get("name"), "busid": busid, "dev": _int(a.get("dev")), "speed_mbps": _int(a.get("speed")),
                             "port": _int(a.get("port")), "gdr": _int(a.get("gdr")), "numaid": numaid})
            else:
                walk(child, numaid, busid)  # <nic>, and anything newer we don't know

    walk(root, None, None)
    if not cpus and not gpus and not nets:
        raise ParseError("the <system> element describes no CPU, GPU or network device")
    f: dict[str, Any] = {}
    version = _int(root.attrib.get("version"))
    if version is not None:
        f["nccl_topo.version"] = version
    f["nccl_topo.cpus"] = cpus
    f["nccl_topo.numa_ids"] = sorted({c["numaid"] for c in cpus if c["numaid"] is not None})
    f["nccl_topo.gpus"] = gpus
    f["nccl_topo.gpu_count"] = len(gpus)
    f["nccl_topo.nets"] = nets
    f["nccl_topo.net_count"] = len(nets)
    speeds = sorted({n["speed_mbps"] for n in nets if n["speed_mbps"]})
    if speeds:
        f["nccl_topo.nic_speeds_gbps"] = [s // 1000 if s % 1000 == 0 else s / 1000 for s in speeds]
    f["nccl_topo.pci_switches"] = switches
    f["nccl_topo.nvlinks"] = nvlinks
    return f


@parser(
    "nccl-topo",
    detect=_detect,
    summary="NCCL topology XML (NCCL_TOPO_FILE, NCCL_TOPO_DUMP_FILE)",
    facts=FACTS,
    command='cat "$NCCL_TOPO_FILE"',
)
def parse(text: str) -> dict[str, object]:
    root, _ = load_xml(text)
    return topo_facts(root)
