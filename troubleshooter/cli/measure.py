"""`troubleshooter measure ...`: the active measurements, run on request, bounded, every run recorded.

    troubleshooter measure nccl  [--binary all_gather_perf] [-b 64M -e 1G] [--launcher 'srun --mpi=pmix -N 4 ...']
    troubleshooter measure sweep [--var NCCL_IB_QPS_PER_CONNECTION --values 1,2,4,8] [--repeats 2] ...
    troubleshooter measure cpu   [--seconds 1]
    troubleshooter measure perf  [--seconds 30]

All take the target options (--job/--node/--container-name/--exec). ``--launcher`` runs the binary under
a multi-node launcher (inside a Slurm job: ``srun --jobid J --overlap --mpi=pmix -N 4 --ntasks-per-node=4``),
which is how a collective spans the job's nodes; the runs' raw output can be saved as a bundle (-o).
"""

from __future__ import annotations

import argparse
import shlex

from troubleshooter.cli.common import EXIT_CANNOT, EXIT_FAIL, EXIT_OK, CliError, add_target_options, emitter, make_target


def register(sub: argparse._SubParsersAction) -> None:
    m = sub.add_parser("measure", help="active measurements: nccl-tests, a knob sweep, CPU microbenchmark, perf",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    msub = m.add_subparsers(dest="measure_verb", metavar="WHAT", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        add_target_options(p, bundle=False)
        p.add_argument("--json", action="store_true")
        p.add_argument("-o", "--output", metavar="PATH", help="also save every run's raw evidence as a bundle")

    def nccl_opts(p: argparse.ArgumentParser) -> None:
        p.add_argument("--binary", default="all_gather_perf", help="nccl-tests binary name or path (default all_gather_perf)")
        p.add_argument("-b", "--min-bytes", default="64M")
        p.add_argument("-e", "--max-bytes", default="1G")
        p.add_argument("-f", "--factor", type=int, default=2)
        p.add_argument("-g", "--gpus", type=int, default=1, help="GPUs per process (-g)")
        p.add_argument("-n", "--iters", type=int, default=20)
        p.add_argument("--launcher", metavar="PREFIX", help="multi-node launcher prefix, e.g. 'srun --mpi=pmix -N 4 --ntasks-per-node=8'")
        p.add_argument("--timeout", type=float, default=600.0, help="per run, seconds")
        p.add_argument("--set", action="append", default=[], metavar="VAR=VALUE", help="extra environment for the runs")
        p.add_argument("--nccl-debug", action="store_true",
                       help="run with NCCL_DEBUG=INFO and read NCCL's own log too (transport, HCAs, topology file)")

    p = msub.add_parser("nccl", help="run one nccl-tests binary")
    common(p)
    nccl_opts(p)
    p.set_defaults(func=cmd_nccl)

    p = msub.add_parser("sweep", help="the same collective under several values of one NCCL variable")
    common(p)
    nccl_opts(p)
    p.add_argument("--var", default="NCCL_IB_QPS_PER_CONNECTION")
    p.add_argument("--values", default="1,2,4,8", help="comma separated; the first is the baseline")
    p.add_argument("--repeats", type=int, default=2)
    p.set_defaults(func=cmd_sweep)

    p = msub.add_parser("cpu", help="single-thread CPU microbenchmark")
    common(p)
    p.add_argument("--seconds", type=float, default=1.0)
    p.set_defaults(func=cmd_cpu)

    p = msub.add_parser("perf", help="system-wide perf profile (root)")
    common(p)
    p.add_argument("--seconds", type=int, default=30)
    p.set_defaults(func=cmd_perf)


def _env(items: list[str]) -> dict[str, str]:
    out = {}
    for it in items:
        k, eq, v = it.partition("=")
        if not eq or not k:
            raise CliError(f"--set takes VAR=VALUE, got {it!r}")
        out[k] = v
    return out


def _target(args: argparse.Namespace):
    from troubleshooter.probe.targets import ExecTarget, SlurmTarget

    target = make_target(args)
    launcher = getattr(args, "launcher", None)
    if launcher:
        extra = shlex.split(launcher)
        if isinstance(target, SlurmTarget):
            raise CliError("--launcher replaces --job: put the srun --jobid J --overlap ... in the launcher")
        base = target.prefix if isinstance(target, ExecTarget) else []
        target = ExecTarget([*base, *extra])
    return target


def _save(args: argparse.Namespace, target, evidences) -> None:
    """Save runs as a bundle that replays: a single nccl-tests run under the source id that runs the same
    binary, a sweep as one ``nccl-sweep`` evidence (the format the nccl-sweep-qps source prints)."""
    if not getattr(args, "output", None):
        return
    import dataclasses
    import re

    from troubleshooter.probe import bundle

    evidences = list(evidences)
    if len(evidences) == 1:
        ev = evidences[0]
        sid = "nccl-allgather" if "all_gather" in ev.source_id else re.sub(r"[^A-Za-z0-9._-]+", "-", ev.source_id)
        evidences = [dataclasses.replace(ev, source_id=sid)]
    manifest, files = bundle.build_manifest({"target": (target.describe(), evidences)}, note="troubleshooter measure")
    path = bundle.write(args.output, manifest, files)
    emitter().line(f"saved {path}", err=True)


def cmd_nccl(args: argparse.Namespace) -> int:
    from troubleshooter.probe import measure

    target = _target(args)
    env = _env(args.set)
    if args.nccl_debug:
        env.setdefault("NCCL_DEBUG", "INFO")
        env.setdefault("NCCL_DEBUG_SUBSYS", "INIT,NET,GRAPH,ENV")
    m = measure.run_nccl_test(target, args.binary, args.min_bytes, args.max_bytes, args.factor, args.gpus,
                              args.iters, env, args.timeout)
    if args.nccl_debug and m.evidence.ok:
        from troubleshooter import parsers

        try:  # NCCL logs to stdout, interleaved with the table
            m.facts.update(parsers.run("nccl-debug", m.evidence.text + "\n" + m.evidence.stderr_text))
        except parsers.ParseError as exc:
            emitter().line(f"no NCCL INFO lines in the run's output: {exc}", err=True)
    _save(args, target, [m.evidence])
    if args.json:
        emitter(args).json({"status": m.evidence.status.value, "reason": m.evidence.reason,
                            "parse_error": m.parse_error, "facts": m.facts})
    else:
        if not m.ok:
            emitter().line(f"{args.binary}: {m.evidence.describe()}{' / ' + m.parse_error if m.parse_error else ''}", err=True)
        else:
            f = m.facts
            emitter().line(f"{f.get('nccl_tests.collective', args.binary)}: avg busbw {f.get('nccl_tests.avg_busbw_gbps')} GB/s, "
                  f"at {f.get('nccl_tests.max_size_bytes')} B {f.get('nccl_tests.busbw_at_max_size_gbps')} GB/s, "
                  f"{f.get('nccl_tests.ranks', '?')} ranks, wrong {f.get('nccl_tests.wrong_total', 0)}")
            if "nccl.net" in f or "nccl.version" in f:
                emitter().line(f"NCCL {f.get('nccl.version', '?')}: network {f.get('nccl.net', '?')}, HCAs "
                      f"{', '.join(f.get('nccl.hcas') or []) or '-'}, topology file {f.get('nccl.topo_file_used', '-')}"
                      + (f", {len(f.get('nccl.warnings') or [])} WARN" if f.get("nccl.warnings") else ""))
    return EXIT_OK if m.ok else EXIT_CANNOT


def cmd_sweep(args: argparse.Namespace) -> int:
    from troubleshooter.probe import measure

    target = _target(args)
    values = [v.strip() for v in args.values.split(",") if v.strip()]
    if not values:
        raise CliError("--values needs at least one value")
    r = measure.sweep(target, args.binary, args.var, values, args.min_bytes, args.max_bytes, args.factor,
                      args.gpus, args.iters, args.repeats, _env(args.set), args.timeout)
    if args.output:
        import dataclasses

        text = b"".join(b"#@ sweep %s=%s repeat=%d\n" % (args.var.encode(), run.value.encode(), run.repeat + 1)
                        + run.measurement.evidence.stdout for run in r.runs)
        first = r.runs[0].measurement.evidence
        sid = "nccl-sweep-qps" if args.var == "NCCL_IB_QPS_PER_CONNECTION" else "nccl-sweep"
        combined = dataclasses.replace(first, source_id=sid, stdout=text, stdout_bytes=len(text),
                                       duration_s=sum(x.measurement.evidence.duration_s for x in r.runs))
        _save(args, target, [combined] if len(r.runs) > 1 else [combined])
    if args.json:
        emitter(args).json(r.as_dict())
    else:
        emitter().line(f"{args.var} sweep with {args.binary} ({args.min_bytes}..{args.max_bytes}, {args.repeats} runs each):")
        for v in r.values:
            score = r.score_gbps.get(v)
            mark = "  <- best" if v == r.best else ""
            emitter().line(f"  {args.var}={v:<6} {'%.1f GB/s' % score if score is not None else 'failed':>12}"
                  f"  spread {r.spread_pct.get(v, 0):.1f}%{mark}")
        for p in r.problems:
            emitter().line(f"  ! {p}")
        emitter().line(r.recommendation)
    if r.within_noise is None:
        return EXIT_CANNOT
    return EXIT_FAIL if r.within_noise is False else EXIT_OK


def cmd_cpu(args: argparse.Namespace) -> int:
    from troubleshooter.probe import measure

    m = measure.cpu_microbench(make_target(args), args.seconds)
    if args.json:
        emitter(args).json({"status": m.evidence.status.value, "facts": m.facts}, indent=None)
    else:
        emitter().line(f"single-thread score: {m.facts.get('cpu.single_thread_score', '?')} ops/s" if m.ok else m.evidence.describe())
    return EXIT_OK if m.ok else EXIT_CANNOT


def cmd_perf(args: argparse.Namespace) -> int:
    from troubleshooter.probe import measure

    target = make_target(args)
    m = measure.perf_sample(target, args.seconds)
    _save(args, target, [m.evidence])
    if args.json:
        emitter(args).json({"status": m.evidence.status.value, "reason": m.evidence.reason, "facts": m.facts}, indent=None)
    elif not m.ok:
        emitter().line(m.evidence.describe(), err=True)
    else:
        for row in (m.facts.get("perf.top") or [])[:15]:
            emitter().line(f"{row['pct']:6.2f}%  {row.get('command') or '':16} {row.get('symbol')}")
        emitter().line(f"SMMU command queue: {m.facts.get('perf.smmu_cmdq_pct', 0)}%  spin locks: {m.facts.get('perf.spinlock_pct', 0)}%")
    return EXIT_OK if m.ok else EXIT_CANNOT
