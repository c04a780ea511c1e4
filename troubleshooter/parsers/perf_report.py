"""``perf report --stdio`` output and pasted ``perf top`` snapshots: where the CPUs spend their cycles.

Real sample (arm64, 64 CPUs, a ``perf top`` snapshot from ../shared/corpus/perf)::

        PerfTop:   32857 irqs/sec  kernel:85.0%  exact:  0.0% lost: 0/0
    drop: 0/0 [4000Hz cycles],  (all, 64 CPUs)
    -------------------------------------------------------------------------------
          8.99%  [kernel]          [k] arm_smmu_cmdq_issue_cmdlist
          5.80%  [kernel]          [k] __softirqentry_text_start
          2.07%  [kernel]          [k] queued_spin_lock_slowpath

and ``perf report --stdio --no-children --sort comm,dso,sym`` (what the ``perf-sample`` source runs)::

    # Samples: 3K of event 'cpu-clock:ppp'
    # Overhead  Command          Shared Object                        Symbol
        96.98%  swapper          [kernel.kallsyms]                    [k] pv_native_safe_halt

What it means: case 1 of the domain notes found 24% of host cycles in ``arm_smmu_cmdq_issue_cmdlist``: every
guest IOMMU invalidation trapping to the host and serialising on one SMMU command queue (fix: CMDQV). Lock
slow paths (``queued_spin_lock_slowpath``, ``osq_lock``) high in the list mean contention; IOMMU map/unmap
and flush symbols mean DMA translation overhead (``iommu=pt`` / passthrough removes it on bare metal).

Percentages are the *self* overhead of each entry (samples whose leaf frame is that symbol): with
``--children`` output (two columns, ``Children`` then ``Self``) the second column is used and entries are
re-sorted by it, since children totals of callers overlap and cannot be summed. Call-graph lines under an
entry (``---``, ``|--``, ``- 89.34% svc_process``) are ignored.

Shares (``perf.smmu_cmdq_pct``, ``perf.spinlock_pct``, ``perf.iommu_pct``) sum the self overhead of every
listed entry whose symbol matches (the same symbol under several commands counts once per line). A pasted
``perf top`` snapshot shows only its head: the sums are then lower bounds. Symbol sets:

- spinlock: ``queued_spin_lock_slowpath``, ``native_queued_spin_lock_slowpath``,
  ``__pv_queued_spin_lock_slowpath``, ``pv_queued_spin_lock_slowpath``, ``osq_lock``, ``_raw_spin_lock*``
  (``_raw_spin_lock``, ``_raw_spin_lock_irqsave``, ``_raw_spin_lock_irq``, ``_raw_spin_lock_bh``; not the
  unlock nor trylock functions).
- iommu: names starting ``intel_iommu``, ``iommu_``, ``__iommu_``, ``amd_iommu``, ``arm_smmu_``,
  ``__arm_smmu_``, ``arm_lpae_``, ``tegra241_cmdqv``, ``qi_`` (Intel invalidation queue), ``dma_pte_``,
  ``domain_flush``; exactly ``pfn_to_dma_pte``, ``alloc_iova``, ``alloc_iova_fast``, ``free_iova``,
  ``free_iova_fast``, ``cache_tag_flush_range``, ``cache_tag_flush_range_np``; and ``clflush_cache_range``
  only when an Intel IOMMU symbol (``intel_iommu*``, ``pfn_to_dma_pte``, ``dma_pte_*``) is listed too (the
  VT-d driver flushes page-table updates with it on non-coherent IOMMUs).
- smmu_cmdq: ``arm_smmu_cmdq_issue_cmdlist`` only.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("perf.top", "list", "", "the 50 hottest entries by self overhead: {pct, command, dso, symbol, kernel}; command is absent (null) in perf top snapshots"),
    ("perf.top_symbol", "string", "", "symbol with the highest self overhead"),
    ("perf.top_pct", "number", "%", "self overhead of the top symbol"),
    ("perf.smmu_cmdq_pct", "number", "%", "self overhead in arm_smmu_cmdq_issue_cmdlist (serialised SMMU command queue; case 1 saw 24%)"),
    ("perf.spinlock_pct", "number", "%", "self overhead in spinlock slow paths (queued_spin_lock_slowpath, osq_lock, _raw_spin_lock*)"),
    ("perf.iommu_pct", "number", "%", "self overhead in IOMMU map/unmap/invalidate/flush symbols (list in the parser doc)"),
    ("perf.samples", "number", "count", "samples in the profile (exact from the perf record trailer, else the rounded 'Samples: 15M' header)"),
    ("perf.event", "string", "", "sampled event without modifiers (cycles, cpu-clock, ...)"),
    ("perf.entries", "number", "count", "entries (lines) in the listing"),
]

_ENTRY = re.compile(
    r"^\s*(?:[+-]\s+)?(\d{1,3}(?:\.\d+)?)%\s++(?:(\d{1,3}(?:\.\d+)?)%\s++)?((?:.*?\S)??)\s*\[([.kgujHx])\]\s+(\S(?:.*\S)?)\s*$"
)
_SAMPLES_HDR = re.compile(r"Samples:\s*([\d.]+)\s*([KMGT]?)\s+of event\s+'([^']+)'")
_SAMPLES_REC = re.compile(r"perf record: Captured and wrote .*\((\d+) samples\)")
_TOP_EVENT = re.compile(r"\[\s*\d+\s*Hz\s+([\w\-./]+)(?::\w+)?\s*\]")
_CHILDREN = re.compile(r"\bChildren\s+Self\b")

_SPIN_EXACT = {"queued_spin_lock_slowpath", "native_queued_spin_lock_slowpath", "__pv_queued_spin_lock_slowpath",
               "pv_queued_spin_lock_slowpath", "osq_lock"}
_SPIN_RAW = re.compile(r"^_raw_spin_lock(?:_irqsave|_irq|_bh|_nested)?$")
_IOMMU_PREFIX = ("intel_iommu", "iommu_", "__iommu_", "amd_iommu", "arm_smmu_", "__arm_smmu_", "arm_lpae_",
                 "tegra241_cmdqv", "qi_", "dma_pte_", "domain_flush")
_IOMMU_EXACT = {"pfn_to_dma_pte", "alloc_iova", "alloc_iova_fast", "free_iova", "free_iova_fast",
                "cache_tag_flush_range", "cache_tag_flush_range_np"}
_INTEL = re.compile(r"^(intel_iommu|pfn_to_dma_pte$|dma_pte_)")
_MULT = {"": 1, "K": 1_000, "M": 1_000_000, "G": 1_000_000_000, "T": 1_000_000_000_000}


def _detect(text: str) -> float:
    if re.search(r"PerfTop:\s+\d+", text) or re.search(r"Overhead\s+(?:Command|Shared Object|Symbol)", text) \
            or _CHILDREN.search(text):
        return 0.95
    hits = sum(1 for ln in text.splitlines()[:2000] if _ENTRY.match(ln.lstrip("> ")))
    if hits >= 3:
        return 0.8
    return 0.3 if hits else 0.0


def _is_spin(sym: str) -> bool:
    return sym in _SPIN_EXACT or bool(_SPIN_RAW.match(sym))


def _is_iommu(sym: str, intel: bool) -> bool:
    if sym in _IOMMU_EXACT or sym.startswith(_IOMMU_PREFIX):
        return True
    return intel and sym == "clflush_cache_range"


@parser(
    "perf-report",
    detect=_detect,
    summary="perf report --stdio / pasted perf top: hottest symbols, SMMU, lock and IOMMU shares",
    facts=FACTS,
    command="perf record -a -g -o /tmp/p.data -- sleep 30; perf report --stdio -i /tmp/p.data --no-children --sort comm,dso,sym",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "perf report --stdio output or a perf top snapshot")
    entries: list[dict[str, Any]] = []
    for raw in text.split("\n"):
        line = re.sub(r"^(?:>\s?)+", "", raw)
        m = _ENTRY.match(line)
        if not m:
            continue
        first, second, middle, mark, sym = m.groups()
        # two percentage columns: perf prints Children first, Self second; we use Self
        pct = float(second) if second is not None else float(first)
        if pct > 100:
            continue
        middle = middle.strip()
        command = None
        dso = ""
        parts = [p for p in re.split(r"\s{2,}", middle) if p]
        if len(parts) >= 2:
            command, dso = " ".join(parts[:-1]), parts[-1]
        elif len(parts) == 1:
            toks = parts[0].split()
            if len(toks) == 1:
                dso = toks[0]
            else:
                command, dso = " ".join(toks[:-1]), toks[-1]
        sym = sym.strip()
        kernel = mark == "k" or dso.startswith("[kernel") or dso.startswith("[guest.kernel")
        entries.append({"pct": pct, "command": command, "dso": dso, "symbol": sym, "kernel": kernel})
    if not entries:
        raise ParseError("no perf entries found (expected lines like '  8.99%  [kernel]  [k] symbol')")
    entries.sort(key=lambda e: e["pct"], reverse=True)
    symbols = {e["symbol"] for e in entries}
    intel = any(_INTEL.match(s) for s in symbols)
    facts: dict[str, Any] = {
        "perf.top": entries[:50],
        "perf.top_symbol": entries[0]["symbol"],
        "perf.top_pct": entries[0]["pct"],
        "perf.smmu_cmdq_pct": round(sum((e["pct"] for e in entries if e["symbol"] == "arm_smmu_cmdq_issue_cmdlist"), 0.0), 2),
        "perf.spinlock_pct": round(sum((e["pct"] for e in entries if _is_spin(e["symbol"])), 0.0), 2),
        "perf.iommu_pct": round(sum((e["pct"] for e in entries if _is_iommu(e["symbol"], intel)), 0.0), 2),
        "perf.entries": len(entries),
    }
    m = _SAMPLES_REC.search(text)
    h = _SAMPLES_HDR.search(text)
    if m:
        facts["perf.samples"] = int(m.group(1))
    elif h:
        facts["perf.samples"] = int(round(float(h.group(1)) * _MULT[h.group(2)]))
    if h:
        facts["perf.event"] = h.group(3).split(":")[0]
    else:
        t = _TOP_EVENT.search(text)
        if t:
            facts["perf.event"] = t.group(1).split(":")[0]
    return facts
