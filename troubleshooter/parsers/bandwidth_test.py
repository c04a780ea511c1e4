"""CUDA samples' ``bandwidthTest``: host-to-device, device-to-host and device-to-device copy bandwidth of a GPU,
one or more runs, each under the CPU/memory binding its command line gave it (``numactl -N1 -m1 bandwidthTest``).

Real sample (a Tesla P100 run bound to the socket remote from it, from mpicbg-scicomp/gearshifft pull request #82;
tests/data/bandwidth-test)::

    $ numactl -m1 -N1 bandwidthTest
    [CUDA Bandwidth Test] - Starting...
    Running on...

     Device 0: Tesla P100-PCIE-16GB
     Quick Mode

     Host to Device Bandwidth, 1 Device(s)
     PINNED Memory Transfers
       Transfer Size (Bytes)        Bandwidth(MB/s)
       33554432                     3783.4

CUDA 11 and later print ``Bandwidth(GB/s)``, earlier releases ``Bandwidth(MB/s)``; both are read, in GB/s.
``--mode=range``/``shmoo`` print one row per transfer size: the largest transfer (the plateau) stands for the
run. ``--csv`` prints ``bandwidthTest-H2D-Pinned, Bandwidth = 12.1 GB/s, Time = ..., Size = ... bytes``.

What it means here: host<->device copies of pinned memory run at the PCIe link's rate (about 12 GB/s on Gen3
x16, 25 on Gen4, 50 on Gen5) when the process and its memory are on the GPU's NUMA node. The same copy bound to
the other socket crosses the inter-socket link and can drop to a third, as in the sample (12.2 GB/s bound to
node 0, 3.8 bound to node 1): a training process left unbound, or bound to the wrong node, pays that on every
host-to-device transfer. ``cuda_bw.numa_h2d_spread`` compares runs bound to different nodes.

>>> f = parse("$ numactl -N0 -m0 ./bandwidthTest\\n Host to Device Bandwidth, 1 Device(s)\\n PINNED Memory Transfers\\n"
...           "   Transfer Size (Bytes)\\tBandwidth(GB/s)\\n   32000000\\t\\t\\t24.1\\n"
...           "$ numactl -N1 -m1 ./bandwidthTest\\n Host to Device Bandwidth, 1 Device(s)\\n PINNED Memory Transfers\\n"
...           "   Transfer Size (Bytes)\\tBandwidth(GB/s)\\n   32000000\\t\\t\\t8.0\\n")
>>> f["cuda_bw.numa_h2d_gbps"], f["cuda_bw.numa_h2d_spread"], f["cuda_bw.numa_slow_nodes"]
({'0': 24.1, '1': 8.0}, 3.01, [1])
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers import _bind, _srun
from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("cuda_bw.runs", "list", "", "each run: {devices, memory (pinned/pageable), h2d_gbps, d2h_gbps, d2d_gbps (largest transfer), binding (numactl/taskset options of its command line), numa_node (the one node it was bound to)}"),
    ("cuda_bw.devices", "list", "", "GPU names the runs measured (Device N: lines)"),
    ("cuda_bw.h2d_gbps_min", "number", "GB/s", "slowest host-to-device bandwidth of the runs (pinned memory where measured)"),
    ("cuda_bw.h2d_gbps_max", "number", "GB/s", "fastest host-to-device bandwidth of the runs (pinned memory where measured)"),
    ("cuda_bw.d2h_gbps_min", "number", "GB/s", "slowest device-to-host bandwidth of the runs (pinned memory where measured)"),
    ("cuda_bw.numa_h2d_gbps", "dict", "GB/s", "NUMA node -> host-to-device bandwidth of the run bound to it (numactl -N/-m, taskset is not a node)"),
    ("cuda_bw.numa_h2d_spread", "number", "ratio", "fastest / slowest host-to-device bandwidth among runs bound to different NUMA nodes (absent with fewer than two nodes)"),
    ("cuda_bw.numa_slow_nodes", "list", "", "NUMA nodes whose bound run copies host<->device at under 2/3 of the best node's rate (the GPU is remote from them)"),
]

_START = re.compile(r"^\[?CUDA Bandwidth Test\] - Starting")
_SECTION = re.compile(r"^(Host to Device|Device to Host|Device to Device) Bandwidth,\s*(\d+) Device\(s\)")
_MEMORY = re.compile(r"^(PINNED|PAGEABLE) Memory Transfers")
_UNIT = re.compile(r"Transfer Size \(Bytes\)\s+Bandwidth\s*\((MB|GB)/s\)")
_ROW = re.compile(r"^(\d+)\s+([\d.]+)\s*$")
_DEVICE = re.compile(r"^Device (\d+): (.(?:.*\S)?)\s*$")
_CSV = re.compile(r"^bandwidthTest-(H2D|D2H|D2D)(?:-(Pinned|Paged))?[\w-]*, Bandwidth = ([\d.]+) (MB|GB)/s, .*?Size = (\d+) bytes")
_PROMPT = re.compile(r"^\S*[$#>]\s+")  # a prompt's end ('$ ', 'user@host:~/x$ ', '# '), anchored: linear
_KEYS = {"Host to Device": "h2d", "Device to Host": "d2h", "Device to Device": "d2d", "H2D": "h2d", "D2H": "d2h", "D2D": "d2d"}


def _detect(text: str) -> float:
    head = text[:262144]
    if _START.search(head) or re.search(r"^[^\S\n]*bandwidthTest-(?:H2D|D2H|D2D)", head, re.MULTILINE):
        return 0.95
    if re.search(r"^[^\S\n]*(?:Host to Device|Device to Host) Bandwidth, \d+ Device\(s\)", head, re.MULTILINE):
        return 0.85
    return 0.0


def _command(raw: str) -> str | None:
    """The command line when ``raw`` runs bandwidthTest (after a prompt or not, under numactl/taskset, sudo or
    VAR=value words); None otherwise. Read by words, never by a backtracking pattern: a line can be megabytes."""
    if "bandwidthTest" not in raw or "Bandwidth" in raw:
        return None
    line = raw.strip()
    m = _PROMPT.match(line)
    if m:
        line = line[m.end():]
    words = line.split()
    i = _srun.skip_before(words)
    if i < len(words) and (words[i].endswith("bandwidthTest") or words[i] in ("numactl", "taskset")):
        return line
    return None


class _Run:
    def __init__(self, command: str = "") -> None:
        self.command = command
        got = _bind.launch(command) if command else None
        self.binding = got[0] if got else {}
        self.devices: list[str] = []
        self.memory = ""
        # direction -> memory -> (transfer size, GB/s) of the largest transfer read
        self.values: dict[str, dict[str, tuple[int, float]]] = {}

    def add(self, direction: str, memory: str, size: int, gbps: float) -> None:
        cur = self.values.setdefault(direction, {}).get(memory)
        if cur is None or size >= cur[0]:
            self.values[direction][memory] = (size, gbps)

    def value(self, direction: str) -> float | None:
        by_mem = self.values.get(direction) or {}
        got = by_mem.get("pinned") or by_mem.get("pageable") or next(iter(by_mem.values()), None)
        return got[1] if got else None

    def empty(self) -> bool:
        return not self.values


def parse_runs(text: str) -> list[_Run]:
    runs: list[_Run] = [_Run()]
    direction = memory = ""
    scale = 1.0
    for raw in text.split("\n"):
        line = raw.strip().lstrip(">").strip()
        if not line:
            continue
        cmd = _command(raw)
        if cmd:
            runs.append(_Run(cmd))
            direction = ""
            continue
        if _START.match(line):
            if not runs[-1].empty() or runs[-1].devices:
                runs.append(_Run())
            direction = ""
            continue
        m = _DEVICE.match(line)
        if m:
            runs[-1].devices.append(m.group(2))
            continue
        m = _SECTION.match(line)
        if m:
            direction, memory, scale = _KEYS[m.group(1)], "pinned", 1.0
            if direction in runs[-1].values:  # a direction measured again: the next run (a banner between them)
                runs.append(_Run())
            continue
        m = _MEMORY.match(line)
        if m and direction:
            memory = m.group(1).lower()
            continue
        m = _UNIT.search(line)
        if m and direction:
            scale = 1e-3 if m.group(1) == "MB" else 1.0
            continue
        m = _ROW.match(line)
        if m and direction:
            runs[-1].add(direction, memory or "pinned", int(m.group(1)), float(m.group(2)) * scale)
            continue
        m = _CSV.match(line)
        if m:
            mem = "pageable" if m.group(2) == "Paged" else "pinned"
            runs[-1].add(_KEYS[m.group(1)], mem, int(m.group(5)), float(m.group(3)) * (1e-3 if m.group(4) == "MB" else 1.0))
            continue
        if direction and not _UNIT.search(line):
            direction = ""  # anything else ends a section's rows (Result = PASS, the NOTE, prose)
    return [r for r in runs if not r.empty()]


@parser(
    "bandwidth-test",
    detect=_detect,
    summary="bandwidthTest (CUDA samples): host<->device copy bandwidth per run, with the NUMA binding it ran under",
    facts=FACTS,
    command="numactl --cpunodebind=N --membind=N ./bandwidthTest   # once per NUMA node (CUDA samples: 1_Utilities/bandwidthTest)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "bandwidthTest output ('Host to Device Bandwidth, 1 Device(s)' and its rows)")
    runs = parse_runs(text)
    if not runs:
        raise ParseError("no 'Host to Device / Device to Host / Device to Device Bandwidth' rows and no "
                         "'bandwidthTest-H2D' CSV lines: this is not bandwidthTest output, or it stops before its numbers")
    out_runs = []
    for r in runs:
        row: dict[str, Any] = {"devices": r.devices, "memory": "pinned" if any("pinned" in v for v in r.values.values()) else "pageable"}
        for d in ("h2d", "d2h", "d2d"):
            v = r.value(d)
            if v is not None:
                row[f"{d}_gbps"] = round(v, 2)
        row["binding"] = r.binding
        node = _bind.single_node(r.binding)
        if node is not None:
            row["numa_node"] = node
        out_runs.append(row)
    facts: dict[str, Any] = {"cuda_bw.runs": out_runs,
                             "cuda_bw.devices": list(dict.fromkeys(d for r in runs for d in r.devices))}
    for d, name in (("h2d", "h2d"), ("d2h", "d2h")):
        vals = [r[f"{d}_gbps"] for r in out_runs if f"{d}_gbps" in r]
        if vals:
            facts[f"cuda_bw.{name}_gbps_min"] = min(vals)
            if d == "h2d":
                facts["cuda_bw.h2d_gbps_max"] = max(vals)
    per_node: dict[int, float] = {}
    per_node_d2h: dict[int, float] = {}
    for r in out_runs:
        if "numa_node" in r and "h2d_gbps" in r:
            n = r["numa_node"]
            per_node[n] = max(per_node.get(n, 0.0), r["h2d_gbps"])  # the best run bound to the node
            if "d2h_gbps" in r:
                per_node_d2h[n] = max(per_node_d2h.get(n, 0.0), r["d2h_gbps"])
    if per_node:
        facts["cuda_bw.numa_h2d_gbps"] = {str(n): v for n, v in sorted(per_node.items())}
    if len(per_node) >= 2 and min(per_node.values()) > 0:
        best, best_d2h = max(per_node.values()), max(per_node_d2h.values(), default=0.0)
        facts["cuda_bw.numa_h2d_spread"] = round(best / min(per_node.values()), 2)
        facts["cuda_bw.numa_slow_nodes"] = sorted(
            n for n, v in per_node.items()
            if v < best * 2 / 3 and (n not in per_node_d2h or not best_d2h or per_node_d2h[n] < best_d2h * 2 / 3))
    return facts
