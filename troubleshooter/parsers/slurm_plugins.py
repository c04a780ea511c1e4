"""Listings of Slurm's plugin files: ``rpm -ql slurm... [| grep gpu]``, ``dpkg -L slurm-smd``, ``ls`` or ``find`` of
the plugin directory (``/usr/lib64/slurm/``): which GPU plugins the installed Slurm has.

Real samples (openhpc/ohpc#1910, a site's own build and OpenHPC's; an OKE GB200 test log's ``find``)::

    [ ~]# rpm -ql slurm-ohpc-22.05.2-14.103.ohpc.2.6.x86_64 | grep gpu
    /usr/lib64/slurm/acct_gather_energy_gpu.so
    /usr/lib64/slurm/gpu_generic.so
    /usr/lib64/slurm/gpu_nvml.so
    /usr/lib64/slurm/gres_gpu.so

    /usr/lib/aarch64-linux-gnu/slurm/gpu_nvidia.so

What it means: ``AutoDetect=nvml`` in gres.conf needs Slurm built against NVML, which installs ``gpu_nvml.so``
(configure's ``--with-nvml``; OpenHPC's and many distributions' packages are built without it). A listing that
shows Slurm's GPU plugins (``gpu_generic.so`` is always built) without ``gpu_nvml.so`` is such a build. Absence is
claimed only where the listing would have shown it: not through a ``grep`` whose pattern ``gpu_nvml.so`` does not
match, and not from a Debian ``slurm-wlm-*`` package's file list (Debian ships the NVML plugin in a package of its
own, so another package's list lacks it whatever is installed).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers._prompt import prompt
from troubleshooter.parsers.base import ParseError, parser, require_text, shell_words

FACTS = [
    ("slurm.plugins.listed", "list", "", "the Slurm plugins the listing shows (file names without .so: gpu_generic, "
     "gres_gpu ...)"),
    ("slurm.plugins.gpu", "list", "", "its GPU plugins (gpu_generic, gpu_nvml, gpu_nvidia, gpu_rsmi ...)"),
    ("slurm.plugins.gpu_nvml", "bool", "", "the listing has gpu_nvml.so (Slurm built with NVML: AutoDetect=nvml can "
     "work); false only where the listing shows Slurm's GPU plugins and would have shown it"),
    ("slurm.plugins.package", "string", "", "the package listed (rpm -ql / dpkg -L NAME), as its command names it"),
]

_PROMPT = prompt("$#%", "command")
_PATH = re.compile(r"^\s*(/[^\s]*)\s*$")
_PLUGIN = re.compile(r"/slurm(?:-wlm)?/([a-z][a-z0-9_]*)\.so$")
_BARE = re.compile(r"^\s*([a-z][a-z0-9_]*)\.so\s*$")  # ls of the plugin directory
_LABEL = re.compile(r"^\s*[A-Za-z][\w ()'-]{0,60}:\s*$")  # "Working system:"
_LISTER = re.compile(r"\b(?:rpm\s+-\w*[ql]\w*|dpkg\s+(?:-L|--listfiles)|ls|find|locate)\b")


def _grep_matches_nvml(command: str) -> bool | None:
    """Would the command's ``| grep PATTERN`` print gpu_nvml.so? None when there is no grep."""
    head, bar, tail = command.partition("|")
    if not bar:
        return None
    try:
        words = shell_words(tail)
    except ValueError:
        return False
    if not words or words[0] not in ("grep", "egrep"):
        return False
    pats = [w for w in words[1:] if not w.startswith("-")]
    if len(pats) != 1 or "|" in tail.split(pats[0], 1)[-1]:  # a second pipe: what it kept is unknown
        return False
    flags = re.IGNORECASE if any(w in ("-i", "--ignore-case") or (w.startswith("-") and "i" in w[1:] and
                                                                   not w.startswith("--")) for w in words[1:]) else 0
    pat = pats[0].replace("\\|", "|") if "-E" not in words and words[0] != "egrep" else pats[0]
    try:
        return re.search(pat, "/usr/lib64/slurm/gpu_nvml.so", flags) is not None
    except re.error:
        return False


def _detect(text: str) -> float:
    lines = [ln for ln in text.split("\n")[:2000] if ln.strip() and not _LABEL.match(ln)
             and not (_PROMPT.match(ln) and _LISTER.search(ln))]
    plugins = sum(1 for ln in lines if _PATH.match(ln) and _PLUGIN.search(ln.strip()))
    if plugins < 2:
        return 0.0
    paths = sum(1 for ln in lines if _PATH.match(ln))
    others = len(lines) - paths
    return 0.8 if others <= max(2, paths // 4) and any("/gpu_" in ln or "/gres_" in ln for ln in lines) else 0.0


@parser(
    "slurm-plugins",
    detect=_detect,
    summary="Slurm's plugin files: rpm -ql / dpkg -L of the Slurm package, ls of its plugin directory (gpu_nvml.so?)",
    facts=FACTS,
    command="rpm -ql slurm | grep gpu   (or dpkg -L slurm-smd | grep gpu; ls /usr/lib64/slurm/ | grep gpu)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a listing of Slurm's plugin files (/usr/lib64/slurm/gpu_generic.so ...)")
    command = ""
    listed: list[str] = []
    dirs: set[str] = set()
    paths = others = 0
    for raw in text.split("\n"):
        if not raw.strip() or len(raw) > 4000:
            continue
        m = _PROMPT.match(raw)
        if m and _LISTER.search(m.group("cmd")):
            if listed:
                break  # a second listing: this reads one
            command = m.group("cmd").strip()
            continue
        p = _PATH.match(raw)
        b = None if p else _BARE.match(raw) if command.startswith("ls") else None
        if p:
            paths += 1
            pm = _PLUGIN.search(p.group(1))
            if pm:
                dirs.add(p.group(1).rsplit("/", 2)[-2])
                if pm.group(1) not in listed:
                    listed.append(pm.group(1))
        elif b:
            paths += 1
            if b.group(1) not in listed:
                listed.append(b.group(1))
        elif not _LABEL.match(raw):
            others += 1
    if not listed:
        raise ParseError("no Slurm plugin file (/usr/lib64/slurm/NAME.so) in the listing")
    if others > max(2, paths // 4):
        raise ParseError(f"{others} lines that are not file paths: not a listing of Slurm's files")
    facts: dict[str, Any] = {"slurm.plugins.listed": listed,
                             "slurm.plugins.gpu": [p for p in listed if p.startswith("gpu_")]}
    pkg = re.search(r"\b(?:rpm\s+-\w+|dpkg\s+(?:-L|--listfiles))\s+(\S+)", command)
    if pkg:
        facts["slurm.plugins.package"] = pkg.group(1)
    if "gpu_nvml" in listed:
        facts["slurm.plugins.gpu_nvml"] = True
    elif facts["slurm.plugins.gpu"]:
        grep = _grep_matches_nvml(command) if command else None
        debian_split = "slurm-wlm" in dirs or (pkg is not None and pkg.group(1).startswith("slurm-wlm"))
        if grep is not False and not (debian_split and not command.startswith(("ls", "find"))):
            facts["slurm.plugins.gpu_nvml"] = False
    return facts
