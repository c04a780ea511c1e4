"""perftest (linux-rdma/perftest): ``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw``, ``ib_atomic_bw`` and their
``_lat`` siblings, the RDMA bandwidth and latency tests the fixes' verify steps ask for.

Real sample (NVIDIA GPU Operator documentation, GPUDirect RDMA verified between two pods over RoCE; the client's
``ib_write_bw --use_cuda=0 --use_cuda_dmabuf -d mlx5_0 -a -F --report_gbits -q 1``; tests/data/perftest)::

    ---------------------------------------------------------------------------------------
                        RDMA_Write BW Test
     Dual-port       : OFF          Device         : mlx5_0
     Number of qps   : 1            Transport type : IB
     Connection type : RC           Using SRQ      : OFF
     ...
     Mtu             : 1024[B]
     Link type       : Ethernet
     GID index       : 5
    ---------------------------------------------------------------------------------------
     #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
     2          5000             0.11               0.11               6.897101
     ...
     65536      5000             92.39              92.38              0.176196
     8388608    5000             92.39              92.39              0.001377
    ---------------------------------------------------------------------------------------

Formats (perftest's src/perftest_parameters.h): the bandwidth table in Gb/sec (``--report_gbits``) or in MB/sec
(older releases) / MiB/sec (newer), both 2^20 bytes a second and read here as Gb/s; a ``#sl`` column (QoS runs)
and per-port columns (dual-port runs) are read by their headers; duration runs (``-D``) print a peak of 0.00,
which is no measurement. The latency tables: ``t_min t_max t_typical t_avg t_stdev 99% 99.9%`` (newer),
``t_min t_max t_typical`` (older), ``t_avg tps average`` (duration runs). A paste of several runs (a loop over
the HCAs) is read run by run: ``perftest.runs`` has each; the other facts are the last run's.

What it means: a bandwidth test is the fabric's own figure, without NCCL: its best average against the port's
rate (ibstat's Rate for the same device; ``rdma.perftest_port_pct``) says whether the link, PCIe slot or NUMA
placement of the HCA holds the node back. A bidirectional test counts both directions (up to twice the rate).
A run that printed its settings and then an error, no table, is read as the error (the verbs-errors kind).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("perftest.test", "string", "", "the test as perftest names it ('RDMA_Write BW', 'Send Latency', 'RDMA_Read Bidirectional BW') of the last run"),
    ("perftest.kind", "string", "", "'bw' or 'lat' (the last run)"),
    ("perftest.device", "string", "", "the RDMA device the last run used (Device : mlx5_0)"),
    ("perftest.link_type", "string", "", "Link type of the last run: IB (InfiniBand) or Ethernet (RoCE)"),
    ("perftest.transport", "string", "", "Transport type (IB, IW for iWARP)"),
    ("perftest.connection", "string", "", "Connection type (RC, UC, UD, XRC, DC, SRD)"),
    ("perftest.qps", "number", "count", "Number of qps of the last run"),
    ("perftest.mtu_bytes", "number", "B", "the MTU the last run used (Mtu : 4096[B])"),
    ("perftest.gid_index", "number", "", "the GID index the last run used (RoCE; 'GID index' / older 'Gid index')"),
    ("perftest.bidirectional", "bool", "", "the last run was a bidirectional bandwidth test (-b): its figure counts both directions"),
    ("perftest.gpu_memory", "bool", "", "the run's buffers were in GPU memory (--use_cuda on its command line, or perftest's CUDA lines); false when its command line is shown without --use_cuda (host memory); absent when the paste shows neither"),
    ("perftest.dmabuf", "bool", "", "the GPU buffer was registered through DMA-BUF (--use_cuda_dmabuf, or perftest's 'using DMA-BUF' line), not the peer-memory module; absent when not shown"),
    ("perftest.rows", "list", "", "table rows of the last run: {size_bytes, iterations, bw_peak_gbps, bw_avg_gbps, msg_rate_mpps} or {size_bytes, iterations, t_min_usec, t_max_usec, t_typical_usec, t_avg_usec, t_stdev_usec, p99_usec, p999_usec}"),
    ("perftest.bw_avg_gbps", "number", "Gb/s", "the last bandwidth run's best average over its message sizes (a sweep's plateau), in Gb/s whatever unit it printed"),
    ("perftest.bw_avg_at_bytes", "number", "B", "the message size of that best average"),
    ("perftest.lat_typical_usec", "number", "us", "the last latency run's typical latency at its smallest message size"),
    ("perftest.lat_avg_usec", "number", "us", "the last latency run's average latency at its smallest message size"),
    ("perftest.runs", "list", "", "every run of the paste in order: {test, kind, device, link_type, bidirectional, gpu_memory (true, false: host memory by its command line, null: not shown), bw_avg_gbps, bw_avg_at_bytes, lat_typical_usec, rows}"),
]

# one column of a result header, as perftest prints it (the unit in brackets kept for the bandwidth ones)
_COLUMN = re.compile(r"#bytes|#sl|#iterations|BW peak\[(?:Gb|MB|MiB)/sec\]|BW average\[(?:Gb|MB|MiB)/sec\]|"
                     r"MsgRate\[Mpps\]|BW Port[12]\[(?:Gb|MB|MiB)/sec\]|MsgRate Port[12]\[Mpps\]|CPU_Util\[%\]|"
                     r"t_min\[usec\]|t_max\[usec\]|t_typical\[usec\]|t_avg\[usec\]|t_stdev\[usec\]|"
                     r"99% percentile\[usec\]|99\.9% percentile\[usec\]|tps average")
_HEADER = re.compile(r"^\s*#bytes\s+(?:#sl\s+)?#iterations\s+(?:BW peak|t_min|t_avg)")
_TITLE = re.compile(r"^\s{0,40}((?:Send|Send_imm|RDMA_Write|RDMA_Write_imm|RDMA_Read|Atomic|Raw Ethernet|Raw_Ethernet)"
                    r"(?: [A-Z_]{1,20})?(?: Bidirectional)?(?: Post List)?(?: BW| Latency)(?: forwarding)?"
                    r"(?: Multicast)?) Test\s*$")
_SETTING = re.compile(r"([A-Za-z][\w *.-]{0,20}?)\s*:\s*(\S[^\t]*?)\s*(?=\t|\s{3,}[A-Z]|$)")
_NUM = re.compile(r"^-?\d+(?:\.\d+)?$")
_MIB_TO_GBPS = 1048576 * 8 / 1e9  # perftest's MB/sec and MiB/sec are 2^20 bytes a second
_CUDA = re.compile(r"^\s*(?:initializing CUDA|allocated GPU buffer|Picking GPU number|Picking device No\.|"
                   r"using DMA-BUF for GPU buffer|\[pid = \d+, dev = \d+\] device name = )")
_DMABUF = re.compile(r"^\s*using DMA-BUF for GPU buffer")
# the command line, where the paste has it: its --use_cuda options say where the buffers were
_COMMAND = re.compile(r"(?:^|[\s/])(?:ib_(?:write|read|send|atomic)_(?:bw|lat)|raw_ethernet_(?:bw|lat))(?:\s|$)")
_ROW_KEYS = {"#bytes": "size_bytes", "#iterations": "iterations", "#sl": "sl", "MsgRate[Mpps]": "msg_rate_mpps",
             "t_min[usec]": "t_min_usec", "t_max[usec]": "t_max_usec", "t_typical[usec]": "t_typical_usec",
             "t_avg[usec]": "t_avg_usec", "t_stdev[usec]": "t_stdev_usec", "99% percentile[usec]": "p99_usec",
             "99.9% percentile[usec]": "p999_usec", "tps average": "tps_avg"}
MAX_ROWS = 2000  # table rows kept per run (a sweep has 23)
MAX_RUNS = 1000  # runs kept in perftest.runs (the last ones; a loop over a node's HCAs is a handful)
MAX_SETTINGS = 64  # settings kept per run (perftest prints about 15)


def _detect(text: str) -> float:
    head = text[:262144]
    if re.search(r"^[^\S\n]*#bytes[^\S\n]+(?:#sl[^\S\n]+)?#iterations[^\S\n]+(?:BW peak\[|t_min\[usec\]|t_avg\[usec\])", head, re.MULTILINE):
        return 0.9
    return 0.0


def _column_names(line: str) -> list[str]:
    return _COLUMN.findall(line)


def _row(cols: list[str], line: str) -> dict[str, Any] | None:
    cells = [c.strip("*") for c in line.split()]  # a value a person set in Markdown bold ("**920.13**")
    if len(cells) < len(cols) or not all(_NUM.match(c) for c in cells[:len(cols)]):
        return None
    row: dict[str, Any] = {}
    for col, cell in zip(cols, cells):
        v = float(cell)
        if col.startswith(("BW peak", "BW average", "BW Port")):
            if not col.endswith("[Gb/sec]"):
                v = round(v * _MIB_TO_GBPS, 2)
            key = {"BW peak": "bw_peak_gbps", "BW average": "bw_avg_gbps"}.get(col.split("[")[0],
                                                                              col.split("[")[0].lower().replace(" ", "_") + "_gbps")
            row[key] = v
        elif col in _ROW_KEYS:
            row[_ROW_KEYS[col]] = int(v) if col in ("#bytes", "#iterations", "#sl") else v
    if row.get("bw_peak_gbps") == 0 and row.get("bw_avg_gbps"):
        row["bw_peak_gbps"] = None  # a duration run (-D) measures no peak and prints 0.00
    return row


def _new_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A new run, appended to ``runs`` (the one before it ends there)."""
    runs.append({"test": None, "settings": {}, "cols": [], "rows": [], "gpu": False, "dmabuf": False, "command": False})
    return runs[-1]


def _summary(run: dict[str, Any]) -> dict[str, Any]:
    s = run["settings"]
    test = run["test"]
    kind = "lat" if (test and test.endswith("Latency")) or any(c.startswith("t_") for c in run["cols"]) else "bw"
    out: dict[str, Any] = {"test": test, "kind": kind, "device": s.get("Device"), "link_type": s.get("Link type"),
                           "bidirectional": bool(test and "Bidirectional" in test) if kind == "bw" else None,
                           "gpu_memory": True if run["gpu"] else (False if run["command"] else None),
                           "rows": run["rows"][:MAX_ROWS]}
    if kind == "bw":
        best = max((r for r in run["rows"] if isinstance(r.get("bw_avg_gbps"), float)),
                   key=lambda r: r["bw_avg_gbps"], default=None)
        if best is not None:
            out["bw_avg_gbps"], out["bw_avg_at_bytes"] = best["bw_avg_gbps"], best["size_bytes"]
    elif run["rows"]:
        first = min(run["rows"], key=lambda r: r["size_bytes"])
        out["lat_typical_usec"] = first.get("t_typical_usec")
        out["lat_avg_usec"] = first.get("t_avg_usec")
    return out


@parser(
    "perftest",
    detect=_detect,
    summary="perftest (ib_write_bw, ib_read_bw, ib_send_bw, ib_*_lat): RDMA bandwidth or latency per message size, device, link type, GID, MTU",
    facts=FACTS,
    command="ib_write_bw -d mlx5_0 --report_gbits -a   # on one host; then ib_write_bw -d mlx5_0 --report_gbits -a SERVER on the other",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "perftest output (ib_write_bw ...)")
    runs: list[dict[str, Any]] = []
    run = _new_run(runs)
    for line in text.split("\n"):
        title = _TITLE.match(line) if "Test" in line else None
        if title:
            if run["test"] or run["rows"]:
                run = _new_run(runs)
            run["test"] = title.group(1)
            continue
        if _HEADER.match(line):
            if run["rows"]:  # a second table without a new title (a loop whose settings were not pasted)
                run = _new_run(runs)
            run["cols"] = _column_names(line)
            continue
        if run["cols"]:
            row = _row(run["cols"], line)
            if row is not None:
                if len(run["rows"]) < MAX_ROWS:
                    run["rows"].append(row)
                continue
        if ("ib_" in line or "raw_ethernet_" in line) and len(line) < 4096 and _COMMAND.search(line):
            if run["rows"] or run["test"]:  # the next run's command line
                run = _new_run(runs)
            run["command"] = True  # its memory is what its options say: --use_cuda (or its siblings) or the host's
            run["gpu"] = "--use_cuda" in line
            run["dmabuf"] = "--use_cuda_dmabuf" in line
            continue
        if _CUDA.match(line):
            if run["rows"]:  # the next run's CUDA set-up, printed before its settings
                run = _new_run(runs)
            run["gpu"] = True
            run["dmabuf"] = run["dmabuf"] or bool(_DMABUF.match(line))
            continue
        if ":" in line and not run["cols"] and len(line) < 200 and len(run["settings"]) < MAX_SETTINGS:
            for m in _SETTING.finditer(line):
                key = " ".join(m.group(1).split())
                run["settings"].setdefault("GID index" if key == "Gid index" else key, m.group(2).strip())
    measured = [r for r in runs if r["rows"]]
    if not measured:
        raise ParseError("no perftest result table (' #bytes  #iterations  BW peak[...]' or ' #bytes #iterations  "
                         "t_min[usec] ...' and its rows): the run stopped before measuring, or the paste ends there")
    last = measured[-1]  # the facts below are the last measured run's
    summaries = [_summary(r) for r in measured[-MAX_RUNS:]]
    s = summaries[-1]
    facts: dict[str, object] = {"perftest.kind": s["kind"], "perftest.rows": s["rows"], "perftest.runs": summaries}
    for key in ("test", "device", "link_type", "bw_avg_gbps", "bw_avg_at_bytes", "lat_typical_usec", "lat_avg_usec"):
        if s.get(key) is not None:
            facts[f"perftest.{key}"] = s[key]
    if s["kind"] == "bw" and last["test"]:
        facts["perftest.bidirectional"] = s["bidirectional"]
    settings = last["settings"]
    for key, fact in (("Transport type", "perftest.transport"), ("Connection type", "perftest.connection")):
        if settings.get(key):
            facts[fact] = settings[key]
    for key, fact, strip in (("Number of qps", "perftest.qps", ""), ("Mtu", "perftest.mtu_bytes", "[B]"),
                             ("GID index", "perftest.gid_index", "")):
        raw = str(settings.get(key, "")).replace(strip, "")
        if raw.isdigit():
            facts[fact] = int(raw)
    if s["gpu_memory"] is not None:
        facts["perftest.gpu_memory"] = s["gpu_memory"]
    if last["dmabuf"]:  # (only ever set with the GPU's memory)
        facts["perftest.dmabuf"] = True
    return facts
