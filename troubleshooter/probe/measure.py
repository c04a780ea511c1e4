"""Active measurements: nccl-tests runs and sweeps, a CPU microbenchmark, a perf sample.

Everything runs on a :class:`~troubleshooter.probe.targets.Target` through an ad-hoc
:class:`~troubleshooter.sources.base.Source` (argv lists only, bounded by a timeout), so the same code serves
the local machine, a container wrapper and a Slurm step; every run is kept as
:class:`~troubleshooter.model.evidence.Evidence` next to the facts parsed from it.

Environment for a run (``NCCL_IB_QPS_PER_CONNECTION=4``) goes through ``Source.env``: a local target passes it
to the subprocess, a wrapped target prefixes ``env VAR=value``. Under Slurm across nodes the caller supplies
the launcher (give ``binary`` as the full command's first word on a target whose prefix is the ``srun``);
here the command simply runs on the target.

Sweep verdict (:func:`sweep`):

- each value is run ``repeats`` times; a run's score is the mean out-of-place busbw over the sizes it
  measured (set ``min_bytes``/``max_bytes`` to the workload's message sizes); a value's score is the median
  of its runs' scores, its spread ``(max - min) / median`` in %;
- the baseline is ``baseline`` (default: the first value, which should be the current/default setting:
  NCCL's default for ``NCCL_IB_QPS_PER_CONNECTION`` is 1);
- best = the measured value with the highest score; gain = best / baseline - 1 in %;
- the gain is *within noise* when it is below ``max(3 %, 2 x the larger spread of the best and baseline
  values)``;
- the recommendation names a value only when it was measured better than the baseline beyond noise on this
  target; otherwise it says to keep the baseline. A value that failed or timed out is never recommended.
"""

from __future__ import annotations

import dataclasses
import os
import re
import statistics
from typing import Any, Iterable, Mapping, Sequence

from troubleshooter import parsers
from troubleshooter.parsers.nccl_sweep import judge_sweep
from troubleshooter.model.evidence import Evidence, Status
from troubleshooter.sources.base import Params, Source
from troubleshooter.probe.targets import Target

NCCL_TEST_BINARIES = ("all_gather_perf", "reduce_scatter_perf", "all_reduce_perf", "alltoall_perf")

# Fixed script: the names and directories are positional arguments, never interpolated. No braces (see
# Source.render_argv).
_FIND_SCRIPT = r"""
for n in all_gather_perf reduce_scatter_perf all_reduce_perf alltoall_perf; do
  p=$(command -v "$n" 2>/dev/null) && echo "$n=$p" && continue
  for d in "$@"; do
    if [ -x "$d/$n" ]; then echo "$n=$d/$n"; break; fi
  done
done
exit 0
"""

# Fixed single-thread loop: integer and float arithmetic, dict and list work, bounded by the seconds given as
# its argument; prints ops/s.
_CPU_SCRIPT = r"""
import sys, time
seconds = float(sys.argv[1])
deadline = time.perf_counter() + seconds
ops = 0
d = {}
x = 1.0
while True:
    for i in range(2000):
        x = x * 1.000001 + i % 7
        d[i & 255] = i
    ops += 2000
    if time.perf_counter() >= deadline:
        break
elapsed = seconds + (time.perf_counter() - deadline)
print("ops_per_s=%.1f" % (ops / elapsed))
print("seconds=%.3f" % elapsed)
"""


@dataclasses.dataclass
class Measurement:
    """One active run: its evidence, the facts parsed from it, and the parse error if any."""

    evidence: Evidence
    facts: dict[str, Any] = dataclasses.field(default_factory=dict)
    parse_error: str = ""

    @property
    def ok(self) -> bool:
        return self.evidence.ok and not self.parse_error


def _escape(arg: str) -> str:
    return str(arg).replace("{", "{{").replace("}", "}}")


def _source(id: str, parser: str, argv: Sequence[str], timeout: float, env: Mapping[str, str] | None = None,
            summary: str = "", root: bool = False, needs: str = "") -> Source:
    full_env = {"LC_ALL": "C"}
    full_env.update({str(k): str(v) for k, v in (env or {}).items()})
    return Source(id=id, parser=parser, summary=summary or id, argv=tuple(_escape(a) for a in argv),
                  timeout_s=float(timeout), env=tuple(full_env.items()), active=True, family="measure",
                  root=root, needs=needs)


def _parse(kind: str, ev: Evidence) -> Measurement:
    if not ev.ok:
        return Measurement(ev)
    try:
        return Measurement(ev, parsers.run(kind, ev.text))
    except parsers.ParseError as exc:
        return Measurement(ev, {}, str(exc))


def find_nccl_tests(target: Target, search_dirs: Iterable[str] = (), timeout: float = 15.0) -> dict[str, str]:
    """Paths of the nccl-tests binaries on the target: PATH first, then each of ``search_dirs``."""
    dirs = [str(d) for d in search_dirs]
    src = _source("nccl-tests-find", "nccl-tests", ["sh", "-c", _FIND_SCRIPT, "find-nccl-tests", *dirs], timeout,
                  summary="locate nccl-tests binaries")
    ev = target.run(src, Params())
    found: dict[str, str] = {}
    if not ev.ok:
        return found
    for line in ev.text.splitlines():
        name, eq, path = line.strip().partition("=")
        if eq and name in NCCL_TEST_BINARIES and path and name not in found:
            found[name] = path
    return found


def nccl_test_argv(binary: str, min_bytes: int | str, max_bytes: int | str, factor: int = 2,
                   gpus_per_proc: int = 1, iters: int | None = None, warmup: int | None = None) -> list[str]:
    argv = [str(binary), "-b", str(min_bytes), "-e", str(max_bytes), "-f", str(factor), "-g", str(gpus_per_proc)]
    if iters is not None:
        argv += ["-n", str(iters)]
    if warmup is not None:
        argv += ["-w", str(warmup)]
    return argv


def run_nccl_test(
    target: Target,
    binary: str,
    min_bytes: int | str = "1M",
    max_bytes: int | str = "1G",
    factor: int = 2,
    gpus_per_proc: int = 1,
    iters: int | None = 20,
    env: Mapping[str, str] | None = None,
    timeout: float = 300.0,
    warmup: int | None = None,
) -> Measurement:
    """Run one nccl-tests binary on the target; the evidence plus the nccl-tests facts parsed from it."""
    argv = nccl_test_argv(binary, min_bytes, max_bytes, factor, gpus_per_proc, iters, warmup)
    name = os.path.basename(str(binary))
    src = _source(f"nccl-tests:{name}", "nccl-tests", argv, timeout, env, summary=f"nccl-tests {name}", needs=name)
    return _parse("nccl-tests", target.run(src, Params()))


@dataclasses.dataclass
class SweepRun:
    value: str
    repeat: int
    measurement: Measurement
    score_gbps: float | None  # mean oop busbw over sizes; None when the run failed
    busbw_by_size: dict[int, float]


@dataclasses.dataclass
class SweepResult:
    var: str
    values: list[str]
    baseline: str
    runs: list[SweepRun]
    score_gbps: dict[str, float]  # value -> median score over its repeats (measured values only)
    spread_pct: dict[str, float]
    busbw: dict[str, dict[int, float]]  # value -> size -> median busbw over repeats
    best: str | None
    gain_pct: float | None
    noise_pct: float | None
    within_noise: bool | None
    recommendation: str
    problems: list[str]

    @property
    def evidence(self) -> list[Evidence]:
        return [r.measurement.evidence for r in self.runs]

    def as_dict(self) -> dict[str, Any]:
        return {
            "var": self.var, "values": self.values, "baseline": self.baseline, "score_gbps": self.score_gbps,
            "spread_pct": self.spread_pct, "busbw": {v: {str(k): b for k, b in d.items()} for v, d in self.busbw.items()},
            "best": self.best, "gain_pct": self.gain_pct, "noise_pct": self.noise_pct,
            "within_noise": self.within_noise, "recommendation": self.recommendation, "problems": self.problems,
            "runs": [{"value": r.value, "repeat": r.repeat, "status": r.measurement.evidence.status.value,
                      "reason": r.measurement.evidence.reason or r.measurement.parse_error,
                      "score_gbps": r.score_gbps} for r in self.runs],
        }


def _run_score(m: Measurement) -> tuple[float | None, dict[int, float]]:
    if not m.ok:
        return None, {}
    rows = m.facts.get("nccl_tests.rows") or []
    by_size = {r["size_bytes"]: r["oop_busbw_gbps"] for r in rows if r.get("oop_busbw_gbps") is not None}
    if not by_size or m.facts.get("nccl_tests.failed"):
        return None, by_size
    return statistics.fmean(by_size.values()), by_size


def sweep(
    target: Target,
    binary: str,
    var: str = "NCCL_IB_QPS_PER_CONNECTION",
    values: Sequence[int | str] = (1, 2, 4, 8),
    min_bytes: int | str = "64M",
    max_bytes: int | str = "1G",
    factor: int = 2,
    gpus_per_proc: int = 1,
    iters: int | None = 20,
    repeats: int = 2,
    env: Mapping[str, str] | None = None,
    timeout: float = 300.0,
    baseline: int | str | None = None,
) -> SweepResult:
    """Run ``binary`` under each value of ``var`` (``repeats`` times each) and say which value is better."""
    vals = [str(v) for v in values]
    if not vals:
        raise ValueError("sweep needs at least one value")
    base = str(baseline) if baseline is not None else vals[0]
    if base not in vals:
        vals.insert(0, base)
    runs: list[SweepRun] = []
    problems: list[str] = []
    for v in vals:
        for rep in range(max(1, repeats)):
            run_env = dict(env or {})
            run_env[var] = v
            m = run_nccl_test(target, binary, min_bytes, max_bytes, factor, gpus_per_proc, iters, run_env, timeout)
            score, by_size = _run_score(m)
            runs.append(SweepRun(v, rep, m, score, by_size))
            if score is None:
                why = m.evidence.describe() if not m.evidence.ok else (m.parse_error or "no usable rows or wrong results")
                problems.append(f"{var}={v} run {rep + 1}: {why}")
    verdict = judge_sweep(var, vals, base, [(r.value, r.score_gbps, r.busbw_by_size) for r in runs], problems)
    return SweepResult(var, vals, base, runs, **verdict, problems=problems)


def cpu_microbench(target: Target, seconds: float = 1.0, python: str = "python3") -> Measurement:
    """A bounded single-thread CPU loop on the target; facts ``cpu.single_thread_score`` (ops/s).

    Compare the score across nodes (and with a reference): equal scores with a slow job point away from
    the CPU itself (case 1: microbenchmarks equal, the host's SMMU queue was the bottleneck); a low score
    on one node points at clocks, power limits or a busy core.
    """
    seconds = max(0.05, min(float(seconds), 60.0))
    src = _source("cpu-microbench", "cpu-microbench", [python, "-c", _CPU_SCRIPT, f"{seconds:g}"],
                  timeout=seconds + 30.0, summary="single-thread CPU microbenchmark", needs=python)
    ev = target.run(src, Params())
    if not ev.ok:
        return Measurement(ev)
    m = re.search(r"ops_per_s=([0-9.]+)", ev.text)
    if not m:
        return Measurement(ev, {}, "no ops_per_s line in the microbenchmark output")
    return Measurement(ev, {"cpu.single_thread_score": float(m.group(1))})


def perf_sample(target: Target, sample_s: int = 30) -> Measurement:
    """Run the ``perf-sample`` source for ``sample_s`` seconds (timeout sample_s + margin) and parse it."""
    from troubleshooter import sources
    from troubleshooter.sources.measure import PERF_SAMPLE_MARGIN_S

    src = dataclasses.replace(sources.get("perf-sample"), timeout_s=float(sample_s) + PERF_SAMPLE_MARGIN_S)
    return _parse("perf-report", target.run(src, Params(sample_s=int(sample_s))))


__all__ = ["Measurement", "SweepResult", "SweepRun", "find_nccl_tests", "run_nccl_test", "sweep",
           "cpu_microbench", "perf_sample", "NCCL_TEST_BINARIES", "Status"]
