"""Resource limits of a context, as printed by the ``limits`` source's fixed script::

    #@ limits 1
    memlock_soft=8192
    memlock_hard=8192
    nofile_soft=20000
    nofile_hard=20000
    stack_soft=8192
    shm_present=1
    shm_fstype=tmpfs
    shm_df=tmpfs             24684084     0  24684084       0% /dev/shm

(a real capture from the development machine, Debian 12 as root; the values are ``ulimit`` output in KiB
for memlock and stack, a count for open files, or ``unlimited``; ``shm_df`` is the last line of
``df -kP /dev/shm``: filesystem, 1024-blocks, used, available, capacity, mount point).

What it means for training speed: RDMA registers (pins) communication buffers, so NCCL over InfiniBand or
RoCE needs ``ulimit -l unlimited`` (or very large); a container started with the runtime's default of 64 KiB
fails ``ibv_reg_mr`` or falls back to slower paths. NCCL's intra-node SHM transport allocates in
``/dev/shm``; Docker's default of 64 MiB is too small for 8 GPUs (``--shm-size`` / ``--ipc=host``).

The same limits as people paste them are read too (the facts a format does not show are absent):

- ``ulimit -a`` of bash (``max locked memory       (kbytes, -l) 64``), zsh (``-l: locked-in-memory size
  (kbytes)  64``) and dash/busybox (``locked memory(kbytes) 64``): soft limits only;
- ``cat /proc/PID/limits`` (``Max locked memory   65536   65536   bytes``): soft and hard, bytes -> KiB.

Real sample (``ulimit -a`` on an mlx5 InfiniBand cluster whose UCX job failed with ``ibv_create_cq(cqe=4096)
failed: Cannot allocate memory``; openucx/ucx#8229, tests/data/limits)::

    max locked memory       (kbytes, -l) 64
    max memory size         (kbytes, -m) unlimited
    open files                      (-n) 1024

>>> f = parse("#@ limits 1\\nmemlock_soft=unlimited\\nnofile_soft=1048576\\nshm_present=1\\nshm_df=shm 65536 0 65536 0% /dev/shm\\n")
>>> f["limits.memlock"], f["limits.memlock_unlimited"], f["limits.nofile"], f["limits.shm_kb"]
('unlimited', True, 1048576, 65536)
"""

from __future__ import annotations

import re

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("limits.memlock", "string", "", "locked-memory soft limit as ulimit -l prints it: KiB, or 'unlimited' (RDMA wants unlimited)"),
    ("limits.memlock_hard", "string", "", "locked-memory hard limit (ulimit -H -l): KiB, or 'unlimited'"),
    ("limits.memlock_kb", "number", "KiB", "locked-memory soft limit in KiB; absent when unlimited"),
    ("limits.memlock_unlimited", "bool", "", "the locked-memory soft limit is unlimited"),
    ("limits.nofile", "number", "count", "open files soft limit (ulimit -n); absent when unlimited"),
    ("limits.nofile_hard", "number", "count", "open files hard limit (ulimit -H -n); absent when unlimited"),
    ("limits.stack_kb", "number", "KiB", "stack size soft limit (ulimit -s); absent when unlimited"),
    ("limits.shm_present", "bool", "", "/dev/shm exists in this context"),
    ("limits.shm_fstype", "string", "", "filesystem type of /dev/shm (tmpfs)"),
    ("limits.shm_kb", "number", "KiB", "size of /dev/shm (df 1024-blocks)"),
    ("limits.shm_avail_kb", "number", "KiB", "space available in /dev/shm"),
    ("limits.pid", "number", "", "the process whose limits these are, from the command line that printed them (cat /proc/PID/limits, prlimit --pid PID); absent for the shell's own"),
]
_PID = re.compile(r"^\s*\$ .*?(?:/proc/(\d+)/limits|prlimit\b.*?(?:--pid[ =]|-p\s*)(\d+))")


_BASH = re.compile(r"^\s*[a-zA-Z](?:[\w ()/-]*?[\w()/-])??\s*\((?:[\w ]+, )?-(?P<flag>[a-zA-Z])\)\s+(?P<value>\S+)\s*$")
_ZSH = re.compile(r"^\s*-(?P<flag>[a-zA-Z]):\s+[\w ()/-](?:[\w ()/-]*?[\w()/-])??\s+(?P<value>unlimited|\d+)\s*$")
_DASH = re.compile(r"^[^\S\n]*(?P<name>locked memory\(kbytes\)|nofiles|stack\(kbytes\)|time\(seconds\)|"
                   r"coredump\(blocks\)|process|memory\(kbytes\))\s+(?P<value>unlimited|\d+)\s*$")
_PROC = re.compile(r"^[^\S\n]*Max (?P<name>locked memory|open files|stack size)\s+(?P<soft>unlimited|\d+)\s+"
                   r"(?P<hard>unlimited|\d+)\s*(?P<unit>bytes|files)?\s*$")
_PROC_HEADER = re.compile(r"^[^\S\n]*Limit\s+Soft Limit\s+Hard Limit\s+Units", re.MULTILINE)
_DASH_NAMES = {"locked memory(kbytes)": "l", "nofiles": "n", "stack(kbytes)": "s"}
_PROC_NAMES = {"locked memory": "l", "open files": "n", "stack size": "s"}


def _detect(text: str) -> float:
    if text.lstrip().startswith("#@ limits"):
        return 0.99
    if _PROC_HEADER.search(text[:8192]):
        return 0.95
    lines = text[:16384].split("\n")
    bash = sum(1 for ln in lines if "(" in ln and _BASH.match(ln))
    if bash >= 3 and any("-l)" in ln or "-n)" in ln for ln in lines):
        return 0.9
    if sum(1 for ln in lines if ln.lstrip().startswith("-") and _ZSH.match(ln)) >= 3:
        return 0.85
    if sum(1 for ln in lines if _DASH.match(ln)) >= 3:
        return 0.8
    return 0.0


def _from_pasted(text: str) -> dict[str, object]:
    """``ulimit -a`` (bash, zsh, dash) or ``/proc/PID/limits``: {flag: (soft, hard or None)} in KiB/count."""
    got: dict[str, tuple[str, str | None]] = {}
    for ln in text.split("\n"):
        m = _PROC.match(ln)
        if m:
            soft, hard = m.group("soft"), m.group("hard")
            if m.group("unit") == "bytes":  # /proc/PID/limits counts bytes; ulimit, KiB
                soft = soft if soft == "unlimited" else str(int(soft) // 1024)
                hard = hard if hard == "unlimited" else str(int(hard) // 1024)
            got.setdefault(_PROC_NAMES[m.group("name")], (soft, hard))
            continue
        m = _BASH.match(ln) if "(" in ln else None
        if m is None:
            m = _ZSH.match(ln)
        if m is not None:
            got.setdefault(m.group("flag"), (m.group("value"), None))
            continue
        m = _DASH.match(ln)
        if m and m.group("name") in _DASH_NAMES:
            got.setdefault(_DASH_NAMES[m.group("name")], (m.group("value"), None))
    f: dict[str, object] = {}
    if "l" in got:
        soft = _limit(got["l"][0])
        if soft:
            f["limits.memlock"] = soft[0]
            f["limits.memlock_unlimited"] = soft[1] is None
            if soft[1] is not None:
                f["limits.memlock_kb"] = soft[1]
        hard = _limit(got["l"][1] or "")
        if hard:
            f["limits.memlock_hard"] = hard[0]
    if "n" in got:
        soft = _limit(got["n"][0])
        if soft and soft[1] is not None:
            f["limits.nofile"] = soft[1]
        hard = _limit(got["n"][1] or "")
        if hard and hard[1] is not None:
            f["limits.nofile_hard"] = hard[1]
    if "s" in got:
        soft = _limit(got["s"][0])
        if soft and soft[1] is not None:
            f["limits.stack_kb"] = soft[1]
    return f


def _limit(value: str) -> tuple[str, int | None] | None:
    v = value.strip()
    if v == "unlimited":
        return "unlimited", None
    if v.isdigit():
        return v, int(v)
    return None


@parser(
    "limits",
    detect=_detect,
    summary="resource limits of a context: locked memory, open files, /dev/shm size (the limits probe, ulimit -a, /proc/PID/limits)",
    facts=FACTS,
    command="sh -c 'ulimit -l; ulimit -n; df -kP /dev/shm'   (or: troubleshooter check, source limits)",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "the limits probe's output (#@ limits)")
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    if not lines[0].startswith("#@ limits"):
        pasted = _from_pasted(text)
        if not pasted:
            raise ParseError("neither the limits probe's output ('#@ limits' first line) nor `ulimit -a` or "
                             "/proc/PID/limits with a limit this reads (locked memory, open files, stack)", line=1)
        who = _PID.match(text)  # the command line, when the pasted transcript gives it ("$ cat /proc/3844/limits")
        if who:
            pasted["limits.pid"] = int(who.group(1) or who.group(2))
        return pasted
    kv: dict[str, str] = {}
    for ln in lines[1:]:
        k, eq, v = ln.partition("=")
        if eq and k.isidentifier():
            kv.setdefault(k, v)
    f: dict[str, object] = {}
    soft = _limit(kv.get("memlock_soft", ""))
    if soft:
        f["limits.memlock"] = soft[0]
        f["limits.memlock_unlimited"] = soft[1] is None
        if soft[1] is not None:
            f["limits.memlock_kb"] = soft[1]
    hard = _limit(kv.get("memlock_hard", ""))
    if hard:
        f["limits.memlock_hard"] = hard[0]
    for key, fact in (("nofile_soft", "limits.nofile"), ("nofile_hard", "limits.nofile_hard"), ("stack_soft", "limits.stack_kb")):
        got = _limit(kv.get(key, ""))
        if got and got[1] is not None:
            f[fact] = got[1]
    if "shm_present" in kv:
        f["limits.shm_present"] = kv["shm_present"] == "1"
    if kv.get("shm_fstype", "-") not in ("", "-"):
        f["limits.shm_fstype"] = kv["shm_fstype"]
    cols = kv.get("shm_df", "").split()
    # filesystem 1024-blocks used available capacity mounted-on (a long filesystem name never splits with -P)
    if len(cols) >= 6 and cols[1].isdigit() and cols[3].isdigit():
        f["limits.shm_kb"] = int(cols[1])
        f["limits.shm_avail_kb"] = int(cols[3])
    if not f:
        raise ParseError("the limits probe printed no limit it could read")
    return f
