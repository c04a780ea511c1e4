"""``nvidia-smi topo -m``: how each GPU reaches every other GPU and NIC, and which CPUs/NUMA node it is near.

Real sample (8x H20 in a VM, from ../shared/corpus/nvidia-smi-topo; columns cut)::

            GPU0    GPU1  ...  NIC0    NIC1  ...  NIC7    CPU Affinity    NUMA Affinity     GPU NUMA ID
    GPU0     X      NV18  ...  SYS     SYS   ...  PIX     0-63    0        N/A
    GPU4    NV18    NV18  ...  NODE    NODE  ...  SYS     64-127  1        N/A
    NIC0    SYS     SYS   ...   X      NODE  ...  SYS

Link kinds, best to worst for GPU<->NIC traffic: ``PIX`` (at most one PCIe bridge), ``PXB`` (several
bridges), ``PHB`` (through the CPU's host bridge), ``NODE`` (between host bridges of one NUMA node), ``SYS``
(across the inter-socket link, QPI/UPI/Infinity Fabric). ``NV#`` is a bonded set of # NVLinks.

What matters for training speed: a GPU whose nearest NIC is NODE or SYS sends its inter-node traffic
across the far socket (GPUDirect RDMA suffers or is disabled); GPU pairs through SYS (no NVLink) make
collectives PCIe- and socket-bound; the CPU/NUMA affinity says where data loaders should be pinned.
Inside a VM the matrix is what the hypervisor exposes (often SYS everywhere with empty affinity): there
NCCL needs a topology file.

Formats handled: TAB- or space-separated, indented pastes with a prompt line, the old format whose NIC
columns are named ``mlx5_N`` (no NUMA Affinity column, no NIC Legend), NIC rows without affinity cells,
the ``GPU NUMA ID`` column, and pastes whose tab-to-space conversion fused cells (``NIC7NIC8``,
``SYSSYS``). NIC names are mapped through the ``NIC Legend`` (``NIC0: mlx5_0``) wherever one is present.
An empty CPU Affinity cell (run inside a job whose cores are all on another socket) is read as empty, never
as the next column's value.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("topo.gpus", "list", "", "GPUs in the matrix (GPU0, GPU1, ...)"),
    ("topo.nics", "list", "", "NICs in the matrix, named through the NIC Legend (mlx5_N) when it is shown"),
    ("topo.matrix", "dict", "", "row -> column -> link (NV#, PIX, PXB, PHB, NODE, SYS); self entries left out"),
    ("topo.gpu_numa", "dict", "", "GPU -> NUMA node of its CPU affinity (NUMA Affinity column), when known"),
    ("topo.gpu_cpu_affinity", "dict", "", "GPU -> CPU list near it (CPU Affinity column), when shown"),
    ("topo.gpus_without_cpu_affinity", "list", "",
     "GPUs whose CPU Affinity cell is empty while their NUMA Affinity names a node: none of their local CPUs is "
     "among those the process that ran nvidia-smi may use (a job or container given cores on another socket)"),
    ("topo.gpu_nearest_nic", "dict", "", "GPU -> {nic, link}: the NIC it reaches over the best link"),
    ("topo.gpus_without_near_nic", "list", "", "GPUs whose best NIC link is NODE or SYS (NIC on the far side of the host)"),
    ("topo.nvlink_all", "bool", "", "every GPU pair is connected by NVLink (NV#)"),
    ("topo.gpu_pairs_sys", "number", "count", "GPU pairs that talk across the inter-socket link (SYS)"),
]

_LABELS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_DEVICE = re.compile(r"GPU\d+|NIC\d+|[A-Za-z][A-Za-z0-9]{0,63}_(?:[A-Za-z]+_)?\d+")
# No word boundary: a paste that lost its tabs fuses cells ("SYSSYS", "PXBSYS").
_LINK = re.compile(r"\s*(X|NV\d+|NVB|SYS|SOC|NODE|PHB|PXB|PIX)")
_LEGEND = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")
# Lower is nearer (for GPU -> NIC).
_RANK = {"PIX": 0, "PXB": 1, "PHB": 2, "NODE": 3, "SYS": 4, "SOC": 4}
_FAR = ("NODE", "SYS", "SOC")


def _header(lines: list[str]) -> int:
    for i, line in enumerate(lines):
        tokens = line.split()
        if not tokens or tokens[0] != "GPU0" or len(tokens) < 2:
            continue
        if re.match(r"(X|NV\d+|SYS|NODE|PHB|PXB|PIX)$", tokens[1]):
            continue  # that is the GPU0 row
        return i
    raise ParseError("no topology header (a line of columns starting with GPU0, as in nvidia-smi topo -m)")


def _affinity(rest: str, labels: list[str]) -> dict[str, str] | None:
    """The affinity cells after a row's links, by label; None when the row cannot say which cell is which.

    nvidia-smi leaves the CPU Affinity cell empty when none of the GPU's local CPUs is among those the caller may
    use (NVML intersects them with the process's cpuset: a Slurm job or container given cores on one socket
    only). With TABs the empty cell is two TABs in a row; in a paste whose TABs became spaces it is a gap of a
    whole extra tab stop. Where the blanks were squeezed to single spaces the missing cell cannot be placed, and
    the row's affinity is left unknown rather than shifted into the wrong column."""
    words = rest.split()
    if len(words) >= len(labels) or not labels or labels[0] != "CPU Affinity":
        return dict(zip(labels, words))
    if "\t" in rest:
        parts = [p.strip() for p in rest.split("\t")[1:]]
        if parts and parts[0] == "":
            return dict(zip(labels, [""] + [p for p in parts[1:] if p]))
        return None
    gap = len(rest) - len(rest.lstrip(" "))
    if words and gap >= 9:  # the link cell's padding to its tab stop (at most 8) plus an empty cell's 8
        return dict(zip(labels, [""] + words))
    return None


def _links(rest: str, count: int) -> tuple[list[str], str]:
    """Up to ``count`` link cells from the start of ``rest``, and what follows them."""
    cells: list[str] = []
    pos = 0
    while len(cells) < count:
        m = _LINK.match(rest, pos)
        if not m:
            break
        cells.append(m.group(1))
        pos = m.end()
    return cells, rest[pos:]


@parser(
    "nvidia-smi-topo",
    detect=lambda text: _detect(text),
    summary="nvidia-smi topo -m: GPU/NIC link matrix, CPU and NUMA affinity",
    facts=FACTS,
    command="nvidia-smi topo -m",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "nvidia-smi topo -m output")
    lines = text.split("\n")
    h = _header(lines)
    head = lines[h]
    labels = sorted((lab for lab in _LABELS if lab in head), key=head.index)
    stripped = head
    for lab in labels:
        stripped = stripped.replace(lab, " ")
    columns = _DEVICE.findall(stripped)
    if len(columns) < 1 or len(set(columns)) != len(columns):
        raise ParseError("cannot read the column names of the topology header", line=h + 1)
    known = set(columns)
    rows: dict[str, list[str]] = {}
    extra: dict[str, dict[str, str]] = {}
    legend: dict[str, str] = {}
    for line in lines[h + 1:]:
        lm = _LEGEND.match(line)
        if lm:
            legend[lm.group(1)] = lm.group(2)
            continue
        body = line.strip()
        if not body:
            continue
        label = body.split()[0]
        if label not in known or label in rows:
            continue
        cells, rest = _links(body[len(label):], len(columns))
        if not cells:
            continue
        rows[label] = cells
        affinity_cells = _affinity(rest, labels)
        if affinity_cells is not None:
            extra[label] = affinity_cells
    gpus = [c for c in columns if c.startswith("GPU")]
    if not rows or not any(g in rows for g in gpus):
        raise ParseError("topology header found but no GPU rows under it", line=h + 1)

    def name(col: str) -> str:
        return legend.get(col, col)

    nics_raw = [c for c in columns if not c.startswith("GPU")]
    matrix: dict[str, dict[str, str]] = {}
    for row, cells in rows.items():
        matrix[name(row)] = {name(col): link for col, link in zip(columns, cells) if link != "X" and col != row}
    facts: dict[str, Any] = {
        "topo.gpus": gpus,
        "topo.nics": [name(c) for c in nics_raw],
        "topo.matrix": matrix,
    }
    numa: dict[str, int] = {}
    affinity: dict[str, str] = {}
    without: list[str] = []
    for g in gpus:
        cells = extra.get(g, {})
        if cells.get("NUMA Affinity", "").isdigit():
            numa[g] = int(cells["NUMA Affinity"])
            if cells.get("CPU Affinity") == "":
                without.append(g)
        cpu = cells.get("CPU Affinity", "")
        if re.fullmatch(r"[\d,\-]+", cpu):
            affinity[g] = cpu
    if "NUMA Affinity" in labels:
        facts["topo.gpu_numa"] = numa
    if "CPU Affinity" in labels:
        facts["topo.gpu_cpu_affinity"] = affinity
    if without:
        facts["topo.gpus_without_cpu_affinity"] = without
    if nics_raw:
        nearest: dict[str, dict[str, str]] = {}
        for g in gpus:
            links = [(matrix.get(g, {}).get(name(n)), name(n)) for n in nics_raw]
            links = [(link, n) for link, n in links if link in _RANK]
            if links:
                link, nic = min(links, key=lambda ln: _RANK[ln[0]])
                nearest[g] = {"nic": nic, "link": link}
        facts["topo.gpu_nearest_nic"] = nearest
        facts["topo.gpus_without_near_nic"] = [g for g in gpus if g in nearest and nearest[g]["link"] in _FAR]
    if len(gpus) >= 2:
        pairs = []
        for i, a in enumerate(gpus):
            for b in gpus[i + 1:]:
                pairs.append(matrix.get(a, {}).get(b) or matrix.get(b, {}).get(a))
        known_pairs = [p for p in pairs if p]
        if known_pairs:
            # a matrix cut short (a paste's elided rows) says nothing about the pairs it lost: all-NVLink is false
            # when a pair it shows is not NVLink, true when every pair is shown, and unknown otherwise
            direct = [p.startswith("NV") and p != "NVB" for p in known_pairs]
            if not all(direct):
                facts["topo.nvlink_all"] = False
            elif len(known_pairs) == len(pairs):
                facts["topo.nvlink_all"] = True
            facts["topo.gpu_pairs_sys"] = sum(1 for p in known_pairs if p in ("SYS", "SOC"))
    return facts


def _detect(text: str) -> float:
    lines = text.split("\n")
    try:
        h = _header(lines)
    except ParseError:
        return 0.0
    rows = sum(1 for ln in lines[h + 1:h + 40] if re.match(r"^\s*GPU\d+\s+(X|NV\d+|SYS|NODE|PHB|PXB|PIX)\b", ln))
    if rows and ("CPU Affinity" in lines[h] or "Legend:" in text):
        return 0.95
    return 0.7 if rows else 0.2
