"""A container image the registry would not give: docker, podman/buildah, BuildKit and containerd (kubelet) pull errors.

Real samples (NVIDIA/nvidia-docker#1735, #1768; charmed-kubernetes/kubernetes-docs#648; kuielab/sdx23#5;
Kaixhin/dockerfiles#39; tests/data/image-pull)::

    docker: Error response from daemon: manifest for nvidia/cuda:11.0-base-ubuntu20.04 not found: manifest unknown: manifest unknown.
    Error: error creating build container: initializing source docker://nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04:
    reading manifest 10.2-cudnn7-devel-ubuntu18.04 in docker.io/nvidia/cuda: manifest unknown: manifest unknown
    Failed to pull image "nvidia/cuda": rpc error: code = NotFound desc = failed to pull and unpack image
    "docker.io/nvidia/cuda:latest": failed to resolve reference "docker.io/nvidia/cuda:latest": docker.io/nvidia/cuda:latest: not found
    ERROR: failed to solve: nvidia/cuda:11.7.0-cudnn8-runtime-ubuntu18.04: docker.io/nvidia/cuda:11.7.0-cudnn8-runtime-ubuntu18.04: not found
    Error response from daemon: pull access denied for nvidia/cudagl, repository does not exist or may require 'docker login'

Each engine words it its own way: moby's daemon "manifest for REF not found" (before 2019 without ": manifest
unknown"), containers/image's "reading manifest TAG in REPO: manifest unknown", containerd's and BuildKit's "REF: not
found" after "failed to resolve reference" or "failed to solve", and moby's "pull access denied for REPO". Read: the
references not found and the repositories refused.

What it means: the registry has no such tag (a typo, or one removed: nvidia/cuda dropped ``latest`` in 2021 and
removes tags past their support, listed in its supported-tags document) or will not serve the repository to this
client. The image, not the node: no GPU, driver, runtime or fabric cause follows from it, and a container that never
started says nothing about the node. The fix is an image reference that exists (``docker manifest inspect REF``
answers whether one does).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

MAX_REFS = 20

FACTS = [
    ("image.pull_failed", "bool", "", "an image pull was refused by the registry (a reference it does not have, or a "
     "repository it will not serve this client)"),
    ("image.not_found", "list", "", "the image references the registry has no manifest for ('nvidia/cuda:latest'), "
     "distinct, in order"),
    ("image.access_denied", "list", "", "the repositories a pull was refused for ('pull access denied for REPO, "
     "repository does not exist or may require docker login'), distinct, in order"),
]

_REF = r"[\w.-]+(?::\d+)?(?:/[\w.-]+)*(?::[\w][\w.-]*)?(?:@sha256:[0-9a-f]+)?"
# moby: "manifest for REF not found[: manifest unknown: manifest unknown]"
_MANIFEST_FOR = re.compile(r"\bmanifest for (" + _REF + r") not found\b")
# containers/image (podman, buildah, skopeo): "reading manifest TAG in REPO: manifest unknown"
_READING = re.compile(r"\breading manifest (\S+) in (" + _REF + r"): manifest unknown\b")
# containerd (kubelet's "Failed to pull image") and BuildKit ("failed to solve"): "... REF: not found"
_RESOLVE = re.compile(r"\bfailed to (?:resolve reference|resolve source metadata for|solve)\b[^\n]*?\s\"?(" + _REF +
                      r")\"?: not found\b")
# moby: "pull access denied for REPO, repository does not exist or may require 'docker login'"
_DENIED = re.compile(r"\bpull access denied for (" + _REF + r"), repository does not exist")


def _detect(text: str) -> float:
    head = text[:262144]
    if "manifest" not in head and "not found" not in head and "access denied" not in head:
        return 0.0
    if _MANIFEST_FOR.search(head) or _READING.search(head) or _RESOLVE.search(head) or _DENIED.search(head):
        return 0.8
    return 0.0


@parser(
    "image-pull",
    detect=_detect,
    summary="container image pull errors (docker, podman, BuildKit, containerd/kubelet): tags not found, access denied",
    facts=FACTS,
    command="docker pull IMAGE   (or: docker manifest inspect IMAGE; kubectl describe pod POD)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "an image pull error (manifest ... not found, pull access denied)")
    found: list[tuple[int, str]] = []
    for m in _MANIFEST_FOR.finditer(text):
        found.append((m.start(), m.group(1).rstrip(".")))
    for m in _READING.finditer(text):
        tag, repo = m.group(1), m.group(2)
        found.append((m.start(), f"{repo}@{tag}" if tag.startswith("sha256:") else f"{repo}:{tag}"))
    for m in _RESOLVE.finditer(text):
        found.append((m.start(), m.group(1)))
    denied = list(dict.fromkeys(m.group(1) for m in _DENIED.finditer(text)))
    refs = list(dict.fromkeys(ref for _, ref in sorted(found)))
    if not refs and not denied:
        raise ParseError("no image pull error ('manifest for REF not found', 'reading manifest ... manifest unknown', "
                         "'REF: not found', 'pull access denied for REPO')")
    facts: dict[str, Any] = {"image.pull_failed": True}
    if refs:
        facts["image.not_found"] = refs[:MAX_REFS]
    if denied:
        facts["image.access_denied"] = denied[:MAX_REFS]
    return facts
