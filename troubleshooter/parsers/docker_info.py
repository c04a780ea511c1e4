"""``docker info``: the container engine's cgroup driver and version, and its runtimes.

Real sample (a Docker 28 host with the NVIDIA Container Toolkit installed; from a public repository's notes,
tests/data/docker-info)::

     Cgroup Driver: systemd
     Cgroup Version: 2
     ...
     Runtimes: io.containerd.runc.v2 nvidia runc
     Default Runtime: runc

Read: Server Version, Cgroup Driver, Cgroup Version, Runtimes, Default Runtime, CDI spec directories, from the
full output or the lines `docker info | grep` kept.

What it means: with the systemd cgroup driver, a `systemctl daemon-reload` rewrites a running container's
device rules and drops the GPUs the NVIDIA runtime injected ("Failed to initialize NVML: Unknown Error" inside,
fine outside). A host without the nvidia runtime (and without CDI) gives `--gpus` containers no driver.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("docker.server_version", "string", "", "Docker Engine version (docker info Server Version)"),
    ("docker.cgroup_driver", "string", "", "the engine's cgroup driver: systemd or cgroupfs"),
    ("docker.cgroup_version", "string", "", "cgroup version the engine runs on: 1 or 2"),
    ("docker.runtimes", "list", "", "the runtimes the engine knows (runc, nvidia, io.containerd.runc.v2 ...)"),
    ("docker.default_runtime", "string", "", "the runtime containers get unless --runtime says otherwise"),
    ("docker.nvidia_runtime", "bool", "", "the nvidia runtime is registered with the engine"),
]

_KV = re.compile(r"^\s*(Server Version|Cgroup Driver|Cgroup Version|Runtimes|Default Runtime):\s*(.*\S|)\s*$")


def _detect(text: str) -> float:
    head = text[:131072]
    keys = {m.group(1) for m in (_KV.match(ln) for ln in head.split("\n")[:2000]) if m}
    if len(keys) >= 3 or (len(keys) >= 2 and ("Runtimes" in keys or "Cgroup Driver" in keys)):
        return 0.85
    return 0.6 if "Runtimes" in keys and "Default Runtime" in keys else 0.0


@parser(
    "docker-info",
    detect=_detect,
    summary="docker info: cgroup driver and version, runtimes (nvidia registered?), default runtime",
    facts=FACTS,
    command="docker info",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "docker info output")
    values: dict[str, str] = {}
    for line in text.split("\n"):
        m = _KV.match(line)
        if m and m.group(1) not in values and m.group(2):
            values[m.group(1)] = m.group(2)
    if not values:
        raise ParseError("no docker info keys (Cgroup Driver:, Runtimes:, Default Runtime:, Server Version:)")
    facts: dict[str, Any] = {}
    if "Server Version" in values:
        facts["docker.server_version"] = values["Server Version"]
    if "Cgroup Driver" in values:
        facts["docker.cgroup_driver"] = values["Cgroup Driver"]
    if "Cgroup Version" in values:
        facts["docker.cgroup_version"] = values["Cgroup Version"]
    if "Runtimes" in values:
        runtimes = values["Runtimes"].split()
        facts["docker.runtimes"] = runtimes
        facts["docker.nvidia_runtime"] = "nvidia" in runtimes
    if "Default Runtime" in values:
        facts["docker.default_runtime"] = values["Default Runtime"]
    return facts
