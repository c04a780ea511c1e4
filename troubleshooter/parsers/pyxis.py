"""pyxis's and enroot's own errors as Slurm shows them (``slurmstepd: error: pyxis: ...`` on the step's stderr,
``spank-epilog: error: pyxis: ...`` or ``error: pyxis: ...`` in slurmd's log): a container that could not be
imported, created or started, and above all the per-user directories they could not make.

Real samples (NVIDIA/pyxis#12 and #4; awslabs/awsome-distributed-ai#185; tests/data/pyxis and tests/data/slurm)::

    slurmstepd: error: pyxis: failed to import docker image
    slurmstepd: error: pyxis:     mkdir: cannot create directory '/run/enroot': Permission denied
    [2019-09-24T10:10:06.901] [321.0] error: pyxis: couldn't mkdir /run/pyxis/100005: No such file or directory
    Feb 22 17:46:38 ip-10-1-74-228 slurmd[13562]: spank-epilog: error: pyxis: mkdir: cannot create directory '/opt/dlami/nvme/tmp/enroot/data': Permission denied

What it means here: pyxis keeps a runtime directory per user (runtime_path, /run/pyxis/UID) and runs enroot as the
job's user, which needs its ENROOT_RUNTIME_PATH, ENROOT_DATA_PATH and ENROOT_CACHE_PATH writable by that user
(usually per-user directories such as /run/enroot/user-$(id -u)). When one cannot be created (a shared directory
without per-user subdirectories, a parent owned by root, a local disk mounted after the fact), every container step
fails on that node, and a failing epilog drains it ('Kill task failed'). A user the node cannot resolve ('id: cannot
find name for user ID 42': its user database out of sync, as CSCS documents) makes the same mkdir fail for another
reason, which is why the two are read apart. The NVIDIA hook's own errors inside a pyxis log are
nvidia-container-cli's kind.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("pyxis.errors", "list", "", "pyxis's and the enroot log's error messages as printed (Slurm's prefixes removed)"),
    ("pyxis.unknown_uids", "list", "", "user IDs the node could not resolve inside the container start ('id: cannot find "
     "name for user ID 42'): the node's user database, which then also makes the user's directories fail"),
    ("pyxis.dirs_not_created", "list", "", "directories pyxis or enroot could not create, as 'PATH: reason' ('mkdir: "
     "cannot create directory '/run/enroot': Permission denied', \"couldn't mkdir /run/pyxis/100005: No such file or "
     "directory\")"),
    ("pyxis.image_write_no_space", "bool", "", "writing the imported image ran out of space: mksquashfs's 'Write failed because "
     "No space left on device' / 'Failed to write to output filesystem' (pyxis writes the image's squashfs under its "
     "runtime_path)"),
    ("pyxis.squashfs_output", "string", "", "the squashfs file the import was writing ('Creating 4.0 filesystem on "
     "/run/pyxis/1000/7.0.squashfs'): runtime_path/UID/JOBID.STEPID.squashfs"),
]

_PYXIS = re.compile(r"\bpyxis:\s+(.*\S|)\s*$")
_MKDIR = re.compile(r"mkdir: cannot create directory [‘'`]?([^’'`]+?)[’'`]?: (Permission denied|No such file or directory|"
                    r"Read-only file system|Operation not permitted)")
_COULDNT = re.compile(r"couldn't mkdir (\S+?): (Permission denied|No such file or directory|Read-only file system|"
                      r"Operation not permitted)")
# mksquashfs's own words (enroot's tar extraction, 'Cannot write: No space left on device', is enroot's data or temp
# path, another directory: not read here)
_NO_SPACE = re.compile(r"Write failed because No space left on device|Failed to write to output filesystem")
_SQUASHFS_OUT = re.compile(r"Creating [\d.]+ filesystem on (/\S+?),? block size")
_UNKNOWN_UID = re.compile(r"cannot find name for user ID (\d+)")
_NOISE = re.compile(r"^(?:importing docker image|printing (?:contents of )?(?:the )?(?:enroot )?log file|creating container "
                    r"filesystem|starting container|could not remove squashfs)", re.IGNORECASE)


def _detect(text: str) -> float:
    head = text[:131072]
    if "pyxis:" not in head:
        return 0.0
    return 0.85 if any(_PYXIS.search(ln) for ln in head.split("\n")[:3000] if "pyxis:" in ln) else 0.0


@parser(
    "pyxis",
    detect=_detect,
    summary="pyxis's and enroot's errors in a Slurm step or slurmd's log: containers not imported or started, directories not created",
    facts=FACTS,
    command="srun --container-image=IMAGE true 2>&1 | grep -A20 pyxis   (or on the node: journalctl -u slurmd | grep pyxis)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "pyxis's errors ('slurmstepd: error: pyxis: ...')")
    errors: list[str] = []
    dirs: list[str] = []
    uids: list[str] = []
    no_space = False
    squashfs_out = None
    for line in text.split("\n"):
        if "pyxis:" not in line or len(line) > 4000:
            continue
        m = _PYXIS.search(line)
        if not m or not m.group(1):
            continue
        msg = m.group(1).removesuffix("**").rstrip()  # a line a reporter put in Markdown bold
        u = _UNKNOWN_UID.search(msg) if "user ID" in msg else None
        if u:
            add_clipped(uids, u.group(1), 20)
        if "No space" in msg or "output filesystem" in msg:
            no_space = no_space or bool(_NO_SPACE.search(msg))
        o = _SQUASHFS_OUT.search(msg) if "filesystem on" in msg else None
        if o:
            squashfs_out = o.group(1)
        d = _MKDIR.search(msg) or _COULDNT.search(msg)
        if d:
            add_clipped(dirs, f"{d.group(1)}: {d.group(2)}", 20)
        if "error" in line.split("pyxis:", 1)[0] and not _NOISE.match(msg):
            add_clipped(errors, msg, 20)
    if not errors and not dirs:
        raise ParseError("no pyxis error ('slurmstepd: error: pyxis: ...', 'spank-epilog: error: pyxis: ...')")
    facts: dict[str, Any] = {"pyxis.errors": errors}
    if dirs:
        facts["pyxis.dirs_not_created"] = dirs
    if uids:
        facts["pyxis.unknown_uids"] = uids
    if no_space:
        facts["pyxis.image_write_no_space"] = True
    if squashfs_out:
        facts["pyxis.squashfs_output"] = squashfs_out
    return facts
