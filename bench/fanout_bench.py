"""Benchmark of the node-vs-node comparison at fan-out scale (docs/comparisons.md, "What it costs").

Builds N synthetic node bundles (default 1,024) in a temp directory: realistic evidence (the practice
case's H100 node outputs when present in decision_trees/practice/healthy/outputs, else a capture of this
machine), varied per node the way real nodes vary (GPU temperatures, counters, host names, task ids), with
a few outliers planted; then runs the comparison in a fresh process, twice:

- ``cold``: every bundle parsed (what ``fanout --bundles DIR --no-sidecar`` does), in one worker process per usable
  CPU (the tool's default; ``--workers`` to force a number);
- ``sidecar``: the NODE.facts.json each node wrote during ``fanout --job`` are read instead.

``--scale 128,512,1024`` measures the first N of the bundles built for each N (cold), prints the cost per node, and
models 4,096 nodes from a straight-line fit of the measured points (wall = fixed + per-node x N).

Prints wall time and peak memory (max RSS of the comparing process plus its workers; no tracemalloc, which
would slow the run 3-4x) against the targets
(1,024 nodes in under 3 s on this 2-core machine, 500 MB), and checks that the planted outliers are found.

    .venv/bin/python bench/fanout_bench.py [--nodes 1024] [--workers N] [--scale 128,512,1024] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_S, TARGET_MB = 3.0, 500.0
PRACTICE = ROOT / "decision_trees" / "practice" / "healthy" / "outputs"
PLANTED = {  # node index -> what differs
    17: "env NCCL_IB_QPS_PER_CONNECTION=1", 18: "env NCCL_IB_QPS_PER_CONNECTION=1", 19: "env NCCL_IB_QPS_PER_CONNECTION=1",
    300: "one HCA missing (ib-sysfs)", 511: "nvidia-smi not installed", 700: "memlock 64 KiB", 701: "memlock 64 KiB",
}
LIMITS = "#@ limits 1\nmemlock_soft=unlimited\nmemlock_hard=unlimited\nnofile_soft=1048576\nnofile_hard=1048576\nstack_soft=8192\nshm_present=1\nshm_fstype=tmpfs\nshm_df=tmpfs 1031865344 0 1031865344 0% /dev/shm\n"


def templates() -> tuple[str, dict[str, bytes]]:
    if PRACTICE.is_dir():
        out = {}
        for p in sorted(PRACTICE.glob("*.txt")):
            lines = p.read_text(errors="replace").splitlines(keepends=True)
            i = 0
            while i < len(lines) and lines[i].startswith("#%"):
                i += 1
            if i < len(lines) and not lines[i].strip():
                i += 1
            out[p.stem] = "".join(lines[i:]).encode()
        if "env-self" in out and "\0" not in out["env-self"].decode(errors="replace"):
            out["env-self"] = out["env-self"].replace(b"\n", b"\0")
        out["limits"] = LIMITS.encode()
        return "practice H100 node (decision_trees/practice/healthy/outputs)", out
    from troubleshooter.probe import collect
    from troubleshooter.probe.targets import LocalTarget

    coll = collect.collect(LocalTarget())
    out = {sid: ev.stdout for sid, ev in coll.evidence.items() if ev.ok}
    return "a capture of this machine", out


def build(directory: Path, n: int, seed: int = 1) -> dict[str, float]:
    from troubleshooter.probe import bundle as bmod
    from troubleshooter.model.evidence import Evidence, Status

    what, tpl = templates()
    rng = random.Random(seed)
    sizes = []
    t0 = time.monotonic()
    for i in range(n):
        node = f"gpu{i:04d}"
        ev = []
        for sid, data in tpl.items():
            text = data
            if sid == "env-self":
                text = re.sub(rb"SLURMD_NODENAME=[^\0]*", b"SLURMD_NODENAME=" + node.encode(), text)
                text = re.sub(rb"SLURM_PROCID=[^\0]*", b"SLURM_PROCID=%d" % i, text)
                if PLANTED.get(i, "").startswith("env"):
                    text += b"\0NCCL_IB_QPS_PER_CONNECTION=1\0"
            elif sid == "nvidia-smi-q":
                if PLANTED.get(i) == "nvidia-smi not installed":
                    ev.append(Evidence(sid, Status.NOT_INSTALLED, rc=127, reason="nvidia-smi is not installed",
                                       argv=["nvidia-smi", "-q"]))
                    continue
                text = re.sub(rb"(GPU Current Temp\s+: )\d+", lambda m: m.group(1) + b"%d" % rng.randint(45, 70), text)
            elif sid == "ib-sysfs" and PLANTED.get(i, "").startswith("one HCA"):
                text = b"\n".join(ln for ln in text.split(b"\n") if b"mlx5_7" not in ln and b"uverbs7" not in ln)
            elif sid == "limits" and PLANTED.get(i, "").startswith("memlock"):
                text = text.replace(b"memlock_soft=unlimited", b"memlock_soft=64")
            elif sid in ("cpuidle", "procstat", "meminfo", "turbostat", "numastat-proc", "proc-status", "dmesg"):
                text = text + b"\n" * (1 + i)  # counters differ on every node: no two outputs alike
            ev.append(Evidence(sid, Status.OK, rc=0, stdout=text, argv=["(synthetic)"], duration_s=0.01))
        manifest, files = bmod.build_manifest({"target": ({"kind": "local", "label": f"local ({node})"}, ev)})
        p = bmod.write(directory / f"{node}.bundle.tar.gz", manifest, files)
        sizes.append(p.stat().st_size)
    return {"template": what, "build_s": time.monotonic() - t0, "bundle_kb_mean": sum(sizes) / len(sizes) / 1024,
            "total_mb": sum(sizes) / 2**20}


def measure(directory: Path, mode: str, workers: int | None, limit: int | None = None) -> dict:
    """In a fresh process: compare the bundles (the first ``limit``), report wall time, CPU time (self and
    workers), max RSS (self + workers), the findings."""
    from troubleshooter.diagnosis import compare
    from troubleshooter.diagnosis.compare.nodefacts import usable_cpus

    t0 = time.monotonic()
    paths = compare.find_bundles(directory)[:limit]
    # the tool's rule (nodefacts.iter_node_facts): one worker per usable CPU from 64 bundles up, else one process
    used = (workers or (usable_cpus() if len(paths) >= 64 else 1)) if mode == "cold" else 0
    rep = compare.compare_node_bundles(paths, workers=workers if mode == "cold" else None, use_sidecar=(mode == "sidecar"))
    wall = time.monotonic() - t0
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    self_mb, kids_mb = me.ru_maxrss / 1024, kids.ru_maxrss / 1024
    found = {o.node: fo.fact for fo in rep.outliers for o in fo.outliers}
    return {"mode": mode, "nodes": len(rep.nodes), "workers": used, "wall_s": round(wall, 3),
            "cpu_s": round(me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime, 3),
            "maxrss_self_mb": round(self_mb, 1), "maxrss_worker_mb": round(kids_mb, 1),
            "peak_mb": round(self_mb + kids_mb * used, 1),
            "outlier_facts": len(rep.outliers), "groups": len(rep.groups), "found": found}


def run_measure(d: Path, mode: str, workers: int | None, limit: int | None = None) -> dict:
    argv = [sys.executable, __file__, "--measure", str(d), "--mode", mode]
    if workers:
        argv += ["--workers", str(workers)]
    if limit:
        argv += ["--limit", str(limit)]
    return json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)


def scaling(d: Path, sizes: list[int], workers: int | None, repeat: int = 1) -> None:
    """Cold runs over the first N bundles for each N (each N ``repeat`` times, the sizes in turn, medians): cost
    per node, and 4,096 modeled from a least-squares line through the medians (wall = fixed + per_node x N;
    memory the same way)."""
    import statistics

    runs: dict[int, list[dict]] = {n: [] for n in sizes}
    for _ in range(max(1, repeat)):
        for n in sizes:  # interleaved: a noisy neighbour hits every size
            runs[n].append(run_measure(d, "cold", workers, n))
    pts = []
    for n in sizes:
        rs = runs[n]
        wall = statistics.median(r["wall_s"] for r in rs)
        cpu = statistics.median(r["cpu_s"] for r in rs)
        peak = statistics.median(r["peak_mb"] for r in rs)
        pts.append((n, wall, peak, cpu))
        print(f"scale    {n:5d} nodes: {wall:.2f}s wall, {wall / n * 1000:.2f} ms/node, {cpu / n * 1000:.2f} CPU-ms/node, "
              f"{rs[0]['workers']} workers, peak {peak:.0f} MB (median of {len(rs)}: "
              f"{min(r['wall_s'] for r in rs):.2f}-{max(r['wall_s'] for r in rs):.2f}s)", flush=True)
    if len(pts) >= 2:
        xs = [p[0] for p in pts]
        mx = sum(xs) / len(xs)
        sxx = sum((x - mx) ** 2 for x in xs)

        def fit(ys: list[float]) -> tuple[float, float]:
            my = sum(ys) / len(ys)
            b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
            return my - b * mx, b

        a, b = fit([p[1] for p in pts])
        am, bm = fit([p[2] for p in pts])
        print(f"model     4096 nodes: {a + b * 4096:.2f}s wall (fixed {a:.2f}s + {b * 1000:.2f} ms/node), "
              f"{am + bm * 4096:.0f} MB peak (modeled from {', '.join(str(x) for x in xs)}, not run)", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1024)
    ap.add_argument("--workers", type=int, default=None, help="worker processes (default: the tool's, one per usable CPU)")
    ap.add_argument("--scale", help="comma-separated node counts measured cold from the first N bundles, and 4,096 modeled")
    ap.add_argument("--repeat", type=int, default=1, help="runs per --scale size (medians, sizes in turn)")
    ap.add_argument("--limit", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--keep", metavar="DIR", help="build the bundles here and keep them")
    ap.add_argument("--measure", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="cold", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure), args.mode, args.workers, args.limit)))
        return 0
    d = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ts-fanout-bench-"))
    d.mkdir(parents=True, exist_ok=True)
    sizes = sorted({int(x) for x in args.scale.split(",")}) if args.scale else []
    if sizes:
        args.nodes = max(args.nodes, sizes[-1])
    try:
        info = build(d, args.nodes)
        print(f"built {args.nodes} bundles from {info['template']} in {info['build_s']:.1f}s: "
              f"{info['bundle_kb_mean']:.0f} KiB each, {info['total_mb']:.1f} MiB in all")
        results = []
        for mode in ("cold", "sidecar"):
            if mode == "sidecar":
                from troubleshooter.diagnosis import compare

                t0 = time.monotonic()
                for p in compare.find_bundles(d):  # what each node does at the end of its fanout task
                    compare.write_sidecar(p)
                print(f"(wrote the {args.nodes} facts sidecars in {time.monotonic() - t0:.1f}s; on a real fanout each node writes its own, in parallel)")
            r = run_measure(d, mode, args.workers)
            results.append(r)
            planted = {f"gpu{i:04d}" for i in PLANTED if i < args.nodes}
            missed = sorted(planted - set(r["found"]))
            extra = sorted(set(r["found"]) - planted)
            print(f"{mode:8} {r['nodes']} nodes: {r['wall_s']:.2f}s ({r['wall_s'] / TARGET_S:.0%} of {TARGET_S:.0f}s), "
                  f"{r['workers']} workers, {r['cpu_s']:.2f} CPU-s ({r['cpu_s'] / max(1, r['nodes']) * 1000:.2f} ms/node), "
                  f"peak RSS {r['maxrss_self_mb']:.0f} MB + workers {r['maxrss_worker_mb']:.0f} MB each "
                  f"(total {r['peak_mb']:.0f} MB, {r['peak_mb'] / TARGET_MB:.0%} of {TARGET_MB:.0f} MB), "
                  f"{r['outlier_facts']} facts with outliers, "
                  f"{r['groups']} groups; planted found: {len(planted) - len(missed)}/{len(planted)}"
                  + (f", missed {missed}" if missed else "") + (f", unexpected {extra[:5]}" if extra else ""))
        if sizes:
            scaling(d, sizes, args.workers, args.repeat)
        print(f"machine: {os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
