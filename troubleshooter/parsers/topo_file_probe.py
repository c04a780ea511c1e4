"""Which NCCL topology file NCCL would load in this context, and whether it can: the ``nccl-topo-file`` probe.

The probe (a fixed ``sh`` script, see :mod:`troubleshooter.sources.runtime`) resolves the file as NCCL does:
``NCCL_TOPO_FILE`` from the environment; else ``NCCL_TOPO_FILE=`` from ``$NCCL_CONF_FILE`` or
``~/.nccl.conf``, then ``/etc/nccl.conf``; else ``/var/run/nvidia-topologyd/virtualTopology.xml``. It also
looks at ``/etc/nccl/topo.xml``, where cloud images often keep the file. Its output, line-oriented::

    #@ nccl-topo-file 1
    #@ env NCCL_TOPO_FILE=/opt/microsoft/ndv5-topo.xml       (or: #@ env NCCL_TOPO_FILE unset)
    #@ conf-file /etc/nccl.conf                              (only when the value came from a config file)
    #@ conf NCCL_TOPO_FILE=/opt/microsoft/ndv5-topo.xml
    #@ file role=nccl source=env present=1 readable=1 bytes=2771 sha256=9f2c... path=/opt/microsoft/ndv5-topo.xml
    <system version="1">
      ...
    </system>
    #@ end role=nccl
    #@ file role=etc source=fixed present=0 readable=0 bytes=- sha256=- path=/etc/nccl/topo.xml

The content follows a ``role=nccl`` header only when the file is readable, capped by ``head -c`` (4 MiB);
``path=`` comes last so a path may hold spaces.

What it tells (case 4): inside the job's container, ``nccl.topo_file.visible`` false (or ``from_env`` false
while the host sets the variable) means NCCL silently autodetects a topology instead of the file the
platform needs; AllGather/ReduceScatter then run 2-4x slower. Compare ``nccl.topo_file.sha256`` between
host and container to catch a stale copy.

Sample from this machine (variable pointing at a copy of a corpus file)::

    #@ nccl-topo-file 1
    #@ env NCCL_TOPO_FILE=/tmp/t/topo.xml
    #@ file role=nccl source=env present=1 readable=1 bytes=2773 sha256=4c0f... path=/tmp/t/topo.xml
"""

from __future__ import annotations

import re

from troubleshooter.parsers.base import ParseError, parser, require_text
from troubleshooter.parsers.nccl_topo import load_xml, topo_facts

DEFAULT_PATH = "/var/run/nvidia-topologyd/virtualTopology.xml"
ETC_PATH = "/etc/nccl/topo.xml"
CAP_BYTES = 4 * 1024 * 1024

FACTS = [
    ("nccl.topo_file.env", "string", "", "NCCL_TOPO_FILE as set in the environment; absent when unset"),
    ("nccl.topo_file.from_env", "bool", "", "NCCL_TOPO_FILE is set in this context's environment"),
    ("nccl.topo_file.source", "string", "", "where the path came from: env, conf (an nccl.conf file) or default (virtualTopology.xml)"),
    ("nccl.topo_file.conf_file", "string", "", "the nccl.conf that set NCCL_TOPO_FILE (source conf only)"),
    ("nccl.topo_file.path", "string", "", "the topology file NCCL would load here"),
    ("nccl.topo_file.visible", "bool", "", "that file exists in this context"),
    ("nccl.topo_file.readable", "bool", "", "that file is a readable regular file"),
    ("nccl.topo_file.used", "bool", "", "NCCL would load a topology file here (visible and readable); false: it autodetects"),
    ("nccl.topo_file.bytes", "number", "bytes", "size of the file"),
    ("nccl.topo_file.sha256", "string", "", "SHA-256 of the file (compare host and container)"),
    ("nccl.topo_file.parse_ok", "bool", "", "the file is well-formed NCCL topology XML"),
    ("nccl.topo_file.parse_error", "string", "", "why the file does not parse"),
    ("nccl.topo_file.gpu_count", "number", "count", "GPUs the file describes"),
    ("nccl.topo_file.net_count", "number", "count", "network devices the file describes"),
    ("nccl.topo_file.same_as_etc", "bool", "", "the file NCCL would load has the same content as /etc/nccl/topo.xml"),
    ("nccl.etc_topo.visible", "bool", "", "/etc/nccl/topo.xml exists in this context"),
    ("nccl.etc_topo.readable", "bool", "", "/etc/nccl/topo.xml is readable"),
    ("nccl.etc_topo.sha256", "string", "", "SHA-256 of /etc/nccl/topo.xml"),
]

_FILE = re.compile(
    r"^#@ file role=(\w+) source=(\w+) present=([01]) readable=([01]) bytes=(\d+|-) sha256=([0-9a-f]{64}|-) path=(.*)$"
)


def _detect(text: str) -> float:
    return 0.99 if text.lstrip().startswith("#@ nccl-topo-file") else 0.0


@parser(
    "topo-file-probe",
    detect=_detect,
    summary="the nccl-topo-file probe: which NCCL topology file applies here, visible or not, and its content",
    facts=FACTS,
    command="troubleshooter collect --source nccl-topo-file",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "the nccl-topo-file probe's output (#@ nccl-topo-file)")
    lines = text.split("\n")
    if not lines[0].startswith("#@ nccl-topo-file"):
        raise ParseError("not the nccl-topo-file probe's output (no '#@ nccl-topo-file' first line)", line=1)
    f: dict[str, object] = {}
    files: dict[str, dict[str, object]] = {}
    i = 1
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("#@ env NCCL_TOPO_FILE="):
            f["nccl.topo_file.env"] = line[len("#@ env NCCL_TOPO_FILE="):]
            f["nccl.topo_file.from_env"] = True
        elif line.strip() == "#@ env NCCL_TOPO_FILE unset":
            f["nccl.topo_file.from_env"] = False
        elif line.startswith("#@ conf-file "):
            f["nccl.topo_file.conf_file"] = line[len("#@ conf-file "):]
        elif line.startswith("#@ file "):
            m = _FILE.match(line)
            if not m:
                raise ParseError(f"malformed file line: {line[:80]!r}", line=i)
            role, source, present, readable, size, digest, path = m.groups()
            entry: dict[str, object] = {"source": source, "present": present == "1", "readable": readable == "1",
                                        "path": path, "bytes": None if size == "-" else int(size),
                                        "sha256": None if digest == "-" else digest, "content": None}
            if role == "nccl" and entry["readable"]:
                start = i
                while i < len(lines) and lines[i] != f"#@ end role={role}":
                    i += 1
                if i == len(lines):
                    raise ParseError(f"the {path} content has no '#@ end role={role}' line (output cut short?)", line=start)
                entry["content"] = "\n".join(lines[start:i])
                i += 1
            files[role] = entry
        elif line.startswith("#@ ") or not line.strip():
            continue
        else:
            raise ParseError(f"unexpected line: {line[:80]!r}", line=i)
    if "nccl.topo_file.from_env" not in f:
        raise ParseError("the probe output has no '#@ env NCCL_TOPO_FILE' line")
    nccl = files.get("nccl")
    if nccl is None:
        raise ParseError("the probe output has no '#@ file role=nccl' line")
    f["nccl.topo_file.source"] = nccl["source"]
    f["nccl.topo_file.path"] = nccl["path"]
    f["nccl.topo_file.visible"] = nccl["present"]
    f["nccl.topo_file.readable"] = nccl["readable"]
    f["nccl.topo_file.used"] = bool(nccl["present"] and nccl["readable"])
    if nccl["bytes"] is not None:
        f["nccl.topo_file.bytes"] = nccl["bytes"]
    if nccl["sha256"]:
        f["nccl.topo_file.sha256"] = nccl["sha256"]
    if nccl["content"] is not None:
        content = nccl["content"]
        if isinstance(nccl["bytes"], int) and nccl["bytes"] > CAP_BYTES:
            f["nccl.topo_file.parse_ok"] = False
            f["nccl.topo_file.parse_error"] = f"file is {nccl['bytes']} bytes, over the probe's {CAP_BYTES}-byte cap: not checked"
        else:
            try:
                topo = topo_facts(load_xml(content)[0])
            except ParseError as exc:
                f["nccl.topo_file.parse_ok"] = False
                f["nccl.topo_file.parse_error"] = str(exc)
            else:
                f["nccl.topo_file.parse_ok"] = True
                f["nccl.topo_file.gpu_count"] = topo["nccl_topo.gpu_count"]
                f["nccl.topo_file.net_count"] = topo["nccl_topo.net_count"]
    etc = files.get("etc")
    if etc is not None:
        f["nccl.etc_topo.visible"] = etc["present"]
        f["nccl.etc_topo.readable"] = etc["readable"]
        if etc["sha256"]:
            f["nccl.etc_topo.sha256"] = etc["sha256"]
        if etc["sha256"] and nccl["sha256"]:
            f["nccl.topo_file.same_as_etc"] = etc["sha256"] == nccl["sha256"]
    return f
