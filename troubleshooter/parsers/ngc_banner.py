"""The banner NVIDIA's NGC containers (PyTorch, TensorFlow, TensorRT, Triton ...) print when they start: whether the
host's driver is new enough for the container's CUDA, whether a GPU driver was seen at all, /dev/shm's size, MOFED.

Real samples (NVIDIA/TensorRT#1160; hiyouga/LlamaFactory#5962, its two lines run together; ultralytics/yolov5#1232;
tests/data/ngc-banner)::

    ERROR: This container was built for NVIDIA Driver Release 450.51 or later, but
           version 440.33.01 was detected and compatibility mode is UNAVAILABLE.

           [[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]

    NOTE: The SHMEM allocation limit is set to the default of 64MB.  This may be
       insufficient for PyTorch.  NVIDIA recommends the use of the following flags:
       docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 ...

    WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.

What it means here: the container's CUDA needs at least the driver release it names; with an older host driver it
runs only where CUDA's forward compatibility package can bridge the gap (data-center GPUs) - 'UNAVAILABLE' says it
cannot, and CUDA fails (cuInit 804). 64 MB of /dev/shm is Docker's default, too small for NCCL and data loaders.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("ngc.required_driver", "string", "", "the driver release the container was built for ('455.23' from 'This "
     "container was built for NVIDIA Driver Release 455.23 or later')"),
    ("ngc.detected_driver", "string", "", "the host driver the container found ('but version 450.66 was detected')"),
    ("ngc.driver_too_old", "bool", "", "the banner says the host driver is older than the container needs and CUDA's "
     "forward compatibility cannot bridge it ('compatibility mode is UNAVAILABLE')"),
    ("ngc.cuinit_error", "number", "", "the cuInit result the banner shows ('cuInit(0) returned 804')"),
    ("ngc.no_gpu_driver", "bool", "", "the banner found no NVIDIA driver ('WARNING: The NVIDIA Driver was not detected'): "
     "the container was started without GPUs, or the host has no driver"),
    ("ngc.shm_default_64mb", "bool", "", "the banner says /dev/shm is Docker's default 64 MB ('The SHMEM allocation limit "
     "is set to the default of 64MB')"),
    ("ngc.mofed_missing", "bool", "", "the banner did not detect MOFED ('MOFED driver for multi-node communication was "
     "not detected'): the host's inbox RDMA stack, or no RDMA devices passed; not a fault by itself"),
]

# (the banner's lines read joined, so a ticket's or a terminal's wrap, or two lines run together, change nothing)
_BUILT_FOR = re.compile(r"This container was built for NVIDIA Driver Release ([\d.]+) or later,\s*but\s*version "
                        r"([\d.]+) was detected and compatibility mode is (UNAVAILABLE|available)", re.IGNORECASE)
_CUINIT = re.compile(r"cuInit\(0\) returned (\d+)")
_NO_DRIVER = re.compile(r"WARNING: The NVIDIA Driver was not detected")
_SHM = re.compile(r"The SHMEM allocation limit is set to the default of 64MB")
_MOFED = re.compile(r"MOFED driver for multi-node communication was not detected")
_ANY = (_BUILT_FOR, _NO_DRIVER, _SHM, _MOFED)
MAX_JOINED = 1 << 20


def _joined(text: str) -> str:
    return " ".join(text[:MAX_JOINED].split())


def _detect(text: str) -> float:
    head = text[:131072]
    if not any(w in head for w in ("container was built for", "NVIDIA Driver was not detected", "SHMEM allocation limit",
                                   "MOFED driver for multi-node")):
        return 0.0
    joined = _joined(head)
    return 0.85 if any(rx.search(joined) for rx in _ANY) else 0.0


@parser(
    "ngc-banner",
    detect=_detect,
    summary="an NGC container's start-up banner: driver too old for its CUDA, no driver seen, /dev/shm at 64 MB, MOFED",
    facts=FACTS,
    command="docker run --rm --gpus all IMAGE true   (the banner it prints)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "an NGC container's banner ('This container was built for NVIDIA Driver Release ...')")
    joined = _joined(text)
    facts: dict[str, Any] = {}
    m = _BUILT_FOR.search(joined)
    if m:
        facts["ngc.required_driver"], facts["ngc.detected_driver"] = m.group(1), m.group(2)
        facts["ngc.driver_too_old"] = m.group(3).upper() == "UNAVAILABLE"
    c = _CUINIT.search(joined)
    if c:
        facts["ngc.cuinit_error"] = int(c.group(1))
    if _NO_DRIVER.search(joined):
        facts["ngc.no_gpu_driver"] = True
    if _SHM.search(joined):
        facts["ngc.shm_default_64mb"] = True
    if _MOFED.search(joined):
        facts["ngc.mofed_missing"] = True
    if not facts:
        raise ParseError("no NGC banner line ('This container was built for NVIDIA Driver Release', 'The NVIDIA Driver "
                         "was not detected', 'SHMEM allocation limit', 'MOFED driver ... was not detected')")
    return facts
