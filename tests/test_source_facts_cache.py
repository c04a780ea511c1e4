"""The facts each source's parser declares, kept in the user cache (sources._facts_index): a hit gives exactly what
importing the parsers says, without importing them; a stale, foreign or broken cache is a miss that imports them
and says the same. Each run is a fresh process (the index is per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FACTS = ["gpu.names", "cpu.cstates", "nccl.version", "env.var.NCCL_TOPO_FILE", "ib.ports", "numa.nodes",
         "no.such.fact"]
CODE = (
    "import json, sys\n"
    "from troubleshooter import sources\n"
    f"answers = {{f: sources.producers_of(f) for f in {FACTS!r}}}\n"
    "print(json.dumps({'answers': answers, 'imported': 'troubleshooter.parsers.nccl_debug' in sys.modules}))\n"
)


def _run(cache: Path, code: str = CODE) -> dict:
    env = dict(os.environ, TROUBLESHOOTER_CACHE_DIR=str(cache))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def test_a_hit_answers_as_the_parsers_do_without_importing_them(tmp_path: Path) -> None:
    truth = _run(tmp_path / "unused", "from troubleshooter import sources\nsources.load_all()\n" + CODE)["answers"]
    assert truth["gpu.names"] and truth["no.such.fact"] == []  # answers that can differ
    first = _run(tmp_path / "c")
    assert first == {"answers": truth, "imported": True}  # a miss imports the parsers, and writes the cache
    assert (tmp_path / "c" / "source-facts.json").is_file()
    assert _run(tmp_path / "c") == {"answers": truth, "imported": False}  # a hit: the same, nothing imported


def test_a_stale_or_broken_cache_is_a_miss(tmp_path: Path) -> None:
    cache = tmp_path / "c"
    truth = _run(cache)["answers"]
    path = cache / "source-facts.json"
    doc = json.loads(path.read_text())
    doc["facts"]["nvml"] = ["made.up"]
    for text in (json.dumps(dict(doc, tag=doc["tag"] + " another build")),  # another version or parser files
                 json.dumps(dict(doc, facts={"nvml": ["gpu.names"]})),   # not every source of this build
                 json.dumps(dict(doc, facts=dict(doc["facts"], nvml=5))),  # a value not a list of names
                 json.dumps(dict(doc, facts=dict(doc["facts"], nvml=[None]))),
                 "{not json", "[]"):
        path.write_text(text)
        assert _run(cache) == {"answers": truth, "imported": True}, text
    path.write_text(json.dumps(doc))  # the tag matches: a cache is trusted (it is this user's own directory)
    assert _run(cache)["answers"]["gpu.names"] == [s for s in truth["gpu.names"] if s != "nvml"]
