"""GPU sources: health through NVML in-process, and nvidia-smi (table, -q report, topology) in any target."""

from __future__ import annotations

import json
import time

from troubleshooter.sources import nvml
from troubleshooter.model.evidence import Evidence, Status
from troubleshooter.sources.base import Params, source

# How each unusable-NVML state is reported (the reason comes from troubleshooter.sources.nvml).
_STATUS = {
    "library-not-found": Status.NO_GPU,
    "driver-not-loaded": Status.NO_GPU,
    "no-device": Status.NO_GPU,
    "no-permission": Status.PERMISSION_DENIED,
    "version-mismatch": Status.ERROR,
    "error": Status.ERROR,
}


def collect_nvml(params: Params) -> Evidence:
    """Read GPU health through NVML into the nvml-json document. Never raises."""
    started = time.time()
    t0 = time.monotonic()
    base = dict(source_id="nvml", started_at=started, target="local", argv=["(in-process NVML)"])
    try:
        doc = nvml.snapshot()
    except nvml.NvmlUnavailable as exc:
        return Evidence(status=_STATUS.get(exc.state, Status.ERROR), reason=exc.reason,
                        duration_s=time.monotonic() - t0, **base)
    except Exception as exc:  # noqa: BLE001 - a wrapper bug must be evidence, not a traceback
        return Evidence(status=Status.ERROR, reason=f"NVML query failed: {type(exc).__name__}: {exc}",
                        duration_s=time.monotonic() - t0, **base)
    out = json.dumps(doc, sort_keys=True, indent=1).encode()
    return Evidence(status=Status.OK, stdout=out, rc=0, stdout_bytes=len(out),
                    duration_s=time.monotonic() - t0, **base)


source(
    id="nvml",
    parser="nvml-json",
    family="gpu",
    func=collect_nvml,
    timeout_s=30,
    summary="GPU health through NVML (in-process)",
    why="Clock throttling (power cap, thermal), uncorrected ECC errors, pending row remaps, inactive NVLinks "
    "and PCIe links below their maximum each make one GPU, and so the whole job, slower.",
)

source(
    id="nvidia-smi-q",
    parser="nvidia-smi-q",
    family="gpu",
    argv=["nvidia-smi", "-q"],
    timeout_s=60,
    needs="nvidia-smi",
    package="nvidia-utils",
    summary="nvidia-smi -q: full per-GPU report",
    why="The same GPU health facts as NVML (throttle reasons, ECC, remapped rows, PCIe, power), read where "
    "the job runs: inside its container or Slurm step, where in-process NVML cannot reach.",
)

source(
    id="nvidia-smi",
    parser="nvidia-smi",
    family="gpu",
    argv=["nvidia-smi"],
    timeout_s=30,
    needs="nvidia-smi",
    package="nvidia-utils",
    summary="nvidia-smi: GPU summary table",
    why="Which GPUs and driver/CUDA versions the job sees, their performance state, power draw against the "
    "cap, and persistence mode.",
)

source(
    id="nvidia-smi-topo",
    parser="nvidia-smi-topo",
    family="gpu",
    argv=["nvidia-smi", "topo", "-m"],
    timeout_s=30,
    needs="nvidia-smi",
    package="nvidia-utils",
    summary="nvidia-smi topo -m: GPU/NIC topology and CPU/NUMA affinity",
    why="A GPU whose nearest NIC is across the socket (NODE/SYS), GPU pairs without NVLink, and the CPUs "
    "near each GPU decide NCCL's paths and where data loaders should be pinned.",
)
