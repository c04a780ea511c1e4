"""facts.spec answers as the registry walk it replaced did (issue 14: a sweep looks up ~3,000 names and spent
~90 ms walking the registry for each), and learns of families declared after its first answer."""

from __future__ import annotations

import fnmatch

from troubleshooter import parsers
from troubleshooter.model import facts


def _walk(name: str):
    if name in facts.REGISTRY:
        return facts.REGISTRY[name]
    for s in facts.REGISTRY.values():
        if s.is_pattern and fnmatch.fnmatchcase(name, s.name):
            return s
    return None


def test_spec_matches_the_registry_walk() -> None:
    parsers.load_all()
    names = list(facts.REGISTRY)
    odd = ["env.var.NCCL_X", "env.var.", "env.var", "nccl.effective.A.B", "x", "", "*", "a[b]c", "cpu.0.freq", "é.ü",
           "nccl_conf.var.NCCL_IB_HCA", "env.var.NCCL_X\n"]
    for name in names + [n + ".x" for n in names] + odd:
        assert facts.spec(name) is _walk(name), name
        assert facts.spec(name) is _walk(name), name  # the cached answer too


def test_a_family_declared_later_is_found(monkeypatch) -> None:
    assert facts.spec("zz_test_family.anything") is None
    monkeypatch.setitem(facts.REGISTRY, "zz_test_family.*", facts.FactSpec("zz_test_family.*", "string", "", "t", "t"))
    assert facts.spec("zz_test_family.anything") is facts.REGISTRY["zz_test_family.*"]
    monkeypatch.undo()
    assert facts.spec("zz_test_family.anything") is None


def test_a_fact_declared_by_several_parsers_reads_the_same_whatever_the_import_order():
    """Verbs import only the parsers they need, so the entry must not depend on which came first.

    (CI once showed "NCCL version a framework's NCCL error names" where a local run showed "NCCL version
    from the log": the label came from whichever of three parsers had been imported first.)
    """
    import subprocess
    import sys

    code = (
        "import importlib, sys\n"
        "for m in sys.argv[1:]: importlib.import_module('troubleshooter.parsers.' + m)\n"
        "from troubleshooter.parsers import load_all; load_all()\n"
        "from troubleshooter.model.facts import spec\n"
        "print(spec('nccl.version').parser, spec('cpu.freq.boost').parser, spec('env.var.X').doc)\n"
    )
    outs = {
        subprocess.run([sys.executable, "-c", code, *order], capture_output=True, text=True, check=True).stdout
        for order in (["torch_distributed", "nccl_debug"], ["nccl_debug", "cuda_errors"], ["turbostat", "env"], [])
    }
    assert len(outs) == 1, outs
    assert outs.pop().startswith("cuda-errors cpufreq ")
