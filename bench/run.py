"""Every benchmark of issues 7 and 14 in one run: each figure against the simplest real alternative doing the same
work, as a ratio against its target (docs/benchmarks.md).

    .venv/bin/python bench/run.py            # full: 7 rounds, 16 MB parse inputs, 1,024 fan-out nodes
    .venv/bin/python bench/run.py --quick    # CI: small sizes; exit 1 when a figure misses its target by more
                                             # than the noise margin (NOISE), or a known miss regresses

Honest by construction: whole processes where a user runs a whole process, the alternative run the same way in
the same round (interleaved: a noisy neighbour hits both), medians of at least 5 rounds.

- startup: launch to first frame on a pty, ``troubleshooter`` vs a minimal Textual app;
- check: ``troubleshooter check --json`` (whole process) vs a bash script that runs the same probe commands with
  ``&`` and ``wait`` (generated from ``troubleshooter sources --json``), and vs the slowest of those probes alone;
- parse: each streaming parser vs a plain Python loop extracting the same numbers from the same lines
  (bench/baselines.py): nccl-tests output, an NCCL_DEBUG log of NCCL lines only, and one as a training job
  writes it (9 lines in 10 the job's own); and the peak RSS of ``troubleshooter parse`` on a file;
- diagnose: ``diagnose --bundle`` on the healthy practice bundle with every text output 1x, 10x and 100x
  longer, against parsing once each output the walk reads: the extra cost per MB of the longer outputs (~1 when
  each output is parsed once; 7-8x for a walk that re-parsed everything collected at every step); and
  ``diagnose --evidence`` on one pdsh paste of 64 and 512 nodes' ibstat against parsing each node's ibstat once:
  the extra cost per node (a figure, no target);
- fanout: bench/fanout_bench.py;
- ui: key press to the next repaint while ten probes run in thread workers, in a Pilot session;
- ttc: time to cause: the installed app in tmux from the start screen to each seed case's fix, keys and seconds
  against the goal of issue 13 (<= 10 keys, < 3 minutes; bench/timetocause.py).
"""

from __future__ import annotations

import argparse
import asyncio
import math
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

NOISE = 1.25  # --quick fails a figure past target x NOISE: the spread of medians of 5 rounds on a shared 2-core VM
# Figures that miss their target today, each with the measurement that explains it (docs/benchmarks.md); --quick
# still fails them when they regress past their level today x NOISE.
KNOWN_MISSES: dict[str, tuple[float, str]] = {
    "check: --json vs probes script": (3.9, "interpreter ~28 ms + imports ~55 ms + exit ~15 ms that the script "
                                       "does not pay, against a script that now takes ~80 ms (140 ms when 1.66x "
                                       "was measured); the sweep itself ~1.3x the script; 3.05x on 2026-12-02 "
                                       "once a sweep imports only its sources' parsers (3.47x before); on 2026-12-04 "
                                       "a slower machine measured the code of the session's start (502cc19) at "
                                       "4.45x and this session's beside it at 4.49-4.72x (check --json ~400 ms "
                                       "against the script's 85-99 ms): the level follows the machine, not the code; CI then measured 4.98x, and "
                                       "session 20 made each output parsed as its probe ends and a parser imported "
                                       "only for output to read: 4.00-4.13x -> 3.32-3.46x here, interleaved"),
    "parse nccl-tests": (3.7, "the loop extracts 6 of the parser's 16 facts: ~13 tests per '#' line (versions, run "
                         "starts, ranks, headers, summaries) where the loop does 2; rows ~2x the loop's split+float"),
    "parse nccl-debug, NCCL lines": (3.3, "29 facts from ~20 tests per NCCL line against the loop's 8 facts"),
    "parse nccl-debug, job log": (4.0, "the NCCL lines (1 in 10) cost the parser ~4.5 us against the loop's ~1.7 "
                                  "(29 facts vs 8); since the intake work (NCCL < 2.4 lines without the word NCCL, "
                                  "re-wrapped interface lists, no-socket-interface warnings) a job's own lines pay "
                                  "a level check and the NCCL lines more tests: 2.5x before, ~4x after"),
    "fanout cold: 1,024 nodes": (3.4, "on 2026-12-04 (session 20) CI measured 3.30x and this VM 3.15-3.40x for code whose "
                                 "fan-out the code of session 19 matched, interleaved (fanout_bench.py --nodes 128: "
                                 "20.6-22.9 against 22.4-25.3 CPU-ms/node); the same code had measured 15.1 CPU-ms/node "
                                 "an hour earlier. A calibration workload beside it (fixed CPU work, fresh processes) "
                                 "did not track that drift (99-165 ms against 15.6-23.9 CPU-ms/node, uncorrelated), so "
                                 "the level covers the range. Before: 1.3x measured alone (--quick, load ~3); the wall time carries the shared "
                                 "VM's load (4-8 on 2 cores during the full run: ~0.5 core for the benchmark); the CPU "
                                 "floor is the next figure; on 2026-12-04's slower machine 2.10x for the code of the "
                                 "session's start (502cc19) and 2.53-3.02x for this session's, the same minutes"),
    "fanout cold: 1,024 CPU floor": (3.8, "on 2026-12-04 (session 20) CI measured 3.65x (21.4 CPU-ms/node) and this "
                                     "VM 3.57-3.68x (20.9-21.6), the code of session 19 the same, interleaved; see the "
                                     "figure above for the drift. Before: on 2026-12-04 a slower machine (CI's kind, 2 cores) measured the code of "
                                     "the session's start (502cc19) at 13.5-19.9 CPU-ms/node (2.31-3.39x) and this "
                                     "session's beside it at 16.6-17.9 (2.83-3.06x): the runs' spread, not the code; "
                                     "before that, ~7.3 CPU-ms per bundle when this level was 1.35 (parsers ~70%, reading the "
                                     ".tar.gz ~15%); on 2026-12-02 the same code as then (f8ae23e) measured 8.70 "
                                     "CPU-ms here and this round's 8.95 beside it (fanout_bench.py --scale 128, "
                                     "same minute): the machine got slower, not the code; CI measured 9.4-9.9. "
                                     "The comparing process imported every parser (~110, each compiling its "
                                     "regular expressions) where bundles need their sources' ~40: ~0.2 CPU-s, "
                                     "1.7 CPU-ms/node at 128 nodes; on 2026-12-03 importing only those made it "
                                     "(0.14-0.18 + 1.32-1.41 CPU-s for 128) cheaper than f8ae23e beside it "
                                     "(0.35-0.36 + 1.26-1.30)"),
}

rows: list[tuple[str, float, float | None]] = []  # name, ratio, target (lower is better); None: a figure only


def record(name: str, figure: str, alternative: str, ratio: float, target: float | None) -> None:
    """One figure: what was measured, against what, the ratio (lower is better) and its target."""
    rows.append((name, ratio, target))
    if target is None:
        verdict, tgt = "(figure)", "-"
    else:
        verdict, tgt = ("ok" if ratio <= target else "MISSED"), f"<= {target:g}x"
    if verdict == "MISSED" and name in KNOWN_MISSES:
        verdict += " (known: docs/benchmarks.md)"
    print(f"  {name:30} {figure:44} vs {alternative:44} {ratio:6.2f}x  target {tgt:8} {verdict}", flush=True)


def gate(quick: bool) -> list[str]:
    """The figures --quick fails: past their target x NOISE, or a known miss past its level today x NOISE."""
    bad = []
    for name, ratio, target in rows:
        if target is None:
            continue
        limit = max(target, KNOWN_MISSES[name][0]) if name in KNOWN_MISSES else target
        if ratio > limit * NOISE:
            bad.append(f"{name}: {ratio:.2f}x, past {limit:g}x x {NOISE} noise margin")
    return bad


def rounds(n: int, *fns, min_s: float = 0.05):
    """Run ``fns`` in turn ``n`` times (interleaved) and return each one's median seconds per call. A sample repeats
    every fn the same number of times, enough for the fastest to take ``min_s`` (a 3 ms run is all scheduler noise
    on a shared machine)."""
    first = []
    for fn in fns:
        t0 = time.perf_counter()
        fn()
        first.append(time.perf_counter() - t0)
    k = max(1, math.ceil(min_s / max(min(first), 1e-6)))
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(n):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(k):
                fn()
            times[i].append((time.perf_counter() - t0) / k)
    return [statistics.median(t) for t in times]


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
    return (f"nproc {os.cpu_count()}, {model or platform.processor()}, {mem:.1f} GiB, Python {platform.python_version()}"
            f", {load()}")


def load() -> str:
    """The load average now: other work on the machine, the noise every wall time below carries."""
    try:
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "load average unknown"


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


def compile_package() -> None:
    """Write the package's bytecode, as an install has it (pip compiles at install time; Textual's, the reference's,
    is in site-packages already). A checkout run with PYTHONDONTWRITEBYTECODE=1 would otherwise compile ~20 of our
    modules from source at every start (~30 ms on the 2-core machine), a cost no installed copy pays."""
    import compileall

    pkg = ROOT / "troubleshooter"
    if os.access(pkg, os.W_OK):
        compileall.compile_dir(str(pkg), quiet=1)


def bench_env(tmp: Path) -> dict[str, str]:
    return dict(os.environ, TERM="xterm-256color", COLUMNS="100", LINES="30",
                XDG_CONFIG_HOME=str(tmp / "cfg"), XDG_DATA_HOME=str(tmp / "data"), XDG_STATE_HOME=str(tmp / "state"),
                XDG_CACHE_HOME=str(tmp / "cache"), TROUBLESHOOTER_DATA_DIR=str(tmp / "tsdata"))


def bench_startup(n: int, tmp: Path) -> None:
    compile_package()
    env = bench_env(tmp)
    minimal = tmp / "minimal_app.py"
    minimal.write_text(MINIMAL_APP)
    app_t, min_t = [], []
    for _ in range(n):  # interleaved, so a noisy neighbour hits both
        min_t.append(first_frame([sys.executable, str(minimal)], b"minimalbench", env))
        app_t.append(first_frame([TS], b"troubleshooter", env))
    a, m = statistics.median(app_t), statistics.median(min_t)
    record("startup: first frame", f"troubleshooter {a * 1000:.0f} ms", f"minimal Textual app {m * 1000:.0f} ms",
           a / m, 1.5)


# ------------------------------------------------------------------ check, whole process
def probe_script(tmp: Path) -> tuple[Path, list[tuple[str, list[str]]], list[str]]:
    """A bash script running every probe command `check` runs here, all at once with & and wait, each one's output
    to a file (as the tool keeps it): generated from `troubleshooter sources --json`, placeholders filled as
    `check` fills them with no options. In-process queries (NVML) have no command: they are listed, not run."""
    import json
    import shlex

    from troubleshooter.sources.base import Params

    out = subprocess.run([TS, "sources", "--json"], capture_output=True, text=True, check=True).stdout
    values = {k: str(v) for k, v in Params().as_dict().items() if v is not None}
    probes, in_process = [], []
    for src in json.loads(out):
        if src["active"]:
            continue  # `check` runs passive sources only (active ones with --measure)
        if src["argv"] == ["(in-process)"]:
            in_process.append(src["id"])
            continue
        argv, missing = [], False
        for arg in src["argv"]:
            def fill(m: re.Match) -> str:
                nonlocal missing
                if m.group(0) in ("{{", "}}"):
                    return m.group(0)[0]
                if m.group(1) not in values:
                    missing = True
                return values.get(m.group(1), m.group(0))
            argv.append(re.sub(r"\{\{|\}\}|(?<![$\w{])\{([a-z_][a-z0-9_]*)\}(?!\})", fill, arg))
        if not missing:  # `check` skips a source whose placeholder has no value (no --pid)
            probes.append((src["id"], argv))
    lines = ["#!/usr/bin/env bash", f"out=$(mktemp -d {shlex.quote(str(tmp))}/probes.XXXXXX)"]
    for sid, argv in probes:
        lines.append(f"LC_ALL=C {shlex.join(argv)} >\"$out/{sid}.out\" 2>\"$out/{sid}.err\" </dev/null &")
    lines += ["wait", 'rm -rf "$out"']
    script = tmp / "probes.sh"
    script.write_text("\n".join(lines) + "\n")
    return script, probes, in_process


def bench_check(n: int, tmp: Path) -> None:
    compile_package()  # an installed copy has its bytecode: without it ~50 ms of compiling is timed, not the tool
    env = bench_env(tmp)
    script, probes, in_process = probe_script(tmp)

    def run(argv: list[str]) -> float:
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        return time.perf_counter() - t0

    alone = {sid: statistics.median(run(["env", "LC_ALL=C", *argv]) for _ in range(3)) for sid, argv in probes}
    slow_id = max(alone, key=alone.__getitem__)
    slow = ["env", "LC_ALL=C", *dict(probes)[slow_id]]
    check = [TS, "check", "--json"]
    run(check)  # first run: trees cache, page cache
    c_t, b_t, s_t = [], [], []
    for _ in range(max(n, 9)):  # ~0.2 s each: more rounds than the default 7 cost little and steady the medians
        c_t.append(run(check))
        b_t.append(run(["bash", str(script)]))
        s_t.append(run(slow))
    c, bsh, sl = statistics.median(c_t), statistics.median(b_t), statistics.median(s_t)
    extra = f", {len(in_process)} in-process not in it" if in_process else ""
    record("check: --json vs probes script", f"check --json {c * 1000:.0f} ms",
           f"bash & + wait, {len(probes)} probes {bsh * 1000:.0f} ms{extra}", c / bsh, 1.5)
    record("check: --json vs slowest probe", f"check --json {c * 1000:.0f} ms", f"{slow_id} alone {sl * 1000:.0f} ms",
           c / sl, None)
    # where the time goes, measured inside one process doing what `check --json` does, in the same order
    breakdown = (
        "import time; t0 = time.perf_counter()\n"
        "import troubleshooter.cli as cli, troubleshooter.cli.probe, troubleshooter.service.check as sc\n"
        "from troubleshooter.output import report\n"
        "from troubleshooter.probe.targets import LocalTarget\n"
        "from troubleshooter.sources.base import Params\n"
        "import troubleshooter.sources as s; t1 = time.perf_counter(); s.load_defs(); t2 = time.perf_counter()\n"
        "t = LocalTarget(); r = sc.run_check(t, Params()); t3 = time.perf_counter()\n"
        "report.check_json(r.results, r.context, t.describe(), r.profile.id, r.evidence); t4 = time.perf_counter()\n"
        "print(t1 - t0, t2 - t1, r.wall_s, t3 - t2 - r.wall_s, t4 - t3)\n")
    py_t, pys_t, parts = [], [], []
    for _ in range(n):
        py_t.append(run([sys.executable, "-c", "pass"]))
        pys_t.append(run([sys.executable, "-S", "-c", "pass"]))
        out = subprocess.run([sys.executable, "-c", breakdown], env=env, capture_output=True, text=True).stdout.split()
        parts.append([float(x) for x in out] if len(out) == 5 else [float("nan")] * 5)
    imp, defs, sw, chk, js = (statistics.median(p[i] for p in parts) * 1000 for i in range(5))
    py, pys = statistics.median(py_t) * 1000, statistics.median(pys_t) * 1000
    print(f"    where check's {c * 1000:.0f} ms go (one process doing the same, medians): interpreter start {py:.0f} ms "
          f"(`python -S -c pass` {pys:.0f} ms: the rest is site and the editable install's finder), imports "
          f"{imp:.0f} ms, source definitions {defs:.0f} ms, sweep {sw:.0f} ms: the probes, each output parsed (its "
          f"parser imported) as it arrives (the script: {bsh * 1000:.0f} ms), checks {chk:.0f} ms, JSON {js:.0f} ms; floor "
          f"without the tool's own start-up: interpreter + script = {py + bsh * 1000:.0f} ms = "
          f"{(py + bsh * 1000) / (bsh * 1000):.2f}x the script", flush=True)


# ------------------------------------------------------------------ parsing
def line_kind(line: str) -> str:
    s = line.strip()
    if not s:
        return "blank"
    if "NCCL INFO" in s or "NCCL WARN" in s:
        return "NCCL log"
    if s[0].isdigit():
        return "table row"
    if s.startswith("#"):
        return "# rank" if "Rank" in s else "# header"
    return "other"


def where_parse_time(lines: list[str], parse, loop, n: int) -> str:
    """Microseconds per line of the parser and of the loop for each kind of line of the input, each kind timed on
    its own lines (behind the input's first header lines, so that the parser reads its rows as rows)."""
    head = [ln for ln in lines[:200] if line_kind(ln) == "# header"][:8]
    kinds: dict[str, list[str]] = {}
    for ln in lines[:20000]:
        kinds.setdefault(line_kind(ln), []).append(ln)
    out = []
    for kind, ls in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
        sample = head + ls * max(1, 20000 // len(ls))

        def p(sample=sample):
            try:
                parse(sample)
            except Exception:  # noqa: BLE001 - a kind alone may hold no table: the time is what counts
                pass

        t_loop, t_parse = rounds(max(3, n // 2), lambda sample=sample: loop(sample), p)
        share = len(ls) / min(len(lines), 20000)
        out.append(f"{kind} {share:.0%}: {t_parse / len(sample) * 1e6:.2f} vs {t_loop / len(sample) * 1e6:.2f} us")
    return "; ".join(out)


def bench_parse(size: int, n: int, tmp: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import baselines

    from troubleshooter.parsers import nccl_debug, nccl_tests

    def sized(make, *args) -> list[str]:
        probe = make(1000, *args)
        per_line = sum(len(x) + 1 for x in probe) / len(probe)
        return make(max(1000, int(size / per_line)), *args)

    inputs = [
        ("parse nccl-tests", "nccl-tests output", sized(baselines.nccl_tests_lines), nccl_tests.parse_stream,
         baselines.nccl_tests_loop),
        ("parse nccl-debug, NCCL lines", "NCCL lines only", sized(baselines.nccl_debug_lines, 1.0),
         nccl_debug.parse_stream, baselines.nccl_debug_loop),
        ("parse nccl-debug, job log", "1 line in 10 NCCL's", sized(baselines.nccl_debug_lines, 0.1),
         nccl_debug.parse_stream, baselines.nccl_debug_loop),
    ]
    for name, what, lines, parse, loop in inputs:
        mb = sum(len(x) + 1 for x in lines) / 2**20
        parse(lines), loop(lines)  # warm
        t_loop, t_parse = rounds(n, lambda: loop(lines), lambda: parse(lines))
        record(name, f"parser {mb / t_parse:.0f} MB/s ({what}, {mb:.0f} MB)", f"plain loop {mb / t_loop:.0f} MB/s",
               t_parse / t_loop, 1.2)
        print("    where the time goes, per kind of line: " + where_parse_time(lines, parse, loop, n), flush=True)
    # memory of the streamed parse (`troubleshooter parse` streams files over 16 MB): peak traced memory against a
    # fixed 20 MB, whatever the file's size (the caps on kept rows, runs, warnings; a line is cut at parsers.MAX_LINE,
    # tests/test_hardening.py)
    import tracemalloc

    from troubleshooter import parsers

    for kind, make in (("nccl-debug", lambda k: baselines.nccl_debug_lines(k, 0.1)), ("nccl-tests", baselines.nccl_tests_lines)):
        f = tmp / f"{kind}.log"
        f.write_text("\n".join(sized(make)) + "\n")
        mb = f.stat().st_size / 2**20
        tracemalloc.start()
        parsers.run_file(kind, f)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        record(f"parse {kind}: peak memory", f"{peak:.1f} MB streaming a {mb:.0f} MB file", "20 MB at any size",
               peak / 20, 1.0)
        f.unlink()


# ------------------------------------------------------------------ diagnose
def scaled_bundle(src: Path, dest: Path, k: int) -> int:
    """A copy of bundle ``src`` with every text output repeated ``k`` times (JSON outputs kept whole: repeated,
    they would not parse). Returns the bytes of output it holds."""
    import json

    shutil.copytree(src, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    total = 0
    for rec in manifest["evidence"]:
        f = dest / rec.get("stdout_file", "")
        if not rec.get("stdout_file") or not f.is_file():
            continue
        data = f.read_bytes()
        if k > 1 and not data.lstrip()[:1] in (b"{", b"["):
            data = (data if data.endswith(b"\n") else data + b"\n") * k
            f.write_bytes(data)
            rec["stdout_bytes"] = len(data)
        total += len(data)
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return total


def bench_diagnose(n: int, tmp: Path, scales: tuple[int, ...] = (1, 10, 100)) -> None:
    """``diagnose --bundle`` (the CLI, in process) against the least work that reads the same input: parsing each
    of the bundle's outputs once. The figure is the extra cost of the longer outputs (1x to the largest scale) per
    MB, the walk's over the single parse's: ~1 when the walk parses each output once, ~7 when every step re-parsed
    every output collected so far (114 parser runs for 16 outputs)."""
    import contextlib
    import io
    import json

    from troubleshooter import cli, parsers, sources
    from troubleshooter.probe.bundle import Bundle

    os.environ["TROUBLESHOOTER_DATA_DIR"] = str(tmp / "tsdata")
    src = ROOT / "decision_trees" / "practice" / "healthy" / "bundle"
    registry = sources.load_all()
    sizes, argvs, texts = {}, {}, {}

    def walk(k: int) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            cli.main(argvs[k])
        return out.getvalue()

    for k in scales:
        path = tmp / f"healthy-x{k}"
        scaled_bundle(src, path, k)
        argvs[k] = ["diagnose", "--bundle", str(path), "--symptom", "below-reference", "--answer", "intro=yes", "--json"]
        # the same work: the outputs this walk reads (the tree asks for some of the bundle's sources, not all)
        read = json.loads(walk(k))["evidence"]
        b = Bundle.open(path)
        texts[k] = [(registry[sid].parser, ev.text) for side, evs in read.items() for sid in evs
                    if sid in registry and (ev := b.evidence(sid, side=side)) is not None and ev.ok]
        sizes[k] = sum(len(t.encode()) for _, t in texts[k])

    def parse_once(k: int) -> None:
        for kind, text in texts[k]:
            try:
                parsers.run(kind, text)
            except parsers.ParseError:
                pass

    lo, hi = scales[0], scales[-1]
    walk(hi), parse_once(hi)  # warm: imports, trees
    fns = [f for k in scales for f in ((lambda k=k: walk(k)), (lambda k=k: parse_once(k)))]
    med = rounds(max(n, 7), *fns)
    tw = {k: med[2 * i] for i, k in enumerate(scales)}
    tp = {k: med[2 * i + 1] for i, k in enumerate(scales)}
    mb = (sizes[hi] - sizes[lo]) / 2**20
    per = "; ".join(f"{k}x {sizes[k] / 2**20:.2f} MB {tw[k] * 1000:.0f} ms" for k in scales)
    w_mb, p_mb = (tw[hi] - tw[lo]) / mb, (tp[hi] - tp[lo]) / mb
    record(f"diagnose: cost per MB, {lo}x-{hi}x", f"walk {w_mb * 1000:.0f} ms/MB ({per})",
           f"parsing each output once {p_mb * 1000:.0f} ms/MB", w_mb / max(p_mb, 1e-9), 1.3)


def nodes_paste(n: int) -> tuple[str, list[str]]:
    """What `pdsh -w gpu[0001-N] ibstat` prints on N nodes: each node the real H20 node's ibstat (tests/data/ibstat)
    with GUIDs of its own, one node's first port Down; with each node's output alone (what a parser is given)."""
    src = ROOT / "tests" / "data" / "ibstat" / "ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt"
    body = [ln for ln in src.read_text().split("\n") if ln.strip() and not ln.startswith("#")]
    lines, alone = [f"$ pdsh -w gpu[0001-{n:04d}] ibstat"], []
    for h in range(1, n + 1):
        own = [re.sub(r"0x([0-9a-f]{16})", lambda m: f"0x{int(m.group(1), 16) + h:016x}", ln) for ln in body]
        if h == n // 2:  # one node's first port Down
            own[next(i for i, ln in enumerate(own) if "State: Active" in ln)] = "                State: Down"
        lines += [f"gpu{h:04d}: {ln}" for ln in own]
        alone.append("\n".join(own) + "\n")
    return "\n".join(lines) + "\n", alone


def bench_nodes(n: int, tmp: Path, sizes: tuple[int, int] = (64, 512)) -> None:
    """``diagnose --evidence`` on one pdsh paste of many nodes (the CLI, in process: cut per node, each node's
    facts, the node comparison, one walk per kind of output) against the least work that reads the same input:
    parsing each node's ibstat once. The figure is the extra cost per node, small paste to large."""
    import contextlib
    import io

    from troubleshooter import cli, parsers

    os.environ["TROUBLESHOOTER_DATA_DIR"] = str(tmp / "tsdata")
    paths, alone = {}, {}
    for k in sizes:
        text, alone[k] = nodes_paste(k)
        paths[k] = tmp / f"pdsh-ibstat-{k}.txt"
        paths[k].write_text(text)

    def walk(k: int) -> None:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            cli.main(["diagnose", "--evidence", str(paths[k]), "--symptom", "one-slow-node", "--json"])

    def parse_once(k: int) -> None:
        for text in alone[k]:
            parsers.run("ibstat", text)

    lo, hi = sizes
    walk(lo), parse_once(lo)  # warm: imports, trees
    tw_lo, tp_lo, tw_hi, tp_hi = rounds(max(3, n // 2), lambda: walk(lo), lambda: parse_once(lo),
                                        lambda: walk(hi), lambda: parse_once(hi))
    w, p = (tw_hi - tw_lo) / (hi - lo), (tp_hi - tp_lo) / (hi - lo)
    record(f"diagnose: nodes, {lo}-{hi} pasted", f"{w * 1000:.2f} ms/node ({hi} nodes {tw_hi:.2f} s)",
           f"parsing each node's ibstat once {p * 1000:.2f} ms/node", w / max(p, 1e-9), None)


# ------------------------------------------------------------------ fan-out
FANOUT_TARGET_S = 3.0  # 1,024 cold bundles on this 2-core machine, every core used (issue 14)


def fanout_sizes(nodes: int) -> list[int]:
    """The node counts measured: 128/512/1,024 (and --nodes), or 64 and a smaller --nodes."""
    if nodes >= 1024:
        return sorted({128, 512, 1024, nodes})
    return sorted({64, max(64, nodes)})  # from 64 bundles up the tool uses every core: the same regime


def bench_fanout(nodes: int, runs: int) -> None:
    """bench/fanout_bench.py: cold (every bundle parsed, one worker per usable CPU) at several node counts, each the
    median of ``runs`` (the counts in turn), the cost per node, 4,096 modeled from them; and with sidecars."""
    script = ROOT / "bench" / "fanout_bench.py"
    if not script.exists():
        print("  fan-out: bench/fanout_bench.py not present: skipped")
        return
    sizes = fanout_sizes(nodes)
    res = subprocess.run([sys.executable, str(script), "--nodes", str(nodes), "--scale", ",".join(map(str, sizes)),
                          "--repeat", str(runs)], capture_output=True, text=True)
    if res.returncode != 0:
        print(f"  fan-out: fanout_bench.py failed (exit {res.returncode}): {res.stderr.strip()[-400:]}")
        rows.append(("fanout", float("inf"), 1.0))
        return
    parse_fanout(res.stdout)


def parse_fanout(out: str) -> None:
    """Record fanout_bench.py's figures (its output, as printed)."""
    scale_lines = []
    fit: tuple[float, float] | None = None
    for line in out.splitlines():
        m = re.match(r"scale\s+(\d+) nodes: ([\d.]+)s wall, ([\d.]+) ms/node, ([\d.]+) CPU-ms/node, (\d+) workers, "
                     r"peak (\d+) MB", line)
        if m:
            scale_lines.append(m)
            continue
        m = re.match(r"model\s+4096 nodes: (.*)", line)
        if m:
            print(f"    fan-out, 4,096 nodes modeled (not run): {m.group(1)}", flush=True)
            f = re.search(r"fixed (-?[\d.]+)s \+ ([\d.]+) ms/node", line)
            if f:
                fit = (float(f.group(1)), float(f.group(2)) / 1000)
            continue
        m = re.match(r"sidecar\s+(\d+) nodes: ([\d.]+)s .*\(total (\d+) MB", line)
        if m:
            n, s, mb = int(m.group(1)), float(m.group(2)), float(m.group(3))
            record("fanout sidecar: 1,024 nodes", f"{n} nodes {s:.2f} s, {mb:.0f} MB peak (x{1024 / n:g} for 1,024)",
                   f"{FANOUT_TARGET_S:g} s for 1,024 nodes", s * 1024 / n / FANOUT_TARGET_S, 1.0)
    for m in scale_lines:
        n, wall, per, cpu, workers, mb = (int(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4)),
                                          int(m.group(5)), float(m.group(6)))
        print(f"    fan-out cold, {n} nodes: {wall:.2f} s wall, {per:.2f} ms/node wall, {cpu:.2f} CPU-ms/node, "
              f"{workers} workers, {mb:.0f} MB peak; floor for 1,024 at this CPU cost on {workers} cores: "
              f"{cpu * 1024 / 1000 / max(1, workers):.2f} s", flush=True)
    if scale_lines:
        at = {int(m.group(1)): m for m in scale_lines}
        if 1024 in at:  # measured
            m = at[1024]
            wall, mb, how = float(m.group(2)), float(m.group(6)), "measured, median"
        else:  # a smaller run (--quick): 1,024 from the line through the measured points
            m = scale_lines[-1]
            n = int(m.group(1))
            wall = fit[0] + fit[1] * 1024 if fit else float(m.group(2)) * 1024 / n
            mb, how = float(m.group(6)), f"modeled from {', '.join(str(k) for k in at)} nodes"
        record("fanout cold: 1,024 nodes", f"{wall:.2f} s, {mb:.0f} MB peak ({how})",
               f"{FANOUT_TARGET_S:g} s for 1,024 nodes", wall / FANOUT_TARGET_S, 1.0)
        # the same with the machine to itself: CPU time (workers and parent) over the cores used. Wall time on this
        # shared VM carries everyone else's load (the load average is printed); this does not, and wall time can
        # never be below it
        cpu, workers = float(m.group(4)), int(m.group(5))
        floor = cpu * 1024 / 1000 / max(1, workers)
        record("fanout cold: 1,024 CPU floor", f"{floor:.2f} s ({cpu:.2f} CPU-ms/node x 1,024 / {workers} cores)",
               f"{FANOUT_TARGET_S:g} s for 1,024 nodes", floor / FANOUT_TARGET_S, 1.0)
        record("fanout cold: peak memory", f"{mb:.0f} MB", "500 MB", mb / 500, 1.0)


# ------------------------------------------------------------------ UI latency
async def _ui_latency(presses: int, workers: int) -> list[float]:
    from textual.worker import get_current_worker

    from troubleshooter.service.guide import TargetSpec
    from troubleshooter.probe.runner import run_command
    from troubleshooter.tui.app import StartScreen, TroubleshooterApp

    app = TroubleshooterApp(TargetSpec(), context_lines=["bench"], session_dir=Path(tempfile.mkdtemp()),
                            discover=list)  # no squeue / docker ps in the background: the ten probes are the load
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
    record("ui: key to repaint p95", f"p95 {p95 * 1000:.1f} ms, median {statistics.median(lat) * 1000:.1f} ms "
           f"({presses} keys, 10 probes)", "50 ms", p95 / 0.050, 1.0)


# ------------------------------------------------------------------ time to cause
def bench_ttc() -> None:
    if not shutil.which("tmux"):
        print("  ttc: tmux is not installed: skipped")
        return
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import timetocause as ttc
    finally:
        sys.path.remove(str(ROOT / "bench"))
    for case in ttc.CASES:
        r = ttc.walk(case)
        record(f"ttc {case}: keys", f"{r['keys']} keys to `{r['cause'].split()[0]}`'s fix", f"{ttc.MAX_KEYS} keys",
               r["keys"] / ttc.MAX_KEYS, 1.0)
        record(f"ttc {case}: seconds", f"{r['seconds']:.1f} s launch to fix on screen", f"{ttc.MAX_SECONDS:.0f} s",
               r["seconds"] / ttc.MAX_SECONDS, 1.0)


# ------------------------------------------------------------------ main
GROUPS = ("startup", "check", "parse", "diagnose", "fanout", "ui", "ttc")
ALIASES = {"sweep": "check"}  # the figure's name before issue 14


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"small sizes; exit 1 when a figure misses its target x {NOISE} (the noise margin)")
    ap.add_argument("--size", type=float, help="parse input size in MB (default 16, --quick 4)")
    ap.add_argument("--runs", type=int, help="rounds per figure, medians (default 7, --quick 5; at least 5)")
    ap.add_argument("--nodes", type=int, help="fan-out nodes (default 1024, --quick 128)")
    ap.add_argument("--only", help="comma-separated: " + ",".join(GROUPS))
    args = ap.parse_args()
    size = int((args.size or (4 if args.quick else 16)) * 2**20)
    runs = max(5, args.runs or (5 if args.quick else 7))
    nodes = args.nodes or (128 if args.quick else 1024)
    only = {ALIASES.get(x, x) for x in (args.only or ",".join(GROUPS)).split(",")}
    unknown = only - set(GROUPS)
    if unknown:
        ap.error(f"unknown --only names: {', '.join(sorted(unknown))} (known: {', '.join(GROUPS)})")
    print(f"machine: {machine()}")
    print(f"rounds {runs} (medians, interleaved); --quick fails a figure past its target x {NOISE}")
    tmp = Path(tempfile.mkdtemp(prefix="ts-bench-"))
    try:
        if "startup" in only:
            bench_startup(runs, tmp)
        if "check" in only:
            bench_check(runs, tmp)
        if "parse" in only:
            bench_parse(size, runs, tmp)
        if "diagnose" in only:
            bench_diagnose(runs, tmp, (1, 10, 30) if args.quick else (1, 10, 100))
            bench_nodes(runs, tmp, (32, 128) if args.quick else (64, 512))
        if "fanout" in only:
            bench_fanout(nodes, runs)
        if "ui" in only:
            bench_ui(40 if args.quick else 100)
        if "ttc" in only:
            bench_ttc()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"end: {load()}")
    bad = gate(args.quick)
    for b in bad:
        print(f"{'FAILED' if args.quick else 'past the noise margin'}: {b}", file=sys.stderr)
    return 1 if (bad and args.quick) else 0


if __name__ == "__main__":
    sys.exit(main())
