"""Every benchmark of issue 7 in one run, each as a ratio against its target (docs/benchmarks.md).

    .venv/bin/python bench/run.py            # full: 1 GB parse files, 1,024 fan-out nodes, 7 start-ups
    .venv/bin/python bench/run.py --quick    # CI: small sizes; exits 1 when a ratio regresses past its bound

Ratios, not absolute times: each figure is measured side by side with its reference in the same run on the
same machine (a minimal Textual app, ``python -c pass``, the slowest single source, ``grep -c``).

- start-up: launch to first frame (first pty output containing the app's title), ``troubleshooter`` vs a
  minimal Textual app run the same way; headless ``check --bundle ... --json`` vs ``python -c pass``;
- sweep: ``collect.collect(LocalTarget())`` wall time vs its slowest source;
- parsing: ``troubleshooter parse KIND FILE --json`` on a generated NCCL_DEBUG log and nccl-tests output
  (corpus files repeated) vs ``grep -c`` on the same file, and the parse's peak RSS (``wait4``);
- fan-out: ``bench/fanout_bench.py`` (another engineer's) when present;
- UI: key press to the next repaint while ten probes run in thread workers, in a Pilot session.

--quick bounds are generous (well past today's figures, which miss some targets: docs/benchmarks.md): they catch
a regression such as an eager import of a heavy module or a parser gone quadratic, not noise. (Peak memory of
the streaming parsers is guarded at any size by tests/test_hardening.py::test_stream_memory_bounded.)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import pty
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BIN = Path(sys.executable).parent
TS = str(BIN / "troubleshooter") if (BIN / "troubleshooter").exists() else shutil.which("troubleshooter") or "troubleshooter"
ANSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[\]P^_].*?(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78cM]", re.S)

MINIMAL_APP = '''
from textual.app import App
from textual.widgets import Footer, Header, Static


class Minimal(App):
    TITLE = "minimalbench"

    def compose(self):
        yield Header()
        yield Static("hello")
        yield Footer()


Minimal().run()
'''

rows: list[tuple[str, str, str, float, float, float]] = []  # name, figure, target, ratio, target ratio, quick bound


def record(name: str, figure: str, target: str, ratio: float, goal: float, bound: float, higher_is_better: bool = False) -> None:
    if higher_is_better:  # store as "lower is better" for the check: goal / ratio
        rows.append((name, figure, target, ratio, goal, bound))
    else:
        rows.append((name, figure, target, ratio, goal, bound))
    ok = ratio >= goal if higher_is_better else ratio <= goal
    print(f"  {name:34} {figure:46} ratio {ratio:7.3f}  target {'>=' if higher_is_better else '<='} {goal:<5g} "
          f"{'ok' if ok else 'MISSED'}", flush=True)


def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"nproc {os.cpu_count()}, {model or platform.processor()}, {mem:.1f} GiB, Python {platform.python_version()}"


# ------------------------------------------------------------------ start-up
def first_frame(argv: list[str], title: bytes, env: dict[str, str], timeout: float = 30.0) -> float:
    """Seconds from spawn to the first pty output holding ``title`` (escape sequences stripped)."""
    import fcntl
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True, close_fds=True)
    os.close(slave)
    buf = b""
    found = None
    try:
        while time.monotonic() - t0 < timeout:
            r, _, _ = select.select([master], [], [], 0.5)
            if not r:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
            if title in ANSI.sub(b"", buf):
                found = time.monotonic() - t0
                break
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        os.close(master)
    if found is None:
        raise RuntimeError(f"{argv}: no frame with {title!r} within {timeout}s; output: {ANSI.sub(b'', buf)[-400:]!r}")
    return found


def timed(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.monotonic()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.monotonic() - t0


def compile_package() -> None:
    """Write the package's bytecode, as an install has it (pip compiles at install time; Textual's, the reference's,
    is in site-packages already). A checkout run with PYTHONDONTWRITEBYTECODE=1 would otherwise compile ~20 of our
    modules from source at every start (~30 ms on the 2-core machine), a cost no installed copy pays."""
    import compileall

    pkg = ROOT / "troubleshooter"
    if os.access(pkg, os.W_OK):
        compileall.compile_dir(str(pkg), quiet=1)


def bench_startup(n: int, tmp: Path) -> None:
    compile_package()
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="100", LINES="30",
               XDG_CONFIG_HOME=str(tmp / "cfg"), XDG_DATA_HOME=str(tmp / "data"), XDG_STATE_HOME=str(tmp / "state"),
               XDG_CACHE_HOME=str(tmp / "cache"))
    minimal = tmp / "minimal_app.py"
    minimal.write_text(MINIMAL_APP)
    app_t, min_t = [], []
    for _ in range(n):  # interleaved, so a noisy neighbour hits both
        min_t.append(first_frame([sys.executable, str(minimal)], b"minimalbench", env))
        app_t.append(first_frame([TS], b"troubleshooter", env))
    a, m = statistics.median(app_t), statistics.median(min_t)
    record("start-up: first frame", f"{a * 1000:.0f} ms vs minimal app {m * 1000:.0f} ms", "<= 1.5x", a / m, 1.5, 3.5)
    bundle = ROOT / "decision_trees" / "practice" / "healthy" / "bundle"
    chk, nop = [], []
    for _ in range(n):
        nop.append(timed([sys.executable, "-c", "pass"], env))
        chk.append(timed([TS, "check", "--bundle", str(bundle), "--json"], env))
    c, p = statistics.median(chk), statistics.median(nop)
    record("start-up: check --bundle --json", f"{c * 1000:.0f} ms vs python -c pass {p * 1000:.0f} ms", "(figure)", c / p, float("inf"), float("inf"))


# ------------------------------------------------------------------ sweep
def bench_sweep(runs: int) -> None:
    """Median over ``runs`` sweeps: without a GPU the slowest source takes ~50 ms, so one sweep's ratio is
    mostly scheduling noise on 2 cores."""
    from troubleshooter.probe import collect
    from troubleshooter.probe.targets import LocalTarget

    samples = []
    for _ in range(runs):
        coll = collect.collect(LocalTarget())
        slow = max(coll.evidence.values(), key=lambda e: e.duration_s)
        samples.append((coll.wall_s / max(slow.duration_s, 1e-3), coll, slow))
    ratio, coll, slow = sorted(samples, key=lambda s: s[0])[len(samples) // 2]
    record("sweep: preflight wall / slowest", f"{coll.wall_s:.2f} s vs {slow.source_id} {slow.duration_s:.2f} s "
           f"({len(coll.evidence)} sources, median of {runs})", "<= 1.3x", ratio, 1.3, 5.0)


# ------------------------------------------------------------------ parsing
def make_file(kind_dir: str, size: int, dest: Path) -> int:
    corpus = b""
    for f in sorted((ROOT / "tests" / "data" / kind_dir).iterdir()):
        if f.is_file():
            data = f.read_bytes()
            corpus += data if data.endswith(b"\n") else data + b"\n"
    with dest.open("wb") as out:
        written = 0
        while written < size:
            out.write(corpus)
            written += len(corpus)
    return written


def run_rusage(argv: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MB, rc) of one child, measured with wait4."""
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # not DEVNULL: grep then stops at the first match
    out, err_b = proc.communicate() if False else (proc.stdout.read(), b"")  # type: ignore[union-attr]
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"{argv}: exit {proc.returncode}: {err[-500:]}")
    return wall, ru.ru_maxrss / 1024, proc.returncode


def bench_parse(size: int, tmp: Path) -> None:
    for kind, d, pattern in (("nccl-debug", "nccl-debug", "NCCL"), ("nccl-tests", "nccl-tests", "bandwidth")):
        f = tmp / f"{kind}.log"
        n = make_file(d, size, f)
        subprocess.run(["cat", str(f)], stdout=subprocess.DEVNULL, check=True)  # same page cache for both
        g, _, _ = run_rusage(["grep", "-c", pattern, str(f)])
        t, rss, _ = run_rusage([TS, "parse", kind, str(f), "--json"])
        mb = n / 2**20
        record(f"parse {kind}: throughput vs grep -c", f"{mb / t:.0f} MB/s vs grep {mb / g:.0f} MB/s ({mb:.0f} MB)",
               ">= 0.1x", g / t, 0.1, 0.001, higher_is_better=True)
        record(f"parse {kind}: peak RSS / 100 MB", f"{rss:.0f} MB for {mb:.0f} MB", "<= 100 MB", rss / 100, 1.0, 1.5)
        f.unlink()


# ------------------------------------------------------------------ fan-out
def bench_fanout(nodes: int) -> None:
    script = ROOT / "bench" / "fanout_bench.py"
    if not script.exists():
        print("  fan-out: bench/fanout_bench.py not present: skipped")
        return
    res = subprocess.run([sys.executable, str(script), "--nodes", str(nodes)], capture_output=True, text=True)
    if res.returncode != 0:
        print(f"  fan-out: fanout_bench.py failed (exit {res.returncode}): {res.stderr.strip()[-400:]}")
        rows.append(("fan-out", "failed", "", float("inf"), 1.0, 2.0))
        return
    scale = 1024 / nodes
    for line in res.stdout.splitlines():
        m = re.match(r"(cold|sidecar)\s+(\d+) nodes: ([\d.]+)s .*\(total (\d+) MB", line)
        if m:
            s, mb = float(m.group(3)), float(m.group(4))
            record(f"fan-out {m.group(1)}: {m.group(2)} nodes / 5 s", f"{s:.2f} s, {mb:.0f} MB peak", "<= 5 s",
                   s * scale / 5.0, 1.0, 2.0)
            record(f"fan-out {m.group(1)}: peak / 500 MB", f"{mb:.0f} MB", "<= 500 MB", mb / 500, 1.0, 2.0)


# ------------------------------------------------------------------ UI latency
async def _ui_latency(presses: int, workers: int) -> list[float]:
    from textual.worker import get_current_worker

    from troubleshooter.service.guide import TargetSpec
    from troubleshooter.probe.runner import run_command
    from troubleshooter.tui.app import StartScreen, TroubleshooterApp

    app = TroubleshooterApp(TargetSpec(), context_lines=["bench"], session_dir=Path(tempfile.mkdtemp()))
    paints: list[float] = []
    orig = app._display

    def display(screen, renderable):  # every frame the compositor sends to the terminal
        if renderable is not None:
            paints.append(time.perf_counter())
        return orig(screen, renderable)

    app._display = display  # type: ignore[method-assign]

    def probe() -> None:  # a slow probe the way the app runs one: a thread worker around a real subprocess
        w = get_current_worker()
        while not w.is_cancelled:
            run_command(["sh", "-c", "for i in 1 2 3 4 5; do head -c 200000 /dev/zero | tr '\\0' x; sleep 0.1; done"],
                        timeout=10)

    lat: list[float] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        for _ in range(workers):
            app.run_worker(probe, thread=True, group="bench", exit_on_error=False)
        await asyncio.sleep(0.3)
        for i in range(presses):
            await pilot.pause()
            n0 = len(paints)
            t0 = time.perf_counter()
            await pilot.press("down" if (i // 4) % 2 == 0 else "up")
            deadline = time.perf_counter() + 2
            while len(paints) == n0 and time.perf_counter() < deadline:
                await asyncio.sleep(0.0005)
            lat.append((paints[n0] if len(paints) > n0 else time.perf_counter()) - t0)
        app.workers.cancel_group(app, "bench")
    return lat


def bench_ui(presses: int) -> None:
    lat = sorted(asyncio.run(_ui_latency(presses, 10)))
    p95 = lat[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))]
    record("UI: key to repaint p95 / 50 ms", f"p95 {p95 * 1000:.1f} ms, median {statistics.median(lat) * 1000:.1f} ms "
           f"({presses} keys, 10 probes)", "<= 50 ms", p95 / 0.050, 1.0, 3.0)


# ------------------------------------------------------------------ main
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes; exit 1 when a ratio passes its regression bound")
    ap.add_argument("--size", type=float, help="parse file size in MB (default 1024, --quick 16)")
    ap.add_argument("--runs", type=int, help="start-up and sweep runs (median; default 7, --quick 3)")
    ap.add_argument("--nodes", type=int, help="fan-out nodes (default 1024, --quick 128)")
    ap.add_argument("--only", help="comma-separated: startup,sweep,parse,fanout,ui")
    args = ap.parse_args()
    size = int((args.size or (16 if args.quick else 1024)) * 2**20)
    runs = args.runs or (3 if args.quick else 7)
    nodes = args.nodes or (128 if args.quick else 1024)
    only = set((args.only or "startup,sweep,parse,fanout,ui").split(","))
    print(f"machine: {machine()}")
    tmp = Path(tempfile.mkdtemp(prefix="ts-bench-"))
    try:
        if "startup" in only:
            bench_startup(runs, tmp)
        if "sweep" in only:
            bench_sweep(runs)
        if "parse" in only:
            bench_parse(size, tmp)
        if "fanout" in only:
            bench_fanout(nodes)
        if "ui" in only:
            bench_ui(40 if args.quick else 100)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    bad = []
    for name, _fig, _t, ratio, goal, bound in rows:
        higher = goal < 1 and bound < goal  # throughput ratios: higher is better
        if (ratio < bound) if higher else (ratio > bound):
            bad.append(f"{name}: ratio {ratio:.3f} past the regression bound {bound:g}")
    for b in bad:
        print(f"REGRESSION {b}", file=sys.stderr)
    return 1 if (bad and args.quick) else 0


if __name__ == "__main__":
    sys.exit(main())
