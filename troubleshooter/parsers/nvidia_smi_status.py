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

Several tasks' ``nvidia-smi -L`` in one output (``srun --ntasks=2 nvidia-smi -L``, with srun's ``--label`` or
the task's own prefix, ``PROC_ID=$SLURM_PROCID``) are one listing per task; a task that can open no GPU prints
``No devices found.``. Real sample (NVIDIA/deepops#1102, four tasks of one job with ``--gpus-per-task=1``)::

    "PROCID=2: No devices found."
    "PROCID=1: GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-02348a17-a825-300c-0336-48e33d0dadb2)"

Given the command line that printed the listing (``$ srun --gpus-per-task=1 --container-image=... nvidia-smi -L``),
the launch is read too: whether srun asked for GPUs per task and started a pyxis/enroot container. Some tasks
seeing no GPU there, when each asked for one, is enroot's ``ENROOT_RESTRICT_DEV`` hiding the step's GPUs that Slurm
did not bind to the task (NVIDIA/pyxis#73).

>>> parse("Failed to initialize NVML: Unknown Error\\n")["gpu.smi_error_kind"]
'nvml-unknown-error'
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers import _srun
from troubleshooter.parsers._prompt import prompt
from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("gpu.smi_error", "string", "", "the message nvidia-smi printed instead of its report"),
    ("gpu.smi_error_kind", "string", "", "nvml-unknown-error | driver-library-mismatch | nvml-function-not-found (nvidia-smi and libnvidia-ml of two releases) | no-driver | no-devices | no-permission | gpu-lost (NVML: the GPU fell off the bus or became inaccessible) | device-handle-error (NVML could not open one GPU: 'Unknown Error') | not-installed (the shell finds no nvidia-smi: in a container, no driver utilities were put in it)"),
    ("gpu.smi_unreachable", "list", "", "bus addresses (bus:device.function, lower case, without the PCI domain, as lspci prints them) of the GPUs nvidia-smi could not open ('Unable to determine the device handle for GPU 0000:1C:00.0: ...')"),
    ("gpu.count", "number", "count", "GPUs attached"),
    ("gpu.names", "list", "", "product name of each GPU, in index order"),
    ("gpu.nvml_library_version", "string", "", "the user-space NVML library's version (the 'NVML library version:' "
     "line nvidia-smi adds to a version mismatch)"),
    ("gpu.kernel_module_version", "string", "", "the loaded kernel module's version (/proc/driver/nvidia/version's "
     "'NVRM version:' line)"),
    ("gpu.tasks_listed", "number", "count", "nvidia-smi -L listings in the output, one per task that ran it (given when "
     "there are several: srun tasks, labelled or not)"),
    ("gpu.tasks_without_devices", "number", "count", "of those listings, the ones that said 'No devices found.': tasks "
     "that could open no GPU"),
    ("gpu.listing_gpus_per_task", "bool", "", "the srun line that printed the listings asked for GPUs per task "
     "(--gpus-per-task); given with that command line only"),
    ("gpu.listing_in_container", "bool", "", "the srun line that printed the listings started a pyxis/enroot container "
     "(--container-image or --container-name); given with that command line only"),
    ("container.nvml_error_without_nv", "string", "", "the kind of nvidia-smi's failure (driver-library-mismatch, "
     "no-driver ...) under a Singularity/Apptainer command started without --nv or --nvccli: the host's driver "
     "libraries were not bound into the container (read from the command line above the output)"),
    ("gpu.reset_blocked", "list", "", "GPUs (bus ids as printed) whose reset or MIG mode change was refused because a client holds them: 'MIG mode is in pending disable state for GPU ...:In use by another client', 'GPU ... is currently in use by another process', nvidia-mig-parted's 'could not be reset: ... In use by another client'; the MIG manager's 'error destroying Compute instance for profile ...: In use by another client' (the instance as named)"),
    ("env.var.*", "string", "", "a variable the srun line that printed the listings set for its step (NAME=value "
     "before srun, --export=ALL,NAME=value)"),
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
    # the same NVML error as the Go bindings print it (nvidia-docker 1, the device plugin): 'nvml: Driver/library ...'
    (re.compile(r"\bnvml: Driver/library version mismatch"), "driver-library-mismatch"),
    # NVML_ERROR_FUNCTION_NOT_FOUND: the libnvidia-ml.so the loader found lacks a function nvidia-smi calls (nvidia-smi and
    # the library from two releases: a stale symlink or a half-done upgrade)
    (re.compile(r"Failed to initialize NVML: Function Not Found"), "nvml-function-not-found"),
    (re.compile(r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"), "no-driver"),
    (re.compile(r"^[^\S\n]*No devices were found\s*$", re.MULTILINE), "no-devices"),
    (re.compile(r"Failed to initialize NVML: Insufficient Permissions"), "no-permission"),
    # the shell finding no nvidia-smi at all ("bash: nvidia-smi: command not found", dash's "sh: 1: nvidia-smi: not
    # found"): in a container, the runtime put no driver utilities in it; on a host, no driver package is installed
    (re.compile(r"(?:^|[\s:])nvidia-smi: (?:command )?not found\b", re.MULTILINE), "not-installed"),
]
# a reset or a MIG mode change refused while a client (nvidia-persistenced, nvidia_drm, DCGM, a process) holds the GPU
_BLOCKED = re.compile(r"MIG mode is in pending (?:enable|disable) state for GPU ([0-9A-Fa-f:.]+):\s*In use by another client"
                      r"|^[^\S\n]*GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]) is currently in use by another process"
                      r"|^[^\S\n]*GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]): In use by another client"
                      # the MIG manager (and mig-parted) tearing down instances a process still holds
                      r"|error destroying ((?:Compute|GPU) instance for profile '[^']{1,40}'): In use by another client",
                      re.MULTILINE)
_NVML_LIB = re.compile(r"^[^\S\n]*NVML library version:\s*(\d+\.\d+(?:\.\d+)?)\s*$", re.MULTILINE)
_NVRM = re.compile(r"^[^\S\n]*NVRM version:\s*NVIDIA .*?Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)\b", re.MULTILINE)
# a UUID as printed, or elided by whoever pasted it ("GPU-...", "GPU-xxxx", "GPU-xxxxxxxx-xxxx-...-xxxxxxxxxxxx",
# "<redacted>"): one character class, so a long run of it is read once
_UUID = r"(GPU-[0-9a-fA-FxX*.…-]+|<[\w -]{1,20}>)"
_LIST = re.compile(r"^[^\S\n]*GPU (\d+): (.+?) \(UUID: " + _UUID + r"\)\s*$", re.MULTILINE)
# one task's line of a multi-task listing: srun --label's "0: ", or the task's own "PROC_ID=0 " / "PROCID=2: " (the
# line may be quoted whole, as an echo of it was)
_TASK = r"""^[^\S\n]*["']?(?:(?P<label>\d{1,5}):\s+|(?:SLURM_)?(?:PROC_?ID|RANK|TASK_?ID|LOCALID)=(?P<var>\d{1,6}):?\s+)?"""
_TASK_GPU = re.compile(_TASK + r"""GPU (\d+): (.+?) \(UUID: """ + _UUID + r"""\)["']?\s*$""", re.MULTILINE)
_FULL_UUID = re.compile(r"GPU-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_TASK_NONE = re.compile(_TASK + r"""No devices found\.?["']?\s*$""", re.MULTILINE)
# a shell prompt and its command: "$ srun ...", "user@host:~$ srun ...", "(container) $ nvidia-smi -L", zsh's "➜  ~ "
_SHELL = prompt("$", "command")
_APPTAINER = re.compile(r"(?:^|[\s/])(?:singularity|apptainer)\s+(?:exec|run|shell)\b")
_APPTAINER_GPU = re.compile(r"\s--(?:nv|nvccli)\b")


def _blocked_name(what: str) -> str:
    """A bus id in upper case as nvidia-smi prints it; a MIG instance as the manager named it."""
    return what.upper() if re.fullmatch(r"[0-9A-Fa-f:.]+", what) else what


def _detect(text: str) -> float:
    head = text[:65536]
    if any(rx.search(head) for rx, _ in _ERRORS) or _NVML_LIB.search(head) or _BLOCKED.search(head):
        return 0.9
    if _NVRM.search(head) and len(head.strip().split("\n")) <= 4:
        return 0.8  # cat /proc/driver/nvidia/version
    if _LIST.search(head) and "Driver Version" not in head and not re.search(r"^[^\S\n]+Link \d+\s*:", head, re.MULTILINE):
        return 0.85  # (nvidia-smi nvlink -s prints the same GPU lines, each followed by its links)
    if any(m.group("label") or m.group("var") for rx in (_TASK_GPU, _TASK_NONE) for m in rx.finditer(head)):
        return 0.9  # tasks' listings, each line with its task's label
    return 0.0


def _commands(text: str) -> list[tuple[str | None, str]]:
    """The text cut at its shell prompts: (the command, or None before the first prompt; the lines it printed)."""
    out: list[tuple[str | None, str]] = []
    cmd: str | None = None
    buf: list[str] = []
    for ln in text.split("\n"):
        m = _SHELL.match(ln) if len(ln) < 4000 else None
        if m:
            out.append((cmd, "\n".join(buf)))
            cmd, buf = m.group("cmd"), []
        else:
            buf.append(ln)
    out.append((cmd, "\n".join(buf)))
    return out


def _srun_launch(command: str) -> dict[str, Any]:
    """What the srun line that printed the listings asked for: GPUs per task, a pyxis container, and the variables
    it set for the step (``ENROOT_RESTRICT_DEV=n srun ...``, ``--export=ALL,NAME=value``)."""
    read = _srun.options(command)
    if read is None:
        return {}
    opts, env = read
    facts: dict[str, Any] = {"gpu.listing_gpus_per_task": "--gpus-per-task" in opts,
                             "gpu.listing_in_container": _srun.in_container(opts)}
    for assignment in env:
        name, _, value = assignment.partition("=")
        facts[f"env.var.{name}"] = value
    return facts


def _task_listings(text: str) -> tuple[int, int]:
    """(listings, listings that said 'No devices found.') of a multi-task nvidia-smi -L output: one per task label
    where the lines carry one, else one per 'GPU 0:' line and per 'No devices found.' line."""
    gpus, nones = list(_TASK_GPU.finditer(text)), list(_TASK_NONE.finditer(text))
    labelled = [m for m in gpus + nones if m.group("label") or m.group("var")]
    if labelled and len(labelled) == len(gpus) + len(nones):
        def task(m: re.Match[str]) -> str:
            return m.group("label") or m.group("var")
        with_gpu = {task(m) for m in gpus}
        return len(with_gpu | {task(m) for m in nones}), len({task(m) for m in nones} - with_gpu)
    return sum(1 for m in gpus if m.group(3) == "0") + len(nones), len(nones)


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
    blocked = list(dict.fromkeys(_blocked_name(next(g for g in m.groups() if g)) for m in _BLOCKED.finditer(text)))
    if blocked:
        facts["gpu.reset_blocked"] = blocked
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
    gpus = [m.group(3, 4, 5) for m in _TASK_GPU.finditer(text)]
    if gpus:
        # several tasks can list the same GPU: each GPU once, by its UUID (by its index where the UUID was elided)
        keys = [(uuid if _FULL_UUID.fullmatch(uuid) else f"#{idx}", name) for idx, name, uuid in gpus]
        seen = {key: name for key, name in reversed(keys)}
        names = [seen.pop(key) for key, _ in keys if key in seen]
        facts["gpu.count"] = len(names)
        facts["gpu.names"] = names
    # each command's listings on their own (a run without a container, then the same with one): the last command
    # that printed several tasks' listings, else the last that printed one, is the one described
    runs = [(cmd, seg, _task_listings(seg)) for cmd, seg in _commands(text)]
    several = [r for r in runs if r[2][0] >= 2]
    listing = several or [r for r in runs if _TASK_GPU.search(r[1]) or _TASK_NONE.search(r[1])]
    if listing:
        cmd, _, (listed, without) = listing[-1]
        if several:
            facts["gpu.tasks_listed"] = listed
            facts["gpu.tasks_without_devices"] = without
        if cmd:
            facts.update(_srun_launch(cmd))
    for cmd, seg, _ in runs:
        # nvidia-smi failing in a Singularity/Apptainer run started without --nv/--nvccli: the host's driver libraries
        # were not bound in, so NVML there is whatever the image ships (or nothing)
        if cmd and _APPTAINER.search(cmd) and not _APPTAINER_GPU.search(cmd):
            kind = next((k for rx, k in _ERRORS if rx.search(seg)), None)
            if kind:
                facts["container.nvml_error_without_nv"] = kind
                break
    if not facts or all(k.startswith(("gpu.listing_", "env.var.")) for k in facts):
        raise ParseError("neither an nvidia-smi failure message, a version line nor a 'GPU N: NAME (UUID: ...)' line")
    return facts
