"""``nvidia-smi`` when it cannot show the table, and ``nvidia-smi -L``: what it says about the driver and the GPUs.

Real samples (NVIDIA/nvidia-docker#1671; NVIDIA/nvidia-container-toolkit#1227; install notes)::

    Failed to initialize NVML: Unknown Error
    GPU 0: NVIDIA A10 (UUID: GPU-f15ae561-21b1-6003-c768-861fc285203b)
    Failed to initialize NVML: Driver/library version mismatch
    NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.

What each means: ``Unknown Error`` inside a container that used to see its GPUs is the container losing its device
access (systemd re-applied the cgroup's device rules on ``systemctl daemon-reload``, NVIDIA's notice in
nvidia-container-toolkit#48); ``Driver/library version mismatch`` is a user-space library upgraded under a loaded
older kernel module; "couldn't communicate with the NVIDIA driver" is no kernel module loaded (on a host), or no
GPU devices passed in (in a container); ``No devices were found`` is a driver with no GPU it can use. "Unable to
determine the device handle for GPU 0000:1C:00.0: GPU is lost" is NVML's GPU_IS_LOST: the GPU fell off the bus or
stopped answering (Xid 79's state); with "Unknown Error" instead, NVML could not open that GPU, usually the same
state without the driver saying so. ``-L``
lists the GPUs the driver sees. Newer drivers add ``NVML library version: 580.159`` to the mismatch message;
beside the module's own ``NVRM version: NVIDIA UNIX x86_64 Kernel Module 570.211.01 ...`` line
(``cat /proc/driver/nvidia/version``, Azure/AKS#5871) two different versions are that mismatch.

>>> parse("Failed to initialize NVML: Unknown Error\\n")["gpu.smi_error_kind"]
'nvml-unknown-error'
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("gpu.smi_error", "string", "", "the message nvidia-smi printed instead of its report"),
    ("gpu.smi_error_kind", "string", "", "nvml-unknown-error | driver-library-mismatch | no-driver | no-devices | no-permission | gpu-lost (NVML: the GPU fell off the bus or became inaccessible) | device-handle-error (NVML could not open one GPU: 'Unknown Error')"),
    ("gpu.smi_unreachable", "list", "", "bus addresses (bus:device.function, lower case, without the PCI domain, as lspci prints them) of the GPUs nvidia-smi could not open ('Unable to determine the device handle for GPU 0000:1C:00.0: ...')"),
    ("gpu.count", "number", "count", "GPUs attached"),
    ("gpu.names", "list", "", "product name of each GPU, in index order"),
    ("gpu.nvml_library_version", "string", "", "the user-space NVML library's version (the 'NVML library version:' "
     "line nvidia-smi adds to a version mismatch)"),
    ("gpu.kernel_module_version", "string", "", "the loaded kernel module's version (/proc/driver/nvidia/version's "
     "'NVRM version:' line)"),
]

# "Unable to determine the device handle for GPU 0000:05:00.0: GPU is lost.  Reboot the system to recover this GPU";
# older drivers glue the address to "GPU", newer ones put the index first ("for GPU1: 0000:0A:00.0: ...")
_HANDLE = re.compile(r"Unable to determine the device handle for GPU\s*(?:\d{1,3}:\s+)?(?:[0-9A-Fa-f]{4,8}:)?([0-9A-Fa-f]{2}:"
                     r"[0-9A-Fa-f]{2}\.[0-7]):\s*(GPU is lost|Unknown Error)", re.IGNORECASE)
_ERRORS = [
    (re.compile(r"Unable to determine the device handle for GPU.{0,40}?GPU is lost", re.IGNORECASE), "gpu-lost"),
    (re.compile(r"Unable to determine the device handle for GPU.{0,40}?Unknown Error", re.IGNORECASE), "device-handle-error"),
    (re.compile(r"Failed to initialize NVML: Unknown Error"), "nvml-unknown-error"),
    (re.compile(r"Failed to initialize NVML: Driver/library version mismatch"), "driver-library-mismatch"),
    (re.compile(r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"), "no-driver"),
    (re.compile(r"^\s*No devices were found\s*$", re.MULTILINE), "no-devices"),
    (re.compile(r"Failed to initialize NVML: Insufficient Permissions"), "no-permission"),
]
_NVML_LIB = re.compile(r"^\s*NVML library version:\s*(\d+\.\d+(?:\.\d+)?)\s*$", re.MULTILINE)
_NVRM = re.compile(r"^\s*NVRM version:\s*NVIDIA .*?Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)\b", re.MULTILINE)
_LIST = re.compile(r"^\s*GPU (\d+): (.+?) \(UUID: (GPU-[0-9a-fA-F-]+)\)\s*$", re.MULTILINE)


def _detect(text: str) -> float:
    head = text[:65536]
    if any(rx.search(head) for rx, _ in _ERRORS) or _NVML_LIB.search(head):
        return 0.9
    if _NVRM.search(head) and len(head.strip().split("\n")) <= 4:
        return 0.8  # cat /proc/driver/nvidia/version
    if _LIST.search(head) and "Driver Version" not in head and not re.search(r"^\s+Link \d+\s*:", head, re.MULTILINE):
        return 0.85  # (nvidia-smi nvlink -s prints the same GPU lines, each followed by its links)
    return 0.0


@parser(
    "nvidia-smi-status",
    detect=_detect,
    summary="nvidia-smi's failure messages (NVML unknown error, driver/library mismatch, no driver) and nvidia-smi -L",
    facts=FACTS,
    command="nvidia-smi -L",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "nvidia-smi's message or its -L list")
    facts: dict[str, Any] = {}
    for rx, kind in _ERRORS:
        m = rx.search(text)
        if m:
            line_end = text.find("\n", m.start())
            facts["gpu.smi_error"] = text[m.start(): line_end if line_end >= 0 else len(text)].strip()
            facts["gpu.smi_error_kind"] = kind
            break
    lost = list(dict.fromkeys(m.group(1).lower() for m in _HANDLE.finditer(text)))
    if lost:
        facts["gpu.smi_unreachable"] = lost
    lib, mod = _NVML_LIB.search(text), _NVRM.search(text)
    if lib:
        facts["gpu.nvml_library_version"] = lib.group(1)
    if mod:
        facts["gpu.kernel_module_version"] = mod.group(1)
    if lib and mod and lib.group(1) != mod.group(1) and "gpu.smi_error_kind" not in facts:
        # the library and the loaded module side by side, and they differ: what the mismatch message says
        facts["gpu.smi_error"] = f"NVML library {lib.group(1)}, kernel module {mod.group(1)}"
        facts["gpu.smi_error_kind"] = "driver-library-mismatch"
    gpus = _LIST.findall(text)
    if gpus:
        facts["gpu.count"] = len(gpus)
        facts["gpu.names"] = [name for _, name, _ in gpus]
    if not facts:
        raise ParseError("neither an nvidia-smi failure message, a version line nor a 'GPU N: NAME (UUID: ...)' line")
    return facts
