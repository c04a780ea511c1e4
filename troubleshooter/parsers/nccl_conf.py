"""NCCL configuration files: ``/etc/nccl.conf`` and ``~/.nccl.conf`` (or ``$NCCL_CONF_FILE``).

Sample (the ``nccl-conf`` source's output; the file content as Azure HPC images ship it)::

    #@ nccl-conf 1
    #@ checked present=0 readable=0 path=/root/.nccl.conf
    #@ checked present=1 readable=1 path=/etc/nccl.conf
    ==> /etc/nccl.conf <==
    NCCL_IB_PCI_RELAXED_ORDERING=1
    NCCL_TOPO_FILE=/opt/microsoft/ndv5-topo.xml
    NCCL_IGNORE_CPU_AFFINITY=1

The syntax is NCCL's own (``setEnvFile`` in NCCL's ``misc/param.cc``), which is stricter than a shell's:
a line is a comment only when its *first* character is ``#``; the name is everything before the first
``=`` and the value everything after, *not trimmed and not unquoted* (``NCCL_DEBUG = INFO`` sets a variable
named ``"NCCL_DEBUG "``: NCCL ignores it); lines without ``=`` are skipped. NCCL reads ``$NCCL_CONF_FILE`` if
set, else ``~/.nccl.conf``, then ``/etc/nccl.conf``, and never overrides a variable already set: the
environment wins over the files, and the first file (and first line) naming a variable wins.

What it tells: variables set here apply to every job on the node without appearing in anyone's job script
(an ``NCCL_TOPO_FILE`` or ``NCCL_IB_HCA`` set here on the host is invisible in a container that does not
mount the file). Without the source's markers the input is read as one file's content.

"No file present" is a fact, not an error: the source always prints its ``#@ checked`` lines, and the
parser then gives ``nccl_conf.present`` false and ``nccl_conf.names`` [].
"""

from __future__ import annotations

import re

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("nccl_conf.present", "bool", "", "at least one NCCL config file exists in this context"),
    ("nccl_conf.files", "list", "", "the config files read, in NCCL's order (user file first, then /etc/nccl.conf)"),
    ("nccl_conf.checked", "list", "", "the paths the probe looked at (present or not)"),
    ("nccl_conf.unreadable", "list", "", "config files that exist but could not be read"),
    ("nccl_conf.var.*", "string", "", "the value NCCL takes from the files for one variable (the first setting wins)"),
    ("nccl_conf.vars", "dict", "", "every variable the files set, with the value that wins"),
    ("nccl_conf.names", "list", "", "names of the variables the files set, sorted"),
    ("nccl_conf.warnings", "list", "", "lines NCCL reads differently than intended (spaces around '=', quotes, indented comments, repeats)"),
]

_HEADER = re.compile(r"^==> (.*) <==\s*(unreadable)?\s*$")
_CHECKED = re.compile(r"^#@ checked present=([01]) readable=([01]) path=(.*)$")


def _detect(text: str) -> float:
    head = text.lstrip()[:4096]
    if head.startswith("#@ nccl-conf"):
        return 0.99
    if re.search(r"^==> \S*nccl\.conf <==", head, re.M):
        return 0.95
    lines = [ln for ln in head.replace("\r", "").split("\n") if ln.strip()]
    assigns = [ln for ln in lines if re.match(r"^NCCL_\w*\s*=", ln)]
    comments = [ln for ln in lines if ln.startswith("#")]
    if assigns and len(assigns) + len(comments) == len(lines):
        return 0.8 if comments else 0.6
    return 0.0


@parser(
    "nccl-conf",
    detect=_detect,
    summary="NCCL config files (/etc/nccl.conf, ~/.nccl.conf) with the probe's ==> PATH <== headers",
    facts=FACTS,
    command="head -v -n 1000 /etc/nccl.conf ~/.nccl.conf",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "NCCL config files (the nccl-conf probe, or the content of /etc/nccl.conf)")
    checked: list[str] = []
    unreadable: list[str] = []
    files: list[tuple[str, list[tuple[int, str]]]] = []
    marker = False
    current: list[tuple[int, str]] | None = None
    for no, line in enumerate(text.split("\n"), 1):
        m = _CHECKED.match(line)
        if m:
            marker = True
            checked.append(m.group(3))
            if m.group(1) == "1" and m.group(2) == "0":
                unreadable.append(m.group(3))
            continue
        if line.startswith("#@ "):
            marker = True
            continue
        h = _HEADER.match(line)
        if h:
            marker = True
            if h.group(2):
                if h.group(1) not in unreadable:
                    unreadable.append(h.group(1))
                current = None
                continue
            current = []
            files.append((h.group(1), current))
            continue
        if current is None:
            if marker:
                if line.strip():
                    raise ParseError(f"text outside a ==> PATH <== section: {line[:60]!r}", line=no)
                continue
            current = []
            files.append(("", current))  # a pasted file without headers
        current.append((no, line))

    values: dict[str, str] = {}
    warnings: list[str] = []
    names_seen = 0
    for path, lines in files:
        where = path or "input"
        for no, line in lines:
            if line.startswith("#"):
                continue
            if "=" not in line:
                if line.lstrip().startswith("#") and "=" not in line:
                    continue
                if line.strip():
                    warnings.append(f"{where} line {no}: no '=': NCCL skips {line.strip()[:40]!r}")
                continue
            name, _, value = line.partition("=")
            if line.lstrip().startswith("#"):
                warnings.append(f"{where} line {no}: indented '#' is not a comment for NCCL: sets {name!r}")
            elif name != name.strip() or value != value.strip():
                warnings.append(f"{where} line {no}: spaces around '=' become part of the name or value ({line.strip()[:50]!r})")
            elif len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                warnings.append(f"{where} line {no}: NCCL keeps the quotes in {name}={value}")
            names_seen += 1
            if name in values:
                if values[name] != value:
                    warnings.append(f"{where} line {no}: {name} set again; NCCL keeps the first value {values[name]!r}")
                continue
            values[name] = value
    if not marker and not names_seen:
        raise ParseError("no NAME=value lines found (expected the content of an nccl.conf)")
    f: dict[str, object] = {
        # with the probe's markers, presence is what it found; a bare paste is a file's content
        "nccl_conf.present": (bool(files) or bool(unreadable)) if marker else True,
        "nccl_conf.files": [p for p, _ in files if p],
        "nccl_conf.vars": dict(sorted(values.items())),
        "nccl_conf.names": sorted(values),
        "nccl_conf.warnings": warnings,
    }
    if marker:
        f["nccl_conf.checked"] = checked
        f["nccl_conf.unreadable"] = unreadable
    for k, v in values.items():
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):  # "NCCL_DEBUG " (with the space) stays in vars only
            f[f"nccl_conf.var.{k}"] = v
    return f
