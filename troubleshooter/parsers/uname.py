"""``uname -a`` (and ``uname -r``): the running kernel's release and the machine's architecture.

GNU coreutils' ``uname -a`` prints, space-separated: the kernel name, the node name, the kernel release, the
kernel version (``#1 SMP PREEMPT_DYNAMIC Thu ...``, itself several words), the machine, then the processor and
the hardware platform (each left out when ``unknown``) and the operating system. Real samples (tests/data/uname)::

    Linux pkrvm226m165fgz 3.10.0-1127.el7.x86_64 #1 SMP Tue Mar 31 23:36:51 UTC 2020 x86_64 x86_64 x86_64 GNU/Linux
    Linux 193b69069337 6.8.0-1013-nvidia-64k #14lambdaguest1 SMP PREEMPT_DYNAMIC Sat Sep 14 00:46:47 UTC 2024 aarch64 aarch64 aarch64 GNU/Linux
    Linux duo 5.13.19-3-pve #1 SMP PVE 5.13.19-7 (Thu, 20 Jan 2022 16:37:56 +0100) x86_64 GNU/Linux

What it settles: the kernel a driver build was for against the one running (an NVIDIA module built by DKMS for
the previous kernel does not load after an update), and, across nodes (``pdsh -w ... uname -r``), the node whose
kernel differs from the rest. A lone release line (``uname -r``) is read when its command line says so; it is
not detected from its content, which many a version string shares.

>>> parse("Linux duo 5.13.19-3-pve #1 SMP PVE 5.13.19-7 (Thu, 20 Jan 2022 16:37:56 +0100) x86_64 GNU/Linux")["host.kernel_release"]
'5.13.19-3-pve'
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("host.kernel_release", "string", "", "kernel release (uname -r)"),
    ("host.arch", "string", "", "machine architecture (uname -m)"),
    ("host.nodename", "string", "", "the node's name as uname -a prints it (uname -n)"),
]

_RELEASE = r"\d+\.\d+(?:\.\d+)?[\w.+~-]{0,80}"
_MACHINE = r"x86_64|aarch64|arm64|ppc64le|ppc64|s390x|riscv64|armv7l|armv8l|i686|i386|loongarch64"
# Linux NODENAME RELEASE #VERSION ... MACHINE [PROCESSOR] [PLATFORM] GNU/Linux (the OS word may be cut)
_UNAME_A = re.compile(rf"^Linux (?P<node>[\w.-]{{1,253}}) (?P<release>{_RELEASE}) (?P<version>#\S.{{0,300}}?) "
                      rf"(?P<machine>{_MACHINE})(?: (?:{_MACHINE}|unknown)){{0,2}}(?: GNU/Linux)?$")
_UNAME_R = re.compile(rf"^(?P<release>{_RELEASE})$")
_COMMAND = re.compile(r"^\$ (?:sudo )?(?:\S*/)?uname(?P<opts>(?: -[a-zA-Z]+)*)\s*$")


def _detect(text: str) -> float:
    lines = [ln.strip() for ln in text.split("\n")[:40] if ln.strip()]
    return 0.9 if lines and sum(1 for ln in lines if _UNAME_A.match(ln)) and len(lines) <= 3 else 0.0


@parser(
    "uname",
    detect=_detect,
    summary="uname -a / uname -r: the running kernel's release and the machine's architecture",
    facts=FACTS,
    command="uname -a",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "uname -a output")
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    asked_r = False
    for ln in lines:
        m = _UNAME_A.match(ln)
        if m:
            return {"host.kernel_release": m.group("release"), "host.arch": m.group("machine"),
                    "host.nodename": m.group("node")}
        c = _COMMAND.match(ln)
        if c:
            asked_r = c.group("opts").strip() == "-r"
            continue
        r = _UNAME_R.match(ln)
        if r and asked_r:
            return {"host.kernel_release": r.group("release")}
    raise ParseError("no `uname -a` line ('Linux NODE RELEASE #VERSION ... MACHINE GNU/Linux'), nor a release "
                     "under a `uname -r` command line")
