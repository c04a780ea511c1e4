"""RDMA verbs failures as programs print them outside NCCL's and UCX's own log formats.

Real samples (an RDMA shuffle client in a container, NVIDIA/cudf-spark#7632; perftest on a soft-iWARP device,
zrlio/softiwarp#23; tests/data/verbs-errors)::

    ERROR mlx5_0: ibv_create_cq() failed: Cannot allocate memory.

    Couldn't allocate MR
    failed to create mr

Read: every line that names a verbs call failing (``ibv_*``/``mlx5dv_*``/``rdma_*`` ``failed``, with the error
text that follows) and perftest's ``Couldn't allocate MR`` / ``Couldn't create CQ|QP`` / ``Failed to create MR``
lines, and failed work completions ("send completion with error: local protection error"), as printed; and
libibverbs' own warnings that it has no provider for a device, or no provider configuration at all. NCCL's
``Call to ibv_... failed`` WARN lines and UCX's ``UCX ERROR`` lines are read by their own kinds, which detection
prefers.

What it means for the job: registering memory or creating a completion queue fails with ENOMEM ("Cannot
allocate memory") when the process's locked-memory limit is too small (the memlock-limit cause reads it);
other errors (EINVAL, EPERM) name a device or permission problem, and a local protection error on a completion
says the NIC could not access the memory it was given (with GPU buffers: the GPUDirect path); shown as read.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

MAX_MESSAGES = 20
MAX_TEXT = 300

FACTS = [
    ("rdma.verbs_errors", "list", "", f"RDMA verbs calls and work completions that failed, as printed ('ERROR mlx5_0: "
     f"ibv_create_cq() failed: Cannot allocate memory.', perftest's 'Couldn't allocate MR', 'send completion with "
     f"error: local protection error'), deduplicated, at most {MAX_MESSAGES}"),
    ("rdma.devices_without_provider", "list", "", "RDMA devices libibverbs found and could not drive, no provider library "
     "for them ('libibverbs: Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0'): "
     "libmlx5 (ibverbs-providers, rdma-core) missing where the program runs. (Its 'couldn't load driver X' lines are not: "
     "libibverbs tries every provider it has a config for and most have no hardware)"),
    ("rdma.provider_config_missing", "string", "", "the provider configuration directory libibverbs could not open "
     "('libibverbs: Warning: couldn\'t open config directory \'/etc/libibverbs.d\'.'): no provider (libmlx5 ...) is "
     "installed where the program ran (rdma-core's ibverbs-providers), so it drives no RDMA device"),
    ("rdma.uverbs_missing", "bool", "", "libibverbs could not list devices because the kernel's verbs interface is not there "
     "('Failed to get IB devices list: Function not implemented': no /sys/class/infiniband_verbs, ib_uverbs and the "
     "HCA's RDMA driver not loaded), as ibv_devinfo and other verbs programs print it"),
    ("rdma.gpu_buffers", "bool", "", "the same output says the transfers used GPU memory (GPUDirect RDMA): OSU's 'Send "
     "Buffer on DEVICE (D)' or 'OSU MPI-CUDA' header, perftest's --use_cuda; absent when it does not say"),
]

_CALL = re.compile(r"\b(?:ibv|mlx5dv|rdma)_\w+(?:\([^()\n]{0,80}\))?\s*(?:failed|returned\s+error|error)\b.*", re.IGNORECASE)
# a work completion that failed, as verbs-level libraries print it ("rc_verbs_iface.c:67   send completion with
# error: local protection error", "mlx5: got completion with error:")
_COMPLETION = re.compile(r"(?:\b(?:send|recv|receive)\s+)?completion with error\b.*", re.IGNORECASE)
_PERFTEST = re.compile(r"^\s*(?:Couldn't (?:allocate MR|create CQ|create QP|register MR)|Failed to create (?:MR|CQ|QP)"
                       r"|failed to create (?:mr|cq|qp))\b.*", re.IGNORECASE)
# Libfabric's EFA provider aborting: "Libfabric error: (-12) Cannot allocate memory" / "EFA internal error: (4112)
# Failure to post internal receive buffers" (its receive buffers are registered host memory)
_LIBFABRIC = re.compile(r"Libfabric error: \(-\d+\) .+|EFA internal error: \(\d+\) .+")
# the "libibverbs: " prefix is lost where a program's log re-prints the warning (horovod/horovod#1117)
_NO_PROVIDER = re.compile(r"(?:libibverbs: )?Warning: no userspace device-specific driver found for (\S+)")
# the benchmark's own words that its buffers are GPU memory: OSU micro-benchmarks' CUDA header and buffer line, perftest
# run with --use_cuda (its command line, or 'initializing CUDA' and the cuMemAlloc it prints)
_GPU_BUFFERS = re.compile(r"Buffer on DEVICE \(D\)|# OSU MPI-CUDA|--use_cuda\b|cuMemAlloc\(\) of a")
_NO_CONFIG = re.compile(r"(?:libibverbs: )?Warning: couldn't open config directory '([^'\n]+)'")
_OTHER_KIND = re.compile(r"NCCL (?:WARN|INFO)|\bUCX\s+(?:ERROR|WARN|FATAL)\b")
# rdma-core's ibv_get_device_list: ENOSYS when the ABI file of the kernel's uverbs class cannot be read
_NO_UVERBS = re.compile(r"Failed to get IB devices list: Function not implemented")


def _lines(text: str) -> list[str]:
    out: list[str] = []
    for line in text.split("\n"):
        if _OTHER_KIND.search(line):
            continue
        m = _CALL.search(line) if "_" in line else None
        if not m and "ompletion with error" in line:
            m = _COMPLETION.search(line)
        hit = line.strip() if m else (line.strip() if _PERFTEST.match(line) or _LIBFABRIC.search(line) else "")
        if hit:
            add_clipped(out, hit, MAX_MESSAGES, MAX_TEXT)
    return out


def _detect(text: str) -> float:
    head = text[:65536]
    if _NO_PROVIDER.search(head) or _NO_CONFIG.search(head) or _LIBFABRIC.search(head) or _NO_UVERBS.search(head):
        return 0.55
    if not re.search(r"(?i)ibv_|mlx5dv_|rdma_|couldn't (?:allocate|create|register)|failed to create|completion with error", head):
        return 0.0
    return 0.55 if _lines(head) else 0.0


@parser(
    "verbs-errors",
    detect=_detect,
    summary="RDMA verbs calls that failed (ibv_create_cq() failed: ..., perftest's Couldn't allocate MR)",
    facts=FACTS,
    command="<the program's output> 2>&1 | grep -iE 'ibv_|mlx5dv_|couldn.t (allocate|create)'",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "output with an RDMA verbs failure")
    found = _lines(text)
    orphans = list(dict.fromkeys(m.group(1) for m in _NO_PROVIDER.finditer(text)))
    no_config = _NO_CONFIG.search(text)
    no_uverbs = bool(_NO_UVERBS.search(text))
    if not found and not orphans and not no_config and not no_uverbs:
        raise ParseError("no failed RDMA verbs call (ibv_*/mlx5dv_* ... failed, perftest's Couldn't allocate MR) and "
                         "no libibverbs device without its provider")
    facts: dict[str, Any] = {"rdma.verbs_errors": found}
    if orphans:
        facts["rdma.devices_without_provider"] = orphans
    if no_config:
        facts["rdma.provider_config_missing"] = no_config.group(1).rstrip(".")
    if no_uverbs:
        facts["rdma.uverbs_missing"] = True
    if _GPU_BUFFERS.search(text):
        facts["rdma.gpu_buffers"] = True
    return facts
