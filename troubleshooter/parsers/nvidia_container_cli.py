"""The NVIDIA container hook's errors: ``nvidia-container-cli``'s message when it cannot set up a container's GPUs,
as docker, containerd, CRI-O, podman, Kubernetes events or enroot/pyxis pass it on; and Docker's own refusal of
``--gpus`` / ``--runtime=nvidia`` when no NVIDIA support is registered with it.

Real samples (SyneRBI/PETRIC2#27; Xilinx/Vitis-AI#103; NVIDIA/nvidia-container-toolkit#173; NVIDIA/enroot#111;
FoundationVision/ByteTrack#302)::

    docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI
    runtime create failed: runc create failed: unable to start container process: error during container init:
    error running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'
    nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container

    ... running prestart hook 0 caused \\\\\\"error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=10.0\\\\\\\\n\\\\\\"\\"": unknown.
    Warning  Failed  5s (x3 over 19s)  kubelet  Error: failed to create containerd task: ... stderr: nvidia-container-cli.real: initialization error: driver error: failed to process request: unknown
    nvidia-container-cli: mount error: mount operation failed: /tmp/enroot/.../470.57.02: operation not permitted
    docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].

The hook runs on the host (in the engine's prestart or createContainer step), before anything in the container
starts: its errors speak of the host's driver, the host's cgroups and the image's requirements. The message is
``nvidia-container-cli[.real]: <class> error: <detail>``; what wraps it (runc's ``OCI runtime create failed ...
stderr:``, the 2017-2020 nested escaped quotes with a literal ``\\n``, docker's trailing ``: unknown``, a journal
or kubelet prefix) is left out. What each kind means:

- ``requirement-cuda``: ``unsatisfied condition: cuda>=X``: the image's NVIDIA_REQUIRE_CUDA asks for CUDA X and the
  host driver supports an older CUDA: the hook refuses to start it (``container_cli.required_cuda`` is X);
- ``requirement-other``: another condition of the image's requirement failed (``brand = tesla``, ``driver < 385``:
  the last alternative tried, usually because the ``cuda>=`` one failed too, or an older toolkit that does not
  know a brand);
- ``cgroup-devices-not-found``: ``container error: cgroup subsystem devices not found``: the library looked for the
  cgroup v1 devices controller and found none (a cgroup v2 host with libnvidia-container before 1.8.0);
- ``driver-not-loaded``: ``nvml error: driver not loaded`` (the NVIDIA runtime's own ``failed to initialize NVML: Driver
  Not Loaded`` inside an OCI runtime error, toolkit 1.14 and later): NVML on the host finds no loaded kernel module;
- ``nvml-library-missing``: ``load library failed: libnvidia-ml.so.1: cannot open shared object file``: no driver
  user-space library where the engine runs (no driver installed, or a daemon that cannot see it);
- ``driver-library-mismatch``: ``nvml error: driver/library version mismatch``: the host's library is newer than
  its loaded module;
- ``unknown-device``: ``device error: X: unknown device``: the GPU asked for (NVIDIA_VISIBLE_DEVICES, a device
  plugin's list) is not one this node has (``container_cli.device`` is X);
- ``mount-error``: ``mount error: ...``: a driver file could not be put into the container (the image carries its
  own copy, ``file exists``; a device rule or mount refused);
- ``no-gpu-runtime``: Docker's own ``could not select device driver "" with capabilities: [[gpu]]`` (no GPU device
  driver registered: dockerd found no NVIDIA Container Toolkit hook) or ``Unknown runtime specified nvidia``; also the
  toolkit's programs missing where the engine or a wrapper calls them (``exec: "nvidia-container-runtime-hook":
  executable file not found in $PATH``, the shell's ``nvidia-container-cli: not found``);
- ``hook-without-runtime``: the NVIDIA Container Runtime Hook refusing to run on its own ("invoking the NVIDIA
  Container Runtime Hook directly (e.g. specifying the docker --gpus flag) is not supported. Please use the NVIDIA
  Container Runtime instead."): the toolkit is in CSV mode (Jetson/Tegra, or mode = "csv") and only the nvidia
  runtime (--runtime=nvidia) can set the container up;
- ``nvidia-smi-not-in-container``: Docker's ``exec: "nvidia-smi": executable file not found in $PATH`` (crun's
  ``crun: executable file `nvidia-smi` not found in $PATH``): the container started without the driver's utilities
  (through the NVIDIA runtime: the image asked for no GPU, or the hook found no nvidia-smi on the host; with podman: no
  CDI device or hook asked for, its --gpus being accepted and ignored);
- ``ldconfig-failed``: ``ldcache error: process /usr/sbin/ldconfig.real failed with error code: 1``: the hook ran
  ldconfig in the new root filesystem (``--ldconfig=@...``) and it failed there (a missing ldconfig is ``other``);
- ``other``: any other class (``ldcache error: open failed``, ``driver error: failed to process request``, ``detection error:
  nvml error: unknown error``, ``load library failed: ...: file too short``, ``failed to get device cgroup mount
  path``), which this reads but does not name a cause for.

Lines re-wrapped by a terminal or a ticket system are joined (also inside a word: ``unsatisfied condi|tion``);
the kind is told from the message with its blanks removed, so a wrap never changes it. Several errors in one
paste (a compose file's services, a retry after a change): ``container_cli.error`` and ``error_kind`` are the
first one printed; ``errors`` and ``error_kinds`` list each distinct one, in order.

>>> parse("stderr: nvidia-container-cli: container error: cgroup subsystem devices not found: unknown.")["container_cli.error"]
'nvidia-container-cli: container error: cgroup subsystem devices not found'
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, clip, clip_middle, parser, require_text

KINDS = ("requirement-cuda", "requirement-other", "cgroup-devices-not-found", "driver-not-loaded",
         "nvml-library-missing", "driver-library-mismatch", "unknown-device", "mount-error", "no-gpu-runtime",
         "hook-without-runtime", "imex-channels-refused", "ldconfig-failed", "nvidia-smi-not-in-container", "other")

FACTS = [
    ("container_cli.error", "string", "", "the first error the NVIDIA container hook (nvidia-container-cli) "
     "reported, without the runtime's wrapping (runc's 'OCI runtime create failed ... stderr:', ': unknown'); or "
     "Docker's own refusal of --gpus / --runtime=nvidia"),
    ("container_cli.error_kind", "string", "", "what the first error is: " + " | ".join(KINDS)),
    ("container_cli.errors", "list", "", "each distinct error of the NVIDIA container hook in the text, in order"),
    ("container_cli.error_kinds", "list", "", "the kind of each distinct hook error, in order, each kind once"),
    ("container_cli.visible_devices_unset", "bool", "", "Singularity/Apptainer warned that its --nvccli mode with "
     "--contain has no NVIDIA_VISIBLE_DEVICES, so nvidia-container-cli gives the container no GPU ('When using "
     "nvidia-container-cli with --contain NVIDIA_VISIBLE_DEVICES must be set or no GPUs will be available in container')"),
    ("container_cli.kmods_not_loaded", "list", "", "kernel modules enroot's NVIDIA hook warned are not loaded ('[WARN] "
     "Kernel module nvidia_uvm is not loaded. Make sure the NVIDIA device driver is installed and loaded')"),
    ("container_cli.required_cuda", "string", "", "the CUDA version the image requires and the host driver does "
     "not support ('11.0' from 'unsatisfied condition: cuda>=11.0')"),
    ("container_cli.requirement_alternatives", "list", "", "the image's requirement as the hook's command line shows it "
     "(--require=...), one alternative per item ('cuda>=10.0', 'brand=tesla,driver>=384,driver<385')"),
    ("container_cli.enroot_hooks_failed", "list", "", "enroot hooks that failed, by file name ('[ERROR] "
     "/etc/enroot/hooks.d/98-nvidia.sh exited with return code 1' is '98-nvidia.sh'), in order"),
    ("container_cli.device", "string", "", "the device the hook did not know ('GPU-...', an index, a path), from "
     "'device error: X: unknown device'"),
]

_START = re.compile(r"nvidia-container-cli(?:\.real)?:")
# the hook's exec line as runc prints it: "... --require=cuda>=10.0 brand=tesla,driver>=384,driver<385 --pid=35777 ..."
_REQUIRE = re.compile(r"--require=(.{1,600}?)(?:--|\]|$)")
_ALTERNATIVE = re.compile(r"cuda>=\d+(?:\.\d+)*|(?:brand=[a-z]+|arch=[\d.]+)(?:,(?:driver[<>=!]{1,2}[\d.]+|brand=[a-z]+|"
                          r"arch=[\d.]+))*")
# the class of the message, read with its blanks removed: "initializationerror:", "mounterror:" ...
_CLASS = re.compile(r"^([a-z]{2,24})error:")
# Docker's own refusals, matched in the text with its blanks removed (a wrap can cut them anywhere)
_NO_GPU_DRIVER = re.compile(r'couldnotselectdevicedriver(?:"[^"]{0,40}")?withcapabilities:\[\[[^\]]{0,80}gpu[^\]]{0,80}\]\]')
_NO_NVIDIA_RUNTIME = re.compile(r"(?:Unknownruntimespecified|unknownorinvalidruntimename:)nvidia(?![\w-])")
# the engine configured for the toolkit, the toolkit's program absent (nvidia-docker#958, #1337, #1190), and a wrapper
# script's shell not finding nvidia-container-cli (dash: "ch-fromhost: 204: ch-fromhost: nvidia-container-cli: not
# found", charliecloud#939; bash: "SCRIPT: line 204: nvidia-container-cli: command not found"). The line number is the
# script's: someone typing the command into an interactive shell is asking, not a wrapper failing
_TOOLKIT_ABSENT = re.compile(r'exec:\\?"nvidia-container-(?:runtime-hook|runtime|toolkit)\\?":executablefilenotfoundin\$PATH'
                             r'|(?<![\w./-])[\w./-]+:(?:line)?\d+:(?:[\w./-]+:)?nvidia-container-cli:(?:command)?notfound')
# the container started without the driver's utilities: runc could not find nvidia-smi in it ('exec: "nvidia-smi":
# executable file not found in $PATH'); through the NVIDIA runtime, the image asked for no GPU (no NVIDIA_VISIBLE_DEVICES)
# or the hook found no nvidia-smi on the host to mount
_NO_SMI_INSIDE = re.compile(r'exec:\\?"nvidia-smi\\?":executablefilenotfoundin\$PATH'
                            # crun's wording (podman's and CRI-O's runtime): 'crun: executable file `nvidia-smi` not
                            # found in $PATH: No such file or directory' (NVIDIA/nvidia-container-runtime#190)
                            r'|crun:executablefile`nvidia-smi`notfoundin\$PATH')
_HOOK_ALONE = re.compile(r"invokingtheNVIDIAContainerRuntimeHookdirectly(?:\(e\.g\.specifyingthedocker--gpusflag\))?"
                         r"isnotsupported")
MAX_SQUASHED = 8 << 20  # Docker's refusals are looked for in the first 8 MB of a paste
# a line that starts a record of its own (a log line, a prompt, a Markdown quote or fence, a new hook message), never
# the rest of a message wrapped at a blank
_RECORD = re.compile(r"^\s*(?:[\[`#*|]|>(?:\s|$)|(?!GPU-)[A-Z]|\d{4}-\d\d|\d\d:\d\d|\$ |nvidia-container-cli)")
_CONTINUES = re.compile(r"^\s?[a-z0-9/.,:;=<>_(-]")
# words of the hook's messages: a line cut inside one of them is joined without a blank
_WORDS = frozenset("mount error requirement unsatisfied condition initialization container device devices cgroup "
                   "subsystem driver library version mismatch loaded found failed load shared object file cannot "
                   "open unknown creation nvml ldcache detection process request exists permission denied "
                   "operation permitted update newer earlier please support supported directory such".split())
_UNKNOWN_TAIL = re.compile(r"(?<!\s)\s*:\s*unknown\.?\s*$")
MAX_LINES = 12  # physical lines one message may span
HARD_WRAP_MIN = 40  # a terminal or a ticket cutting every line at one width: lines of one length, at least this


def _complete(msg: str) -> bool:
    """The message has ended: an escaped newline of the old runc wording, the ': unknown' the runtimes add (not the
    'unknown' of 'X: unknown device' cut before its last word), or the closing quote of a message given in quotes."""
    if "\\" in msg or msg.rstrip().endswith(("`", '"')):
        return True
    rest = re.sub(r"\s+", "", _START.split(msg, 1)[-1])
    return bool(re.search(r":unknown\.?['`]*$", rest)) and not (rest.startswith("deviceerror:")
                                                               and "unknowndevice" not in rest)


def _hard(lines: list[str], k: int) -> bool:
    """Line ``k`` was cut at a fixed width (a neighbour has its very length): the next line goes on mid-word."""
    n = len(lines[k])
    return n >= HARD_WRAP_MIN and any(0 <= m < len(lines) and len(lines[m]) == n for m in (k - 1, k + 1))


def _join(a: str, b: str, hard: bool) -> str:
    if hard:
        return a + b  # cut at a column: what the line ends with and the next begins with were one
    a, b = a.rstrip(), b.strip()
    tail, head = re.search(r"(\S+)$", a), re.match(r"(\S+)", b)
    if tail and head:
        t, h = tail.group(1), head.group(1)
        if "/" in t and not t.endswith(":"):
            return a + b  # a path cut by the wrap
        w, hw = re.search(r"[A-Za-z]+$", t), re.match(r"[a-z]+", h)
        if w and hw and (w.group(0) + hw.group(0)).lower() in _WORDS:
            return a + b  # a word cut by the wrap ("condi" + "tion")
    return a + " " + b


def _wraps(nxt: str, hard: bool) -> bool:
    """``nxt`` goes on with a message not yet ended on the line before it (``hard``: that line was cut at a column)."""
    if not nxt.strip():
        return False
    return hard or (not _RECORD.match(nxt) and bool(_CONTINUES.match(nxt)))


def _clean(msg: str) -> str:
    msg = msg.split("\\", 1)[0]  # the old runc wording escapes the newline that ends it
    msg = re.sub(r"[\"'`]+\)?\s*$", "", msg.rstrip())  # a closing quote (and the SDK's parenthesis: 'loaded")')
    return clip(_UNKNOWN_TAIL.sub("", msg), 400)


def _classify(msg: str) -> tuple[str, dict[str, str]] | None:
    """The kind of one hook message (and what it names), or None when it is not a hook error at all. A message cut
    short (a paste that ends, a wrap not recognised) is 'other' rather than a kind its words do not reach."""
    rest = re.sub(r"\s+", "", _START.split(msg, 1)[-1])
    if rest.startswith("errorparsingIMEXinfo:"):  # toolkit 1.17.0-1.17.2 refusing NVIDIA_IMEX_CHANNELS=all (nvct#797)
        return "imex-channels-refused", {}
    if not _CLASS.match(rest):
        return None  # 'nvidia-container-cli: command not found' and the like
    if rest.startswith("requirementerror:"):
        m = re.match(r"requirementerror:unsatisfiedcondition:cuda>=(\d+(?:\.\d+)*)", rest)
        if m:
            return "requirement-cuda", {"required_cuda": m.group(1)}
        cond = rest[len("requirementerror:unsatisfiedcondition:"):] \
            if rest.startswith("requirementerror:unsatisfiedcondition:") else ""
        # a condition cut inside 'cuda>=' could still be the CUDA one
        return ("requirement-other", {}) if cond and not "cuda>=".startswith(cond[:6]) else ("other", {})
    if rest.startswith("containererror:cgroupsubsystemdevicesnotfound"):
        return "cgroup-devices-not-found", {}
    if re.match(r"(?:initialization|detection)error:nvmlerror:drivernotloaded", rest):
        return "driver-not-loaded", {}
    if re.match(r"initializationerror:loadlibraryfailed:libnvidia-ml\.so(?:\.1)?:cannotopensharedobjectfile", rest):
        return "nvml-library-missing", {}
    if re.match(r"(?:initialization|detection)error:nvmlerror:driver/libraryversionmismatch", rest):
        return "driver-library-mismatch", {}
    m = re.match(r"deviceerror:(.+?):unknowndevice", rest)
    if m:
        return "unknown-device", {"device": m.group(1)}
    if rest.startswith("mounterror:"):
        return "mount-error", {}
    if re.match(r"ldcacheerror:process\S*ldconfig\S*failed", rest):
        return "ldconfig-failed", {}
    return "other", {}


def _starts(lines: list[str], i: int) -> list[int]:
    """Where hook messages start on line ``i``: whole, or with 'nvidia-container-cli:' itself cut by the line end."""
    ln = lines[i]
    out = [m.start() for m in _START.finditer(ln)]
    if i + 1 < len(lines):
        tail = ln[-30:]
        for m in _START.finditer(tail + lines[i + 1][:30]):
            if m.start() < len(tail) < m.end():
                out.append(len(ln) - len(tail) + m.start())
    return out


def _hook_messages(text: str) -> list[tuple[int, str, str, dict[str, str]]]:
    """(offset, message, kind, extras) for each hook message, joined across wrapped lines."""
    lines = text.split("\n")
    offsets, pos = [], 0
    for ln in lines:
        offsets.append(pos)
        pos += len(ln) + 1
    out = []
    for i, ln in enumerate(lines):
        if len(ln) > 20000 or "nvidia-container-cli" not in ln + (lines[i + 1][:30] if i + 1 < len(lines) else ""):
            continue
        starts = _starts(lines, i)
        for k, s in enumerate(starts):
            msg = ln[s: starts[k + 1]] if k + 1 < len(starts) else ln[s:]
            j = i
            while k == len(starts) - 1 and j + 1 < len(lines) and j - i < MAX_LINES - 1 \
                    and (not _START.match(msg) or not _complete(msg)) and _wraps(lines[j + 1], _hard(lines, j)):
                # 'nvidia-container-cli:' itself cut by the line end goes on with no blank
                msg = _join(msg, lines[j + 1], _hard(lines, j)) if _START.match(msg) else msg.rstrip() + lines[j + 1].strip()
                j += 1
            again = _START.search(msg, 1)
            msg = msg[: again.start()] if again else msg  # a message that follows on the joined line is its own
            got = _classify(msg.split("\\", 1)[0]) if _START.match(msg) else None
            if got:
                out.append((offsets[i] + s, _clean(msg), got[0], got[1]))
    return out


# the NVIDIA container runtime itself (toolkit 1.14 and later: its CDI 'auto' modifier calls NVML before the hook),
# refusing the container as containerd or Docker print it ('OCI runtime create failed: could not apply required
# modification to OCI specification: ... failed to initialize NVML: Driver Not Loaded'), read with blanks removed
_RUNTIME_NO_DRIVER = re.compile(r"(?:OCIruntimecreatefailed|errormodifyingOCIspec).{0,600}?failedtoinitializeNVML:"
                                r"DriverNotLoaded", re.IGNORECASE)


def _docker_refusals(text: str) -> list[tuple[int, str, str, dict[str, str]]]:
    """Docker's 'could not select device driver ... [[gpu]]' and 'Unknown runtime specified nvidia', and the NVIDIA
    runtime's own NVML refusal inside an OCI runtime error."""
    head = text[:MAX_SQUASHED]
    where = [i for i, c in enumerate(head) if not c.isspace()]
    squashed = "".join(head[i] for i in where)
    out = []
    for rx, kind in ((_NO_GPU_DRIVER, "no-gpu-runtime"), (_NO_NVIDIA_RUNTIME, "no-gpu-runtime"),
                     (_TOOLKIT_ABSENT, "no-gpu-runtime"), (_HOOK_ALONE, "hook-without-runtime"),
                     (_RUNTIME_NO_DRIVER, "driver-not-loaded"), (_NO_SMI_INSIDE, "nvidia-smi-not-in-container")):
        for m in rx.finditer(squashed):
            a, b = where[m.start()], where[m.end() - 1] + 1
            # a script's name begins its line: what the squashing joined to it from the line before is not its own
            colon = head.find(":", a, b) if rx is _TOOLKIT_ABSENT else -1
            a = head.rfind("\n", a, colon) + 1 if colon > a and "\n" in head[a:colon] else a
            # the runtime's error chain ends in its innermost error: keep the end
            text_ = clip_middle(head[a:b], 200) if rx is _RUNTIME_NO_DRIVER else clip(head[a:b], 200)
            out.append((a, text_, kind, {}))
    return out


# nvidia-docker 1.0 (the wrapper that checked the image's com.nvidia.cuda.version label against cudaDriverGetVersion
# before docker ran): "nvidia-docker | 2016/04/21 21:41:35 Error: unsupported CUDA version: driver 7.0 < image 7.5";
# a driver of 0.0 is no libcuda found at all, not an old driver
_V1_CUDA = re.compile(r"Error: unsupported CUDA version: driver (\d+(?:\.\d+)*) < image (\d+(?:\.\d+)*)")
_V1_UVM = re.compile(r"Error: Could not load UVM kernel module")


def _v1_errors(text: str) -> list[tuple[int, str, str, dict[str, str]]]:
    """nvidia-docker 1.0's own refusals: the image's CUDA version above the driver's, and nvidia_uvm not loadable."""
    out: list[tuple[int, str, str, dict[str, str]]] = []
    for m in _V1_CUDA.finditer(text[:MAX_SQUASHED]):
        msg = m.group(0)[len("Error: "):]
        if m.group(1) in ("0", "0.0"):
            out.append((m.start(), msg, "other", {}))
        else:
            out.append((m.start(), msg, "requirement-cuda", {"required_cuda": m.group(2)}))
    for m in _V1_UVM.finditer(text[:MAX_SQUASHED]):
        out.append((m.start(), m.group(0)[len("Error: "):], "other", {}))
    return out


# enroot's 98-nvidia.sh hook, before it calls nvidia-container-cli
_KMOD_WARN = re.compile(r"\[WARN\] Kernel module (\w+) is not loaded")
# Singularity/Apptainer (internal/pkg/runtime/launcher/native/launcher_linux.go), read with its blanks removed
_CONTAIN_UNSET = "Whenusingnvidia-container-cliwith--containNVIDIA_VISIBLE_DEVICESmustbesetornoGPUswillbeavailable"


def _read(text: str) -> dict[str, Any]:
    found = _hook_messages(text)
    if any(w in text for w in ("device", "pabilit", "gpu", "runtime", "nvidia", "specified", "Hook", "NVML")):  # (a wrap cuts one)
        found += _docker_refusals(text)
    if "Error: " in text:
        found += _v1_errors(text)
    unset = "--contain" in text and _CONTAIN_UNSET in "".join(text[:MAX_SQUASHED].split())
    kmods = list(dict.fromkeys(_KMOD_WARN.findall(text[:MAX_SQUASHED]))) if "Kernel module" in text else []
    if _V1_UVM.search(text[:MAX_SQUASHED]) and "nvidia_uvm" not in kmods:
        kmods.append("nvidia_uvm")
    if unset and not found:
        return {"container_cli.visible_devices_unset": True}
    if not found:
        return {}
    found.sort(key=lambda f: f[0])
    errors: list[str] = []
    kinds: list[str] = []
    facts: dict[str, Any] = {"container_cli.error": found[0][1], "container_cli.error_kind": found[0][2]}
    for _, msg, kind, extra in found:
        add_clipped(errors, msg, 20, 400)
        if kind not in kinds:
            kinds.append(kind)
        for name, value in extra.items():
            facts.setdefault(f"container_cli.{name}", value)
    facts["container_cli.errors"] = errors
    facts["container_cli.error_kinds"] = kinds
    if unset:
        facts["container_cli.visible_devices_unset"] = True
    if kmods:
        facts["container_cli.kmods_not_loaded"] = kmods[:8]
    if "hooks.d" in text:  # read with the blanks removed: a wrap may cut the line anywhere
        hooks = re.findall(r"hooks\.d/([\w.-]+?\.sh)exitedwithreturncode", "".join(text[:MAX_SQUASHED].split()))
        if hooks:
            facts["container_cli.enroot_hooks_failed"] = list(dict.fromkeys(hooks))[:8]
    if "requirement-other" in kinds and "container_cli.required_cuda" not in facts:
        # the hook's command line, where the runtime printed it, carries the image's whole requirement: alternatives
        # separated by blanks, of which the one named in the error was the last tried. With a cuda>=X alternative
        # among them, that one failed first: the driver supports no CUDA X (and no branch the image lists as an exception)
        # (read with its blanks removed, as a terminal's or a ticket's wrap may have cut it anywhere)
        req = _REQUIRE.search("".join(text[:MAX_SQUASHED].split()))
        alts = _ALTERNATIVE.findall(req.group(1)) if req else []
        cuda = next((a[len("cuda>="):] for a in alts if a.startswith("cuda>=")), None)
        if cuda:
            facts["container_cli.required_cuda"] = cuda
            facts["container_cli.requirement_alternatives"] = alts[:16]
    return facts


def _detect(text: str) -> float:
    head = text[:65536]
    if "nvidia" not in head and "NVIDIA" not in head and "device driver" not in head and "NVML" not in head:
        return 0.0
    return 0.9 if _read(head.replace("\r\n", "\n").replace("\r", "\n")) else 0.0


@parser(
    "nvidia-container-cli",
    detect=_detect,
    summary="the NVIDIA container hook's errors (nvidia-container-cli via docker/containerd/podman/enroot) and "
            "Docker's refusal of --gpus without the NVIDIA Container Toolkit",
    facts=FACTS,
    command="docker run --rm --gpus all IMAGE nvidia-smi   (paste what it printed; or nvidia-container-cli -k -d /dev/tty info)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "the error a container engine printed from the NVIDIA container hook")
    facts = _read(text)
    if not facts:
        raise ParseError("not an NVIDIA container hook error: no 'nvidia-container-cli: ... error: ...' message, "
                         "nor Docker's 'could not select device driver ... [[gpu]]', nor Apptainer's --nvccli warning")
    return facts
