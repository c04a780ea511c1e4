"""``scontrol show node N``: a node's hardware as Slurm believes it, its GRES and its state.

Real sample (DGX A800, Slurm 21.08.8-2; trimmed)::

    NodeName=dgx001 Arch=x86_64 CoresPerSocket=1
       CPUAlloc=128 CPUTot=256 CPULoad=9.12
       Gres=gpu:A800:8(S:16-31,48-63,80-95,112-127,144-159,176-191,210-223,240-255)
       OS=Linux 5.4.0-156-generic #173-Ubuntu SMP Tue Jul 11 07:25:22 UTC 2023
       RealMemory=2034931 AllocMem=0 FreeMem=1644035 Sockets=256 Boards=1
       State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
       CfgTRES=cpu=256,mem=2034931M,billing=256,gres/gpu=8
       AllocTRES=cpu=128,gres/gpu=8

What it tells: whether slurm.conf describes the node's topology truthfully. ``Sockets=256
CoresPerSocket=1`` on a 2-socket machine (as here) makes Slurm's CPU binding and the GRES socket affinity
(``S:16-31,...``) meaningless: tasks land on cores far from their GPU. ``State`` and ``Reason`` say why a
node is drained. Same ``Key=value`` format as ``scontrol show job`` (``OS=`` and a trailing ``Reason=`` take
the rest of their line).
"""

from __future__ import annotations

import re

from troubleshooter.parsers._prompt import prompt
from troubleshooter.parsers.base import ParseError, parser, require_text
from troubleshooter.parsers.scontrol_job import parse_tres, records, split_fields

FACTS = [
    ("slurm.node.name", "string", "", "NodeName"),
    ("slurm.node.state", "string", "", "State (IDLE, MIXED, ALLOCATED, DRAIN...; flags after '+')"),
    ("slurm.node.reason", "string", "", "Reason the node is drained or down"),
    ("slurm.node.gres", "string", "", "Gres as configured (with socket affinity in parentheses)"),
    ("slurm.node.gpus", "number", "count", "GPUs configured, from CfgTRES gres/gpu"),
    ("slurm.node.sockets", "number", "count", "Sockets"),
    ("slurm.node.cores_per_socket", "number", "count", "CoresPerSocket"),
    ("slurm.node.threads_per_core", "number", "count", "ThreadsPerCore"),
    ("slurm.node.cpus", "number", "count", "CPUTot"),
    ("slurm.node.cpus_alloc", "number", "count", "CPUAlloc"),
    ("slurm.node.cpu_load", "number", "", "CPULoad"),
    ("slurm.node.real_memory_mb", "number", "MB", "RealMemory"),
    ("slurm.node.free_memory_mb", "number", "MB", "FreeMem"),
    ("slurm.node.cfg_tres", "dict", "", "CfgTRES"),
    ("slurm.node.alloc_tres", "dict", "", "AllocTRES"),
    ("slurm.node.partitions", "list", "", "Partitions"),
    ("slurm.node.slurm_version", "string", "", "Version of slurmd"),
    ("slurm.node.os", "string", "", "OS (kernel) as slurmd reports it"),
    ("slurm.node.fields", "dict", "", "every Key=value of the record, as printed"),
]


# a record grep'd out of "scontrol show node NAME | grep gres" keeps its Key=value lines and loses the NodeName= that
# starts it: the command line, when shown (after any prompt a transcript has), names the node
_PROMPT = prompt("$#", "command")
_COMMAND = re.compile(r"(?:sudo\s+)?scontrol\s+(?:-\w+\s+)*show\s+nodes?\s+([A-Za-z0-9][\w.-]*)(?=\s|$)")
_NODE_KEY = re.compile(r"^\s*(?:CfgTRES|AllocTRES|Gres|GresUsed|State|Reason|CPUTot|CPUAlloc|RealMemory|Partitions|"
                       r"Sockets|CoresPerSocket|ThreadsPerCore|FreeMem|AllocMem|CPULoad)=\S")


def _grepped(text: str) -> list[list[tuple[int, str]]]:
    """The lines under the command line that names the node, read as that node's record when they are its Key=value
    lines (all of them: anything else is not a fragment of one record)."""
    lines = text.split("\n")
    at = next(((i, c) for i, ln in enumerate(lines) if (p := _PROMPT.match(ln)) and (c := _COMMAND.match(p.group("cmd")))),
              None)
    if at is None:
        return []
    no, m = at[0] + 1, at[1]
    body = [(no + i, ln) for i, ln in enumerate(lines[at[0] + 1:], 1) if ln.strip()]
    if not body or not all(_NODE_KEY.match(ln) for _, ln in body):
        return []
    keys = [k for _, ln in body for k, _ in split_fields(ln)]
    if len(keys) != len(set(keys)):
        return []  # a key twice: several nodes' lines (a node list or a glob the pattern did not catch)
    return [[(no, f"NodeName={m.group(1)}"), *body]]


def _detect(text: str) -> float:
    head = text[:65536]
    if re.search(r"^[^\S\n]*NodeName=\S+ ", head, re.M) and re.search(r"\b(CPUTot|RealMemory|CoresPerSocket)=", head):
        return 0.95
    return 0.0


@parser(
    "scontrol-node",
    detect=_detect,
    summary="Slurm node record (scontrol show node N)",
    facts=FACTS,
    command="scontrol show node NODE",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "scontrol show node output")
    recs = records(text, "NodeName") or _grepped(text)
    if not recs:
        raise ParseError("no 'NodeName=' record found (expected scontrol show node output, or its lines grep'd under "
                         "the command line that names the node)")
    fields: dict[str, str] = {}
    for _no, line in recs[0]:
        for k, v in split_fields(line):
            fields.setdefault(k, v)
    f: dict[str, object] = {"slurm.node.fields": fields, "slurm.node.name": fields["NodeName"]}
    for fact, key in (("slurm.node.state", "State"), ("slurm.node.reason", "Reason"), ("slurm.node.gres", "Gres"),
                      ("slurm.node.slurm_version", "Version"), ("slurm.node.os", "OS")):
        if fields.get(key) not in (None, "", "(null)", "N/A"):
            f[fact] = fields[key]
    for fact, key in (("slurm.node.sockets", "Sockets"), ("slurm.node.cores_per_socket", "CoresPerSocket"),
                      ("slurm.node.threads_per_core", "ThreadsPerCore"), ("slurm.node.cpus", "CPUTot"),
                      ("slurm.node.cpus_alloc", "CPUAlloc"), ("slurm.node.real_memory_mb", "RealMemory"),
                      ("slurm.node.free_memory_mb", "FreeMem")):
        v = fields.get(key, "")
        if v.isdigit():
            f[fact] = int(v)
    try:
        f["slurm.node.cpu_load"] = float(fields.get("CPULoad", ""))
    except ValueError:
        pass
    for fact, key in (("slurm.node.cfg_tres", "CfgTRES"), ("slurm.node.alloc_tres", "AllocTRES")):
        if fields.get(key):
            f[fact] = parse_tres(fields[key])
    gpus = f.get("slurm.node.cfg_tres", {}).get("gres/gpu") if isinstance(f.get("slurm.node.cfg_tres"), dict) else None
    if isinstance(gpus, int):
        f["slurm.node.gpus"] = gpus
    if fields.get("Partitions"):
        f["slurm.node.partitions"] = fields["Partitions"].split(",")
    return f
