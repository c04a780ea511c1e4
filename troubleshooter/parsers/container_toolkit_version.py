"""The NVIDIA Container Toolkit's version banners: which release of the toolkit's programs a host has.

Real samples (a USTC mirror guide, toolkit 1.14.6 on RHEL; ctrsploit's toolkit 1.10.0 environment;
NVIDIA/nvidia-container-runtime#190 and podman-container-tools/podman#24502 (the podman repository); tests/data/container-toolkit-version)::

    $ nvidia-ctk --version
    NVIDIA Container Toolkit CLI version 1.14.6
    commit: 5605d191332dcfeea802c4497360d60a65c7887e

    $ nvidia-container-cli --version
    cli-version: 1.14.6
    lib-version: 1.14.6
    build date: 2024-02-27T20:52+0000

    $ nvidia-container-runtime --version
    NVIDIA Container Runtime version 1.14.6
    ...
    $ nvidia-container-toolkit --version
    NVIDIA Container Runtime Hook version 1.14.6
    nvidia-cdi-hook --version
    NVIDIA CDI Hook version 1.17.0

Each program prints its own banner: ``nvidia-container-toolkit`` (the OCI hook, also installed as
``nvidia-container-runtime-hook``) says "NVIDIA Container Runtime Hook version", ``nvidia-container-runtime`` "NVIDIA
Container Runtime version" (followed by the runc it wraps: ``runc version 1.1.12``, not the toolkit's), ``nvidia-ctk``
"NVIDIA Container Toolkit CLI version", ``nvidia-cdi-hook`` (1.17 and later) "NVIDIA CDI Hook version", and
libnvidia-container's ``nvidia-container-cli`` ``cli-version:`` and ``lib-version:``.

What it means here: that the toolkit is installed on the host where the banners were taken (a host with it and a
container that still got no driver asked for no GPU, or asked in a way its engine ignores), and which release it is:
the toolkit's hook runs at every GPU container's start, and a release with a known defect breaks containers that the
one before started (1.17.0's create-symlinks CDI hook, fixed in 1.17.1; libnvidia-container before 1.8.0 on cgroup v2).
A banner cut before its version (a paste that ends there) gives nothing.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("container_toolkit.installed", "bool", "", "a program of the NVIDIA Container Toolkit printed its version here "
     "(the toolkit is installed where the output was taken)"),
    ("container_toolkit.versions", "dict", "", "program -> the version it printed (nvidia-container-runtime-hook, "
     "nvidia-container-runtime, nvidia-ctk, nvidia-cdi-hook, nvidia-container-cli, libnvidia-container)"),
    ("container_toolkit.version", "string", "", "the toolkit's release: the highest version its programs printed "
     "(they are one release when installed together)"),
    ("container_toolkit.versions_differ", "bool", "", "its programs printed different versions (packages of two "
     "releases installed side by side)"),
]

_PROGRAMS = (
    ("NVIDIA Container Runtime Hook", "nvidia-container-runtime-hook"),
    ("NVIDIA Container Runtime", "nvidia-container-runtime"),
    ("NVIDIA Container Toolkit CLI", "nvidia-ctk"),
    ("NVIDIA CDI Hook", "nvidia-cdi-hook"),
)
_VER = r"v?(\d+\.\d+(?:\.\d+)?(?:[-~][0-9A-Za-z.]+)?)"
# the programs' banners, longest first ('... Runtime Hook' before '... Runtime')
_BANNER = re.compile("(" + "|".join(re.escape(b) for b, _ in _PROGRAMS) + r") version\s+" + _VER + r"(?![\w.])")
# nvidia-container-cli --version: 'cli-version: 1.14.6' and 'lib-version: 1.14.6' at a line's start (the same
# words inside other programs' banners are not it: the line must start with them, after a prompt-free margin)
_CLI = re.compile(r"^[^\S\n]*(cli|lib)-version:\s+" + _VER + r"\s*$", re.MULTILINE)
_NAMES = dict(_PROGRAMS)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version.split("-")[0].split("~")[0])[:3])


def _detect(text: str) -> float:
    head = text[:65536]
    if _BANNER.search(head):
        return 0.8
    cli = {m.group(1) for m in _CLI.finditer(head)}
    return 0.8 if cli == {"cli", "lib"} else 0.0


@parser(
    "container-toolkit-version",
    detect=_detect,
    summary="the NVIDIA Container Toolkit's version banners (nvidia-ctk, nvidia-container-toolkit / -runtime / "
            "-runtime-hook, nvidia-cdi-hook, nvidia-container-cli --version)",
    facts=FACTS,
    command="nvidia-ctk --version; nvidia-container-toolkit --version; nvidia-container-cli --version",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "an NVIDIA Container Toolkit program's --version output")
    versions: dict[str, str] = {}
    for m in _BANNER.finditer(text):
        versions.setdefault(_NAMES[m.group(1)], m.group(2))
    cli = {m.group(1): m.group(2) for m in _CLI.finditer(text)}
    if set(cli) == {"cli", "lib"}:  # both lines: libnvidia-container's own banner, not another tool's 'cli-version'
        versions.setdefault("nvidia-container-cli", cli["cli"])
        versions.setdefault("libnvidia-container", cli["lib"])
    if not versions:
        raise ParseError("no NVIDIA Container Toolkit version banner ('NVIDIA Container Toolkit CLI version X', "
                         "'NVIDIA Container Runtime Hook version X', 'cli-version: X' with 'lib-version: X')")
    release = max(versions.values(), key=_key)
    return {"container_toolkit.installed": True, "container_toolkit.versions": versions,
            "container_toolkit.version": release,
            "container_toolkit.versions_differ": len({_key(v) for v in versions.values()}) > 1}
