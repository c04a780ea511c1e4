"""Kernel modules: ``lsmod`` (or ``lsmod | grep X``) and ``modinfo NAME``: which modules are loaded, which are
installed; and ``modprobe``/``insmod`` refusing one (no file of it for the running kernel, or the kernel rejecting it). Above all the peer-memory module GPUDirect RDMA needs (nvidia_peermem, or the older nv_peer_mem).

Real samples (gpud#39, a node with GPUDirect RDMA; Mellanox/nv_peer_memory#46, after a reboot)::

    nvidia_peermem         16384  0
    ib_core               434176  9 rdma_cm,ib_ipoib,nvidia_peermem,iw_cm,ib_umad,rdma_ucm,ib_uverbs,mlx5_ib,ib_cm

    # modinfo nv_peer_mem
    filename:       /lib/modules/4.15.0-46-generic/updates/dkms/nv_peer_mem.ko
    version:        1.0-8
    name:           nv_peer_mem

Read: lsmod's rows (name, size, use count, users) with or without its ``Module Size Used by`` header, and
modinfo's ``key: value`` lines. A ``lsmod | grep X`` that printed nothing is read by the intake (the module
matching X is not loaded). What it means: without a peer-memory module (or DMA-BUF, NCCL 2.19+ on kernel 5.12+
with the open driver) the NIC cannot reach GPU memory, and NCCL stages every inter-node transfer through the host.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("kmod.missing_for_kernel", "dict", "", "modules modprobe found no file of under the running kernel's directory "
     "('modprobe: FATAL: Module nvidia not found in directory /lib/modules/5.13.0-1025-gcp'): module -> that kernel"),
    ("kmod.insert_failed", "list", "", "modules the kernel refused to load, as 'PATH: reason' ('insmod: ERROR: could not "
     "insert module /lib/modules/5.13.0-1024-gcp/.../nvidia.ko: Invalid parameters', modprobe's 'could not insert "
     "'nvidia': Exec format error')"),
    ("kmod.unknown_symbols", "dict", "", "module -> the symbols the kernel could not resolve for it ('nvidia_peermem: "
     "Unknown symbol ib_register_peer_memory_client (err -2)'): built against another module's version"),
    ("kmod.loaded", "list", "", "kernel modules lsmod lists as loaded (of the rows shown)"),
    ("kmod.listing_complete", "bool", "", "the whole lsmod table was shown (its 'Module Size Used by' header): a "
     "module absent from it is not loaded"),
    ("kmod.not_loaded", "list", "", "what a 'lsmod | grep X' that printed nothing looked for (no loaded module matches it)"),
    ("kmod.installed", "list", "", "modules modinfo shows installed (its name: or filename:)"),
    ("kmod.versions", "dict", "", "module -> the version modinfo shows"),
]

_MISSING = re.compile(r"modprobe: FATAL: Module (\S+) not found in directory /lib/modules/(\S+)")
# modprobe's and insmod's refusal, and the same refusal as systemd-modules-load and Talos log it at boot
# ("Failed to insert module 'nvidia_peermem': Invalid argument", 'error loading module "nvidia_peermem": load
# nvidia_peermem failed: invalid argument')
_INSERT = re.compile(r"(?:insmod: ERROR: could not insert module (\S+)|modprobe: ERROR: could not insert '([^']+)'|"
                     r"Failed to insert module '([^']+)'|error loading module \"([^\"]+)\": load \S+ failed): (.(?:.*\S)?)\s*$",
                     re.MULTILINE)
# the kernel's reason for a refusal: the module needs a symbol no loaded module exports (nvidia_peermem built for
# MLNX_OFED's ib_core, loaded with the distribution's: "nvidia_peermem: Unknown symbol ib_register_peer_memory_client")
_UNKNOWN_SYMBOL = re.compile(r"\b([A-Za-z0-9_]+): Unknown symbol ([A-Za-z0-9_]+)")
_HEADER = re.compile(r"^\s*Module\s+Size\s+Used by\s*$")
_ROW = re.compile(r"^\s*([A-Za-z0-9_]+)\s+(\d+)\s+(-?\d+)(?:\s+(\S+))?\s*$")
_INFO = re.compile(r"^\s*(filename|version|name|description|license|depends|vermagic|srcversion|author|alias|"
                   r"retpoline|intree|signer|sig_key|sig_hashalgo|signature|signat|parm|firmware|import_ns|"
                   r"supported|rhelversion|softdep):\s*(.*)$")


def _detect(text: str) -> float:
    if _MISSING.search(text[:65536]) or _INSERT.search(text[:65536]):
        return 0.85
    if _UNKNOWN_SYMBOL.search(text[:65536]) and "NVRM" not in text[:65536]:
        return 0.6
    lines = [ln for ln in text.split("\n")[:400] if ln.strip() and not re.match(r"^\s*[$#]\s", ln)]
    if not lines:
        return 0.0
    if any(_HEADER.match(ln) for ln in lines[:5]):
        return 0.9
    info = sum(1 for ln in lines if _INFO.match(ln))
    if info >= 3 and any(ln.lstrip().startswith(("filename:", "vermagic:")) for ln in lines):
        return 0.85
    rows = sum(1 for ln in lines if _ROW.match(ln))
    if rows >= 2 and rows == len(lines) and any(re.search(r"\b(?:nvidia|mlx\d|ib_|rdma|nv_peer)", ln) for ln in lines):
        return 0.7
    return 0.0


@parser(
    "kmod",
    detect=_detect,
    summary="lsmod / modinfo: kernel modules loaded and installed (nvidia_peermem for GPUDirect RDMA)",
    facts=FACTS,
    command="lsmod | grep -E 'peermem|nv_peer|mlx5|ib_core'; modinfo nvidia_peermem",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "lsmod or modinfo output")
    loaded: list[str] = []
    installed: list[str] = []
    versions: dict[str, str] = {}
    header = False
    info: dict[str, str] = {}
    missing: dict[str, str] = {}
    refused: list[str] = []
    unknown: dict[str, list[str]] = {}
    for raw in text.split("\n"):
        if "Unknown symbol" in raw:
            u = _UNKNOWN_SYMBOL.search(raw)
            if u and len(unknown) < 50:
                syms = unknown.setdefault(u.group(1), [])
                if u.group(2) not in syms and len(syms) < 50:
                    syms.append(u.group(2))
                continue
        if "modprobe:" in raw or "insmod:" in raw or "insert module" in raw or "error loading module" in raw:
            m = _MISSING.search(raw)
            if m:
                missing.setdefault(m.group(1), m.group(2))
                continue
            m = _INSERT.search(raw)
            if m:
                item = f"{m.group(1) or m.group(2) or m.group(3) or m.group(4)}: {m.group(5)}"
                if item not in refused and len(refused) < 50:
                    refused.append(item)
                continue
        if not raw.strip() or re.match(r"^\s*[$#]\s", raw) or raw.strip() in ("#", "$"):
            continue
        if _HEADER.match(raw):
            header = True
            continue
        m = _ROW.match(raw)
        if m and not _INFO.match(raw):
            if m.group(1) not in loaded and len(loaded) < 2000:
                loaded.append(m.group(1))
            continue
        i = _INFO.match(raw)
        if i:
            key, value = i.group(1), i.group(2).strip()
            if key == "filename" and info:
                _close(info, installed, versions)
                info = {}
            info.setdefault(key, value)
    if info:
        _close(info, installed, versions)
    if not loaded and not installed and not header and not missing and not refused and not unknown:
        raise ParseError("no lsmod row ('name size count users'), modinfo line ('filename: ...') or modprobe/insmod "
                         "error: not lsmod, modinfo or modprobe output")
    facts: dict[str, Any] = {}
    if missing:
        facts["kmod.missing_for_kernel"] = missing
    if refused:
        facts["kmod.insert_failed"] = refused
    if unknown:
        facts["kmod.unknown_symbols"] = unknown
    if loaded or header:
        facts["kmod.loaded"] = loaded
        facts["kmod.listing_complete"] = header
    if installed:
        facts["kmod.installed"] = installed
        facts["kmod.versions"] = versions
    return facts


def _close(info: dict[str, str], installed: list[str], versions: dict[str, str]) -> None:
    name = info.get("name") or re.sub(r"\.ko(?:\.\w+)?$", "", info.get("filename", "").rsplit("/", 1)[-1])
    if name and name not in installed:
        installed.append(name)
        if info.get("version"):
            versions[name] = info["version"]
