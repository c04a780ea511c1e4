"""The kernel log (``dmesg``, ``dmesg --ctime``, ``journalctl -k``), also as pasted in issues: with or
without timestamps, mail-quoted (``> ``), diff-quoted (``+> ``), with indented continuation lines.

Real sample (leptonai/gpud docs, ``dmesg --ctime`` quoted in a diff, from ../shared/corpus/dmesg-cmdline)::

    +> [Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter
    +> [Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005

and a Grace SMMUv3 whose CMDQV extension failed (LKML patch mail, tests/data/dmesg)::

    arm-smmu-v3: found companion CMDQV device: NVDA200C:00
    acpi NVDA200C:00: tegra241_cmdqv: Falling back to standard SMMU CMDQ

What it means: Xid lines are NVIDIA driver error reports (13 = SM exception, 79 = fallen off the bus, 109 =
context-switch timeout, ...); IOMMU page faults (AMD-Vi ``IO_PAGE_FAULT``, Intel ``DMAR`` faults, SMMU
events) mean DMA went through translation and failed, often P2P without ``iommu=pt``. On Grace, the SMMUv3
driver prints ``found companion CMDQV device`` when the tegra241-cmdqv extension is present, and the CMDQV
driver prints ``tegra241_cmdqv: Falling back to standard SMMU CMDQ`` when it cannot be used; a successful probe
prints nothing more upstream (drivers/iommu/arm/arm-smmu-v3/tegra241-cmdqv.c), so ``dmesg.cmdqv_probed`` is
true when the companion was found and no fallback or ``disable_cmdqv`` line follows, false when one does, and
absent when the log says nothing about CMDQV. On NVSwitch systems the switch driver reports its own errors as SXid
lines (``nvidia-nvswitch1: SXid (PCI:0000:aa:00.0): 24007, Fatal, Link 30 ...``, then ``Severity 1 Engine instance
30`` and ``Data {...}`` lines of the same code): "Fatal" or severity 1 means the port stopped and NVLink traffic
through it stalls until the GPUs and switches are reset; the code's thousands say which unit (24xxx source track,
22xxx the MINION that trains links ...). ``dmesg.iommu_enabled`` is never set false just because the log
lacks the boot lines (the ring buffer wraps; excerpts are partial), only on an explicit "disabled" line;
counts and ``fallen_off_bus`` describe what the text shows (0 / false when it shows none).

The NVIDIA driver comes in two kernel-module flavors, and refuses a GPU the loaded one cannot drive, naming the GPU
on one line and the reason on the next (NVIDIA/open-gpu-kernel-modules#696 and #322, awslabs/amazon-eks-ami#2769)::

    NVRM: The NVIDIA GPU 0000:57:00.0 (PCI ID: 10de:2c3a)
    NVRM: installed in this system requires use of the NVIDIA open kernel modules.
    NVRM: GPU 0000:57:00.0: RmInitAdapter failed! (0x22:0x56:897)

(the proprietary module on a Blackwell GPU), and the open module on a GPU without a GSP (Maxwell, Pascal, Volta)::

    NVRM: The NVIDIA GPU 0000:02:00.0 (PCI ID: 10de:1b82)
    NVRM: installed in this system is not supported by open
    NVRM: nvidia.ko because it does not include the required GPU
    NVRM: System Processor (GSP).

``dmesg.kmod_flavor_refused`` lists them; the load banner says which flavor is loaded ("NVIDIA UNIX Open Kernel
Module" for the open one).

>>> f = parse("[ 5.1] NVRM: Xid (PCI:0000:cb:00): 79, pid=1, name=x, GPU has fallen off the bus.\\n")
>>> f["dmesg.xid_codes"], f["dmesg.fallen_off_bus"]
([79], True)
"""

from __future__ import annotations

import re

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("dmesg.lines", "number", "count", "kernel log lines read (continuations joined)"),
    ("dmesg.xid_events", "list", "", "NVIDIA Xid reports, oldest first (the last 200): {code, bus, text}"),
    ("dmesg.xid_count", "number", "count", "Xid reports in the log"),
    ("dmesg.xid_codes", "list", "", "distinct Xid codes, sorted; with the codes a follow-on line names as its cause "
     "('45, ... caused by previous Xid 149'), whose own line may be out of the paste"),
    ("dmesg.xid_nonfatal_codes", "list", "", "NVLink Xid codes (144-150) whose every line the driver marked 'Nonfatal' "
     "('145, RLW_REMAP Nonfatal XC0 i0 Link 00 ...'; the link recovered) and that no follow-on line names as its cause"),
    ("dmesg.fallen_off_bus", "bool", "", "a GPU 'has fallen off the bus' (Xid 79 or the NVRM message)"),
    ("dmesg.fallen_off_bus_devices", "list", "", "PCI buses (0000:06:00, as in Xid lines) of GPUs reported fallen off the bus"),
    ("dmesg.iommu_faults", "number", "count", "IOMMU fault reports: AMD-Vi IO_PAGE_FAULT, Intel DMAR faults, SMMU 'event ... received'"),
    ("dmesg.iommu_fault_devices", "list", "", "PCI addresses named in IOMMU fault lines"),
    ("dmesg.iommu_enabled", "bool", "", "the log shows an IOMMU at work (DMAR/AMD-Vi/SMMUv3 enabled lines, or a fault); false only on an explicit 'disabled' line"),
    ("dmesg.iommu_default_domain", "string", "", "'Translated' or 'Passthrough' (iommu: Default domain type:)"),
    ("dmesg.smmu_lines", "number", "count", "lines from the Arm SMMU drivers (arm-smmu, arm-smmu-v3)"),
    ("dmesg.cmdqv_lines", "number", "count", "lines about CMDQV (tegra241_cmdqv, NVDA200C companion)"),
    ("dmesg.cmdqv_companion", "string", "", "the CMDQV device the SMMUv3 driver found (e.g. NVDA200C:00)"),
    ("dmesg.cmdqv_fallback", "bool", "", "CMDQV fell back to the standard SMMU command queue (or was disabled)"),
    ("dmesg.cmdqv_probed", "bool", "", "CMDQV companion found and not fallen back; false on fallback/disable; absent when the log has no CMDQV line"),
    ("dmesg.gsp_errors", "number", "count", "NVRM lines reporting GSP/RPC failures or timeouts"),
    ("dmesg.nvrm_assertions", "number", "count", "NVRM 'Assertion failed' lines"),
    ("dmesg.nvrm_lines", "number", "count", "lines mentioning NVRM (NVIDIA kernel driver)"),
    ("dmesg.fabric_out_of_sync", "bool", "", "the driver says its cached NVLink fabric state is out of sync "
     "(NV_ERR_FABRIC_STATE_OUT_OF_SYNC: the fabric manager restarted without a GPU reset); absent when the log does not say"),
    ("dmesg.fabric_manager_absent", "bool", "", "the driver says no fabric manager is present (NV_ERR_FABRIC_MANAGER_NOT_PRESENT); "
     "absent when the log does not say"),
    ("dmesg.nvidia_driver_version", "string", "", "NVIDIA kernel module version from its load banner"),
    ("dmesg.nvidia_module_flavor", "string", "", "the loaded NVIDIA kernel module's flavor from its load banner: 'open' "
     "(NVIDIA UNIX Open Kernel Module) or 'proprietary'"),
    ("dmesg.kmod_flavor_refused", "list", "", "GPUs the loaded NVIDIA kernel module refused because they need the other "
     "flavor: {gpu (PCI address), pci_id (10de:xxxx), needs: 'open' (Blackwell and later: 'requires use of the NVIDIA "
     "open kernel modules') or 'proprietary' (no GSP: 'not supported by open nvidia.ko')}; absent when the log does not say"),
    ("dmesg.kmod_flavor_needed", "list", "", "the flavors those refused GPUs need ('open', 'proprietary'), sorted"),
    ("dmesg.gpu_bar_invalid", "list", "", "GPUs whose PCI memory windows (BARs) the firmware left unassigned or too small: "
     "'NVRM: This PCI I/O region assigned to your NVIDIA device is invalid: BAR1 is 0M @ 0x0 (PCI:...)' ('BAR1 of "
     "0000:01:00.0'), at most 64"),
    ("dmesg.gsp_firmware_missing", "list", "", "the GSP firmware the driver could not load: 'RmFetchGspRmImages: No "
     "firmware image found', the kernel's 'Direct firmware load for nvidia/VERSION/gsp_*.bin failed with error -2' "
     "(the file names, or 'gsp' where the message names none)"),
    ("dmesg.gpu_legacy_unsupported", "list", "", "GPUs the loaded driver ignores because only a legacy branch supports "
     "them ('NVRM: The NVIDIA Tesla K80 GPU installed in this system is supported through the NVIDIA 470.xx Legacy "
     "drivers ... The 510.47.03 NVIDIA driver will ignore this GPU'), as 'NAME (BRANCH legacy)' or the name alone when "
     "the message is cut"),
    ("dmesg.api_mismatch", "string", "", "the kernel module and a user-space client of another driver release ('NVRM: API "
     "mismatch: the client has the version 367.44, but this kernel module has the version 367.35'), as 'client X, "
     "kernel module Y'"),
    ("dmesg.rm_init_failed", "list", "", "GPUs the driver could not initialise ('NVRM: GPU 0000:01:00.0: RmInitAdapter "
     "failed! (0x22:0x56:884)'): the driver is loaded and the GPU is not usable; the lines around it say why"),
    ("dmesg.aer_fatal", "number", "count", "PCIe AER reports of an Uncorrected (Fatal) error (a link or device the kernel must reset)"),
    ("dmesg.aer_nonfatal", "number", "count", "PCIe AER reports of an Uncorrected (Non-Fatal) error"),
    ("dmesg.aer_corrected", "number", "count", "PCIe AER reports of Corrected errors (link retries: a marginal link when they flood)"),
    ("dmesg.aer_devices", "list", "", "PCI addresses that AER lines are about (root ports and endpoints), in order"),
    ("dmesg.aer_gpu_devices", "list", "", "NVIDIA GPUs (lines of the nvidia driver) among the devices AER lines are about"),
    ("dmesg.aer_recovery_failed", "bool", "", "the kernel could not recover from a PCIe error ('AER: device recovery failed', a driver that 'can't recover', or the GPU's 'device has no AER-aware driver')"),
    ("dmesg.suppressed_callbacks", "number", "count", "messages the kernel rate-limited away (sum of 'N callbacks suppressed')"),
    ("dmesg.kernel_cmdline", "string", "", "the boot command line from 'Kernel command line:' (or the early 'Command line:')"),
    ("dmesg.kernel_version", "string", "", "release from the 'Linux version' banner"),
    ("dmesg.hca_fw_outdated", "list", "", "RDMA NIC driver lines saying the adapter's firmware is older than the driver needs "
     "(mlx4 'please upgrade to later FW version', 'Installed FW has unsupported command interface revision', mlx5 "
     "'Driver cmdif rev(N) differs from firmware's(M)')"),
    ("dmesg.hca_cmd_failures", "list", "", "commands the mlx5 adapter's firmware refused, as 'ALLOC_UAR: limits "
     "exceeded' (mlx5_cmd_check / mlx5_cmd_out_err lines): ALLOC_UAR over its limit is the adapter's BAR out of "
     "doorbell pages, CREATE_MKEY over its limit is its memory-key table full"),
    ("dmesg.sxid_events", "list", "", "NVSwitch SXid reports, oldest first (the last 200): {code, switch, bus, fatal "
     "(true/false, null when the paste shows only the Data line), link, unit, text}"),
    ("dmesg.sxid_codes", "list", "", "distinct NVSwitch SXid codes in the log"),
    ("dmesg.sxid_fatal_codes", "list", "", "SXid codes the driver reported as fatal ('Fatal,' or 'Severity 1'): the "
     "NVSwitch port or link stopped and the GPUs' NVLink traffic through it stalls until a reset"),
]

MAX_EVENTS = 200

#: The NVSwitch driver's error ranges (src/common/nvswitch/interface/ctrl_dev_nvswitch.h, NVSWITCH_ERR_HW_*):
#: SXid // 1000 -> the unit that reported it.
SXID_UNITS = {
    10: "host interface", 11: "NPORT ingress", 12: "NPORT egress", 13: "NPORT fstate", 14: "NPORT tstate",
    15: "NPORT route", 16: "NPORT", 17: "NVLink controller", 18: "NVLink IP top", 19: "NVLink transport layer",
    20: "NVLink data/physical layer", 21: "AFS", 22: "MINION (link training)", 23: "crossbar (NXBAR)",
    24: "NPORT source track", 25: "NVLink IP link", 26: "SOE (switch management engine)", 27: "cables (CCI)",
    28: "OSFP thermal", 29: "multicast tstate", 30: "reduction tstate",
}

_QUOTE = re.compile(r"^[+\-]?(?:\s*>)+ ?")
# seconds since boot: at most 9 digits (31 years); UCX and other logs print the epoch there (10 digits)
_TS_MONO = re.compile(r"^\[\s*\d{1,9}\.\d+\]\s?")
_TS_CTIME = re.compile(r"^\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\]\s?")
# dmesg -H / --reltime: the first line "[Jun20 10:27] ..." (or "[Jun 20 10:27]"), then deltas "[  +0.000844] ..."
_TS_REL = re.compile(r"^\[\s*\+\d+\.\d+\]\s?|^\[[A-Z][a-z]{2} ?\d{1,2} \d\d:\d\d(?::\d\d)?\]\s?")
_TS_ISO = re.compile(r"^\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d[^\s\]]*\]?:?\s")
_JOURNAL = re.compile(r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+) \S+ kernel: ")
# "kern  :err   : " (dmesg -x); Talos prefixes its node: "192.168.11.119: kern:     err: "
_FACILITY = re.compile(r"^(?:[\w.\-]+:\s+)?(?:kern|user|daemon|syslog)\s*:\s*\w+\s*:\s")
# an Xid a person quoted without its bus, as NVIDIA's catalogue names them ("Xid 78: Guest driver is incompatible
# with host driver"): still the driver's report, its bus unknown
_XID_QUOTED = re.compile(r"^(?:NVRM:\s*)?Xid (\d{1,3}):\s+([A-Z].*)$")
# (a bus a poster anonymised, 'PCI:0000:XX:00', is still an Xid: its digits as X)
_XID = re.compile(r"\bXid \((?:PCI:)?([0-9a-fA-FxX]{4}:[0-9a-fA-FxX]{2}:[0-9a-fA-FxX]{2}(?:\.[0-7xX])?)\):\s*(\d+)\b,?\s*(.*)$")
# nvidia-nvswitch1: SXid (PCI:0000:aa:00.0): 24007, Severity 1 Engine instance 12 ... | 22013, Non-fatal, Link 60 ...
# Blackwell NVLink Xids (144-150) name their unit and severity after the code (and pid/name, when a process had it):
# "145, RLW_REMAP Nonfatal XC0 i0 Link 00 (...)", "149, pid=876767, name=ray::WorkerDict, NETIR_LINK_EVT Fatal XC0 ..."
_XID_SEVERITY = re.compile(r"^(?:pid=[^,]*,\s*name=[^,]*,\s*)?[A-Z][A-Z0-9_]*\s+(Fatal|Nonfatal) XC\d")
_CAUSED_BY = re.compile(r"caused by previous Xid (\d+)")
_SXID = re.compile(r"\bnvidia-nvswitch(\d+):? SXid \(PCI:([0-9a-fA-F:.]+)\):\s*(\d+),\s*(.*)$")
_SXID_KIND = re.compile(r"(?:(Fatal|Non-fatal),\s*(?:Link (\d+))?|Severity (\d+)\b)", re.IGNORECASE)
_OFF_BUS = re.compile(r"fallen off the bus", re.IGNORECASE)
_BDF = re.compile(r"\b([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\b")
# older Intel VT-d fault lines name the device without its domain: "DMAR: [DMA Write] Request device [02:00.0] fault
# addr cd139000 [fault reason 05] PTE Write access is not set" (tensorflow/tensorflow#32654)
_DMAR_DEV = re.compile(r"Request device \[([0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\]")
_IOMMU_FAULT = re.compile(
    r"IO_PAGE_FAULT|DMAR: DRHD: handling fault|DMAR: \[(?:DMA (?:Read|Write)|INTR-REMAP)|"
    r"(?<!\S)(?>\S*?arm-smmu)\S*(?: \S+)?: event 0x[0-9a-f]+ received|Unhandled context fault")
_IOMMU_ON = re.compile(
    r"DMAR: IOMMU enabled|DMAR: Intel\(R\) Virtualization Technology for Directed I/O|AMD-Vi: Found IOMMU|"
    r"AMD-Vi: Interrupt remapping enabled|AMD-Vi: (?:(?!AMD-Vi: ).)*enabled|"
    r"arm-smmu-v3(?:(?!arm-smmu-v3).)*: ias \d+-bit, oas \d+-bit")
# (each run, or each stretch between two of its own names, is scanned once: .* and \S* from every repeat of the name
# in one line were quadratic in them; whether a line matches is the same)
# ("iommu: Default domain type: Translated" is printed even where no IOMMU exists: not proof of one.)
_IOMMU_OFF = re.compile(r"DMAR: IOMMU disabled|AMD-Vi: AMD IOMMUv2 functionality not available|iommu=off")
_DEFAULT_DOMAIN = re.compile(r"iommu: Default domain type: (\w+)")
_SMMU = re.compile(r"arm-smmu")
_CMDQV = re.compile(r"cmdqv|NVDA200C", re.IGNORECASE)
_CMDQV_FOUND = re.compile(r"found companion CMDQV device[:,]\s*(\S+)")
_CMDQV_FALLBACK = re.compile(r"Falling back to standard SMMU CMDQ|Detected disable_cmdqv=true")
_GSP_ERR = re.compile(r"(?=.*(?:gsp|rpc))(?=.*(?:fail|timeout|timed out|error))", re.IGNORECASE)
_ASSERT = re.compile(r"Assertion failed", re.IGNORECASE)
_SUPPRESSED = re.compile(r"(?<!\d)(\d+) callbacks suppressed")
_CMDLINE = re.compile(r"\bKernel command line:\s*(.*)$")
_EARLY_CMDLINE = re.compile(r"^Command line:\s*(.*)$")
_NV_VERSION = re.compile(r"NVRM: loading NVIDIA .*?Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)")
# drivers/nvidia's probe: the GPU on one line, why the loaded flavor cannot drive it on the next ones
_FLAVOR_GPU = re.compile(r"NVRM: The NVIDIA GPU ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s*\(PCI ID: "
                         r"([0-9a-fA-F]{4}:[0-9a-fA-F]{4})\)")
# nv-pci.c's BAR check, the BAR on the next line: "NVRM: BAR1 is 0M @ 0x0 (PCI:0000:56:00.0)" (older: "PCI:0002:00.0")
_BAR_INVALID = re.compile(r"NVRM: BAR(\d) is (\d+)M @ 0x[0-9a-fA-F]+ \(PCI:([0-9a-fA-F:.]+)\)")
_GSP_FW = re.compile(r"RmFetchGspRmImages: No firmware image found|Direct firmware load for (nvidia/[\w.]+/gsp\w*\.bin) "
                     r"failed with error -2")
# the driver's legacy check (nvLegacy.h's table of device IDs): the first line names the GPU, the next the branch
_LEGACY = re.compile(r"NVRM: The NVIDIA (.+?) GPU installed in this system is\s*$")
_LEGACY_BRANCH = re.compile(r"NVRM:\s+supported through the NVIDIA ([\w.]+) Legacy drivers")
_RM_INIT = re.compile(r"NVRM: GPU ([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): RmInitAdapter failed!")
_NEEDS_OPEN = re.compile(r"requires use of the NVIDIA open kernel modules", re.IGNORECASE)
# (the open modules of R515-R525 refused every GPU but data-center ones unless NVreg_OpenRmEnableUnsupportedGpus=1)
_NEEDS_PROPRIETARY = re.compile(r"installed in this system is not supported by open\b|Open nvidia\.ko is only ready for "
                                r"use on Data Center GPUs")
# the kernel module and the user-space driver of another release (kernel-open/nvidia/nv.c): 'NVRM: API mismatch: the
# client has the version 367.44, but' / 'NVRM: this kernel module has the version 367.35.'
_API_CLIENT = re.compile(r"NVRM: API mismatch: the client has the version ([\w.-]+)")
_API_KMOD = re.compile(r"this kernel module has the version ([\w.-]+?)\.?(?:\s|$)")
_LINUX_VERSION = re.compile(r"^Linux version (\S+)")
# mlx4_en/mlx4_core and mlx5_core when the adapter's firmware predates the driver (drivers/net/ethernet/mellanox)
_HCA_FW_OLD = re.compile(r"please upgrade to later FW version|Installed FW has unsupported command interface revision|"
                         r"Driver cmdif rev\(\d+\) differs from firmware's\(\d+\)")
# the mlx5 driver's report of a firmware command that failed (drivers/net/ethernet/mellanox/mlx5/core/cmd.c):
# 'mlx5_core 0000:61:00.0: mlx5_cmd_check:795:(pid 53945): ALLOC_UAR(0x802) op_mod(0x0) failed, status limits
# exceeded(0x8), syndrome (0x5a7939)'; newer kernels: 'mlx5_cmd_out_err:838:(pid N): CREATE_MKEY(0x200) op_mod(0x0)
# failed, status bad resource state(0x9), syndrome (0x...), err(-22)'
_HCA_CMD = re.compile(r"mlx5_cmd_(?:check|out_err):\d+:\(pid \d+\): (\w+)\(0x[0-9a-fA-F]+\) op_mod\(0x[0-9a-fA-F]+\) "
                      r"failed, status ([\w ]+?)\(0x[0-9a-fA-F]+\)")

# Strong markers: text with these is a kernel log even without timestamps.
_STRONG = re.compile(r"NVRM: |\bS?Xid \(|^(?:NVRM: )?Xid \d{1,3}: [A-Z]|IO_PAGE_FAULT|AMD-Vi: |DMAR: |arm-smmu|tegra241_cmdqv|callbacks suppressed|"
                     r"Kernel command line:|Linux version \d|\d\.[0-7]: (?:AER: |PCIe Bus Error: )|"
                     # the GPU and RDMA stack's kernel modules, by the prefix their messages carry (pr_fmt / dev_printk)
                     r"^gdrdrv:|^(?:nvidia-nvlink|nvidia-uvm|nvidia-modeset): |"
                     r"^(?:nvidia|mlx5_core|mlx5_ib|pcieport) [0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]: ")
# PCIe Advanced Error Reporting, as the kernel prints it: "<driver> <bdf>: AER: ..." / "<driver> <bdf>: PCIe Bus Error:
# severity=Uncorrected (Fatal), ..." (newer kernels: "Uncorrectable (Fatal)"), "AER: device recovery failed"
_AER = re.compile(r"^(\S+) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): (?:AER: |PCIe Bus Error: )(.*)$")
_AER_FATAL = re.compile(r"Uncorrect(?:ed|able) \(Fatal\)")
_AER_NONFATAL = re.compile(r"Uncorrect(?:ed|able) \(Non-Fatal\)")
_AER_FROM = re.compile(r"error (?:message )?received(?::| from) (?:id=\w+|([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]))")
# older kernels: "nvidia 0000:02:00.0: device has no AER-aware driver" (the GPU cannot take part in recovery)
_NO_AER_DRIVER = re.compile(r"^nvidia ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): device has no AER-aware driver")


def _strip_prefix(raw: str) -> tuple[str, bool]:
    """The message without quote prefixes and timestamps, and whether it had a log prefix (timestamp)."""
    line = _QUOTE.sub("", raw)
    had = False
    for rx in (_JOURNAL, _FACILITY, _TS_MONO, _TS_CTIME, _TS_REL, _TS_ISO):
        m = rx.match(line.lstrip())
        if m:
            line = line.lstrip()[m.end():]
            had = True
    return line, had


def _detect(text: str) -> float:
    lines = [ln for ln in text.split("\n")[:3000] if ln.strip()]
    if not lines:
        return 0.0
    stamped = strong = 0
    for raw in lines:
        line = _QUOTE.sub("", raw).lstrip()
        if _TS_MONO.match(line) or _TS_CTIME.match(line) or _TS_REL.match(line) or _JOURNAL.match(line):
            stamped += 1
        if _STRONG.search(line):
            strong += 1
    frac = stamped / len(lines)
    if stamped >= 3 and frac >= 0.5:
        return 0.9
    if strong >= 1 and (strong + stamped) / len(lines) >= 0.5:
        return 0.85
    if stamped:
        return min(0.3 + 0.5 * frac, 0.8)
    return 0.0


def _messages(text: str) -> list[tuple[int, str, str]]:
    """(line number, message, physical text) with indented continuation lines joined to their message."""
    msgs: list[tuple[int, str, str]] = []
    any_stamp = False
    for n, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        msg, had = _strip_prefix(raw)
        any_stamp = any_stamp or had
        body = _QUOTE.sub("", raw)
        # dmesg prints the continuation of a multi-line message indented, without a timestamp
        if not had and any_stamp and msgs and body[:1] in (" ", "\t") and len(body) - len(body.lstrip()) >= 8:
            ln, prev, phys = msgs[-1]
            msgs[-1] = (ln, f"{prev} {msg.strip()}", phys + "\n" + raw)
            continue
        msgs.append((n, msg.strip(), raw))
    return msgs


@parser(
    "dmesg",
    detect=_detect,
    summary="kernel log: Xid errors, fallen-off-bus GPUs, IOMMU faults/mode, SMMU and CMDQV probe (dmesg, journalctl -k)",
    facts=FACTS,
    command="dmesg",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "kernel log lines (dmesg or journalctl -k)")
    msgs = _messages(text)
    if not msgs or _detect(text) < 0.5:
        raise ParseError("not a kernel log: expected dmesg lines ('[   12.345678] ...', 'kernel:' journal lines) "
                         "or driver messages (NVRM:, Xid, AMD-Vi:, DMAR:, arm-smmu)")
    events: list[dict[str, object]] = []
    xid_count = 0
    codes: set[int] = set()
    off_bus = False
    off_devices: list[str] = []
    faults = 0
    fault_devices: list[str] = []
    iommu_on: bool | None = None
    default_domain = None
    smmu = cmdqv = gsp = asserts = nvrm = suppressed = 0
    fabric_sync = fm_absent = False
    companion = None
    fallback = False
    cmdline = early_cmdline = nv_version = linux_version = None
    fw_old: list[str] = []
    hca_cmd: list[str] = []
    bars: list[str] = []
    rm_failed: list[str] = []
    gsp_fw: list[str] = []
    legacy: list[str] = []
    api_client = api_kmod = ""
    flavor: str | None = None
    refused: list[dict[str, str]] = []
    gpu_named: tuple[str, str] | None = None  # the GPU the last 'The NVIDIA GPU ... (PCI ID: ...)' named
    sxids: list[dict[str, object]] = []
    sxid_codes: set[int] = set()
    sxid_fatal: set[int] = set()
    fatal: set[int] = set()  # NVLink Xid codes by the severity their lines state
    nonfatal: set[int] = set()
    caused: set[int] = set()
    aer = {"fatal": 0, "nonfatal": 0, "corrected": 0, "failed": 0}
    aer_devices: list[str] = []
    aer_gpus: list[str] = []
    # each expression runs only on messages holding a literal it needs (a kernel log is mostly other lines):
    # the same matches, ~15 substring tests instead of ~15 expression searches per message
    for _, msg, phys in msgs:
        m = _XID.search(msg) if "Xid (" in msg else None
        q = _XID_QUOTED.match(msg) if m is None and "Xid " in msg else None
        if q:
            xid_count += 1
            code = int(q.group(1))
            codes.add(code)
            events.append({"code": code, "bus": "", "text": q.group(2).strip()[:300]})
            if code == 79:
                off_bus = True
        if m:
            xid_count += 1
            code = int(m.group(2))
            codes.add(code)
            events.append({"code": code, "bus": m.group(1), "text": m.group(3).strip()[:300]})
            sev = _XID_SEVERITY.match(m.group(3)) if "atal XC" in msg else None
            if sev:
                (nonfatal if sev.group(1) == "Nonfatal" else fatal).add(code)
            prior = _CAUSED_BY.search(msg) if "caused by previous" in msg else None
            if prior:
                caused.add(int(prior.group(1)))
            if code == 79:
                off_bus = True
        sx = _SXID.search(msg) if "SXid (" in msg else None
        if sx:
            _sxid(sx, sxids, sxid_codes, sxid_fatal)
        low = msg.lower()
        if "off the bu" in low and _OFF_BUS.search(msg):  # the expression ignores case; "s" also matches U+017F
            off_bus = True
            for dev in _BDF.findall(msg) or ([m.group(1)] if m else []):
                dev = dev.split(".")[0]  # the bus form Xid lines use: 0000:06:00
                if dev not in off_devices:
                    off_devices.append(dev)
        cl = _CMDLINE.search(msg) if "Kernel command line:" in msg else None
        if ("DMAR: " in msg or "AMD-Vi: " in msg or "arm-smmu" in msg or "IO_PAGE_FAULT" in msg
                or "Unhandled context fault" in msg or "iommu=off" in msg):
            if _IOMMU_FAULT.search(msg):
                faults += 1
                iommu_on = True if iommu_on is None else iommu_on
                for dev in _BDF.findall(msg)[:1] or [f"0000:{d}" for d in _DMAR_DEV.findall(msg)[:1]]:
                    if dev not in fault_devices:
                        fault_devices.append(dev)
            if _IOMMU_ON.search(msg):
                iommu_on = True
            elif _IOMMU_OFF.search(msg) and not cl:
                iommu_on = False if iommu_on is None else iommu_on
        dm = _DEFAULT_DOMAIN.search(msg) if "Default domain type: " in msg else None
        if dm:
            default_domain = dm.group(1)
        if "arm-smmu" in msg:  # _SMMU is this literal
            smmu += 1
        if ("cmdqv" in low or "nvda200c" in low) and _CMDQV.search(msg) and not cl:
            cmdqv += 1
            cm = _CMDQV_FOUND.search(msg)
            if cm:
                companion = cm.group(1)
            if _CMDQV_FALLBACK.search(msg):
                fallback = True
        am = _AER.match(msg) if ("AER: " in msg or "PCIe Bus Error" in msg) else None
        if am:
            _aer(am, aer, aer_devices, aer_gpus)
        na = _NO_AER_DRIVER.match(msg) if "AER-aware" in msg else None
        if na:
            aer["failed"] += 1
            _keep(aer_devices, na.group(1))
            _keep(aer_gpus, na.group(1))
        if "NVRM" in phys:
            nvrm += sum(1 for ln in phys.split("\n") if "NVRM" in ln)
        if "NVRM" in msg or "GSP" in msg or "gsp" in msg:
            if _GSP_ERR.match(msg):
                gsp += 1
        if "NVRM" in msg and _ASSERT.search(msg):
            asserts += 1
        if "abric" in msg or "FABRIC" in msg:
            fabric_sync |= "FABRIC_STATE_OUT_OF_SYNC" in msg or "fabric state cached by the driver is out of sync" in msg
            fm_absent |= "FABRIC_MANAGER_NOT_PRESENT" in msg
        sm = _SUPPRESSED.search(msg) if "callbacks suppressed" in msg else None
        if sm:
            suppressed += int(sm.group(1))
        if cl and cmdline is None:
            cmdline = cl.group(1).strip()
        ec = _EARLY_CMDLINE.match(msg) if msg.startswith("Command line:") else None
        if ec and early_cmdline is None:
            early_cmdline = ec.group(1).strip()
        nv = _NV_VERSION.search(msg) if "NVRM: loading NVIDIA " in msg else None
        if nv:
            nv_version = nv.group(1)
            flavor = "open" if "Open Kernel Module" in msg else "proprietary"
        if "API mismatch" in msg and (ac := _API_CLIENT.search(msg)):
            api_client = ac.group(1)
        if api_client and "kernel module has the version" in msg and (ak := _API_KMOD.search(msg)):
            api_kmod = api_kmod or ak.group(1)
        if "NVRM" in msg and ("PCI ID" in msg or "kernel modules" in msg or "supported by open" in msg
                              or "only ready for use on Data Center" in msg):
            _flavor_refusal(msg, refused, gpu_named)
            g = _FLAVOR_GPU.search(msg)
            gpu_named = (g.group(1), g.group(2).lower()) if g else gpu_named
        if "NVRM: BAR" in msg and (bar := _BAR_INVALID.search(msg)):
            add_clipped(bars, f"BAR{bar.group(1)} of {bar.group(3).lower()}", 64)
        if ("RmFetchGspRmImages" in msg or "Direct firmware load" in msg) and (gf := _GSP_FW.search(msg)):
            add_clipped(gsp_fw, gf.group(1) or "gsp", 16)
        if "installed in this system is" in msg and (lg := _LEGACY.search(msg)):
            add_clipped(legacy, lg.group(1), 16)
        elif legacy and "Legacy drivers" in msg and (lb := _LEGACY_BRANCH.search(msg)) and "(" not in legacy[-1]:
            legacy[-1] = f"{legacy[-1]} ({lb.group(1)} legacy)"
        if "RmInitAdapter failed" in msg and (ri := _RM_INIT.search(msg)):
            add_clipped(rm_failed, ri.group(1).lower(), 64)
        if ("FW" in msg or "firmware's" in msg) and _HCA_FW_OLD.search(msg):
            add_clipped(fw_old, msg, 10)
        if "mlx5_cmd_" in msg and (m := _HCA_CMD.search(msg)):
            failed = f"{m.group(1)}: {m.group(2).strip()}"
            if failed not in hca_cmd:
                add_clipped(hca_cmd, failed, 16)
        lv = _LINUX_VERSION.match(msg) if msg.startswith("Linux version ") else None
        if lv and linux_version is None:
            linux_version = lv.group(1)
    facts: dict[str, object] = {
        "dmesg.lines": len(msgs),
        "dmesg.xid_events": events[-MAX_EVENTS:],
        "dmesg.xid_count": xid_count,
        "dmesg.xid_codes": sorted(codes | caused),
        "dmesg.iommu_faults": faults,
        "dmesg.smmu_lines": smmu,
        "dmesg.cmdqv_lines": cmdqv,
        "dmesg.gsp_errors": gsp,
        "dmesg.nvrm_assertions": asserts,
        "dmesg.nvrm_lines": nvrm,
        "dmesg.suppressed_callbacks": suppressed,
    }
    if nonfatal - fatal - caused:
        facts["dmesg.xid_nonfatal_codes"] = sorted(nonfatal - fatal - caused)
    if fabric_sync:
        facts["dmesg.fabric_out_of_sync"] = True
    if fm_absent:
        facts["dmesg.fabric_manager_absent"] = True
    facts["dmesg.fallen_off_bus"] = off_bus
    if off_bus:
        facts["dmesg.fallen_off_bus_devices"] = off_devices
    if fault_devices:
        facts["dmesg.iommu_fault_devices"] = fault_devices
    if iommu_on is not None:
        facts["dmesg.iommu_enabled"] = iommu_on
    if default_domain:
        facts["dmesg.iommu_default_domain"] = default_domain
    if companion:
        facts["dmesg.cmdqv_companion"] = companion
    if fallback:
        facts["dmesg.cmdqv_fallback"] = True
    if fallback:
        facts["dmesg.cmdqv_probed"] = False
    elif companion:
        facts["dmesg.cmdqv_probed"] = True
    if cmdline is not None or early_cmdline is not None:
        facts["dmesg.kernel_cmdline"] = cmdline if cmdline is not None else early_cmdline
    if nv_version:
        facts["dmesg.nvidia_driver_version"] = nv_version
    if flavor:
        facts["dmesg.nvidia_module_flavor"] = flavor
    if refused:
        facts["dmesg.kmod_flavor_refused"] = refused
        facts["dmesg.kmod_flavor_needed"] = sorted({r["needs"] for r in refused})
    if bars:
        facts["dmesg.gpu_bar_invalid"] = bars
    if legacy:
        facts["dmesg.gpu_legacy_unsupported"] = legacy
    if api_client:
        facts["dmesg.api_mismatch"] = f"client {api_client}, kernel module {api_kmod or 'not shown'}"
    if rm_failed:
        facts["dmesg.rm_init_failed"] = rm_failed
    if gsp_fw:
        facts["dmesg.gsp_firmware_missing"] = gsp_fw
    if linux_version:
        facts["dmesg.kernel_version"] = linux_version
    if fw_old:
        facts["dmesg.hca_fw_outdated"] = fw_old
    if hca_cmd:
        facts["dmesg.hca_cmd_failures"] = hca_cmd
    facts["dmesg.sxid_events"] = sxids[-MAX_EVENTS:]
    facts["dmesg.sxid_codes"] = sorted(sxid_codes)
    facts["dmesg.sxid_fatal_codes"] = sorted(sxid_fatal)
    if aer_devices:
        facts.update({"dmesg.aer_fatal": aer["fatal"], "dmesg.aer_nonfatal": aer["nonfatal"],
                      "dmesg.aer_corrected": aer["corrected"], "dmesg.aer_devices": aer_devices,
                      "dmesg.aer_gpu_devices": aer_gpus, "dmesg.aer_recovery_failed": bool(aer["failed"])})
    return facts


def _aer(m: re.Match[str], counts: dict[str, int], devices: list[str], gpus: list[str]) -> None:
    """One AER line: its severity counted, its device (and whether the nvidia driver owns it) kept, a failed recovery."""
    driver, bdf, rest = m.group(1), m.group(2), m.group(3)
    _keep(devices, bdf)
    if driver == "nvidia":
        _keep(gpus, bdf)
    if _AER_FATAL.search(rest):
        counts["fatal"] += 1
    elif _AER_NONFATAL.search(rest):
        counts["nonfatal"] += 1
    elif "severity=Correct" in rest or "Corrected error" in rest or "Correctable error" in rest:
        counts["corrected"] += 1
    if "device recovery failed" in rest or "can't recover" in rest:
        counts["failed"] += 1
    src = _AER_FROM.search(rest)  # "Uncorrected (Fatal) error received: 0000:03:00.0" names the reporting device
    if src and src.group(1):
        _keep(devices, src.group(1))


def _keep(devices: list[str], bdf: str) -> None:
    """A PCI address kept once, lower case, at most 64 of them."""
    bdf = bdf.lower()
    if bdf not in devices and len(devices) < 64:
        devices.append(bdf)


def _flavor_refusal(msg: str, refused: list[dict[str, str]], named: tuple[str, str] | None) -> None:
    """A GPU the loaded module flavor refuses: the reason on this message, the GPU on it (a dmesg whose
    continuation lines were joined) or on the message before ('The NVIDIA GPU ... (PCI ID: ...)')."""
    needs = "open" if _NEEDS_OPEN.search(msg) else "proprietary" if _NEEDS_PROPRIETARY.search(msg) else None
    if needs is None:
        return
    g = _FLAVOR_GPU.search(msg)
    gpu, pci_id = (g.group(1), g.group(2).lower()) if g else (named or ("", ""))
    entry = {"gpu": gpu, "pci_id": pci_id, "needs": needs}
    if entry not in refused and len(refused) < 64:
        refused.append(entry)


def _sxid(m: re.Match[str], events: list[dict[str, object]], codes: set[int], fatal: set[int]) -> None:
    """One NVSwitch SXid line. The driver prints each error as up to three lines of one code: the report
    ("24007, Fatal, Link 30 sourcetrack timeout error"), the error-log entry ("Severity 1 Engine instance 12",
    severity 1 = NVSWITCH_ERROR_SEVERITY_FATAL) and its "Data {...}" words; a paste may hold any of them."""
    switch, code, rest = int(m.group(1)), int(m.group(3)), m.group(4).strip()
    codes.add(code)
    if rest.startswith("Data {"):
        return
    k = _SXID_KIND.match(rest)
    is_fatal: bool | None = None
    link = None
    if k and k.group(1):
        is_fatal = k.group(1).lower() == "fatal"
        link = int(k.group(2)) if k.group(2) else None
    elif k and k.group(3):
        is_fatal = k.group(3) == "1"
        inst = re.search(r"Engine instance (\d+)", rest)
        link = int(inst.group(1)) if inst else None
    if is_fatal:
        fatal.add(code)
    last = events[-1] if events else None
    # the error-log line that follows a report of the same error adds nothing new
    if last and last["switch"] == switch and last["code"] == code and last["fatal"] == is_fatal:
        return
    events.append({"code": code, "switch": switch, "bus": m.group(2), "fatal": is_fatal, "link": link,
                   "unit": SXID_UNITS.get(code // 1000, "unknown unit"), "text": rest[:300]})
