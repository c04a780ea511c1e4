"""NVSHMEM's own log lines (DeepEP and other MoE all-to-all kernels run over NVSHMEM, beside NCCL).

Real sample (deepseek-ai/DeepEP#223, an internode test that failed to initialise)::

    /sgl-workspace/nvshmem/src/modules/transport/ibrc/ibrc.cpp:nvshmemt_init:1851: neither nv_peer_mem, or nvidia_peermem detected. Skipping transport.
    /sgl-workspace/nvshmem/src/host/topo/topo.cpp:469: [GPU 1] Peer GPU 0 is not accessible, exiting ...
    /sgl-workspace/nvshmem/src/host/init/init.cu:998: non-zero status: 3 building transport map failed

Read: lines that name an NVSHMEM source file (``.../nvshmem/src/...:LINE:``, or NVIDIA's binary builds'
``.../main_nvshmem/src/...``) or start ``NVSHMEM``/``WARN:`` with an NVSHMEM location, and its IPC socket failure. What it means: NVSHMEM's InfiniBand transports (ibrc, ibgda) need GPUDirect RDMA, so
a node without a peer-memory module loaded (nvidia_peermem) cannot run them and NVSHMEM stops at init.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("nvshmem.errors", "list", "", "NVSHMEM's messages, without their source location, deduplicated (at most 20)"),
    ("nvshmem.sites", "list", "", "NVSHMEM source files that reported (transport/ibrc/ibrc.cpp, host/init/init.cu ...)"),
    ("nvshmem.peermem_missing", "bool", "", "NVSHMEM found no peer-memory module ('neither nv_peer_mem, or nvidia_peermem "
     "detected'): its InfiniBand transport cannot reach GPU memory on this node"),
    ("nvshmem.init_failed", "bool", "", "NVSHMEM gave up at initialisation ('nvshmem initialization failed', 'building "
     "transport map failed')"),
    ("nvshmem.ipc_socket_error", "string", "", "why NVSHMEM could not pass a CUDA IPC handle over its Unix-domain socket to a "
     "PE it took for one on its own machine ('IPC failure: Sending data over socket failed: No such file or directory': "
     "the error as printed); absent when none"),
]

# a source tree whose directory names NVSHMEM: a source build (/sgl-workspace/nvshmem/src/...) or NVIDIA's binary builds
# of the pip wheels and the toolkit (/dvs/p4/build/sw/rel/gpgpu/toolkit/r12.8/main_nvshmem/src/...)
_TREE = r"/[^/\s]*nvshmem[^/\s]*/src/"
# (a path under src/ is at most 512 characters: from each of a word's repeats of the tree, an unbounded \S+? ran to
# the word's end, quadratic in them)
_LINE = re.compile(r"(?:^|\s)\S*?" + _TREE + r"(\S{1,512}?\.(?:cpp|cu|cc|c|h)):(?:\w+:)?(\d+):\s*(.*)$", re.MULTILINE)
_SPLIT = re.compile(r"(?<!\s)\s+\S*?" + _TREE + r"\S{1,512}?:(?:\w+:)?\d+:\s*")
_SITE = re.compile(_TREE + r"(\S{1,512}?\.(?:cpp|cu|cc|c|h)):")
# NVSHMEM's CUDA IPC handle exchange with the PEs it takes for ones on its own machine, over a Unix-domain socket
# (perror-style, no source location): "IPC failure: Sending data over socket failed: No such file or directory"
_IPC = re.compile(r"IPC failure: (?:Sending|Receiving) data over socket failed: (.(?:.*\S)?)\s*$", re.MULTILINE)


def _detect(text: str) -> float:
    head = text[:65536]
    hits = len(_LINE.findall(head)) if "nvshmem" in head else 0
    return 0.9 if hits >= 2 else (0.7 if hits == 1 else 0.0)


@parser(
    "nvshmem",
    detect=_detect,
    summary="NVSHMEM log lines (DeepEP / MoE all-to-all): peer-memory module missing, init failures",
    facts=FACTS,
    command="NVSHMEM_DEBUG=WARN <your job command>",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "NVSHMEM log lines ('.../nvshmem/src/...cpp:LINE: message')")
    errors: list[str] = []
    sites: list[str] = []
    peermem = init_failed = False
    for raw in text.split("\n"):
        if "nvshmem" not in raw:
            continue
        # one physical line may hold several messages run together by a paste: split at each location
        for m in _LINE.finditer(raw):
            msg = m.group(3)
            for part in _SPLIT.split(msg):
                add_clipped(errors, part)
            for site in _SITE.findall(raw):
                add_clipped(sites, site, 20)
            low = msg.lower()
            peermem |= "nv_peer_mem" in low and "nvidia_peermem" in low and "detected" in low
            init_failed |= "initialization failed" in low or "building transport map failed" in low
    if not sites:
        raise ParseError("no NVSHMEM line ('.../nvshmem/src/FILE:LINE: message'): not an NVSHMEM log")
    facts: dict[str, Any] = {"nvshmem.errors": errors, "nvshmem.sites": sites, "nvshmem.init_failed": init_failed}
    if peermem:
        facts["nvshmem.peermem_missing"] = True
    ipc = _IPC.search(text)
    if ipc:
        facts["nvshmem.ipc_socket_error"] = ipc.group(1)
    return facts
