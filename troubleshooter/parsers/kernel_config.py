"""A kernel build configuration (``.config``: ``/boot/config-$(uname -r)`` or ``zcat /proc/config.gz``).

Real sample (this development machine's /proc/config.gz, tests/data/kernel_config)::

    #
    # Automatically generated file; DO NOT EDIT.
    # Linux/x86 6.18.44 Kernel Configuration
    #
    CONFIG_CC_VERSION_TEXT="gcc (GCC) 15.3.0"
    CONFIG_X86_64=y
    CONFIG_NUMA=y
    CONFIG_IOMMU_DEFAULT_DMA_LAZY=y
    # CONFIG_IOMMUFD is not set

What matters here: on Grace (arm64) hosts and guests, ``CONFIG_TEGRA241_CMDQV`` (the CMDQV extension of
SMMUv3, upstream since 6.12), ``CONFIG_ARM_SMMU_V3`` and ``CONFIG_IOMMUFD`` decide whether the accelerated,
virtualised SMMU command queues can be used at all (case 1: ~12% lost to SMMU invalidations trapping to the
host); the base page size (``CONFIG_ARM64_4K/16K/64K_PAGES``) changes TLB reach.

Every option becomes ``kernel.config.CONFIG_NAME`` with the value as written (``y``, ``m``, a number, an
unquoted string); ``# CONFIG_X is not set`` becomes ``n``. In a complete ``.config`` (one with the
``Kernel Configuration`` banner) an option that is absent cannot be enabled (its dependencies, or the
architecture, rule it out), so the named convenience facts are false there; in a fragment they are only
set when the option is present.

>>> f = parse("CONFIG_ARM64=y\\nCONFIG_ARM64_64K_PAGES=y\\nCONFIG_TEGRA241_CMDQV=m\\n# CONFIG_IOMMUFD is not set\\n")
>>> f["kernel.cmdqv_configured"], f["kernel.iommufd_configured"], f["kernel.page_size_kb"]
(True, False, 64)
"""

from __future__ import annotations

import re

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("kernel.config.*", "string", "", "one kernel build option: 'y', 'm', 'n' (is not set), or its value"),
    ("kernel.config.count", "number", "count", "options read from the config"),
    ("kernel.config.version", "string", "", "kernel version from the config banner ('Linux/arm64 6.8.0 Kernel Configuration')"),
    ("kernel.config.arch", "string", "", "architecture from the config banner (x86, arm64)"),
    ("kernel.config.complete", "bool", "", "the text is a whole generated .config (has the 'Kernel Configuration' banner), not a fragment"),
    ("kernel.cmdqv_configured", "bool", "", "CONFIG_TEGRA241_CMDQV is y or m (Grace SMMUv3 CMDQV driver built)"),
    ("kernel.iommufd_configured", "bool", "", "CONFIG_IOMMUFD is y or m (needed for nested/accelerated SMMU in VMs)"),
    ("kernel.arm_smmu_v3", "bool", "", "CONFIG_ARM_SMMU_V3 is y or m"),
    ("kernel.arm_smmu_v3_iommufd", "bool", "", "CONFIG_ARM_SMMU_V3_IOMMUFD is y or m (SMMUv3 nesting through iommufd)"),
    ("kernel.page_size_kb", "number", "KiB", "base page size the kernel was built for (ARM64_4K/16K/64K_PAGES; 4 on x86)"),
    ("kernel.numa_configured", "bool", "", "CONFIG_NUMA is y"),
]

_SET = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set\s*$")
_BANNER = re.compile(r"^# Linux/(\S+) (\S+) Kernel Configuration\s*$", re.MULTILINE)

_NAMED = (
    ("CONFIG_TEGRA241_CMDQV", "kernel.cmdqv_configured"),
    ("CONFIG_IOMMUFD", "kernel.iommufd_configured"),
    ("CONFIG_ARM_SMMU_V3", "kernel.arm_smmu_v3"),
    ("CONFIG_ARM_SMMU_V3_IOMMUFD", "kernel.arm_smmu_v3_iommufd"),
)


def _detect(text: str) -> float:
    head = text[:65536]
    if _BANNER.search(head):
        return 0.98
    lines = [ln.strip() for ln in head.split("\n") if ln.strip()]
    if not lines:
        return 0.0
    hits = sum(1 for ln in lines if _SET.match(ln) or _UNSET.match(ln))
    frac = hits / len(lines)
    if hits >= 3 and frac >= 0.6:
        return 0.9
    if hits >= 1 and frac >= 0.3:
        return 0.5
    return 0.0


@parser(
    "kernel-config",
    detect=_detect,
    summary="kernel build configuration: CMDQV, IOMMUFD, SMMUv3, page size (/boot/config-RELEASE, /proc/config.gz)",
    facts=FACTS,
    command="cat /boot/config-$(uname -r)  # or: zcat /proc/config.gz",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "a kernel .config (cat /boot/config-$(uname -r) or zcat /proc/config.gz)")
    options: dict[str, str] = {}
    for raw in text.split("\n"):
        line = raw.strip()
        m = _SET.match(line)
        if m:
            value = m.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
            options[m.group(1)] = value
            continue
        m = _UNSET.match(line)
        if m:
            options[m.group(1)] = "n"
    if not options:
        raise ParseError("no CONFIG_ options found (expected lines like 'CONFIG_ARM_SMMU_V3=y' or "
                         "'# CONFIG_IOMMUFD is not set')")
    facts: dict[str, object] = {f"kernel.config.{k}": v for k, v in options.items()}
    facts["kernel.config.count"] = len(options)
    banner = _BANNER.search(text)
    complete = banner is not None
    facts["kernel.config.complete"] = complete
    if banner:
        facts["kernel.config.arch"] = banner.group(1)
        facts["kernel.config.version"] = banner.group(2)
    for option, fact in _NAMED:
        if option in options:
            facts[fact] = options[option] in ("y", "m")
        elif complete:
            facts[fact] = False
    if "CONFIG_NUMA" in options:
        facts["kernel.numa_configured"] = options["CONFIG_NUMA"] == "y"
    elif complete:
        facts["kernel.numa_configured"] = False
    for kb in (4, 16, 64):
        if options.get(f"CONFIG_ARM64_{kb}K_PAGES") == "y":
            facts["kernel.page_size_kb"] = kb
            break
    else:
        if options.get("CONFIG_X86") == "y" or options.get("CONFIG_X86_64") == "y":
            facts["kernel.page_size_kb"] = 4  # x86 has only 4 KiB base pages
        elif options.get("CONFIG_PPC_64K_PAGES") == "y":
            facts["kernel.page_size_kb"] = 64
        elif options.get("CONFIG_PPC_4K_PAGES") == "y":
            facts["kernel.page_size_kb"] = 4
    return facts
