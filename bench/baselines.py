"""The simplest real alternatives the benchmarks compare against (bench/run.py, docs/benchmarks.md).

Each parser is compared with a plain Python loop that extracts the same numbers from the same lines: what someone
would write in five minutes instead of using the tool. The loops are deliberately direct (one pass, ``split``,
``float``, one expression for the NCCL prefix) but not strawmen: they compute the same summary figures the parser
reports (max busbw, busbw at the largest size, wrong count; network, HCAs, variables, hosts, channels, ranks).

The inputs are built from the real captures in tests/data: nccl-tests output as printed (NCCL INFO lines interleaved
in some), and NCCL_DEBUG logs both as NCCL's lines only and as a training job's log really is, mostly the job's own
lines with NCCL's mixed in.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Iterable

ROOT = Path(__file__).resolve().parents[1]


def corpus(kind_dir: str) -> list[str]:
    """The lines of every capture of a kind in tests/data (their ``#%`` provenance headers dropped)."""
    out: list[str] = []
    for f in sorted((ROOT / "tests" / "data" / kind_dir).iterdir()):
        if f.is_file():
            lines = f.read_text(encoding="utf-8", errors="replace").split("\n")
            while lines and lines[0].startswith("#%"):
                lines.pop(0)
            out.extend(ln for ln in lines)
    return out


# What a training job prints between NCCL's lines (PyTorch / Megatron-style progress, warnings, data loading).
APP_LINES = [
    " [2026-07-30 10:12:{s:02d}] iteration {i:>8}/  500000 | consumed samples: {c:>12} | elapsed time per iteration (ms): 1043.{s} | learning rate: 2.999E-04 | global batch size:  1024 | lm loss: 2.31{s:02d}E+00 | loss scale: 1.0 | grad norm: 0.2{s} | number of skipped iterations:   0 | number of nan iterations:   0 |",
    "[rank{r}]:[W730 10:12:{s:02d}.{i:06d} ProcessGroupNCCL.cpp:1168] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS is the default now",
    "INFO:megatron.core.datasets.blended_megatron_dataset_builder:Building dataset splits with cls=GPTDataset, sizes=(5120000, 51200, 1024), and config={s}",
    "  [{i}/{c}] train: loss=2.{s:02d} tokens/s=412{s:02d}.5 tflops=391.{s} mem=71.2GiB",
    "{i}: W0730 10:12:{s:02d}.{c} torch/distributed/run.py:779] Setting OMP_NUM_THREADS environment variable for each process",
]


def app_line(i: int) -> str:
    return APP_LINES[i % len(APP_LINES)].format(i=i, s=i % 60, c=i * 1024, r=i % 8)


def nccl_debug_lines(target_lines: int, nccl_share: float) -> list[str]:
    """An NCCL_DEBUG log of about ``target_lines`` lines, ``nccl_share`` of them NCCL's own (1.0: NCCL's lines
    only; ~0.1: a real training log, where the job's output dominates)."""
    nccl = [ln for ln in corpus("nccl-debug") if ln.strip()]
    out: list[str] = []
    k = 0
    i = 0
    every = max(1, round(1 / nccl_share)) if nccl_share < 1 else 1
    while len(out) < target_lines:
        if nccl_share >= 1 or i % every == 0:
            out.append(nccl[k % len(nccl)])
            k += 1
        else:
            out.append(app_line(i))
        i += 1
    return out


def nccl_tests_lines(target_lines: int) -> list[str]:
    base = corpus("nccl-tests")
    return [base[i % len(base)] for i in range(target_lines)]


# ------------------------------------------------------------------ the plain loops
def nccl_tests_loop(lines: Iterable[str]) -> dict:
    """Rows (size, count, time/algbw/busbw/#wrong out-of-place and in-place) and the summary figures of the last
    run, by splitting each line: no run detection, no header parsing, no old formats."""
    rows: list[tuple] = []
    avg = None
    for line in lines:
        t = line.split()
        if len(t) >= 11 and t[0].isdigit() and t[1].isdigit():
            try:
                rows.append((int(t[0]), int(t[1]), float(t[-8]), float(t[-7]), float(t[-6]), int(t[-5]),
                             float(t[-4]), float(t[-3]), float(t[-2]), int(t[-1])))
            except ValueError:
                pass
        elif "Avg bus bandwidth" in line:
            try:
                avg = float(line.rsplit(":", 1)[1])
            except ValueError:
                pass
        elif "Collective test starting" in line:
            rows = []
    if not rows:
        return {"avg": avg}
    big = max(rows, key=lambda r: r[0])
    return {"rows": rows, "avg": avg, "max_busbw": max(max(r[4], r[8]) for r in rows), "at_max": big[4],
            "max_size": big[0], "wrong": sum(r[5] + r[9] for r in rows)}


_PREFIX = re.compile(r"([\w.\-]+):\d+:\d+ \[\d+\] (?:\S+:\d+ )?NCCL (INFO|WARN) ?(.*)")
_HCA = re.compile(r"\[\d+\]([^\s:\[\]]+):(\d+)/(\w+)")


def nccl_debug_loop(lines: Iterable[str]) -> dict:
    """Network, HCAs, NCCL_* variables, hosts, channels, ranks, version and warnings: one expression for NCCL's
    prefix on the lines that mention NCCL, then a test per message kind."""
    hosts: set[str] = set()
    nets: Counter[str] = Counter()
    env: dict[str, str] = {}
    hcas: dict[str, str] = {}
    warnings: list[str] = []
    version = channels = nranks = None
    for line in lines:
        if "NCCL INFO" not in line and "NCCL WARN" not in line:
            if version is None and "NCCL version" in line:
                version = line.split("NCCL version", 1)[1].split()[0].split("+")[0]
            continue
        m = _PREFIX.search(line)
        if m is None:
            continue
        hosts.add(m.group(1))
        msg = m.group(3)
        if m.group(2) == "WARN" and len(warnings) < 20 and msg not in warnings:
            warnings.append(msg)
        if msg.startswith("Using network"):
            nets[msg[14:].strip()] += 1
        elif msg.startswith("NET/IB : Using"):
            for dev, port, kind in _HCA.findall(msg):
                hcas[f"{dev}:{port}"] = kind
        elif " set by environment to " in msg:
            name, _, value = msg.partition(" set by environment to ")
            env[name.split()[-1]] = value.strip().rstrip(".")
        elif "coll channels" in msg:
            channels = max(channels or 0, int(msg.split()[0]))
        elif "nranks" in msg:
            n = msg.split("nranks", 1)[1].split()[0]
            if n.isdigit():
                nranks = max(nranks or 0, int(n))
        elif version is None and msg.startswith("NCCL version"):
            version = msg.split()[2].split("+")[0]
    return {"net": nets.most_common(1)[0][0] if nets else None, "hcas": hcas, "env": env, "hosts": sorted(hosts),
            "channels": channels, "ranks": nranks, "version": version, "warnings": warnings}
