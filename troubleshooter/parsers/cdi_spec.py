"""A CDI spec for NVIDIA GPUs (``/etc/cdi/nvidia.yaml`` or ``/var/run/cdi/*.yaml``, written by ``nvidia-ctk cdi
generate``): the device nodes it gives every container.

Real samples (Docker's GPU build guide on a g4dn.xlarge; NVIDIA/nvidia-container-toolkit#50, a spec generated before
nvidia-uvm existed; tests/data/cdi-spec)::

    cdiVersion: 0.6.0
    containerEdits:
      deviceNodes:
      - path: /dev/nvidia-modeset
      - path: /dev/nvidia-uvm
      - path: /dev/nvidia-uvm-tools
      - path: /dev/nvidiactl

Read: every ``- path: /dev/...`` under a ``deviceNodes:`` key, and the spec-wide block (the top-level
``containerEdits``) when the paste shows it whole. What it means: nvidia-ctk writes only the nodes that exist when it
runs. A spec written before nvidia_uvm was loaded and /dev/nvidia-uvm created (at boot, by a unit that ran first)
lists /dev/nvidiactl and the GPUs but no nvidia-uvm: every container it serves gets no UVM device, so nvidia-smi
works inside while CUDA cannot initialise (torch.cuda.is_available() is False). A WSL spec lists /dev/dxg instead,
which is not this.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("cdi.spec_device_nodes", "list", "", "device nodes a CDI spec names (deviceNodes paths, spec-wide and per device), "
     "in order, each once"),
    ("cdi.spec_lacks_uvm", "bool", "", "an NVIDIA CDI spec that gives containers /dev/nvidiactl but no /dev/nvidia-uvm "
     "anywhere (its spec-wide block shown whole): generated before the UVM node existed; false when it lists it; absent "
     "when the paste cannot say (a WSL spec, a spec cut inside its node list)"),
]

_PATH = re.compile(r"^\s*(?:-\s*)?path:\s*['\"]?(/dev/[\w./-]+)")
_KEY = re.compile(r"^(\s*)(?:-\s+)?([A-Za-z][\w]*):")


def _detect(text: str) -> float:
    head = text[:65536]
    if re.search(r"^[^\S\n]*cdiVersion:\s*['\"]?\d", head, re.MULTILINE) and "deviceNodes:" in head:
        return 0.9
    return 0.0


@parser(
    "cdi-spec",
    detect=_detect,
    summary="an NVIDIA CDI spec (nvidia-ctk cdi generate): the device nodes it gives containers, nvidia-uvm among them",
    facts=FACTS,
    command="cat /etc/cdi/nvidia.yaml /var/run/cdi/nvidia*.yaml 2>/dev/null | head -60",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a CDI spec (cdiVersion: ..., containerEdits: deviceNodes: ...)")
    if not re.search(r"^[^\S\n]*cdiVersion:", text, re.MULTILINE):
        raise ParseError("no 'cdiVersion:' line: not a CDI spec")
    nodes: list[str] = []
    common: list[str] = []
    common_whole = False
    top = ""          # the top-level key the line is under
    in_nodes = -1     # indent of the deviceNodes key being read, -1 outside
    in_common = False
    for raw in text.split("\n")[:100000]:
        ln = raw.rstrip("\r")
        if not ln.strip() or ln.lstrip().startswith("#"):
            continue
        k = _KEY.match(ln)
        indent = len(ln) - len(ln.lstrip())
        if k and indent == 0:
            if in_common:
                common_whole = True  # the spec-wide node list ended at the next top-level key
            top, in_nodes, in_common = k.group(2), -1, False
            continue
        if k and k.group(2) == "deviceNodes":
            in_nodes = indent
            in_common = top == "containerEdits"
            continue
        p = _PATH.match(ln)
        if p and in_nodes >= 0:
            if p.group(1) not in nodes:
                nodes.append(p.group(1))
            if in_common:
                common.append(p.group(1))
            continue
        if k and in_nodes >= 0 and indent <= in_nodes:
            if in_common:
                common_whole = True  # a sibling key (env:, hooks:, mounts:) after the node list
            in_nodes, in_common = -1, False
    if not nodes:
        raise ParseError("a CDI spec with no deviceNodes path shown")
    facts: dict[str, Any] = {"cdi.spec_device_nodes": nodes[:64]}
    if "/dev/nvidia-uvm" in nodes:
        facts["cdi.spec_lacks_uvm"] = False
    elif common_whole and "/dev/nvidiactl" in common and "/dev/dxg" not in nodes:
        facts["cdi.spec_lacks_uvm"] = True
    return facts
