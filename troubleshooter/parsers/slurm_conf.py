"""Slurm's node configuration files that decide what a job may touch: ``cgroup.conf`` and ``gres.conf``.

Real samples (a cluster's admin notes, ``# cat /etc/slurm/cgroup.conf``; NVIDIA/deepops#1195's generated
gres.conf)::

    CgroupAutomount=yes
    ConstrainCores=yes
    ConstrainRAMSpace=yes
    # see note below about OOM handling
    ConstrainSwapSpace=no
    ConstrainDevices=yes

    Name=gpu File=/dev/nvidia0 CPUs=48-63,176-191
    Name=gpu File=/dev/nvidia1 CPUs=48-63,176-191

What it means: Slurm confines a job to the GPUs it was given only when ``ConstrainDevices=yes`` (with the
task/cgroup plugin): the job's devices cgroup then lets it open its own ``/dev/nvidiaN`` and no other. Every
Constrain* setting defaults to ``no``, so a cgroup.conf shown without the line (or with it commented out) does
not confine devices: a job that asked for one GPU can open all of them, and Slurm's ``CUDA_VISIBLE_DEVICES`` then
holds host indices (2, not 0), which a container that is given only ``/dev/nvidia2`` cannot resolve ("no
CUDA-capable device is detected", NVIDIA/pyxis#47). gres.conf says which GPUs the node has: ``Name=gpu`` lines
(``File=/dev/nvidia[0-7]``, ``Type``, ``Flags``) or ``AutoDetect=nvml``.

Names and values are case-insensitive and ``#`` starts a comment (cgroup.conf(5), gres.conf(5)). A paste may show
both files (``cat cgroup.conf``, then ``cat gres.conf``, after shell prompts, zsh's ``➜  ~`` included): each prompt
line that prints one of the files says which file the lines after it are. Without prompts a line is told by its
names (Constrain*, Cgroup*... are cgroup.conf's; ``Name=`` and ``AutoDetect=`` lines are gres.conf's). Through
``grep``, ``head`` or ``tail`` only part of the file shows: a setting missing there says nothing.

>>> parse("ConstrainCores=yes\\n#ConstrainDevices=yes\\n")["slurm.cgroup.constrain_devices"]
False
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers._prompt import prompt
from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text, shell_words

_CONSTRAINS = (("ConstrainDevices", "slurm.cgroup.constrain_devices"), ("ConstrainCores", "slurm.cgroup.constrain_cores"),
               ("ConstrainRAMSpace", "slurm.cgroup.constrain_ram_space"),
               ("ConstrainSwapSpace", "slurm.cgroup.constrain_swap_space"))

FACTS = [
    ("slurm.cgroup.constrain_devices", "bool", "", "cgroup.conf confines each job to the GPUs (GRES devices) it was "
     "given (ConstrainDevices=yes); false when cgroup.conf is shown without the line, with it commented out or =no; "
     "absent when cgroup.conf is not shown whole"),
    ("slurm.cgroup.constrain_cores", "bool", "", "cgroup.conf's ConstrainCores (confine jobs to their CPUs); false "
     "when the file is shown without it"),
    ("slurm.cgroup.constrain_ram_space", "bool", "", "cgroup.conf's ConstrainRAMSpace (enforce the job's memory); "
     "false when the file is shown without it"),
    ("slurm.cgroup.constrain_swap_space", "bool", "", "cgroup.conf's ConstrainSwapSpace; false when the file is shown "
     "without it"),
    ("slurm.cgroup.plugin", "string", "", "cgroup.conf's CgroupPlugin (cgroup/v1, cgroup/v2, autodetect, disabled); "
     "absent when not set"),
    ("slurm.cgroup.settings", "dict", "", "cgroup.conf's settings as written (name as written -> value)"),
    ("slurm.gres.gpus", "bool", "", "gres.conf declares GPUs for the node: a Name=gpu line or AutoDetect=nvml/nvidia/"
     "rsmi/oneapi; false when gres.conf is shown without either"),
    ("slurm.gres.gpu_lines", "list", "", "gres.conf's GPU lines (Name=gpu), as written (comments cut, runs of blanks "
     "made one)"),
    ("slurm.gres.gpu_files", "list", "", "the File= device paths of the GPU lines, as written (/dev/nvidia[0-7])"),
    ("slurm.gres.gpu_count", "number", "count", "GPUs the File= paths name (/dev/nvidia[0-7] is 8): a node's GPUs; "
     "absent when a GPU line has no File= or the lines are for several NodeName= sets"),
    ("slurm.gres.gpu_types", "list", "", "the Type= of the GPU lines (a100, h100 ...)"),
    ("slurm.gres.gpu_flags", "list", "", "the Flags= of the GPU lines (nvidia_gpu_env, amd_gpu_env, opencl_env, "
     "no_gpu_env: which variables Slurm sets for the job's GPUs)"),
    ("slurm.gres.autodetect", "string", "", "gres.conf's AutoDetect (nvml, nvidia, rsmi, oneapi, off); absent when not "
     "set"),
    ("slurm.gres.duplicate_records", "bool", "", "gres.conf holds two or more GPU records for the same nodes with "
     "neither File= nor Type= (bare 'Name=gpu' lines, as beside AutoDetect=nvml): slurmd refuses it, 'fatal: "
     "gres.conf duplicate records for gpu'; absent otherwise"),
]

_CGROUP_KEYS = frozenset({
    "cgroupautomount", "cgroupmountpoint", "cgroupplugin", "cgroupreleaseagentdir", "cgroupslice", "constraincores",
    "constraindevices", "constrainramspace", "constrainswapspace", "constrainkmemspace", "allowedramspace",
    "allowedswapspace", "allowedkmemspace", "alloweddevicesfile", "maxrampercent", "maxswappercent", "maxkmempercent",
    "minramspace", "minkmemspace", "memoryswappiness", "taskaffinity", "ignoresystemd", "ignoresystemdonfailure",
    "enablecontrollers", "enableextracontrollers", "signalchildrenprocesses", "systemdtimeout"})
_GPU_AUTODETECT = ("nvml", "nvidia", "rsmi", "oneapi")
_TRUE, _FALSE = {"yes", "true", "1", "up", "y"}, {"no", "false", "0", "down", "n"}
# a shell line that prints one of the files: "$ cat /etc/slurm/cgroup.conf", "➜  ~ sudo cat gres.conf", "# cat ..."
_SHOWS = re.compile(r"^.{0,120}?(?:^|\s)(?:sudo\s+)?(?P<cmd>cat|less|more|bat|head|tail|grep|egrep|zgrep)\b[^|;&]*?"
                    r"\s(?P<path>[\w./~${}-]*?\b(?P<file>cgroup|gres|slurm)\.conf)\s*$")
# any other command after a prompt: the output after it is that command's
_PROMPT = prompt("$", "space")  # not a lone "#": that is a comment in a conf file
_ROOT_CMD = re.compile(r"^#\s+(?:sudo|srun|ssh|ls|echo|nvidia-smi|scontrol|systemctl|cat|grep)\s")
# the file is not there to show: "cat: /etc/slurm/cgroup.conf: No such file or directory"
_NOT_SHOWN = re.compile(r"^\s*(?:/\S*/)?(?:sudo: )?(?:cat|less|more|bat|head|tail|grep|egrep|zgrep): .*?: "
                        r"(?:No such file or directory|Permission denied|Is a directory)\s*$")
_PAIR = re.compile(r"(?<!\w)[^\WA-Za-z]*+([A-Za-z]\w*)\s*=\s*(\"[^\"]*\"|\S*)")
_RANGE = re.compile(r"\[([0-9,\-]+)\]")


def _files_in(path: str) -> int | None:
    """How many device files a gres.conf File= names: /dev/nvidia[0-3,6] -> 5, /dev/nvidia0,/dev/nvidia1 -> 2."""
    total = 0
    for part in re.split(r",(?![^\[]*\])", path):
        m = _RANGE.search(part)
        if not m:
            total += 1 if part else 0
            continue
        for rng in m.group(1).split(","):
            lo, _, hi = rng.partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()):
                return None
            total += (int(hi) - int(lo) + 1) if hi else 1
    return total


def _grep_pattern(line: str) -> re.Pattern[str] | None:
    """What ``grep [-i] PATTERN FILE`` on this prompt line looks for (so that a setting it would have printed and
    did not is known to be unset); None when the line cannot be read that way."""
    try:
        words = shell_words(line[line.index("grep"):])
    except ValueError:
        return None
    opts = [w for w in words[1:] if w.startswith("-")]
    args = [w for w in words[1:] if not w.startswith("-")]
    if len(args) != 2 or any(o not in ("-i", "-E", "-n", "--ignore-case") for o in opts):
        return None
    try:
        return re.compile(args[0], re.IGNORECASE if any(o in ("-i", "--ignore-case") for o in opts) else 0)
    except re.error:
        return None


def _bool(value: str) -> bool | None:
    v = value.strip().strip('"').lower()
    return True if v in _TRUE else False if v in _FALSE else None


def _strip_comment(line: str) -> str:
    return line.split("#", 1)[0].strip()


def _detect(text: str) -> float:
    head = text[:65536]
    cgroup = gres = 0
    for ln in head.split("\n")[:3000]:
        s = _strip_comment(ln)
        if not s or len(s) > 2000:
            continue
        pairs = _PAIR.findall(s)
        keys = [k.lower() for k, _ in pairs]
        if len(keys) == 1 and keys[0] in _CGROUP_KEYS and re.match(r"^[A-Za-z]\w*\s*=", s):
            cgroup += 2 if keys[0].startswith("constrain") or keys[0].startswith("cgroup") else 1
        elif keys and keys[0] in ("name", "nodename", "autodetect") and re.match(r"^[A-Za-z]\w*\s*=", s) and (
                "name" in keys and any(k in keys for k in ("file", "type", "count", "cores", "flags", "links"))
                or keys == ["autodetect"]):
            gres += 2 if any(v.lower() == "gpu" for k, v in pairs if k.lower() == "name") or keys == ["autodetect"] else 1
    return 0.95 if cgroup >= 2 or gres >= 2 else 0.0


@parser(
    "slurm-conf",
    detect=_detect,
    summary="Slurm's cgroup.conf (ConstrainDevices and the other Constrain* settings) and gres.conf (the node's GPUs)",
    facts=FACTS,
    command="cat /etc/slurm/cgroup.conf /etc/slurm/gres.conf   (on the GPU node; or scontrol show config | grep -i constrain)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "cgroup.conf or gres.conf lines (ConstrainDevices=yes, Name=gpu File=/dev/nvidia0)")
    section: str | None = None  # the file the lines belong to: cgroup, gres, slurm, other (another command's output)
    # cgroup.conf shown at all, and shown whole (by cat, or pasted without a command): through grep, head or tail a
    # missing setting says nothing
    cgroup_shown = cgroup_whole = gres_shown = False
    grepped: re.Pattern[str] | None = None  # what a grep of cgroup.conf looked for: it shows every line that matches
    settings: dict[str, str] = {}
    gpu_lines: list[str] = []
    files: list[str] = []
    types: list[str] = []
    flags: list[str] = []
    autodetect = None
    count: int | None = 0
    nodes: set[str] = set()  # the NodeName= of the GPU lines ('' where a line names none: this node)
    bare: dict[str, list[bool]] = {}  # NodeName= -> for each GPU record, whether it has neither File= nor Type=
    for raw in text.split("\n"):
        if len(raw) > 4000:
            continue
        m = _SHOWS.match(raw)
        if m and (_PROMPT.match(raw) or raw.lstrip().startswith(("#", m.group("cmd"), "sudo"))):
            section = m.group("file")
            if section == "cgroup":
                cgroup_shown = True
                cgroup_whole = cgroup_whole or m.group("cmd") in ("cat", "less", "more", "bat")
                grepped = grepped or _grep_pattern(raw) if m.group("cmd") in ("grep", "egrep", "zgrep") else grepped
            elif section == "gres":
                gres_shown = True
            continue
        if _PROMPT.match(raw) or _ROOT_CMD.match(raw):
            section = "other"
            continue
        if _NOT_SHOWN.match(raw):
            if section == "cgroup" and not settings:
                cgroup_shown = cgroup_whole = False
                grepped = None
            elif section == "gres" and not gpu_lines and autodetect is None:
                gres_shown = False
            section = "other"
            continue
        s = _strip_comment(raw)
        if not s or section in ("other", "slurm"):
            continue
        pairs = _PAIR.findall(s)
        if not pairs or not re.match(r"^[A-Za-z]\w*\s*=", s):
            continue
        keys = [k.lower() for k, _ in pairs]
        is_gres = keys[0] in ("name", "nodename", "autodetect") and ("name" in keys or "autodetect" in keys)
        if section == "cgroup" or (section is None and len(keys) == 1 and keys[0] in _CGROUP_KEYS):
            if len(pairs) == 1:
                settings[pairs[0][0]] = pairs[0][1].strip('"')
                cgroup_shown = True
                cgroup_whole = cgroup_whole or section is None
            continue
        if section == "gres" or (section is None and is_gres):
            gres_shown = True
            d = {k.lower(): v.strip('"') for k, v in pairs}
            if d.get("autodetect") and "name" not in d:
                autodetect = d["autodetect"].lower()
            if d.get("name", "").lower() != "gpu":
                continue
            add_clipped(gpu_lines, s, 64)
            nodes.add(d.get("nodename", "").lower())
            bare.setdefault(d.get("nodename", "").lower(), []).append(
                not any(d.get(k) for k in ("file", "files", "multiplefiles", "type")))
            if d.get("autodetect"):
                autodetect = d["autodetect"].lower()
            if d.get("file"):
                files.append(d["file"])
                n = _files_in(d["file"])
                count = None if count is None or n is None else count + n
            else:
                count = None
            if d.get("type") and d["type"] not in types:
                types.append(d["type"])
            for fl in d.get("flags", "").split(","):
                if fl and fl.lower() not in flags:
                    flags.append(fl.lower())
    if not cgroup_shown and not gres_shown:
        raise ParseError("no cgroup.conf setting (ConstrainDevices=...) and no gres.conf line (Name=gpu ...)")
    facts: dict[str, Any] = {}
    if cgroup_shown:
        low = {k.lower(): v for k, v in settings.items()}
        facts["slurm.cgroup.settings"] = settings
        for key, fact in _CONSTRAINS:
            if key.lower() in low:
                b = _bool(low[key.lower()])
                if b is not None:
                    facts[fact] = b
            elif cgroup_whole or (grepped is not None and grepped.search(f"{key}=")):
                facts[fact] = False  # every Constrain* setting defaults to no
        if low.get("cgroupplugin"):
            facts["slurm.cgroup.plugin"] = low["cgroupplugin"]
    if gres_shown:
        facts["slurm.gres.gpus"] = bool(gpu_lines) or (autodetect or "") in _GPU_AUTODETECT
        facts["slurm.gres.gpu_lines"] = gpu_lines
        if files:
            facts["slurm.gres.gpu_files"] = files
        if gpu_lines and count and len(nodes) == 1:
            facts["slurm.gres.gpu_count"] = count
        if types:
            facts["slurm.gres.gpu_types"] = types
        if flags:
            facts["slurm.gres.gpu_flags"] = flags
        if autodetect:
            facts["slurm.gres.autodetect"] = autodetect
        if any(len(r) > 1 and all(r) for r in bare.values()):
            # slurmd's check (src/interfaces/gres.c): records with no File and no Type, more than one, are duplicates
            facts["slurm.gres.duplicate_records"] = True
    return facts
