"""The kernel command line (``/proc/cmdline``, or the ``Kernel command line:`` line of a dmesg excerpt).

Real sample (AMD EPYC 9374F, from ../shared/corpus/dmesg-cmdline)::

    isolcpus=0-15 nohz_full=0-15 rcu_nocbs=0-15 kthread_cpus=16-31 rcu_nocb_poll nosoftlockup
    default_hugepagesz=1GB hugepagesz=1G hugepages=20 amd_iommu=on iommu=pt mitigations=off ...

What matters for training speed: C-state limits (``intel_idle.max_cstate=``, ``processor.max_cstate=``,
``idle=poll``) keep idle cores drawing package power so busy cores cannot turbo; ``iommu=pt`` /
``iommu.passthrough=1`` skip DMA translation; ``mitigations=off`` and isolation (``isolcpus``,
``nohz_full``) change CPU overhead. A parameter given twice: the kernel keeps the last value, and so do we
(and we report the duplicates).

>>> f = parse("ro quiet intel_idle.max_cstate=1 processor.max_cstate=1 iommu=pt")
>>> f["kernel.max_cstate"], f["kernel.iommu_passthrough"]
(1, True)
"""

from __future__ import annotations

import re

from troubleshooter.parsers.base import ParseError, parser, require_text, shell_words

FACTS = [
    ("kernel.cmdline", "string", "", "the kernel command line as booted"),
    ("kernel.params", "dict", "", "every name=value parameter (flags map to true); last value wins"),
    ("kernel.max_cstate", "number", "", "deepest C-state allowed by intel_idle.max_cstate / processor.max_cstate (the lower); absent when not limited"),
    ("kernel.idle", "string", "", "idle= override (poll, halt, nomwait); absent when not set"),
    ("kernel.mitigations", "string", "", "mitigations= value (off, auto, auto,nosmt); 'auto' when not set"),
    ("kernel.iommu_passthrough", "bool", "", "DMA translation bypassed (iommu=pt or iommu.passthrough=1)"),
    ("kernel.iommu", "list", "", "IOMMU switches given (intel_iommu=, amd_iommu=, iommu=, iommu.passthrough=, iommu.strict=)"),
    ("kernel.isolcpus", "string", "", "isolcpus= value (CPUs kept from the scheduler); absent when not set"),
    ("kernel.nohz_full", "string", "", "nohz_full= value; absent when not set"),
    ("kernel.hugepages", "number", "count", "hugepages= preallocated at boot (the last given)"),
    ("kernel.duplicate_params", "list", "", "parameters given more than once (a sign of a hand-edited boot line)"),
    ("kernel.cmdline_warnings", "list", "", "values that look wrong, e.g. intel_iommu=pt (not a valid value)"),
]

_DMESG = re.compile(r"Kernel command line:\s*(.*)$", re.MULTILINE)
_IOMMU_KEYS = ("intel_iommu", "amd_iommu", "iommu", "iommu.passthrough", "iommu.strict", "arm-smmu-v3.disable_bypass")


_TOKENS = ("BOOT_IMAGE=", " ro ", "root=", "quiet", "iommu", "hugepages", "isolcpus", "max_cstate", "mitigations=", "console=")


def _detect(text: str) -> float:
    if _DMESG.search(text):
        return 0.6  # dmesg parser scores higher on a full dmesg
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return 0.0
    # the line richest in boot parameters: /proc/cmdline's one line, wherever a paste put it (a sentence after it)
    hits, best = max((sum(tok in line for tok in _TOKENS), len(line)) for line in lines[-20:])
    # a few lines, or the parameters' line most of the text (an lscpu excerpt and a person's sentences around it)
    if hits >= 2 and (len(lines) <= 6 or (len(lines) <= 20 and 2 * best >= sum(len(ln) for ln in lines))):
        return 0.9
    return 0.3 if hits else 0.0


@parser(
    "cmdline",
    detect=_detect,
    summary="kernel command line (/proc/cmdline or dmesg 'Kernel command line:')",
    facts=FACTS,
    command="cat /proc/cmdline",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "a kernel command line (cat /proc/cmdline)")
    m = _DMESG.search(text)
    if m:
        line = m.group(1).strip()
    else:
        # /proc/cmdline is one line; pasted captures may carry other lines (lscpu excerpts): take the
        # last non-empty line that looks like parameters.
        candidates = [ln.strip() for ln in text.splitlines() if "=" in ln and not ln.strip().endswith(":")
                      and not re.match(r"^\s*[A-Z][\w ()]*:\s", ln)]
        if not candidates:
            raise ParseError("no kernel parameters found (expected name=value words as in /proc/cmdline)")
        line = candidates[-1]
    try:
        words = shell_words(line)  # (a quoted one over base.SHELL_LIMIT is refused: split on blanks)
    except ValueError:
        words = line.split()
    params: dict[str, object] = {}
    seen: dict[str, int] = {}
    for w in words:
        name, eq, value = w.partition("=")
        if not name:
            continue
        seen[name] = seen.get(name, 0) + 1
        params[name] = value if eq else True
    if not params:
        raise ParseError("no kernel parameters found")
    facts: dict[str, object] = {"kernel.cmdline": line, "kernel.params": params}
    limits = []
    for key in ("intel_idle.max_cstate", "processor.max_cstate"):
        v = params.get(key)
        if isinstance(v, str) and v.strip().isdigit():
            limits.append(int(v))
    if limits:
        facts["kernel.max_cstate"] = min(limits)
    if isinstance(params.get("idle"), str):
        facts["kernel.idle"] = params["idle"]
    facts["kernel.mitigations"] = params["mitigations"] if isinstance(params.get("mitigations"), str) else "auto"
    iommu = [f"{k}={params[k]}" if params[k] is not True else k for k in _IOMMU_KEYS if k in params]
    facts["kernel.iommu"] = iommu
    facts["kernel.iommu_passthrough"] = params.get("iommu") == "pt" or params.get("iommu.passthrough") in ("1", "y", "on")
    for key, fact in (("isolcpus", "kernel.isolcpus"), ("nohz_full", "kernel.nohz_full")):
        if isinstance(params.get(key), str):
            facts[fact] = params[key]
    hp = params.get("hugepages")
    if isinstance(hp, str) and hp.isdigit():
        facts["kernel.hugepages"] = int(hp)
    facts["kernel.duplicate_params"] = sorted(k for k, n in seen.items() if n > 1)
    warnings = []
    if "pt" in _all_values(words, "intel_iommu") or "pt" in _all_values(words, "amd_iommu"):
        warnings.append("intel_iommu=pt / amd_iommu=pt is not a valid value: passthrough is iommu=pt")
    facts["kernel.cmdline_warnings"] = warnings
    return facts


def _all_values(words: list[str], key: str) -> list[str]:
    return [w.split("=", 1)[1] for w in words if w.startswith(key + "=")]
