"""Host identity: virtualization, page size, kernel release and architecture (``key=value`` lines).

Input: the fixed script of the ``virt`` source (troubleshooter/sources/host.py), which prints what it can
and falls back when a tool is missing. Real sample (this project's KVM development machine,
tests/data/host/virt-this-sandbox-kvm.txt)::

    virt=kvm
    cpu_hypervisor_flag=yes
    page_size=4096
    kernel_release=6.18.44-fc-v669
    arch=x86_64

``virt`` is ``systemd-detect-virt --vm`` (``none`` on bare metal). ``--vm`` on purpose: container
detection trusts ``/.dockerenv``, which exists on some hosts that are not containers. Without
systemd-detect-virt the DMI vendor (``dmi_sys_vendor``/``dmi_product_name``, matched with systemd's own
table) names the hypervisor, then ``/sys/hypervisor/type``; the x86 CPUID ``hypervisor`` flag tells VM from
bare metal but not which hypervisor. ``host.virt`` is absent when nothing can tell.

What matters for training speed: in a VM, IOMMU invalidations trap to the host (reference case 1), and
hypervisor housekeeping can share cores with the job (case 2); a 64K page size on Arm (Grace) changes TLB
reach and what a guest kernel needs.

>>> parse("virt=none\\npage_size=65536\\nkernel_release=6.8.0-1013-nvidia-64k\\narch=aarch64\\n")["host.page_size"]
65536
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("host.virt", "string", "", "hypervisor as systemd-detect-virt names it (none, kvm, qemu, amazon, microsoft, vmware, xen, oracle, google...); absent if it cannot be told"),
    ("host.virtualized", "bool", "", "running in a virtual machine"),
    ("host.virt_method", "string", "", "how host.virt was established: systemd-detect-virt, dmi, sys-hypervisor, cpuid-flag"),
    ("host.hypervisor_flag", "bool", "", "the x86 CPUID 'hypervisor' flag is set (/proc/cpuinfo)"),
    ("host.dmi_vendor", "string", "", "DMI system vendor (/sys/class/dmi/id/sys_vendor)"),
    ("host.dmi_product", "string", "", "DMI product name (/sys/class/dmi/id/product_name)"),
    ("host.page_size", "number", "bytes", "base page size (getconf PAGESIZE): 4096, or 65536 on 64K-page Arm kernels"),
    ("host.kernel_release", "string", "", "kernel release (uname -r)"),
    ("host.arch", "string", "", "machine architecture (uname -m)"),
]

KEYS = ("virt", "dmi_sys_vendor", "dmi_product_name", "cpu_hypervisor_flag", "sys_hypervisor_type", "page_size",
        "page_size_smaps_kb", "kernel_release", "arch")
_LINE = re.compile(r"^(%s)=(.*)$" % "|".join(KEYS))
_VIRT_ID = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
# systemd's DMI table (src/basic/virt.c): a prefix of product_name / sys_vendor -> its id.
_DMI = (
    ("KVM", "kvm"), ("OpenStack", "kvm"), ("KubeVirt", "kvm"), ("Amazon EC2", "amazon"), ("QEMU", "qemu"),
    ("VMware", "vmware"), ("VMW", "vmware"), ("innotek GmbH", "oracle"), ("VirtualBox", "oracle"),
    ("Oracle Corporation", "oracle"), ("Xen", "xen"), ("Bochs", "bochs"), ("Parallels", "parallels"),
    ("BHYVE", "bhyve"), ("Hyper-V", "microsoft"), ("Apple Virtualization", "apple"),
    ("Google Compute Engine", "google"),
)


def _detect(text: str) -> float:
    keys = {m.group(1) for m in (_LINE.match(ln.strip()) for ln in text.splitlines()[:50]) if m}
    if len(keys) >= 3:
        return 0.95
    return 0.5 if len(keys) == 2 else 0.0


def _from_dmi(vendor: str, product: str) -> str | None:
    if vendor.startswith("Microsoft Corporation") and product.startswith("Virtual Machine"):
        return "microsoft"
    for text in (product, vendor):
        for prefix, ident in _DMI:
            if text.startswith(prefix):
                return ident
    return None


@parser(
    "virt",
    detect=_detect,
    summary="host identity script: virt=, page_size=, kernel_release=, arch= lines",
    facts=FACTS,
    command="echo virt=$(systemd-detect-virt --vm); echo page_size=$(getconf PAGESIZE); "
    "echo kernel_release=$(uname -r); echo arch=$(uname -m)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "the virt source's key=value lines")
    kv: dict[str, str] = {}
    for line in text.split("\n"):
        m = _LINE.match(line.strip())
        if m and m.group(2).strip():
            kv.setdefault(m.group(1), m.group(2).strip())
    if not kv:
        raise ParseError("no virt=/page_size=/kernel_release=/arch= lines")
    facts: dict[str, Any] = {}
    vendor, product = kv.get("dmi_sys_vendor", ""), kv.get("dmi_product_name", "")
    if vendor:
        facts["host.dmi_vendor"] = vendor
    if product:
        facts["host.dmi_product"] = product
    flag = kv.get("cpu_hypervisor_flag")
    if flag in ("yes", "no"):
        facts["host.hypervisor_flag"] = flag == "yes"
    virt = kv.get("virt", "")
    if _VIRT_ID.match(virt):
        facts["host.virt"], facts["host.virt_method"] = virt, "systemd-detect-virt"
    elif _from_dmi(vendor, product):
        facts["host.virt"], facts["host.virt_method"] = _from_dmi(vendor, product), "dmi"
    elif _VIRT_ID.match(kv.get("sys_hypervisor_type", "")):
        facts["host.virt"], facts["host.virt_method"] = kv["sys_hypervisor_type"], "sys-hypervisor"
    elif flag == "no":
        facts["host.virt"], facts["host.virt_method"] = "none", "cpuid-flag"
    if "host.virt" in facts:
        facts["host.virtualized"] = facts["host.virt"] != "none"
    elif flag == "yes":
        facts["host.virtualized"] = True
    ps = kv.get("page_size", "")
    if ps.isdigit() and int(ps) > 0:
        facts["host.page_size"] = int(ps)
    else:
        m = re.match(r"^(\d+)\s*kB$", kv.get("page_size_smaps_kb", ""))
        if m and int(m.group(1)) > 0:
            facts["host.page_size"] = int(m.group(1)) * 1024
    if kv.get("kernel_release"):
        facts["host.kernel_release"] = kv["kernel_release"]
    if kv.get("arch"):
        facts["host.arch"] = kv["arch"]
    return facts
