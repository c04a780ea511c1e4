"""``ps`` process listings as people paste them: ``ps -elf``, ``ps -ef``, ``ps aux`` (with or without the header,
often through ``| grep NAME``): which process has which PID.

Real sample (clustervision/trinityX#188: slurmd on a compute node, then its limits)::

    [root@node008 ~]# ps -elf | grep slurm
    1 S root       3844      1  0  80   0 - 32175 inet_c 09:36 ?        00:00:00 /usr/sbin/slurmd

What it is for: a limit, a binding or a state read from ``/proc/PID/...`` belongs to the process with that PID;
the listing says which one (``slurmd``, whose limits every job step it starts inherits, or the training process).
A listing says nothing wrong by itself.

>>> parse("root  3844  1  0 09:36 ?  00:00:00 /usr/sbin/slurmd -D\\n")["ps.processes"]
[{'pid': 3844, 'command': '/usr/sbin/slurmd -D', 'name': 'slurmd'}]
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

MAX_PROCESSES = 5000

FACTS = [
    ("ps.processes", "list", "", f"processes listed: {{pid, command, name (the program's file name)}}, in order, at most {MAX_PROCESSES}"),
    ("ps.names", "list", "", "distinct program names listed (slurmd, dockerd, python ...), in order"),
]

_TIME = r"(?:\d+-)?\d+:\d\d(?::\d\d)?"
# ps -elf: F S UID PID PPID C PRI NI ADDR SZ WCHAN STIME TTY TIME CMD
_ELF = re.compile(r"^\s*\d+\s+[RSDZTtIWXK]\s+\S+\s+(\d+)\s+\d+\s+\d+\s+-?\d+\s+-?\d+\s+\S+\s+\d+\s+\S+\s+\S+\s+\S+\s+"
                  + _TIME + r"\s+(\S(?:.*\S)?)\s*$")
# ps -ef: UID PID PPID C STIME TTY TIME CMD
_EF = re.compile(r"^\s*(?!\d+\s+[RSDZTtIWXK]\s)\S+\s+(\d+)\s+\d+\s+\d+\s+\S+\s+\S+\s+" + _TIME + r"\s+(\S(?:.*\S)?)\s*$")
# ps aux: USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND
_AUX = re.compile(r"^\s*\S+\s+(\d+)\s+\d+\.\d\s+\d+\.\d\s+\d+\s+\d+\s+\S+\s+[RSDZTtIWXK][<NLsl+]*\s+\S+\s+" + _TIME
                  + r"\s+(\S(?:.*\S)?)\s*$")
_HEADER = re.compile(r"^\s*(?:F\s+S\s+UID\s+PID|UID\s+PID\s+PPID|USER\s+PID\s+%CPU)\b")


def _row(line: str) -> tuple[int, str] | None:
    for rx in (_ELF, _AUX, _EF):
        m = rx.match(line)
        if m:
            return int(m.group(1)), m.group(2)
    return None


def _detect(text: str) -> float:
    lines = [ln for ln in text[:65536].split("\n")[:2000] if ln.strip()]
    rows = sum(1 for ln in lines if _row(ln))
    if rows and any(_HEADER.match(ln) for ln in lines):
        return 0.9
    if rows and rows >= len(lines) - 1:  # the rows of a grep'd listing, and perhaps its command line
        return 0.6
    return 0.0


def _name(command: str) -> str:
    argv0 = command.split()[0].strip("[]")
    return argv0.rsplit("/", 1)[-1].rstrip(":")


@parser(
    "ps",
    detect=_detect,
    summary="ps -elf / ps -ef / ps aux listings: which process has which PID",
    facts=FACTS,
    command="ps -ef",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a ps -ef / ps -elf / ps aux listing")
    procs: list[dict[str, Any]] = []
    for line in text.split("\n"):
        row = _row(line)
        if row and len(procs) < MAX_PROCESSES:
            procs.append({"pid": row[0], "command": row[1], "name": _name(row[1])})
    if not procs:
        raise ParseError("no process line of ps -ef, ps -elf or ps aux (UID PID PPID ... CMD)")
    return {"ps.processes": procs, "ps.names": list(dict.fromkeys(p["name"] for p in procs))}
