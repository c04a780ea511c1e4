"""Training step times from a training log: their distribution and its shape (steady, bimodal, long tail).

Real sample (Megatron-LM, Mixtral 8x7B on 16 x H100, NVIDIA/Megatron-LM issue #756; tests/data/steps)::

     [2024-04-06 02:59:36] iteration       43/     100 | consumed samples:         5504 | elapsed time per
     iteration (ms): 5444.9 | throughput per GPU (TFLOP/s/GPU): 239.8 | learning rate: 8.600000E-06 | ...

(one line per iteration in the real log). Formats read, the first that matches wins:

1. Megatron-LM / NeMo (Megatron core): ``elapsed time per iteration (ms): 1234.5``; Megatron-DeepSpeed's
   ``elapsed time per iteration (s): 105.22`` (seconds).
2. NeMo / Lightning metric: ``train_step_timing in s: 1.23`` or ``train_step_timing=1.23`` (seconds).
3. PyTorch Lightning / tqdm progress lines: ``Epoch 0:  12%|...| 120/1000 [01:23<10:12, 1.44it/s, ...]``
   (``it/s`` -> 1000/x ms, ``s/it`` -> x*1000 ms); one value per distinct (epoch, step) pair, the last
   printed. These rates are tqdm's smoothed averages, so they hide single stalls: shape is less reliable.
4. Plain lines: ``step 12 ... time 1.234s`` / ``step: 12, step_time: 0.53`` (``time``, ``step_time``,
   ``step time``, ``iter_time``, ``elapsed``, ``duration``; unit ms or s when printed).
5. CSV with a header: the first column whose name holds ``step_time``, ``iter_time``, ``time`` or
   ``elapsed``/``duration``; unit from the name (``_ms``, ``(ms)``, ``_s``, ``(s)``, ``sec``).
6. One number per line.

Without a unit (formats 4-6), values are read as seconds when their median is below 20 and as milliseconds
otherwise (a training step lasts between ~20 ms and ~20 s in practice).

What it means: case 2 of the domain notes saw a bimodal step time with 50-100 ms stalls from data-loader
threads sharing cores with hypervisor housekeeping and missing NUMA binding: a steady median but a separated
cluster of slow steps.

Warm-up: with at least 20 steps, or when Megatron numbers it iteration 1 (the run's first), the first step is
dropped (``steps.skipped_warmup`` = 1) when it is more than 2x the median of the others (compilation, allocator
warm-up); nothing else is dropped.

Batch-size ramp-up: a Megatron log whose iterations print different global batch sizes (``--rampup-batch-size``)
is measured on the steps at the last size only (a step's time grows with its batch); the changes are listed
(``steps.batch_size_changes``).

Shape rule (``steps.shape``, needs at least 8 steps):

- Sort the step times. Candidate two-cluster splits are the cut points leaving at least 5% of the steps (and
  at least one) on each side; take the cut with the largest gap between neighbouring values. ``fast`` =
  below the cut, ``slow`` = above it. Centres are medians; spread is the scaled MAD (1.4826 x median absolute
  deviation), floored at 0.2% of the fast centre.
- **bimodal** when all hold: slow centre >= 1.05 x fast centre; the gap > 3 x the fast cluster's spread; and
  slow centre - fast centre >= 2 x the slow cluster's spread (the slow steps form a compact cluster, not a
  smear). The 1.05 ratio (not 1.15) lets 50-100 ms stalls on ~1 s steps count, as in case 2.
- **long-tail** when not bimodal and p99 / median >= 1.3.
- **steady** otherwise.

``steps.slow_share_pct`` is the slow cluster's share of steps when bimodal, else the share of steps more
than 20% above the median. ``steps.stall_ms`` is the median, over those slow steps, of (step - reference),
the reference being the fast cluster's centre when bimodal and the overall median otherwise; absent when
there are no slow steps.
"""

from __future__ import annotations

import bisect
import math
import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text, to_number

FACTS = [
    ("steps.count", "number", "count", "step times read (after dropping a warm-up step)"),
    ("steps.median_ms", "number", "ms", "median step time"),
    ("steps.p90_ms", "number", "ms", "90th percentile step time (linear interpolation)"),
    ("steps.p99_ms", "number", "ms", "99th percentile step time (linear interpolation)"),
    ("steps.mean_ms", "number", "ms", "mean step time"),
    ("steps.min_ms", "number", "ms", "fastest step"),
    ("steps.max_ms", "number", "ms", "slowest step"),
    ("steps.cv_pct", "number", "%", "coefficient of variation (population stdev / mean)"),
    ("steps.shape", "string", "", "steady | bimodal | long-tail (rule in the parser doc; needs >= 8 steps)"),
    ("steps.slow_share_pct", "number", "%", "share of steps in the slow cluster (bimodal) or > 1.2x the median (otherwise)"),
    ("steps.stall_ms", "number", "ms", "median excess of the slow steps over the overall median"),
    ("steps.skipped_warmup", "number", "count", "warm-up steps dropped at the start (0 or 1)"),
    ("steps.format", "string", "", "which log format was read (megatron, nemo, lightning, step-lines, csv, numbers)"),
    ("steps.batch_size_changes", "list", "", "where Megatron's global batch size changed between the iterations read "
     "('128 -> 256 at iteration 5400', a batch-size ramp-up): only the steps at the last size are measured"),
    ("steps.other_batch_size", "number", "count", "step times left out because they ran at another global batch size "
     "than the last one (a step's time grows with its batch)"),
]

MIN_SHAPE_STEPS = 8
MIN_CLUSTER_SHARE = 0.05
BIMODAL_MIN_RATIO = 1.05
GAP_K = 3.0
SEPARATION_K = 2.0
LONG_TAIL_RATIO = 1.3
SLOW_FACTOR = 1.2
MAX_STEP_MS = 1e9  # ~11.6 days: anything larger is not a step time

# Megatron-LM prints milliseconds; Megatron-DeepSpeed seconds ("elapsed time per iteration (s): 105.22")
_MEGATRON = re.compile(r"elapsed time per iteration \((ms|s)\):\s*([0-9.]+(?:[eE][+-]?\d+)?)")
# the record each time belongs to: " iteration   42780/ 115311 |" starts it; its batch size may sit on a re-wrapped line
_ITERATION = re.compile(r"\biteration\s+(\d+)\s*/\s*\d+")
_BATCH = re.compile(r"global batch size:\s*(\d+)")
_NEMO = re.compile(r"train_step_timing(?: in s)?\s*[:=]\s*([0-9.]+(?:[eE][+-]?\d+)?)")
_LIGHTNING = re.compile(r"(?:Epoch\s+(\d+).*?)?\b(\d+)/(\d+)\s*\[[^\]]*?([0-9.]+)\s*(it/s|s/it)")
_STEPLINE = re.compile(r"\bstep\b\s*[:=#]?\s*(\d+)\b(.*)", re.IGNORECASE)
_STEPTIME = re.compile(
    r"\b(step[_ ]time|iter(?:ation)?[_ ]time|time|elapsed|duration)\b\s*(?:\((ms|s)\))?\s*[:=]?\s*"
    r"([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?\d+)?)\s*(ms|s|sec|secs|seconds)?\b",
    re.IGNORECASE,
)


def _detect(text: str) -> float:
    if _MEGATRON.search(text):
        return 0.9
    if _NEMO.search(text):
        return 0.85
    if re.search(r"(?<!\d)\d+/\d+\s*\[\d+:\d+<[^\]]*(?:it/s|s/it)", text):
        return 0.6
    return 0.0


def _unitless(values: list[float]) -> list[float]:
    med = _percentile(sorted(values), 50)
    return [v * 1000.0 for v in values] if med < 20 else values


def _megatron(text: str) -> list[tuple[float, int | None, int | None]]:
    """Megatron's step times, each with the iteration number and the global batch size of its record (None where
    the record does not print them)."""
    starts = [(m.start(), int(m.group(1))) for m in _ITERATION.finditer(text)]
    out = []
    for m in _MEGATRON.finditer(text):
        ms = float(m.group(2)) * (1000.0 if m.group(1) == "s" else 1.0)
        i = bisect.bisect_right(starts, (m.start(), 1 << 62)) - 1
        if i < 0:
            out.append((ms, None, None))
            continue
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        b = _BATCH.search(text, starts[i][0], end)
        out.append((ms, starts[i][1], int(b.group(1)) if b else None))
    return out


def _extract(text: str) -> tuple[str, list[float]]:
    """The step times of the first format that matches (Megatron's are read by :func:`_megatron`, with their
    iterations and batch sizes)."""
    vals = [float(m.group(1)) * 1000.0 for m in _NEMO.finditer(text)]
    if vals:
        return "nemo", vals
    lines = text.split("\n")
    seen: dict[tuple[str, int], float] = {}
    for ln in lines:
        for m in _LIGHTNING.finditer(ln):
            rate = float(m.group(4))
            if rate <= 0:
                continue
            ms = 1000.0 / rate if m.group(5) == "it/s" else rate * 1000.0
            seen[(m.group(1) or "", int(m.group(2)))] = ms
    if seen:
        return "lightning", list(seen.values())
    step_vals: list[tuple[float, str | None]] = []
    for ln in lines:
        m = _STEPLINE.search(ln)
        if not m:
            continue
        t = _STEPTIME.search(m.group(2))
        if t:
            unit = (t.group(2) or t.group(4) or "").lower() or None
            step_vals.append((float(t.group(3)), unit))
    if step_vals:
        return "step-lines", _with_units(step_vals)
    csv = _csv(lines)
    if csv:
        return "csv", csv
    nums: list[float] = []
    other = 0
    for ln in lines:
        s = ln.strip()
        if not s or s.startswith("#"):
            continue
        v = to_number(s)
        if v is None:
            other += 1
        else:
            nums.append(float(v))
    if nums and other <= max(1, len(nums) // 20):
        return "numbers", _unitless(nums)
    raise ParseError("no step times found (expected Megatron 'elapsed time per iteration (ms)' or '(s)', Lightning "
                     "progress lines, 'step N ... time X' lines, a CSV with a time column or one number per line)")


def _with_units(pairs: list[tuple[float, str | None]]) -> list[float]:
    if all(u is None for _, u in pairs):
        return _unitless([v for v, _ in pairs])
    out = []
    for v, u in pairs:
        out.append(v if u == "ms" else v * 1000.0 if u is not None else v)
    return out


def _csv(lines: list[str]) -> list[float]:
    body = [ln for ln in lines if ln.strip() and not ln.startswith("#")]
    if len(body) < 2 or "," not in body[0]:
        return []
    header = [h.strip().strip('"').lower() for h in body[0].split(",")]
    col = None
    for pattern in (r"step[_ ]?time|iter(?:ation)?[_ ]?time", r"\btime\b|time", r"elapsed|duration"):
        for i, h in enumerate(header):
            if re.search(pattern, h) and "timestamp" not in h:
                col = i
                break
        if col is not None:
            break
    if col is None:
        return []
    name = header[col]
    unit = "ms" if re.search(r"ms\b|\(ms\)|_ms|millis", name) else "s" if re.search(r"_s\b|\(s\)|sec", name) else None
    vals = []
    for ln in body[1:]:
        cells = ln.split(",")
        if col < len(cells):
            v = to_number(cells[col].strip().strip('"'))
            if v is not None:
                vals.append(float(v))
    if not vals:
        return []
    if unit is None:
        return _unitless(vals)
    return [v if unit == "ms" else v * 1000.0 for v in vals]


def _percentile(sorted_vals: list[float], q: float) -> float:
    n = len(sorted_vals)
    if n == 1:
        return sorted_vals[0]
    pos = (n - 1) * q / 100.0
    lo = int(math.floor(pos))
    hi = min(lo + 1, n - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def _median(vals: list[float]) -> float:
    return _percentile(sorted(vals), 50)


def _mad(vals: list[float], centre: float) -> float:
    return 1.4826 * _median([abs(v - centre) for v in vals])


def shape_of(values: list[float]) -> dict[str, Any]:
    """The shape facts of a series of step times (ms): shape, slow_share_pct, stall_ms."""
    xs = sorted(values)
    n = len(xs)
    med = _percentile(xs, 50)
    out: dict[str, Any] = {}
    if n < MIN_SHAPE_STEPS:
        slow = [v for v in xs if v > SLOW_FACTOR * med]
    else:
        k = max(1, math.ceil(MIN_CLUSTER_SHARE * n))
        best_i, best_gap = None, -1.0
        for i in range(k, n - k + 1):
            gap = xs[i] - xs[i - 1]
            if gap > best_gap:
                best_i, best_gap = i, gap
        bimodal = False
        if best_i is not None:
            fast, slowc = xs[:best_i], xs[best_i:]
            fc, sc = _median(fast), _median(slowc)
            floor = 0.002 * fc
            fspread = max(_mad(fast, fc), floor)
            sspread = max(_mad(slowc, sc), floor)
            bimodal = (fc > 0 and sc >= BIMODAL_MIN_RATIO * fc and best_gap > GAP_K * fspread
                       and (sc - fc) >= SEPARATION_K * sspread)
        if bimodal:
            out["steps.shape"] = "bimodal"
            slow = slowc
            med = fc  # stalls are measured against the fast mode, the step as it should be
        else:
            p99 = _percentile(xs, 99)
            out["steps.shape"] = "long-tail" if med > 0 and p99 / med >= LONG_TAIL_RATIO else "steady"
            slow = [v for v in xs if v > SLOW_FACTOR * med]
    out["steps.slow_share_pct"] = round(100.0 * len(slow) / n, 2)
    if slow:
        out["steps.stall_ms"] = round(_median([v - med for v in slow]), 3)
    return out


@parser(
    "step-times",
    detect=_detect,
    summary="training step times (Megatron/NeMo, Lightning, 'step N time X', CSV, one per line)",
    facts=FACTS,
    command="grep 'elapsed time per iteration' train.log",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a training log with step times")
    extra: dict[str, Any] = {}
    first_iteration = False
    recs = _megatron(text)
    if recs:
        fmt = "megatron"
        recs = [r for r in recs if r[0] == r[0] and 0 <= r[0] <= MAX_STEP_MS]
        sizes = [b for _, _, b in recs]
        if len({b for b in sizes if b is not None}) > 1 and None not in sizes:
            extra["steps.batch_size_changes"] = [f"{a[2]} -> {b[2]} at iteration {b[1]}" if b[1] is not None else
                                                 f"{a[2]} -> {b[2]}" for a, b in zip(recs, recs[1:]) if a[2] != b[2]]
            kept = [r for r in recs if r[2] == sizes[-1]]
            extra["steps.other_batch_size"] = len(recs) - len(kept)
            recs = kept
        vals = [v for v, _, _ in recs]
        first_iteration = bool(recs) and recs[0][1] == 1  # the run's first iteration (compilation, allocator warm-up)
    else:
        fmt, vals = _extract(text)
    vals = [v for v in vals if v == v and 0 <= v <= MAX_STEP_MS]  # nan, negative and absurd values dropped
    if not vals:
        raise ParseError("step times found but none is a usable number")
    skipped = 0
    if (len(vals) >= 20 or first_iteration and len(vals) >= 2) and vals[0] > 2 * _median(vals[1:]):
        vals = vals[1:]
        skipped = 1
    xs = sorted(vals)
    n = len(xs)
    mean = sum(xs) / n
    var = sum((v - mean) ** 2 for v in xs) / n
    facts: dict[str, Any] = {
        "steps.format": fmt,
        "steps.count": n,
        "steps.skipped_warmup": skipped,
        "steps.median_ms": round(_percentile(xs, 50), 3),
        "steps.p90_ms": round(_percentile(xs, 90), 3),
        "steps.p99_ms": round(_percentile(xs, 99), 3),
        "steps.mean_ms": round(mean, 3),
        "steps.min_ms": round(xs[0], 3),
        "steps.max_ms": round(xs[-1], 3),
    }
    if mean > 0:
        facts["steps.cv_pct"] = round(100.0 * math.sqrt(var) / mean, 2)
    shape = shape_of(xs)
    if n < MIN_SHAPE_STEPS:
        shape.pop("steps.shape", None)
    facts.update(shape)
    facts.update(extra)
    return facts
