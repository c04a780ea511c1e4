"""An mpirun / mpiexec command line: how many ranks it starts and on which hosts, read from the line a person pasted
above (or without) the output it printed.

Real sample (horovod/horovod#110, two machines, one rank on each)::

    mpirun -np 2 \\
        -H 192.168.2.249:1,192.168.2.243:1 \\
        -bind-to none -map-by slot \\
        -x NCCL_DEBUG=INFO -x LD_LIBRARY_PATH \\
        /home/dl2017/Desktop/dp/bin/python3 keras_mnist_advanced.py

The paste reader gives every mpirun/mpiexec line it finds to this kind, whatever program it starts (as it gives an
srun line to srun). Options are read up to the program; the program's own options are not mpirun's. Open MPI's
``-H``/``--host`` list (``a,b`` or ``a:2,b:2``), MPICH/Intel MPI's ``-hosts``, and ranks per host from
``-npernode``/``-N``/``--map-by ppr:N:node``/``-ppn``. A ``--hostfile`` names hosts the line does not show.

>>> parse("mpirun -np 4 -H a:2,b:2 ./all_reduce_perf -g 1")["mpi.launch.hosts"]
['a', 'b']
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers._srun import command_line, skip_before
from troubleshooter.parsers.base import ParseError, parser, require_text, shell_words

FACTS = [
    ("mpi.launch.np", "number", "count", "ranks the mpirun/mpiexec line starts (-np, -n, -c)"),
    ("mpi.launch.hosts", "list", "", "distinct hosts the line names (-H/--host/-host, MPICH's -hosts), in order; [] when "
     "it names none (one machine, or a --hostfile the line does not show)"),
    ("mpi.launch.hostfile", "string", "", "the --hostfile/--machinefile the line names (its hosts are not on the line)"),
    ("mpi.launch.ranks_per_host_max", "number", "count", "the most ranks the line lets one host hold: -npernode/-N/"
     "ppr/-ppn where given, else the largest slot count of its host list (a host without ':N' has one slot)"),
]

_LAUNCHER = re.compile(r"^(?:\S*/)?(?:mpirun|mpiexec|orterun|prterun|mpiexec\.hydra)$")
# options that take the next word as their value; any other word not starting with '-' is the program
_VALUED = frozenset({"-np", "--np", "-n", "-c", "-H", "--host", "-host", "-hosts", "--hostfile", "-hostfile",
                     "--machinefile", "-machinefile", "-f", "--map-by", "-map-by", "--bind-to", "-bind-to", "--rank-by",
                     "-rank-by", "-x", "--env", "-genv", "-mca", "--mca", "-gmca", "--gmca", "-npernode", "--npernode",
                     "-N", "-ppn", "--ppn", "-perhost", "-wdir", "--wdir", "-wd", "--prefix", "-prefix",
                     "--output-filename", "-iface", "-bootstrap", "--cpus-per-proc", "--cpus-per-rank",
                     "-cpus-per-proc", "--launch-agent", "-launcher"})
_MCA = frozenset({"-mca", "--mca", "-gmca", "--gmca"})  # take two words: name and value


def _words(text: str) -> list[str] | None:
    line = command_line(text)
    if len(line) > 100_000:
        return None
    try:
        return shell_words(line.split("|")[0])
    except ValueError:
        return None


def _read(words: list[str]) -> tuple[dict[str, list[str]], int] | None:
    """mpirun's options (name -> values as written) and where its program starts; None when no launcher leads."""
    i = skip_before(words)
    if i >= len(words) or not _LAUNCHER.match(words[i]):
        return None
    opts: dict[str, list[str]] = {}
    i += 1
    while i < len(words):
        w = words[i]
        if not w.startswith("-"):
            break
        name, eq, val = w.partition("=") if w.startswith("--") else (w, "", "")
        if eq:
            opts.setdefault(name, []).append(val)
            i += 1
        elif name in _MCA:
            opts.setdefault(name, []).append(" ".join(words[i + 1:i + 3]))
            i += 3
        elif name in _VALUED and i + 1 < len(words):
            opts.setdefault(name, []).append(words[i + 1])
            i += 2
        else:
            opts.setdefault(name, []).append("")
            i += 1
    return opts, i


def _int(v: str) -> int | None:
    return int(v) if v.isdigit() else None


@parser(
    "mpirun",
    detect=lambda text: 0.0,  # a command line, given by the paste reader; never guessed from output
    summary="an mpirun/mpiexec command line: its ranks and the hosts it places them on",
    facts=FACTS,
    command="the mpirun line as typed, above its output",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "an mpirun command line")
    words = _words(text)
    read = _read(words) if words else None
    if read is None:
        raise ParseError("no mpirun/mpiexec command line")
    opts, _ = read
    facts: dict[str, Any] = {}
    np = next((n for k in ("-np", "--np", "-n", "-c") for v in opts.get(k, []) if (n := _int(v)) is not None), None)
    if np is not None:
        facts["mpi.launch.np"] = np
    hosts: list[str] = []
    slots: dict[str, int] = {}
    for k in ("-H", "--host", "-host", "-hosts"):
        for v in opts.get(k, []):
            for item in v.split(","):
                host, _, n = item.strip().partition(":")
                if not host:
                    continue
                if host not in hosts:
                    hosts.append(host)
                slots[host] = slots.get(host, 0) + (_int(n) or 1)
    facts["mpi.launch.hosts"] = hosts
    hostfile = next((v for k in ("--hostfile", "-hostfile", "--machinefile", "-machinefile", "-f") for v in opts.get(k, [])), None)
    if hostfile:
        facts["mpi.launch.hostfile"] = hostfile
    per = next((n for k in ("-npernode", "--npernode", "-N", "-ppn", "--ppn", "-perhost")
                for v in opts.get(k, []) if (n := _int(v)) is not None), None)
    ppr = next((m for v in opts.get("--map-by", []) + opts.get("-map-by", [])
                if (m := re.match(r"ppr:(\d+):node", v, re.IGNORECASE))), None)
    if per is None and ppr:
        per = int(ppr.group(1))
    if per is None and slots and not hostfile:
        per = max(slots.values())
    if per is not None:
        facts["mpi.launch.ranks_per_host_max"] = per
    return facts
