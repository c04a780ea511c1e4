"""A knob sweep: several nccl-tests runs of one collective under different values of one NCCL variable.

The ``nccl-sweep-qps`` source (and anyone by hand) prints, before each run, a marker line naming the value::

    #@ sweep NCCL_IB_QPS_PER_CONNECTION=4 repeat=1
    # nThread 1 nGpus 1 minBytes 67108864 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 ...
    #       size         count      type   redop    root     time   algbw   busbw #wrong ...
        67108864       1048576     float    none      -1   2154.3   31.15   58.40      0 ...
    # Avg bus bandwidth    : 60.9

Each run is read by the ``nccl-tests`` parser; the judgement (median per value, noise threshold, best value,
gain over the baseline, the recommendation) is :func:`judge_sweep` below, the same code the live sweep
(:func:`troubleshooter.probe.measure.sweep`) uses. The baseline is the first value swept (NCCL's default, 1, for QPS). A value is recommended
only when it measured better than the baseline beyond the run-to-run noise: case 3's lesson.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from troubleshooter.parsers.base import ParseError, parser, require_text

_MARK = re.compile(r"^#@ sweep (?P<var>[A-Z][A-Z0-9_]*)=(?P<value>\S+)(?: repeat=(?P<rep>\d+))?\s*$", re.MULTILINE)

FACTS = [
    ("sweep.var", "string", "", "the NCCL variable swept"),
    ("sweep.values", "list", "", "values swept, in order (the first is the baseline)"),
    ("sweep.baseline_value", "string", "", "the value compared against (the first swept)"),
    ("sweep.score_gbps", "dict", "GB/s", "value -> median over repeats of the mean out-of-place busbw over sizes"),
    ("sweep.busbw_by_value", "dict", "GB/s", "value -> size in bytes -> median busbw"),
    ("sweep.best_value", "string", "", "the value with the highest score"),
    ("sweep.best_busbw_gbps", "number", "GB/s", "score of the best value"),
    ("sweep.baseline_busbw_gbps", "number", "GB/s", "score of the baseline value"),
    ("sweep.gain_pct", "number", "%", "best over baseline, percent"),
    ("sweep.noise_pct", "number", "%", "gain below this is noise: max(3%, 2x the spread of repeats)"),
    ("sweep.within_noise", "bool", "", "the best value is not better than the baseline beyond noise"),
    ("sweep.recommendation", "string", "", "what to set, or to keep the default, and why"),
    ("sweep.collective", "string", "", "the collective the sweep ran"),
    ("sweep.problems", "list", "", "runs that failed or gave wrong results"),
]


def _detect(text: str) -> float:
    return 0.97 if _MARK.search(text) else 0.0


@parser("nccl-sweep", detect=_detect, summary="nccl-tests runs under several values of one NCCL variable (#@ sweep markers)",
        facts=FACTS, command="troubleshooter check --measure (source nccl-sweep-qps)")
def parse(text: str) -> dict[str, Any]:
    from troubleshooter.parsers import nccl_tests

    text = require_text(text, "nccl-tests runs separated by '#@ sweep VAR=VALUE' lines")
    marks = list(_MARK.finditer(text))
    if not marks:
        raise ParseError("no '#@ sweep VAR=VALUE' marker lines")
    var = marks[0].group("var")
    if any(m.group("var") != var for m in marks):
        raise ParseError("a sweep varies one variable; found several", line=text.count("\n", 0, marks[-1].start()) + 1)
    values: list[str] = []
    runs: list[tuple[str, float | None, dict[int, float]]] = []
    problems: list[str] = []
    collective = None
    for i, m in enumerate(marks):
        value = m.group("value")
        if value not in values:
            values.append(value)
        chunk = text[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        try:
            f = nccl_tests.parse(chunk)
        except ParseError as exc:
            runs.append((value, None, {}))
            problems.append(f"{var}={value}: {exc}")
            continue
        collective = collective or f.get("nccl_tests.collective")
        rows = f.get("nccl_tests.rows") or []
        by_size = {r["size_bytes"]: r["oop_busbw_gbps"] for r in rows if r.get("oop_busbw_gbps") is not None}
        if not by_size or f.get("nccl_tests.failed"):
            runs.append((value, None, by_size))
            problems.append(f"{var}={value}: no usable rows or wrong results")
            continue
        runs.append((value, sum(by_size.values()) / len(by_size), by_size))
    v = judge_sweep(var, values, values[0], runs, problems)
    out: dict[str, Any] = {
        "sweep.var": var, "sweep.values": values, "sweep.baseline_value": values[0],
        "sweep.score_gbps": v["score_gbps"],
        "sweep.busbw_by_value": {k: {str(s): b for s, b in d.items()} for k, d in v["busbw"].items()},
        "sweep.recommendation": v["recommendation"], "sweep.problems": problems,
    }
    if v["best"] is not None:
        out["sweep.best_value"] = v["best"]
        out["sweep.best_busbw_gbps"] = v["score_gbps"][v["best"]]
    if values[0] in v["score_gbps"]:
        out["sweep.baseline_busbw_gbps"] = v["score_gbps"][values[0]]
    for key, fact in (("gain_pct", "sweep.gain_pct"), ("noise_pct", "sweep.noise_pct"), ("within_noise", "sweep.within_noise")):
        if v[key] is not None:
            out[fact] = v[key]
    if collective:
        out["sweep.collective"] = collective
    return out


def judge_sweep(var: str, vals: Sequence[str], base: str,
                runs: Sequence[tuple[str, float | None, dict[int, float]]], problems: Sequence[str] = ()) -> dict[str, Any]:
    """Pure judgement of a sweep: per value the median score, spread, busbw per size; the best value, the
    gain over the baseline, the noise threshold and the recommendation. Shared by :func:`sweep` and the
    ``nccl-sweep`` parser (a sweep captured in a bundle or pasted)."""
    problems = list(problems)
    score: dict[str, float] = {}
    spread: dict[str, float] = {}
    busbw: dict[str, dict[int, float]] = {}
    import statistics  # here: ~2 ms of every start-up at import

    for v in vals:
        good = [r for r in runs if r[0] == v and r[1] is not None]
        if not good:
            continue
        scores = [r[1] for r in good]
        med = statistics.median(scores)
        score[v] = round(med, 3)
        spread[v] = round(100.0 * (max(scores) - min(scores)) / med, 3) if med > 0 else 0.0
        sizes = sorted({s for r in good for s in r[2]})
        busbw[v] = {s: statistics.median([r[2][s] for r in good if s in r[2]]) for s in sizes}
    best = max(score, key=lambda k: score[k]) if score else None
    gain = noise = within = None
    if base not in score:
        rec = (f"no recommendation: the baseline {var}={base} could not be measured"
               + (f" ({problems[0]})" if problems else ""))
    else:
        assert best is not None
        gain = round(100.0 * (score[best] / score[base] - 1.0), 2) if score[base] > 0 else None
        noise = round(max(3.0, 2.0 * max(spread.get(best, 0.0), spread.get(base, 0.0))), 2)
        if gain is None:
            within = True
            rec = f"keep {var}={base}: the baseline busbw is 0, nothing to compare"
        else:
            within = best == base or gain < noise
            if within:
                rec = (f"keep {var}={base}: no value measured better beyond noise on this target "
                       f"(best {var}={best}: {gain:+.1f}% vs noise threshold {noise:.1f}%)")
            else:
                rec = (f"set {var}={best}: measured {gain:.0f}% higher busbw than {var}={base} on this target "
                       f"({score[best]:.1f} vs {score[base]:.1f} GB/s, noise threshold {noise:.1f}%); "
                       f"apply it only to jobs on this fabric")
    return {"score_gbps": score, "spread_pct": spread, "busbw": busbw, "best": best, "gain_pct": gain,
            "noise_pct": noise, "within_noise": within, "recommendation": rec}
