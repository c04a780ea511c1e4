"""A job script (an sbatch file, a launch wrapper): its exported variables, #SBATCH directives and launchers.

Real sample (the launch script of a 2-node Megatron job on a Slurm cluster with docker, pytorch/pytorch#111424;
tests/data/job-script)::

    export NCCL_DEBUG=INFO
    #export NCCL_SOCKET_IFNAME=ibp60s0
    export NCCL_IB_DISABLE=0
    export NCCL_SOCKET_IFNAME=^lo,docker,virbr,vmnet,vboxnet,wl,ww,ppp,eth,bond
    export MASTER_PORT=$(expr 10000 + $(echo -n $SLURM_JOBID | tail -c 4))
    module load cuda12.1

People paste these when asked for their settings. What is read: ``export NAME=value`` lines that are not
commented out (quotes removed as the shell would; the last assignment wins), ``#SBATCH`` directives, and which
launchers the script calls. A value that the shell computes (``$VAR``, ``$(...)``, backquotes) is not known
from the text: the name is listed in ``script.unresolved`` and no value is given. The variables are given as
``env.var.*``; the environment is not known in full from a script (anything exported before it ran, or by a
module, is missing).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text, shell_words

FACTS = [
    ("script.exports", "list", "", "names the script exports (commented-out lines not included), in order"),
    ("script.unresolved", "list", "", "exported names whose value the shell computes ($VAR, $(...)): unknown from the text"),
    ("script.sbatch", "dict", "", "#SBATCH directives: option -> value ('--nodes' -> '2', '-N' -> '2'; a flag -> '')"),
    ("script.launchers", "list", "", "launchers the script calls, in order: srun, mpirun, torchrun, deepspeed, accelerate, docker run, enroot, apptainer ..."),
    ("env.var.*", "string", "", "the value of one environment variable, as set (secrets included; redacted in output)"),
]

_EXPORT = re.compile(r"^\s*(?:export|declare\s+-x)\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_SBATCH = re.compile(r"^\s*#SBATCH\s+(-{1,2}[\w-]+)(?:[= ]\s*(\S.*?))?\s*(?:#.*)?$")
_LAUNCHERS = [("docker run", re.compile(r"\b(?:nvidia-)?docker\s+run\b")), ("podman run", re.compile(r"\bpodman\s+run\b")),
              ("srun", re.compile(r"(?:^|[\s;&|(])srun\s")), ("mpirun", re.compile(r"\b(?:mpirun|mpiexec)\s")),
              ("torchrun", re.compile(r"\btorchrun\b|torch\.distributed\.(?:run|launch)")),
              ("deepspeed", re.compile(r"(?:^|\s)deepspeed\s")), ("accelerate", re.compile(r"\baccelerate\s+launch\b")),
              ("enroot", re.compile(r"\benroot\s+(?:start|exec)\b")), ("apptainer", re.compile(r"\b(?:apptainer|singularity)\s+(?:exec|run)\b"))]
_SCRIPTY = re.compile(r"^[^\S\n]*(?:module\s+(?:load|purge|use)|srun\s|mpirun\s|torchrun\s|python3?\s|echo\s|cd\s|source\s|"
                      r"conda\s+activate|#!\s*/|set\s+-|if\s|for\s|done\b|fi\b|deepspeed\s|sbatch\s)", re.MULTILINE)


def _detect(text: str) -> float:
    head = text[:262144]
    if re.search(r"^[^\S\n]*#SBATCH\s+-", head, re.MULTILINE):
        return 0.85
    exports = len(re.findall(r"^[^\S\n]*export\s+[A-Za-z_][A-Za-z0-9_]*=", head, re.MULTILINE))
    script = len(_SCRIPTY.findall(head))
    if exports >= 1 and script >= 2 or exports >= 2 and script >= 1:
        return 0.7
    return 0.0


def _value(raw: str) -> str | None:
    """The value as the shell would assign it, or None when the shell computes it."""
    raw = raw.strip()
    if not raw:
        return ""
    try:
        words = shell_words(raw, comments=True)
    except ValueError:
        return None
    if len(words) != 1:
        return None if len(words) > 1 else ""
    # $ inside single quotes is literal; anywhere else it is expanded
    unquoted = re.sub(r"'[^']*'", "", raw)
    if "$" in unquoted or "`" in unquoted:
        return None
    return words[0]


@parser(
    "job-script",
    detect=_detect,
    summary="a job script (sbatch file, launch wrapper): exported variables, #SBATCH directives, launchers",
    facts=FACTS,
    command="cat job.sbatch",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a job script")
    exports: list[str] = []
    unresolved: list[str] = []
    values: dict[str, str] = {}
    sbatch: dict[str, str] = {}
    launchers: list[str] = []
    for raw in text.split("\n"):
        line = raw.rstrip()
        m = _SBATCH.match(line)
        if m:
            sbatch[m.group(1)] = (m.group(2) or "").strip()
            continue
        if line.lstrip().startswith("#"):
            continue
        m = _EXPORT.match(line)
        if m:
            name = m.group(1)
            if name not in exports:
                exports.append(name)
            v = _value(m.group(2))
            if v is None:
                values.pop(name, None)
                if name not in unresolved:
                    unresolved.append(name)
            else:
                values[name] = v
                if name in unresolved:
                    unresolved.remove(name)
            continue
        for name, pat in _LAUNCHERS:
            if pat.search(line) and name not in launchers:
                launchers.append(name)
    if not (exports or sbatch or launchers):
        raise ParseError("no export, #SBATCH directive or launcher found: not a job script")
    facts: dict[str, Any] = {"script.exports": exports, "script.unresolved": unresolved, "script.sbatch": sbatch,
                             "script.launchers": launchers}
    for name, v in values.items():
        facts[f"env.var.{name}"] = v
    return facts
