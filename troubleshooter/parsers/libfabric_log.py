"""Libfabric's own log (FI_LOG_LEVEL=warn|info|debug): every provider's warnings in its native line format, and the
cxi provider (HPE Slingshot 11) refusing a process its network credentials.

Its native lines (ofiwg/libfabric src/log.c: 'libfabric:PID:TIMESTAMP:PROVIDER:SUBSYSTEM:FUNCTION():LINE<level> '),
as ai-dynamo/nixl#1609 shows them from an EFA node (the PID and time elided there)::

    libfabric:...:efa:mr:efa_mr_reg_impl():893<warn> Unable to register MR of 1048576 bytes: Bad address, flags 0, ...

Read from those: the providers that logged, their warnings and errors ('efa/mr: Unable to register MR: Bad address'),
and the error text of each memory registration the provider refused (Cannot allocate memory, Bad address): a
registration refused for memory is a locked-memory limit or the NIC's registration limit; one refused for its address
is a GPU buffer the provider could not map (the DMA-BUF path).

Real samples (a Frontier user's notes; lci-project LCI#110 on NCSA DeltaAI; openpmix/prrte#2004; tests/data/libfabric-log)::

    cxip_gen_auth_key failed: -38
    Request dest_addr: 32 caddr.nic: 0X19D1 caddr.pid: 1 rxc_id: 0  error: 0x26c450f0 (err: 5, VNI_NOT_FOUND)

Read (FI_LOG_LEVEL=debug or warn): the code of the cxi provider's failure to build an authorization key for the
process (no VNI and no usable CXI service: -38, -FI_ENOSYS, which fi_domain() then returns as "Function not
implemented"), and the completions the target NIC refused because the sender's VNI is not one it serves
(VNI_NOT_FOUND).

What it means here: Slingshot admits traffic only on the VNIs Slurm's hpe_slingshot switch plugin (or PALS) grants a
job step. A process started outside such a step (mpirun's daemons launched with srun --mpi=none, a single-node step
on a system whose job_vni covers multi-node jobs only, a default CXI service disabled by the site) has no VNI: its
domain cannot open, or its peers drop what it sends.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("libfabric.cxi_auth_key_failed", "number", "", "the error code of the cxi provider's 'cxip_gen_auth_key failed: N' "
     "(-38, -FI_ENOSYS: no VNI or CXI service for the process)"),
    ("libfabric.cxi_vni_not_found", "number", "count", "completions the target NIC refused with VNI_NOT_FOUND (the "
     "sender's VNI is not one it serves)"),
    ("libfabric.providers", "list", "", "providers whose lines the log holds (efa, verbs, tcp, shm, cxi, core ...)"),
    ("libfabric.warnings", "list", "", "the log's warn and error lines as 'provider/subsystem: message', deduplicated, at "
     "most 20"),
    ("libfabric.mr_reg_refused", "list", "", "why the provider refused to register memory ('Unable to register MR: "
     "Cannot allocate memory'): the error text, deduplicated"),
]

# ofiwg/libfabric src/log.c: "%s:%d:%ld:%s:%s:%s():%d<%s> " (prefix, pid, time, provider, subsystem, function, line,
# level); older releases print no pid and time, and people elide them ('libfabric:...:efa:mr:...')
_NATIVE = re.compile(r"^\s*libfabric:((?:[\w;.-]*:){1,6}?)(\w+)\(\):\d+<(\w+)>\s?(.*)$")
_MR_REFUSED = re.compile(r"Unable to register MR(?: of \d+ bytes)?: ([A-Za-z][A-Za-z ]{2,60}?)(?:,|$)")

_AUTH = re.compile(r"cxip_gen_auth_key failed:\s*(-?\d+)")
_VNI = re.compile(r"\berr:\s*\d+,\s*VNI_NOT_FOUND\b")


def _detect(text: str) -> float:
    head = text[:262144]
    if _AUTH.search(head) or _VNI.search(head):
        return 0.85
    # the native lines appear inside other tools' output too (fi_info's, a program's): below those tools' own kinds
    return 0.7 if any(_NATIVE.match(ln) for ln in head.split("\n", 2000)[:2000]) else 0.0


@parser(
    "libfabric-log",
    detect=_detect,
    summary="Libfabric's log (FI_LOG_LEVEL): providers' warnings, memory registrations refused, Slingshot's VNI refusals",
    facts=FACTS,
    command="FI_LOG_LEVEL=warn <the failing launch> 2>&1 | grep -E '^libfabric:|auth_key|VNI'",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "Libfabric's log")
    auth = _AUTH.search(text)
    vni = len(_VNI.findall(text))
    providers: list[str] = []
    warnings: list[str] = []
    refused: list[str] = []
    native = 0
    for ln in text.split("\n")[:500000]:
        m = _NATIVE.match(ln) if len(ln) < 4000 and "libfabric:" in ln else None
        if not m:
            continue
        native += 1
        # the fields before the function: pid, time, a domain's name, provider, subsystem, each may be empty or
        # elided ('...'); the names are the provider and the subsystem (the core's lines name 'core' alone)
        names = [f for f in m.group(1).split(":") if f and f != "..." and not f.isdigit()]
        prov, subsys = (names[-2], names[-1]) if len(names) >= 2 else ((names or ["core"])[-1],) * 2
        level, msg = m.group(3).lower(), m.group(4).strip()
        add_clipped(providers, prov, 20, 60)
        if level in ("warn", "warning", "error", "err"):
            add_clipped(warnings, f"{prov}/{subsys}: {msg}", 20, 300)
        if r := _MR_REFUSED.search(msg):
            add_clipped(refused, r.group(1).strip(), 20, 80)
    if not auth and not vni and not native:
        raise ParseError("no libfabric log line ('libfabric:PID:TIME:PROVIDER:SUBSYSTEM:FUNC():LINE<level> ...'), no "
                         "'cxip_gen_auth_key failed' and no VNI_NOT_FOUND completion: not libfabric's log")
    facts: dict[str, Any] = {}
    if native:
        facts["libfabric.providers"] = providers
        facts["libfabric.warnings"] = warnings
    if refused:
        facts["libfabric.mr_reg_refused"] = refused
    if auth:
        facts["libfabric.cxi_auth_key_failed"] = int(auth.group(1))
    if vni:
        facts["libfabric.cxi_vni_not_found"] = vni
    return facts
