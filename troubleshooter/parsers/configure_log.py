"""An autoconf ``./configure`` run's output: what a source build found on the build host (Slurm's, hwloc's, Open
MPI's, UCX's ... all print the same lines), NVML among it.

Real sample (NVIDIA/deepops#1295, Slurm's configure inside an Ansible task on a GPU-less master; tests/data)::

    checking for PTHREAD_PRIO_INHERIT... yes
    checking if lz4 is wanted... checking for hwloc installation... /opt/deepops/hwloc
    checking for nvml.h... no
    checking for nvmlInit in -lnvidia-ml... no

What it means: a build on a host without the NVML headers (``nvml.h``) and library is built without NVML (Slurm then
has no gpu_nvml plugin and cannot AutoDetect=nvml). That is a fault only for a build meant for GPU nodes that rely on
NVML autodetection, which configure's output does not say (nor which package it is configuring): a GPU-less host's
build finds no NVML by design (NVIDIA/deepops#1295). Facts only, no cause.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("configure.checks", "dict", "", "what configure checked -> its answer as printed ('nvml.h' -> 'no'), at most 500"),
    ("configure.nvml", "bool", "", "configure found NVML (nvml.h, or nvmlInit in -lnvidia-ml): the build has NVML "
     "support; false when it looked and found neither"),
]

_CHECK = re.compile(r"^\s*checking (?:for |whether |if )?(.+?)\.\.\.(?: (.*))?$")
_NVML = re.compile(r"^(?:nvml\.h|nvmlInit in -lnvidia-ml|nvml installation)$")
MAX_CHECKS = 500


def _detect(text: str) -> float:
    lines = [ln for ln in text.split("\n")[:3000] if ln.strip() and len(ln) < 2000]
    checks = sum(1 for ln in lines if _CHECK.match(ln))
    return 0.8 if checks >= 3 and checks >= 0.6 * len(lines) else 0.0


@parser(
    "configure-log",
    detect=_detect,
    summary="an autoconf ./configure run's 'checking for X... yes/no' lines (NVML found or not for the build)",
    facts=FACTS,
    command="./configure ... 2>&1 | tee configure.out; grep -i nvml config.log",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "configure's 'checking for X... result' lines")
    checks: dict[str, str] = {}
    for raw in text.split("\n"):
        if len(raw) > 2000:
            continue
        m = _CHECK.match(raw)
        if not m or len(checks) >= MAX_CHECKS:
            continue
        what, answer = m.group(1).strip(), (m.group(2) or "").strip()
        # "checking if lz4 is wanted... checking for hwloc installation... /opt/deepops/hwloc": two checks on a line
        inner = _CHECK.match(answer)
        if inner:
            checks.setdefault(what, "")
            what, answer = inner.group(1).strip(), (inner.group(2) or "").strip()
        checks.setdefault(what, answer)
    if len(checks) < 3:
        raise ParseError("fewer than three 'checking for X... result' lines: not configure's output")
    facts: dict[str, Any] = {"configure.checks": checks}
    nvml = [a.lower() for w, a in checks.items() if _NVML.match(w)]
    if nvml:
        facts["configure.nvml"] = any(a not in ("no", "") for a in nvml)
    return facts
