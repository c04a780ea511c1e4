"""Verbs ``compare`` (host vs container, A vs B bundles) and ``fanout`` (every node of a job). docs/comparisons.md."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from troubleshooter.cli.common import EXIT_CANNOT, EXIT_FAIL, EXIT_OK, CliError, make_params, make_target, emitter
from troubleshooter.output.compare_text import _cell


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser(
        "compare", help="host vs container (--host), or two bundles (A B): what differs",
        description="`compare --host --exec PREFIX` / `compare --host --job J [--exec PREFIX]`: run the runtime-"
        "topology sources here and in the target, show what differs (exit 1 when a difference that matters is "
        "found: an NCCL_* variable, the topology file, RDMA visibility, the GPU count, memlock). "
        "`compare A B` (bundles): facts that moved, checks whose verdict changed, measured numbers with their "
        "ratio B/A (exit 1 when B is below the reference ratio or a check now fails). Exit 2: cannot run.")
    c.add_argument("bundles", nargs="*", metavar="BUNDLE", help="A (before, or the healthy reference) and B (after, or the node)")
    c.add_argument("--host", action="store_true", help="compare this host with the target given by --exec/--job")
    g = c.add_argument_group("the target side of --host")
    g.add_argument("--job", metavar="J", help="inside running Slurm job J (srun --jobid J --overlap)")
    g.add_argument("--node", metavar="N", help="with --job: the node of the allocation")
    g.add_argument("--container-name", metavar="C", help="with --job: the pyxis container of the job")
    g.add_argument("--exec", dest="exec_prefix", metavar="PREFIX", help="a container or wrapper, e.g. 'docker exec trainer' (with --job: inside the step)")
    c.add_argument("--all-env", action="store_true", help="--host: compare every variable (minus the ignore list), not only NCCL_/UCX_/NVSHMEM_/CUDA_/FI_")
    c.add_argument("--all", action="store_true", help="also list what is the same")
    c.add_argument("--fact", action="append", metavar="GLOB", help="A B: only these facts (repeatable, globs)")
    c.add_argument("--include-volatile", action="store_true", help="A B: also counters and ids that change on every reading")
    c.add_argument("--profile", metavar="ID", help="A B: reference profile for the checks and the ratio rule")
    c.add_argument("--json", action="store_true", help="machine-readable output (schema in docs/comparisons.md)")
    c.set_defaults(func=cmd_compare)

    f = sub.add_parser(
        "fanout", help="capture every node of a job in one srun step and compare the nodes",
        description="One `srun --jobid J --overlap --ntasks-per-node=1` step captures a bundle per node into DIR "
        "(shared filesystem; this interpreter must be importable on every node), bounded by --timeout; then "
        "the nodes are compared: outliers per fact, ranked, and groups of nodes that look alike. "
        "`fanout --bundles DIR` compares saved bundles. Exit 1 when a node stands out or failed, 0 when all "
        "look alike, 2 when it cannot run.")
    f.add_argument("--job", metavar="J", help="the running job whose nodes to capture")
    f.add_argument("--bundles", metavar="DIR", help="compare the bundles already in DIR (*.bundle.tar.gz, bundle directories)")
    f.add_argument("-o", "--output", metavar="DIR", help="where the bundles go (default: fanout-J-TIME; must be shared by the nodes)")
    f.add_argument("--timeout", type=float, default=180.0, metavar="S", help="bound on the whole step (default 180 s)")
    f.add_argument("--exec", dest="exec_prefix", metavar="PREFIX", help="run each node's capture inside this wrapper or container")
    f.add_argument("--simulate-nodes", type=int, default=0, metavar="K",
                   help="TEST ONLY: K tasks on whatever nodes, bundles named NODE-tPROCID (a single-node Slurm plays K nodes)")
    f.add_argument("--workers", type=int, metavar="N", help="processes that parse bundles (default: one per usable CPU for 64+ bundles)")
    f.add_argument("--no-sidecar", action="store_true", help="parse every bundle even where a NODE.facts.json is present")
    f.add_argument("--all", action="store_true", help="list every outlier and group (default: the first 20)")
    f.add_argument("--json", action="store_true", help="machine-readable output (schema in docs/comparisons.md)")
    f.set_defaults(func=cmd_fanout)


# ------------------------------------------------------------------ compare
def cmd_compare(args: argparse.Namespace) -> int:
    if args.host:
        if args.bundles:
            raise CliError("compare takes either --host (with --exec/--job) or two bundles, not both")
        return _compare_host(args)
    if len(args.bundles) != 2:
        raise CliError("compare needs two bundles (A B), or --host with --exec PREFIX or --job J")
    if args.job or args.exec_prefix or args.node or args.container_name:
        raise CliError("--job/--exec/--node/--container-name go with --host")
    return _compare_bundles(args)


def _compare_host(args: argparse.Namespace) -> int:
    from troubleshooter.diagnosis import compare
    from troubleshooter.output.compare_text import print_host
    from troubleshooter.service.compare import CompareError, compare_host

    if not (args.job or args.exec_prefix):
        raise CliError("compare --host needs the other side: --exec PREFIX or --job J")
    em = emitter(args)
    target = make_target(args)
    params = make_params(args, target)
    try:
        run = compare_host(target, params, all_env=args.all_env)
    except CompareError as exc:
        if args.json:
            em.json({"kind": "host-vs-target", "host": exc.host_desc, "target": target.describe(),
                     "error": str(exc), "exit": EXIT_CANNOT})
        raise CliError(str(exc)) from exc
    cmp = run.comparison
    code = EXIT_FAIL if cmp.matters else EXIT_OK
    if args.json:
        doc = {"kind": "host-vs-target", "host": run.host_desc, "target": run.target_desc, **cmp.as_dict(),
               "ignored_env": list(compare.ENV_IGNORE) + (list(compare.ENV_IGNORE_SAME_HOST) if run.same_host else []),
               "evidence": {"host": {s: e.describe() for s, e in run.host_evidence.items()},
                            "target": {s: e.describe() for s, e in run.target_evidence.items()}},
               "exit": code}
        em.json(doc)
        return code
    em.clean(run.host_evidence), em.clean(run.target_evidence)  # learn the secrets the diffs may show
    print_host(em.clean(cmp), em.safe(run.host_label), em.safe(run.target_label), show_same=args.all, console=em.console)
    return code


def _compare_bundles(args: argparse.Namespace) -> int:
    from troubleshooter.diagnosis import compare

    em = emitter(args)
    a, b = args.bundles
    for p in (a, b):
        if not Path(p).exists():
            raise CliError(f"{p}: no such bundle")
    res = compare.compare_bundles(a, b, profile_id=args.profile, names=args.fact, include_volatile=args.include_volatile)
    worse = [c for c in res.checks if c.after == "fail" and c.before != "fail"]
    code = EXIT_FAIL if (res.below_reference or worse) else EXIT_OK
    if args.json:
        em.json({**res.as_dict(), "exit": code})
        return code
    from rich.table import Table

    res = em.clean(res)
    con = em.console
    con.print(f"A: {em.m(a)}\nB: {em.m(b)}\nprofile {em.m(res.profile)}: a measured number below "
              f"{res.reference_ratio_min:.0%} of A fails")
    if res.measured:
        t = Table(title="measured", show_header=True, header_style="bold", box=None, title_justify="left")
        for col in ("fact", "A", "B", "B/A", "performance", "verdict"):
            t.add_column(col)
        for c in res.measured:
            t.add_row(em.cell(c.name), em.cell(_cell(c.before)), em.cell(_cell(c.after)),
                      f"{c.ratio:.3f}" if c.ratio is not None else "-",
                      f"{c.perf_ratio:.1%}" if c.perf_ratio is not None else "-",
                      "[red]below reference[/]" if c.verdict == "below-reference" else em.cell(c.verdict or "-"))
        con.print(t)
    if res.checks:
        t = Table(title="checks whose verdict changed", show_header=True, header_style="bold", box=None, title_justify="left")
        for col in ("check", "A", "B", "why (B)"):
            t.add_column(col, overflow="fold")
        for v in res.checks:
            t.add_row(em.cell(v.id), em.cell(v.before), em.cell(v.after), em.cell(v.reason_after))
        con.print(t)
    others = [c for c in res.changes if not c.measured]
    if others:
        t = Table(title=f"facts that moved ({len(others)})", show_header=True, header_style="bold", box=None, title_justify="left")
        t.add_column("fact")
        t.add_column("A -> B", overflow="fold")
        for c in others:
            t.add_row(em.cell(c.name), em.cell(c.describe()))
        con.print(t)
    if not (res.measured or res.checks or others):
        con.print("[green]no difference[/] between the two captures.")
    return code


# ------------------------------------------------------------------ fanout
def cmd_fanout(args: argparse.Namespace) -> int:
    from troubleshooter.diagnosis import compare
    from troubleshooter.probe import fanout

    if bool(args.job) == bool(args.bundles):
        raise CliError("fanout needs --job J (capture now) or --bundles DIR (compare saved bundles)")
    em = emitter(args)
    run = None
    if args.job:
        out = args.output or f"fanout-{args.job}-{time.strftime('%Y%m%dT%H%M%S')}"
        try:
            run = fanout.run(args.job, out, timeout=args.timeout, wrapper=args.exec_prefix or (),
                             simulate=args.simulate_nodes)
        except fanout.FanoutError as exc:
            raise CliError(str(exc)) from exc
        paths = [run.directory / f"{n}.bundle.tar.gz" for n in run.ok]
        paths.sort(key=lambda p: compare._natural(compare.node_name(p)))
        failed = run.failed
        if not args.json:
            em.line(f"fanout: job {args.job}: {len(run.ok)} bundle(s) in {run.directory} in {run.wall_s:.1f}s"
                    + (f", {len(failed)} node(s) failed" if failed else "") + (" (timed out)" if run.timed_out else ""),
                    err=True)
    else:
        try:
            paths = compare.find_bundles(args.bundles)
        except FileNotFoundError as exc:
            raise CliError(str(exc)) from exc
        failed = []
    if not paths:
        if args.json:
            em.json({"kind": "nodes", "run": run.as_dict() if run else None, "error": "no bundle to compare",
                     "failed": failed, "exit": EXIT_CANNOT})
        raise CliError("no bundle to compare" + (f"; failed: {failed[0]['node']}: {failed[0]['reason']}" if failed else ""))
    t0 = time.monotonic()
    report = compare.compare_node_bundles(paths, workers=args.workers, use_sidecar=not args.no_sidecar, failed=failed)
    cmp_s = time.monotonic() - t0
    code = EXIT_FAIL if (report.outliers or report.failed) else EXIT_OK
    if args.json:
        doc = report.as_dict()
        doc.update({"run": run.as_dict() if run else None, "compare_s": round(cmp_s, 3), "exit": code})
        em.json(doc)
        return code
    from troubleshooter.output.compare_text import print_nodes

    print_nodes(em.clean(report), limit=None if args.all else 20, seconds=cmp_s, console=em.console)
    return code


