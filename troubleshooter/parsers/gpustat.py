"""gpustat (wookayin/gpustat): one line per GPU with its temperature, utilization, memory and the processes on it.

Real samples (mpi4jax/mpi4jax#194; wookayin/gpustat#157, #95, #97; SkyPilot's docs; tests/data/gpustat)::

    40901                       Fri Jun 30 11:52:07 2023  535.54.03
    [0] NVIDIA GeForce RTX 4090 | 50°C,  73 % | 12894 / 24564 MB | user1(12874M) gdm(4M)
    [0] NVIDIA A100-PCIE-40GB | 29°C,   0 % | 40176 / 40960 MB | user(36804M) user(3370M)
    [0] GeForce GTX Titan X | 77'C,  96 % | 11848 / 12287 MB | python/52046(11821M)
    [0] Tesla P4     | 44'C,  ?? %,   0 %,   28 /  75 W |  1059 /  7606 MB | root:python/7468(1049M)

The header (``HOST  DATE  DRIVER``; before 0.6 without the driver) is optional. A GPU line is ``[i] NAME |`` then
the temperature (``°C``; ``'C`` up to 0.6), with ``-F`` the fan, the utilization, with ``-e`` the codecs, with ``-P``
the power, then ``USED / TOTAL MB`` (MiB) and, after ``|``, each process as ``[user][:command][/pid](MEMM)`` (``?M``
when the driver does not say; ``(Not Supported)`` when it cannot list them). Unknown values print ``??``.

What it means here: the same as nvidia-smi's table and Processes section (``gpu.devices``, ``gpu.processes``): which
processes work on which GPU. Several processes doing work on one GPU while another GPU holds only their contexts is
ranks that were not given a GPU each (mpi4jax#194); one working process per GPU is the healthy shape. gpustat lists
only the processes it can see (in a container without the host's PID namespace, fewer than the memory says).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("gpu.count", "number", "count", "GPUs attached"),
    ("gpu.names", "list", "", "product name of each GPU, in index order"),
    ("gpu.driver_version", "string", "", "NVIDIA driver version"),
    ("gpu.devices", "list", "", "per-GPU dicts; from gpustat: index, name, temp_c, util_pct, fan_pct, power_w, "
     "power_limit_w, mem_used_mib, mem_total_mib"),
    ("gpu.processes", "list", "", "the processes on each GPU: {gpu, pid, mem_mib, and user and name (-cu) or label "
     "(the user or the command, which gpustat prints alike)}; pid with -p, mem_mib None where it printed ?M"),
]

# what a paste puts before a line: a Markdown quote, an indent, a '#' of a comment or of a root prompt's echo
_LEAD = r"^[\s>#]*+"
# (the name up to the first '|', stripped in code: a lazy name before \s*\| retried a run of spaces at each place)
_LINE = re.compile(_LEAD + r"\[(\d{1,3})\]\s([^|\n]*)\|\s*(\?\?|-?\d+)\s*(?:°|'|º)?C,(.*?)\|\s*(\?\?|\d+)\s*/\s*(\?\?|\d+)"
                   r"\s*MB\b(.*)$")
_PCT = re.compile(r"(\?\?|(?<!\d)\d+)\s*%")
_POWER = re.compile(r"(\?\?|(?<!\d)\d+)\s*(?:/\s*(\?\?|\d+)\s*)?W\b")
_PROC = re.compile(r"(?:^|\s)((?:[^\s():/]+)?(?::[^\s()/]+)?(?:/\d+)?)\((\?|\d+)M\)")
_HEADER = re.compile(_LEAD + r"(\S+)\s+(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \w{3}\s+\d+ [\d:]{8} \d{4}(?:\s+(\d+\.\d+(?:\.\d+)?))?\s*$")


def _int(tok: str) -> int | None:
    return None if tok.startswith("?") else int(tok)


def _detect(text: str) -> float:
    head = text[:65536]
    n = sum(1 for ln in head.split("\n")[:2000] if _LINE.match(ln))
    return 0.9 if n else 0.0


def _process(spec: str, mem: str, gpu: int) -> dict[str, Any]:
    """'user:python/4242' -> user, command, pid (gpustat prints the user unless -c alone, the command with -c, the pid
    with -p)."""
    pid = None
    body = spec
    if "/" in body:
        body, p = body.rsplit("/", 1)
        pid = int(p)
    out: dict[str, Any] = {"gpu": gpu, "pid": pid, "mem_mib": None if mem == "?" else int(mem)}
    if ":" in body:
        user, name = body.split(":", 1)
        out.update(user=user, name=name)
    elif body:
        out["label"] = body  # the user (the default, -u, -p) or the command (-c, -cp): the line does not say which
    return out


@parser(
    "gpustat",
    detect=_detect,
    summary="gpustat: each GPU's temperature, utilization, memory and the processes on it",
    facts=FACTS,
    command="gpustat -cpu",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "gpustat output ('[0] NAME | 29°C,   0 % | 40176 / 40960 MB | user(36804M)')")
    devices: dict[int, dict[str, Any]] = {}
    procs: list[dict[str, Any]] = []
    driver = None
    for line in text.split("\n"):
        h = _HEADER.match(line)
        if h and h.group(2):
            driver = h.group(2)
        m = _LINE.match(line)
        if not m:
            continue
        idx = int(m.group(1))
        if idx in devices:
            continue  # a watch loop's next frame or a second paste of the same GPU: the first one read stands
        dev: dict[str, Any] = {"index": idx, "name": m.group(2).strip(), "temp_c": _int(m.group(3))}
        # with -F the fan comes first, then the utilization (codecs, after it, are in parentheses)
        pcts = _PCT.findall(re.sub(r"\(.*?\)", "", m.group(4)))
        if pcts:
            dev["util_pct"] = _int(pcts[-1])
            if len(pcts) >= 2:
                dev["fan_pct"] = _int(pcts[0])
        pw = _POWER.search(m.group(4))
        if pw:
            dev["power_w"] = _int(pw.group(1))
            if pw.group(2):
                dev["power_limit_w"] = _int(pw.group(2))
        dev["mem_used_mib"], dev["mem_total_mib"] = _int(m.group(5)), _int(m.group(6))
        devices[idx] = dev
        rest = m.group(7)
        if rest.lstrip().startswith("|") and "Not Supported" not in rest:
            for p in _PROC.finditer(rest.lstrip()[1:]):
                procs.append(_process(p.group(1), p.group(2), idx))
    if not devices:
        raise ParseError("no gpustat GPU line ('[0] NAME | 29°C,   0 % | 40176 / 40960 MB | ...')")
    order = sorted(devices)
    facts: dict[str, Any] = {"gpu.names": [devices[i]["name"] for i in order],
                             "gpu.devices": [devices[i] for i in order], "gpu.processes": procs}
    if order == list(range(len(order))):
        facts["gpu.count"] = len(order)  # every GPU from 0 on: a paste of some of them ([6], [7]) does not count them
    if driver:
        facts["gpu.driver_version"] = driver
    return facts
