"""Package listings: ``pip freeze``, ``pip list``, ``conda list``, the "Versions of relevant libraries" of
PyTorch's and vLLM's ``collect_env.py``, ``dpkg -l``, ``rpm -qa`` and ``ofed_info -s``: which NCCL (and PyTorch) a node's Python and system have.

Real samples (NVIDIA/nccl#1267, two nodes of one job; vllm-project/vllm#4211; karpathy/llm.c#742)::

    nvidia-nccl-cu11==2.14.3
    nvidia-nccl-cu12==2.20.5

    [pip3] nvidia-nccl-cu12==2.19.3
    [pip3] torch==2.2.1
    [conda] nvidia-nccl-cu12          2.20.5                   pypi_0    pypi

    ii  libnccl2    2.22.3-1+cuda12.2    amd64    NVIDIA Collective Communication Library (NCCL) Runtime

Read: ``name==version`` (pip freeze, collect_env's ``[pip3]`` lines), ``name version`` tables (pip list, with or
without its header; conda list and collect_env's ``[conda]`` lines, whose build and channel columns are dropped),
``ii name version arch description`` rows of dpkg, and versions that a ticket system turned into links
(``[12.4.5.8](http://12.4.5.8/)``). Names are compared as pip does (case and ``_``/``.`` folded to ``-``).

What it means here: every rank of a job must load the same NCCL. The wheel PyTorch loads (nvidia-nccl-cu12),
a second wheel for another CUDA (nvidia-nccl-cu11) and the system's libnccl2 can each be the one a process
uses; listings from two nodes that disagree on an NCCL version explain bootstrap failures ('connecting to
address with family 0', 'Message truncated') and hangs that no setting cures.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("packages.versions", "dict", "", "package -> version, every package the listing shows (names folded as pip does)"),
    ("packages.nccl", "dict", "", "the NCCL packages the listing shows and their versions (nvidia-nccl-cu12, "
     "nvidia-nccl-cu11, libnccl2, conda's nccl ...)"),
    ("packages.torch_version", "string", "", "the PyTorch version the listing shows (2.3.0+cu121)"),
    ("packages.ofed", "string", "", "the RDMA stack `ofed_info -s` names (MLNX_OFED_LINUX-4.3-1.0.1.0, "
     "OFED-internal-24.10-1.1.4 of DOCA-Host): NVIDIA's RDMA stack is installed where it was printed"),
]

MAX_PACKAGES = 5000
_LINK = re.compile(r"\[([^][\s]+)\]\(https?://[^)\s]*\)")  # 12.4.5.8 a ticket system made a link of
_NAME = r"[A-Za-z0-9][A-Za-z0-9._+-]*"
_VER = r"[0-9][0-9A-Za-z.+!_-]*"
_FREEZE = re.compile(rf"^\s*(?:\[(?:pip3?|conda)\]\s+)?({_NAME})\s*==\s*({_VER})\s*$")
_TABLE = re.compile(rf"^\s*(?:\[(?:pip3?|conda)\]\s+)?({_NAME})\s+({_VER})(?:\s++\S+){{0,2}}\s*+$")
_DPKG = re.compile(rf"^[a-z][a-zA-Z]{{1,2}}\s+({_NAME})(?::\w+)?\s+(?:\d+:)?({_VER})\s+(?:amd64|arm64|all|i386|ppc64el)\b")
# `ofed_info -s` (MLNX_OFED: "MLNX_OFED_LINUX-4.3-1.0.1.0:"; DOCA-Host: "OFED-internal-24.10-1.1.4:"); plain
# `ofed_info` starts with the same name and the upstream OFED it is based on: "MLNX_OFED_LINUX-5.8-1.0.1.1 (OFED-5.8-1.0.1):"
_OFED = re.compile(r"^\s*((?:MLNX_OFED_LINUX|OFED-internal|MLNX_EN)-\d+\.\d+-[\w.-]+?)(?:\s+\(OFED-[\w.-]+\))?:?\s*$")
# `rpm -qa`: NAME-VERSION-RELEASE.ARCH, split from the right as rpm does ("libnccl-2.9.9-1+cuda11.3.x86_64" ->
# libnccl, 2.9.9-1+cuda11.3: the version and release as dpkg prints them together)
_RPM = re.compile(rf"^\s*({_NAME}?)-(\d[\w.+~^]*)-([\w.+~^]*?)\.(?:x86_64|aarch64|noarch|i686|ppc64le|s390x)\s*$")
_HEADER = re.compile(r"^\s*(?:\$\s.*|Package\s+Version\b.*|#\s*Name\s+Version\s+Build\s+Channel|"
                     r"-{3,}+[ -]*+|#.*|\|\|?/?\s*Name\s+Version.*|\+{2,}.*|Desired=.*|Versions of relevant libraries:?|"
                     r"=+|\[conda\] Could not collect|\[pip3\] Could not collect)\s*$")


# nvidia-nccl-cu12, libnccl2, libnccl-dev, conda's nccl, vllm-nccl-cu12; not libvncclient1, not a local-repo package
_NCCL = re.compile(r"(?:^|-)(?:lib)?nccl(?:\d|-|$)")


def _fold(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _entry(line: str) -> tuple[str, str] | None:
    line = _LINK.sub(r"\1", line)
    m = _RPM.match(line)
    if m:
        return _fold(m.group(1)), f"{m.group(2)}-{m.group(3)}"
    for rx in (_FREEZE, _DPKG, _TABLE):
        m = rx.match(line)
        if m:
            return _fold(m.group(1)), m.group(2)
    return None


def _detect(text: str) -> float:
    lines = [ln for ln in text.split("\n")[:400] if ln.strip()]
    if len(lines) < 1:
        return 0.0
    if _OFED.match(lines[0]) and len(lines) <= 2:
        return 0.8  # ofed_info -s
    freeze = sum(1 for ln in lines if _FREEZE.match(_LINK.sub(r"\1", ln)) or _DPKG.match(ln) or _RPM.match(ln))
    tagged = sum(1 for ln in lines if re.match(r"^\s*\[(?:pip3?|conda)\]\s", ln))
    header = any(re.match(r"^\s*(?:Package\s+Version\s*$|#\s*Name\s+Version\s+Build\s+Channel)", ln) for ln in lines)
    table = sum(1 for ln in lines if _TABLE.match(ln))
    body = len([ln for ln in lines if not _HEADER.match(ln)]) or 1
    if tagged >= 2 or (freeze >= 2 and freeze / body >= 0.8) or (header and table / body >= 0.8):
        return 0.85
    if freeze >= 1 and freeze == body:
        return 0.6  # one 'name==version' line: a pip freeze | grep
    return 0.0


@parser(
    "packages",
    detect=_detect,
    summary="package listings: pip freeze / pip list / conda list / collect_env / dpkg -l (NCCL and PyTorch versions)",
    facts=FACTS,
    command="pip freeze | grep -iE 'nccl|torch'; dpkg -l | grep -i nccl",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a package listing (pip freeze, pip list, conda list or dpkg -l)")
    versions: dict[str, str] = {}
    unread = 0
    ofed = None
    lines = text.split("\n")
    for n, raw in enumerate(lines, 1):
        if not raw.strip() or _HEADER.match(raw):
            continue
        m = _OFED.match(raw) if ofed is None else None
        if m:
            ofed = m.group(1)
            if all(not ln.strip() for ln in lines[n:]):
                break  # `ofed_info -s`: the version alone
            continue
        e = _entry(raw)
        if e is None:
            unread += 1
            continue
        if len(versions) < MAX_PACKAGES:
            versions.setdefault(e[0], e[1])
    if ofed and not versions:
        return {"packages.ofed": ofed}
    if not versions:
        raise ParseError("no 'name==version' or 'name version' line: this is not a package listing")
    if unread > len(versions):
        raise ParseError(f"only {len(versions)} of {len(versions) + unread} lines read as packages: not a package listing")
    facts: dict[str, Any] = {"packages.versions": versions,
                             "packages.nccl": {k: v for k, v in versions.items() if _NCCL.search(k) and "repo" not in k}}
    torch = versions.get("torch")
    if torch:
        facts["packages.torch_version"] = torch
    if ofed:
        facts["packages.ofed"] = ofed
    return facts
