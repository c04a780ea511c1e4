"""The core never imports Textual (harlequin's test_import_hygiene): every module of the core is imported
alone in a fresh interpreter, and the headless CLI paths run without Textual being loaded.

One subprocess per module (so a module imported earlier cannot hide or cause a leak), run in parallel.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "troubleshooter"

PROBE = "import importlib, json, sys; importlib.import_module(sys.argv[1]); print(json.dumps('textual' in sys.modules))"


def core_modules() -> list[str]:
    """Every module of the package except the app (tui/) and __main__ (it runs the CLI: covered by -m below)."""
    mods = []
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG)
        if rel.parts[0] in ("tui", "__main__.py") or "decision_trees" in rel.parts:
            continue
        parts = ["troubleshooter", *rel.with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        mods.append(".".join(parts))
    return mods


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)
    return env


def _imports_textual(module: str) -> tuple[str, bool | str]:
    r = subprocess.run([sys.executable, "-c", PROBE, module], capture_output=True, text=True, cwd=ROOT, env=_env(),
                       timeout=60)
    if r.returncode != 0:
        return module, f"import failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}"
    return module, json.loads(r.stdout.strip().splitlines()[-1])


def test_module_list_covers_the_core() -> None:
    mods = core_modules()
    # the list is found, not hand-written: spot-check each family is in it and the TUI is not
    assert "troubleshooter.diagnosis.engine" in mods and "troubleshooter.cli.probe" in mods
    assert "troubleshooter.parsers.turbostat" in mods and "troubleshooter.sources.runtime" in mods
    assert not any(m.startswith("troubleshooter.tui") for m in mods)
    assert len(mods) > 60


def test_no_core_module_imports_textual() -> None:
    mods = core_modules()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(4, (os.cpu_count() or 2) * 2)) as pool:
        results = dict(pool.map(_imports_textual, mods))
    failed = {m: r for m, r in results.items() if isinstance(r, str)}
    assert not failed, f"core modules that do not import cleanly: {failed}"
    leaks = sorted(m for m, r in results.items() if r is True)
    assert not leaks, f"these core modules import textual: {leaks}"


def test_the_probe_detects_textual() -> None:
    """Positive control: the probe would see a leak (the TUI does import Textual)."""
    pytest.importorskip("textual")
    assert _imports_textual("troubleshooter.tui.app") == ("troubleshooter.tui.app", True)


WRAPPER = """
import sys
from troubleshooter.cli import main
sys.argv = ["troubleshooter", *sys.argv[1:]]
try:
    rc = main(sys.argv[1:])
except SystemExit as exc:
    rc = exc.code
sys.stdout.flush()
print("\\nTEXTUAL=" + str("textual" in sys.modules), file=sys.stderr)
sys.exit(rc or 0)
"""


@pytest.mark.parametrize("argv", [["--help"], ["parse", "--list"], ["--version"], ["check", "--help"],
                                  ["facts", "--json"]])
def test_headless_cli_does_not_import_textual(argv: list[str]) -> None:
    r = subprocess.run([sys.executable, "-c", WRAPPER, *argv], capture_output=True, text=True, cwd=ROOT, env=_env(),
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip(), "the verb printed nothing"
    assert "TEXTUAL=False" in r.stderr, f"{argv}: textual was imported\n{r.stderr}"


def test_console_script_help_with_importtime() -> None:
    """The installed entry point too: `python -X importtime -m troubleshooter --help` lists no textual module."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "troubleshooter", "--help"], capture_output=True,
                       text=True, cwd=ROOT, env=_env(), timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "usage: troubleshooter" in r.stdout
    imported = [line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")]
    assert "troubleshooter.cli" in imported  # the importtime trace is really there
    assert not [m for m in imported if m == "textual" or m.startswith("textual.")]


def test_check_json_imports_neither_rich_nor_yaml_nor_pynvml_without_a_driver() -> None:
    """`check --json` draws nothing (rich is imported only to draw) and, where libnvidia-ml.so.1 cannot be loaded,
    learns it without importing pynvml (issue 14: ~30 ms and ~25 ms of its start-up)."""
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        has_nvml = True
    except OSError:
        has_nvml = False
    probe = WRAPPER.replace('print("\\nTEXTUAL="', 'print("\\nRICH=" + str(any(m == "rich" or m.startswith("rich.") '
                            'for m in sys.modules)) + " PYNVML=" + str("pynvml" in sys.modules) + " YAML=" + '
                            'str("yaml" in sys.modules) + " PARSERS=" + ",".join(sorted(m.rsplit(".", 1)[-1] for m in '
                            'sys.modules if m.startswith("troubleshooter.parsers."))), file=sys.stderr)\n'
                            'print("\\nTEXTUAL="')
    for _ in range(2):  # the first run may fill the document cache (yaml parses the shipped files then)
        r = subprocess.run([sys.executable, "-c", probe, "check", "--json"], capture_output=True, text=True, cwd=ROOT,
                           env=_env(), timeout=120, stdin=subprocess.DEVNULL)
    assert json.loads(r.stdout)["schema"].startswith("troubleshooter.check")
    assert "RICH=False" in r.stderr, r.stderr[-500:]
    # the shipped YAML comes from the document cache, and a parser that reads YAML imports it when it parses
    # (the k8s-pod parser imported it at the top: ~10 ms of the GIL while the probes ran)
    assert "YAML=False" in r.stderr, r.stderr[-500:]
    if not has_nvml:
        assert "PYNVML=False" in r.stderr, r.stderr[-500:]
    # the parsers of the sources that gave output to read (and what they import), not every kind a paste may be
    # (importing all ~80 compiled ~550 regular expressions, ~70 ms of its ~290 ms on a 2-core VM), nor those of
    # sources that were skipped or could not run (no GPU, no HCA: ~50 ms more; bench: check)
    imported = set(r.stderr.split("PARSERS=", 1)[1].split()[0].split(","))
    assert not imported & {"nvidia_container_cli", "slurm_conf", "ps", "srun", "k8s_pod"}, imported
    from troubleshooter import parsers, sources

    status = {sid: ev["status"] for sid, ev in json.loads(r.stdout)["evidence"].items()}
    module = {sid: parsers.get(src.parser).func.__module__.rsplit(".", 1)[-1]
              for sid, src in sources.load_all().items() if sid in status}
    read = {module[sid] for sid, st in status.items() if st == "ok"}
    assert read and read <= imported, (read - imported, status)
    unread = {module[sid] for sid, st in status.items() if st != "ok"} - read
    assert unread, status  # a sweep here always has some (no --nccl-log: nccl-debug-log; no --pid: numastat-proc)
    # what the read parsers import themselves (ib-sysfs's parser uses ibstat's), in a fresh process
    closure = subprocess.run([sys.executable, "-c", "import importlib, sys\n" + "".join(
        f"importlib.import_module('troubleshooter.parsers.{m}')\n" for m in sorted(read)) + "print(','.join(m.rsplit("
        "'.', 1)[-1] for m in sys.modules if m.startswith('troubleshooter.parsers.')))"], capture_output=True,
        text=True, cwd=ROOT, env=_env(), timeout=60, stdin=subprocess.DEVNULL)
    needed = set(closure.stdout.strip().split(","))
    assert read <= needed, closure.stderr[-2000:]
    assert not (unread - needed) & imported, ((unread - needed) & imported, status)
    assert "nccl_debug" in unread - needed  # the check above can fail: the biggest of them is not needed here


def test_nvml_file_lookup_never_misses_a_loadable_library(tmp_path, monkeypatch) -> None:
    """`_library_missing` skips dlopen (and ctypes) only when the file look-up finds no candidate: where dlopen finds
    the library the look-up must say "maybe", and a copy on LD_LIBRARY_PATH or LD_PRELOAD is a "maybe" too."""
    import ctypes

    from troubleshooter.sources import nvml

    try:
        ctypes.CDLL(nvml.NVML_SONAME)
        assert nvml._library_maybe_present()
    except OSError:
        pass
    (tmp_path / nvml.NVML_SONAME).write_bytes(b"")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"/nonexistent:{tmp_path}")
    assert nvml._library_maybe_present()
    monkeypatch.delenv("LD_LIBRARY_PATH")
    monkeypatch.setenv("LD_PRELOAD", "/somewhere/libx.so")
    assert nvml._library_maybe_present()


def test_a_parser_is_found_by_kind_whatever_its_module() -> None:
    """`parsers.get` imports the module named after the kind; a kind registered by a module of another name
    (kernel_tracing registers funclatency and perf-script) is found all the same, and an unknown kind still names
    every known one."""
    code = ("from troubleshooter import parsers\n"
            "import sys\n"
            "assert parsers.get('nvml-json').kind == 'nvml-json'\n"
            "assert 'troubleshooter.parsers.slurm_conf' not in sys.modules\n"
            "assert parsers.get('funclatency').kind == 'funclatency'\n"
            "try:\n"
            "    parsers.get('no-such-kind')\n"
            "except KeyError as exc:\n"
            "    print(exc)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "unknown kind 'no-such-kind'" in r.stdout and "slurm-conf" in r.stdout and "perf-script" in r.stdout


@pytest.mark.parametrize("argv,expect", [(["trees", "lint"], "trees ok"), (["facts", "--json"], "nhc.nccl_pct_of_expected")])
def test_verbs_that_need_every_fact_load_every_parser(argv: list[str], expect: str) -> None:
    """A sweep imports its sources' parsers only (sources.load_own); the tree linter and the fact listing need the
    whole registry in a fresh process (the linter once called a fact of the nhc kind, which no source parses,
    unknown there, while the test suite, whose process had imported every parser, passed)."""
    r = subprocess.run([sys.executable, "-m", "troubleshooter", *argv], capture_output=True, text=True, cwd=ROOT,
                       env=_env(), timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, (r.stdout + r.stderr)[-2000:]
    assert expect in r.stdout + r.stderr
