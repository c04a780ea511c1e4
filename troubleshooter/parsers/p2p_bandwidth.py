"""CUDA samples' ``p2pBandwidthLatencyTest``: which GPU pairs can use peer-to-peer (P2P) access, and the
copy bandwidth and latency between every pair with P2P off and on.

Real sample (6 GPUs, from NVIDIA/nccl issue #814; abridged)::

    Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
       D\\D     0      1      2      3      4      5
         0 911.08  20.10  22.16  22.14  22.33  22.37
         1  20.39 920.20  22.26  22.24  22.34  22.22
    Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
       D\\D     0      1      2      3      4      5
         0 912.68   9.90   9.90   9.90   9.90   9.90
         1   9.90 922.37   9.90   9.90   9.90   9.90

What it means here: with P2P enabled a pair should copy at least as fast as through host memory, and over
NVLink several times faster (~270 GB/s on A100 SXM). P2P *enabled* being clearly slower than P2P *disabled*
for a pair (here 9.9 vs ~22 GB/s) is the signature of broken P2P over PCIe: an IOMMU translating (or PCIe ACS
redirecting) the peer writes through the root complex. NCCL's P2P transport then runs slower than its
shared-memory one (``NCCL_P2P_DISABLE=1`` hides it; ``iommu=pt`` / ACS off fixes it). Pairs the test reports as
unable to access each other (``Device=0 CANNOT Access Peer Device=1``, 0 in the connectivity matrix) fall back
to memcpy in the "enabled" runs, so they are not counted as slower. Diagonal entries (a GPU to itself) are
left out of every statistic. Bandwidth is GB/s, latency microseconds (GPU sub-table; the CPU one is host
launch latency).

>>> f = parse("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\\n   D\\\\D     0      1\\n     0 800.0  22.0\\n     1  22.0 800.0\\n"
...           "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\\n   D\\\\D     0      1\\n     0 800.0   9.9\\n     1  10.1 800.0\\n")
>>> f["p2p.enabled_slower"], f["p2p.enabled_slower_pairs"]
(True, ['0->1', '1->0'])
"""

from __future__ import annotations

import re
import statistics
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text, to_number

FACTS = [
    ("p2p.gpu_count", "number", "count", "GPUs in the test (Device: lines, else the matrices' size)"),
    ("p2p.devices", "list", "", "the test's devices: {index, name, pci_bus_id (hex, as printed)}"),
    ("p2p.access", "dict", "", "'i->j' -> true/false: device i can access peer j (Device=i CAN/CANNOT Access Peer Device=j, else the P2P Connectivity Matrix)"),
    ("p2p.no_access_pairs", "list", "", "'i->j' pairs that cannot use P2P (fall back to memcpy through the host)"),
    ("p2p.all_access", "bool", "", "every pair can access its peer"),
    ("p2p.matrices", "dict", "", "matrix name (uni_disabled, uni_enabled, uni_enabled_reads, bi_disabled, bi_enabled, lat_disabled, lat_enabled, lat_enabled_reads) -> rows of values as printed (GB/s or us)"),
    ("p2p.uni_enabled_min_gbs", "number", "GB/s", "slowest off-diagonal pair, unidirectional, P2P enabled (writes)"),
    ("p2p.uni_enabled_median_gbs", "number", "GB/s", "median off-diagonal pair, unidirectional, P2P enabled (writes)"),
    ("p2p.uni_disabled_min_gbs", "number", "GB/s", "slowest off-diagonal pair, unidirectional, P2P disabled"),
    ("p2p.uni_disabled_median_gbs", "number", "GB/s", "median off-diagonal pair, unidirectional, P2P disabled"),
    ("p2p.bi_enabled_min_gbs", "number", "GB/s", "slowest off-diagonal pair, bidirectional, P2P enabled"),
    ("p2p.bi_enabled_median_gbs", "number", "GB/s", "median off-diagonal pair, bidirectional, P2P enabled"),
    ("p2p.bi_disabled_min_gbs", "number", "GB/s", "slowest off-diagonal pair, bidirectional, P2P disabled"),
    ("p2p.bi_disabled_median_gbs", "number", "GB/s", "median off-diagonal pair, bidirectional, P2P disabled"),
    ("p2p.lat_enabled_median_us", "number", "us", "median off-diagonal GPU latency with P2P enabled (writes)"),
    ("p2p.lat_disabled_median_us", "number", "us", "median off-diagonal GPU latency with P2P disabled"),
    ("p2p.enabled_speedup_median", "number", "ratio", "median P2P-enabled / median P2P-disabled bandwidth (unidirectional, else bidirectional); < 1 means P2P is slower"),
    ("p2p.enabled_slower_pairs", "list", "", "'i->j' pairs that can access each other (or whose access is not shown) where P2P-enabled bandwidth is below 90% of P2P-disabled (unidirectional, else bidirectional)"),
    ("p2p.enabled_slower", "bool", "", "some pair is slower with P2P enabled than disabled: the broken-P2P (IOMMU / ACS) signature"),
]

_TITLE = re.compile(r"^(?:(Unidirectional|Bidirectional)\s+)?P2P=(Enabled|Disabled)\s+(Bandwidth|Latency)"
                    r"(?:\s*\(P2P (Writes|Reads)\))?\s+Matrix\s*\((GB/s|us)\)", re.IGNORECASE)
_CONNECTIVITY = re.compile(r"^P2P Connectivity Matrix\s*$", re.IGNORECASE)
_HEADER = re.compile(r"^(D\\D|GPU|CPU)((?:\s+\d+)+)\s*$")
_ROW = re.compile(r"^(\d+)\s+([-\d.]+(?:\s+[-\d.]+)*)$")
_DEVICE = re.compile(r"^Device:\s*(\d+),\s*(.*?),\s*pciBusID:\s*([0-9a-fA-F]+)")
_CAN = re.compile(r"^Device=(\d+)\s+(CAN|CANNOT)\s+Access Peer Device=(\d+)")


def _detect(text: str) -> float:
    head = text[:262144]
    titles = len(re.findall(r"P2P=(?:Enabled|Disabled)\s+(?:Bandwidth|Latency)", head))
    if titles >= 2 or "p2pBandwidthLatencyTest" in head and titles:
        return 0.95
    if titles or re.search(r"^[^\S\n]*P2P Connectivity Matrix\s*$", head, re.MULTILINE) or re.search(
            r"^Device=\d+ CAN(?:NOT)? Access Peer Device=\d+", head, re.MULTILINE):
        return 0.8
    if "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]" in head or re.search(
            r"^Device: \d+, .+, pciBusID: [0-9a-fA-F]+, pciDeviceID: ", head, re.MULTILINE):
        return 0.7  # the program's banner or device list, cut before any matrix
    return 0.0


def _name(m: re.Match[str]) -> str:
    direction, state, what, rw = (g.lower() if g else "" for g in m.group(1, 2, 3, 4))
    if what == "latency":
        base = "lat_" + state
    else:
        base = ("bi_" if direction == "bidirectional" else "uni_") + state
    return base + ("_reads" if rw == "reads" else "")


def off_diagonal(rows: list[list[Any]]) -> list[tuple[int, int, Any]]:
    """The cells of a GPU-pair matrix other than a GPU with itself, as (row, column, value) (nvbandwidth too)."""
    return [(i, j, v) for i, row in enumerate(rows) for j, v in enumerate(row) if i != j]


def _round(x: float) -> float:
    return round(x, 2)


@parser(
    "p2p-bandwidth",
    detect=_detect,
    summary="p2pBandwidthLatencyTest (CUDA samples): GPU peer access, P2P on/off bandwidth and latency matrices",
    facts=FACTS,
    command="./p2pBandwidthLatencyTest (CUDA samples: Samples/5_Domain_Specific/p2pBandwidthLatencyTest)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "p2pBandwidthLatencyTest output (P2P Connectivity Matrix, bandwidth and latency matrices)")
    devices: list[dict[str, Any]] = []
    access: dict[str, bool] = {}
    connectivity: list[list[float]] = []
    matrices: dict[str, list[list[float]]] = {}
    current: list[list[float]] | None = None  # rows of the matrix being read
    in_cpu = False  # inside a latency matrix's CPU sub-table (skipped)
    for raw in text.split("\n"):
        line = raw.strip().lstrip("#").strip()
        if not line:
            continue
        m = _TITLE.match(line)
        if m:
            current, in_cpu = [], False
            matrices.setdefault(_name(m), current)
            continue
        if _CONNECTIVITY.match(line):
            current, in_cpu = connectivity, False
            continue
        m = _HEADER.match(line)
        if m:
            in_cpu = m.group(1) == "CPU"
            continue
        m = _ROW.match(line)
        if m and current is not None:
            if in_cpu:
                continue
            values = [to_number(v) for v in m.group(2).split()]
            if int(m.group(1)) != len(current) or any(v is None for v in values):
                current = None  # rows out of order or garbled: stop reading this matrix
                continue
            current.append([float(v) for v in values])  # type: ignore[arg-type]
            continue
        m = _DEVICE.match(line)
        if m:
            devices.append({"index": int(m.group(1)), "name": m.group(2), "pci_bus_id": m.group(3).lower()})
            current = None
            continue
        m = _CAN.match(line)
        if m:
            access[f"{int(m.group(1))}->{int(m.group(3))}"] = m.group(2) == "CAN"
            current = None
            continue
        if current is not None and not _ROW.match(line):
            current = None  # prose ends a matrix
    matrices = {k: v for k, v in matrices.items() if v}
    if not access and connectivity:
        for i, row in enumerate(connectivity):
            for j, v in enumerate(row):
                if i != j:
                    access[f"{i}->{j}"] = v != 0
    if not matrices and not access and not devices:
        raise ParseError("no P2P matrix, connectivity matrix or 'Device=N CAN Access Peer' line: "
                         "this is not p2pBandwidthLatencyTest output")
    facts: dict[str, Any] = {}
    sizes = [len(devices)] + [len(v) for v in matrices.values()] + [len(connectivity)]
    facts["p2p.gpu_count"] = max(sizes)
    if devices:
        facts["p2p.devices"] = devices
    if access:
        facts["p2p.access"] = access
        facts["p2p.no_access_pairs"] = [k for k, ok in access.items() if not ok]
        facts["p2p.all_access"] = all(access.values())
    facts["p2p.matrices"] = matrices
    for name, fact in (("uni_enabled", "uni_enabled"), ("uni_disabled", "uni_disabled"),
                       ("bi_enabled", "bi_enabled"), ("bi_disabled", "bi_disabled")):
        vals = [v for _, _, v in off_diagonal(matrices.get(name, []))]
        if vals:
            facts[f"p2p.{fact}_min_gbs"] = _round(min(vals))
            facts[f"p2p.{fact}_median_gbs"] = _round(statistics.median(vals))
    for name in ("lat_enabled", "lat_disabled"):
        vals = [v for _, _, v in off_diagonal(matrices.get(name, []))]
        if vals:
            facts[f"p2p.{name}_median_us"] = _round(statistics.median(vals))
    for prefix in ("uni", "bi"):
        on, off = matrices.get(f"{prefix}_enabled"), matrices.get(f"{prefix}_disabled")
        if not on or not off:
            continue
        slower = []
        for i, j, v in off_diagonal(on):
            if i < len(off) and j < len(off[i]) and access.get(f"{i}->{j}", True) and v < 0.9 * off[i][j]:
                slower.append(f"{i}->{j}")
        on_vals = [v for _, _, v in off_diagonal(on)]
        off_vals = [v for _, _, v in off_diagonal(off)]
        if on_vals and off_vals and statistics.median(off_vals) > 0:
            facts["p2p.enabled_speedup_median"] = _round(statistics.median(on_vals) / statistics.median(off_vals))
        facts["p2p.enabled_slower_pairs"] = slower
        facts["p2p.enabled_slower"] = bool(slower)
        break
    return facts
