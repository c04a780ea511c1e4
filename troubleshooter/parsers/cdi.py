"""Container engines refusing GPUs requested through CDI (the Container Device Interface: ``podman run --device
nvidia.com/gpu=all``, Docker 25+ with ``--device``, containerd/CRI-O from a device plugin's CDI annotations).

Real samples (NVIDIA/nvidia-container-toolkit#885, rootless podman on a laptop whose render node was renumbered;
NixOS/nixpkgs#420638, podman with no spec for the name; tests/data/cdi)::

    Error: setting up CDI devices: failed to inject devices: failed to stat CDI host device "/dev/dri/renderD129": no such file or directory
    Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all

What it means here: a CDI spec (a YAML or JSON file in /etc/cdi or /var/run/cdi, written by ``nvidia-ctk cdi
generate`` or the toolkit's refresh service) lists, for each device name, the device nodes, mounts and hooks to give a
container. ``failed to stat CDI host device`` is a spec naming a node the host no longer has: written before the
driver, the GPUs or the DRM numbering changed (a stale spec). ``unresolvable CDI devices NAME`` is no spec defining
NAME where the engine looks: never generated (the generator failed, often because the driver was not loaded then),
written elsewhere, or another vendor/class name than the one asked for. A name of another kind or by GPU UUID
(``management.nvidia.com/gpu=GPU-...``) is often not asked by the user at all: the toolkit in CDI mode derives it from
NVIDIA_VISIBLE_DEVICES that a GPU-sharing scheduler wrote, and then the spec is not what is missing.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("cdi.missing_host_devices", "list", "", "device nodes a CDI spec names that the host does not have ('failed to stat "
     "CDI host device \"/dev/dri/renderD129\": no such file or directory'), as printed"),
    ("cdi.unresolvable_devices", "list", "", "CDI device names no spec defines where the engine looks ('unresolvable CDI "
     "devices nvidia.com/gpu=all'), as printed"),
    ("cdi.unresolvable_plain", "bool", "", "every unresolvable name is the plain kind a user or the device plugin asks "
     "for, nvidia.com/gpu=all or =INDEX: false where another kind (management.nvidia.com/gpu, nvidia.com/pgpu) or a GPU "
     "UUID is asked for, which the toolkit derives from NVIDIA_VISIBLE_DEVICES or a VFIO set-up writes"),
]

_STAT = re.compile(r"failed to stat CDI host device \\?\"([^\"\\]+)\\?\": no such file or directory")
_UNRESOLVABLE = re.compile(r"unresolvable CDI devices ([\w.\-/]+=[\w.\-:,]+(?:,\s*[\w.\-/]+=[\w.\-:]+)*)")


def _detect(text: str) -> float:
    head = text[:262144]
    return 0.85 if "CDI" in head and (_STAT.search(head) or _UNRESOLVABLE.search(head)) else 0.0


@parser(
    "cdi",
    detect=_detect,
    summary="container engines refusing CDI devices: a spec naming a device node the host lacks, or no spec for the name",
    facts=FACTS,
    command="podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi -L; nvidia-ctk cdi list",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a container engine's CDI error ('failed to stat CDI host device', 'unresolvable CDI devices')")
    missing = list(dict.fromkeys(_STAT.findall(text)))
    unresolvable = list(dict.fromkeys(u.strip() for m in _UNRESOLVABLE.findall(text) for u in m.split(",") if u.strip()))
    if not missing and not unresolvable:
        raise ParseError("no CDI refusal ('failed to stat CDI host device \"...\"', 'unresolvable CDI devices ...')")
    facts: dict[str, Any] = {}
    if missing:
        facts["cdi.missing_host_devices"] = missing
    if unresolvable:
        facts["cdi.unresolvable_devices"] = unresolvable
        facts["cdi.unresolvable_plain"] = all(re.fullmatch(r"nvidia\.com/gpu=(?:all|\d+)", u) for u in unresolvable)
    return facts
