"""``nvidia-ctk cdi generate``'s own log: what the NVIDIA Container Toolkit found on the host while writing a CDI spec.

Real samples (docker/buildx#3295; NVIDIA/nvidia-container-toolkit#50, #972, #474; apptainer/apptainer#2210;
tests/data/nvidia-ctk-cdi)::

    INFO[0001] Auto-detected mode as 'nvml'
    INFO[0003] Selecting /dev/nvidia0 as /dev/nvidia0
    WARN[0001] Failed to evaluate symlink /dev/dri/by-path/pci-0000:01:00.0-card; ignoring
    INFO[0005] Using driver version 575.57.08
    WARN[0005] Could not locate libnvidia-egl-gbm.so.*.*: pattern libnvidia-egl-gbm.so.*.* not found
    libnvidia-egl-gbm.so.*.*: not found
    nvidia-ctk[1774]: time="2026-02-25T02:22:21Z" level=warning msg="Could not locate libnvidia-vulkan-producer.so..."

The toolkit logs with logrus: ``LEVEL[seconds] message`` on a terminal, ``time=... level=... msg="..."`` in a journal
(the toolkit's generate-cdi-specs or nvidia-cdi-refresh services). Read: the mode it chose (nvml, wsl, management ...),
the driver version it found, the device nodes it selected, what it could not locate, and its errors.

What it means here: the generator looks for every file a GPU container might want, graphics and display included.
EGL, GBM, Wayland, Vulkan, GLX and X.org pieces, the DRM by-path symlinks, and the persistenced, fabric manager and MPS
sockets are optional: a compute node without a display stack, or without those daemons running, lacks them and the
spec is complete for CUDA. Bottlerocket downgraded exactly these warnings to debug because they "suggest
initialization failures when none occurred". What is not optional is the driver's compute libraries (libcuda,
libnvidia-ml) and the control and UVM device nodes: a spec written without them gives containers no working GPU.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, logrus_entry, parser, require_text

MAX_ITEMS = 40

FACTS = [
    ("cdi_generate.mode", "string", "", "the mode nvidia-ctk chose ('Auto-detected mode as nvml': nvml, wsl, "
     "management, csv ...)"),
    ("cdi_generate.driver_version", "string", "", "the driver version it found ('Using driver version 550.67')"),
    ("cdi_generate.devices", "list", "", "the device nodes it selected for the spec (/dev/nvidia0, /dev/nvidiactl, "
     "/dev/dri/renderD128 ...), in order"),
    ("cdi_generate.not_located", "list", "", "what it could not locate, as it names it (a library pattern, a file, a "
     "socket, a DRM by-path symlink), in order"),
    ("cdi_generate.optional_missing", "list", "", "of those, the optional ones: graphics and display libraries and "
     "files (EGL, GBM, Wayland, Vulkan, GLX, X.org), DRM symlinks, the persistenced, fabric manager and MPS sockets, "
     "WSL's and the sandbox's helpers: a compute node without them is fine"),
    ("cdi_generate.compute_missing", "list", "", "of those, the ones CUDA needs (libcuda, libnvidia-ml, the control or "
     "UVM device nodes): a spec without them gives containers no working GPU"),
    ("cdi_generate.errors", "list", "", "its error lines as printed (level=error, ERRO[...]), at most 10"),
]

# nvidia-ctk's own messages (pkg/nvcdi, internal/lookup): the shapes detection needs two of
_OWN = re.compile(r"Auto-detected mode as ['\"]?\w|Could not locate \S+: pattern |Failed to locate \S*: pattern |"
                  r"Failed to evaluate symlink /dev/dri/|Selecting /\S+ as /|Using driver version \d|"
                  r"Ignoring error in locating \S+: pattern ")
_MODE = re.compile(r"Auto-detected mode as ['\"]?(\w[\w-]*)")
_DRIVER = re.compile(r"Using driver version (\d+(?:\.\d+){1,2})")
_SELECT = re.compile(r"^Selecting (/dev/\S+) as /dev/")
_NOT_LOCATED = re.compile(r"^(?:Could not locate|Failed to locate|Ignoring error in locating) (\S*?):? pattern ")
_SYMLINK = re.compile(r"^Failed to evaluate symlink (/dev/dri/by-path/\S+?);")
# what a compute container can do without (see the docstring)
_OPTIONAL = re.compile(r"egl|gbm|wayland|vulkan|glx|xorg|nvidia_drv\.so|allocator|vulkan-producer|nvidia_layers|"
                       r"nvidia_icd|_nvidia\.json|/dev/dri/|persistenced|fabricmanager|nvidia-mps|sandboxutils|"
                       r"nvdxgdmal|libnvidia-ngx|nvoptix|libnvidia-rtcore|libnvidia-gpucomp|libnvidia-present|"
                       r"libnvidia-glsi|libnvidia-glcore|libnvidia-tls", re.IGNORECASE)
_COMPUTE = re.compile(r"libcuda\.so|libnvidia-ml\.so|/dev/nvidiactl|/dev/nvidia-uvm$|libnvidia-ptxjitcompiler|"
                      r"libnvidia-nvvm")


def _messages(text: str) -> list[tuple[str, str]]:
    """(level, message) of each of nvidia-ctk's log lines (base.logrus_entry), a message's first line only (a
    journal's key=value form writes the second, 'libcuda.so.*.*: not found', as an escaped newline)."""
    out = []
    for line in text.split("\n"):
        entry = logrus_entry(line)
        if entry:
            out.append((entry[0], entry[1].split("\\n", 1)[0]))
    return out


def _detect(text: str) -> float:
    head = text[:262144]
    own = [msg for _, msg in _messages(head) if _OWN.search(msg)]
    return 0.8 if len(own) >= 2 else 0.0


@parser(
    "nvidia-ctk-cdi",
    detect=_detect,
    summary="nvidia-ctk cdi generate's log: mode, driver version, devices selected, what it could not locate "
            "(optional graphics pieces vs compute libraries)",
    facts=FACTS,
    command="sudo nvidia-ctk cdi generate --output=/tmp/nvidia.yaml   (or: journalctl -u nvidia-cdi-refresh.service)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "nvidia-ctk's log (INFO[0000] ... / level=... msg=...)")
    msgs = _messages(text)
    if sum(1 for _, msg in msgs if _OWN.search(msg)) < 1:
        raise ParseError("no nvidia-ctk log line (Auto-detected mode as, Selecting ..., Could not locate ...)")
    facts: dict[str, Any] = {}
    devices: list[str] = []
    missing: list[str] = []
    errors: list[str] = []
    for level, msg in msgs:
        if "cdi_generate.mode" not in facts and (m := _MODE.search(msg)):
            facts["cdi_generate.mode"] = m.group(1)
        elif "cdi_generate.driver_version" not in facts and (d := _DRIVER.search(msg)):
            facts["cdi_generate.driver_version"] = d.group(1)
        elif (s := _SELECT.match(msg)) and s.group(1) not in devices:
            devices.append(s.group(1))
        elif (n := _NOT_LOCATED.match(msg) or _SYMLINK.match(msg)) and n.group(1) and n.group(1) not in missing:
            missing.append(n.group(1))
        if level in ("error", "fatal") and len(errors) < 10:
            errors.append(" ".join(msg.split()))
    if devices:
        facts["cdi_generate.devices"] = devices[:MAX_ITEMS]
    if missing:
        facts["cdi_generate.not_located"] = missing[:MAX_ITEMS]
        facts["cdi_generate.optional_missing"] = [x for x in missing if _OPTIONAL.search(x) and not _COMPUTE.search(x)][:MAX_ITEMS]
        facts["cdi_generate.compute_missing"] = [x for x in missing if _COMPUTE.search(x)][:MAX_ITEMS]
    if errors:
        facts["cdi_generate.errors"] = errors
    return facts
