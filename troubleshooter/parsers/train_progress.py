"""A training script's own progress lines (loss, throughput, data-loading time), when they carry no step time.

Real samples (tests/data/train-progress)::

    ctdet/coco_dla |##########                      | train: [54][4784/14785]|Tot: 1:20:53 |ETA: 6:14:23 |loss 1.7448 |hm_loss 1.3093 |wh_loss 2.2258 |off_loss 0.2129 |Data 3.556s(0.517s) |Net 1.014s

(CenterNet, xingyizhou/CenterNet#604: ``Data`` is the time the last batch waited for the data loader, with its
running average in brackets; ``Net`` the average iteration time), and::

    Epoch  1,   700/15756; ; ppl: 800.48 ; lr: 0.0000590 ; updates:     175; 41216 src tok/s; 68691 tgt tok/s; 0:02:03 elapsed

(NMTGMinor, quanpn90/NMTGMinor#28). A progress line is one that names a loss (``loss``, ``ppl``, ``acc``) and an
iteration (``Epoch``, ``iter``, ``step``, ``[i/n]``, ``i/n``). Read from them: how many there are, the throughput
they print (``tok/s``, ``samples/s``, ``img/s``, ``it/s``, the first such figure on a line) and, where the line
prints both, the data-loading time against the iteration time.

What it means: these lines describe the application, not the cluster. A throughput that falls, or an iteration
that mostly waits for data, points at the input pipeline or at something else using the CPUs first (a desktop
IDE, other jobs); it is evidence to show, and no cluster cause is drawn from it. Logs that print step times
(Megatron, NeMo, Lightning, ``step N time X``) are the step-times kind's.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("train.progress_lines", "number", "count", "training progress lines read (a loss and an iteration on one line)"),
    ("train.throughput_unit", "string", "", "unit of the throughput the lines print (tok/s, samples/s, img/s, it/s ...)"),
    ("train.throughput_first", "number", "per s", "throughput on the first progress line that prints one"),
    ("train.throughput_last", "number", "per s", "throughput on the last progress line that prints one"),
    ("train.throughput_median", "number", "per s", "median throughput over the progress lines"),
    ("train.throughput_last_vs_median_pct", "number", "%", "last throughput as a share of the median (below 100: the run got slower)"),
    ("train.data_wait_s", "number", "s", "data-loading time per iteration on the last line printing it (its running average when printed)"),
    ("train.iter_s", "number", "s", "iteration time on the last line printing it next to the data time (its running average when printed)"),
    ("train.data_wait_share_pct", "number", "%", "share of the iteration spent waiting for data (data time / iteration time), last line printing both"),
]

_LOSS = re.compile(r"\b(?:\w*loss|ppl|perplexity|acc(?:uracy)?)\b\s*[:=]?\s*-?\d", re.IGNORECASE)
_ITER = re.compile(r"\b(?:epoch|iter(?:ation)?|step|updates?)\b|\[\d+\]\s*\[\d+/\d+\]|\b\d+\s*/\s*\d+\b", re.IGNORECASE)
_THROUGHPUT = re.compile(r"(?<![0-9,])([0-9][0-9,]*(?:\.\d+)?)\s*((?:src |tgt )?(?:tok(?:en)?s?|samples?|seqs?|sequences|img|images|it)/s(?:ec)?)\b",
                         re.IGNORECASE)
_DATA = re.compile(r"\b(?:Data|data_time|data)\b\s*[:=]?\s*([0-9.]+)\s*(?:s\s*)?(?:\(\s*([0-9.]+)\s*(?:s\s*)?\))?")
_ITER_T = re.compile(r"\b(?:Net|Time|batch_time|iter_time|Batch)\b\s*[:=]?\s*([0-9.]+)\s*(?:s\s*)?(?:\(\s*([0-9.]+)\s*(?:s\s*)?\))?")
_STEP_TIMES = re.compile(r"elapsed time per iteration|train_step_timing|it/s\]|s/it\]")


def _is_progress(line: str) -> bool:
    return bool(_LOSS.search(line) and _ITER.search(line))


def _detect(text: str) -> float:
    head = text[:262144]
    if _STEP_TIMES.search(head):
        return 0.0  # the step-times kind reads these
    n = sum(1 for ln in head.split("\n", 2000)[:2000] if ("loss" in ln.lower() or "ppl" in ln or "acc" in ln.lower())
            and _is_progress(ln))
    return 0.55 if n >= 2 else 0.0


def _num(s: str) -> float | None:
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return None


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


@parser(
    "train-progress",
    detect=_detect,
    summary="a training script's progress lines (loss, throughput, data-loading time) without step times",
    facts=FACTS,
    command="tail -n 50 train.log",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "training progress lines (loss and iteration on one line)")
    lines = [ln for ln in text.split("\n") if _is_progress(ln)]
    if not lines:
        raise ParseError("no training progress line (a loss and an iteration on one line) found")
    facts: dict[str, Any] = {"train.progress_lines": len(lines)}
    tp: list[float] = []
    unit = None
    for ln in lines:
        m = _THROUGHPUT.search(ln)
        if m:
            v = _num(m.group(1))
            u = " ".join(m.group(2).split()).lower()
            if v is not None and (unit is None or u == unit):
                unit = u
                tp.append(v)
    if tp:
        med = _median(tp)
        facts.update({"train.throughput_unit": unit, "train.throughput_first": tp[0], "train.throughput_last": tp[-1],
                      "train.throughput_median": med})
        if med > 0 and len(tp) >= 3:
            facts["train.throughput_last_vs_median_pct"] = round(100.0 * tp[-1] / med, 1)
    for ln in reversed(lines):
        d, t = _DATA.search(ln), _ITER_T.search(ln)
        if d and t:
            data = _num(d.group(2) or d.group(1))
            it = _num(t.group(2) or t.group(1))
            if data is not None and it is not None:
                facts["train.data_wait_s"] = data
                facts["train.iter_s"] = it
                if it > 0:
                    facts["train.data_wait_share_pct"] = round(100.0 * data / it, 1)
                break
    return facts
