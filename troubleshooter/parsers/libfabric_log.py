"""Libfabric's cxi provider (HPE Slingshot 11) refusing a process its network credentials, in its debug log.

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

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("libfabric.cxi_auth_key_failed", "number", "", "the error code of the cxi provider's 'cxip_gen_auth_key failed: N' "
     "(-38, -FI_ENOSYS: no VNI or CXI service for the process)"),
    ("libfabric.cxi_vni_not_found", "number", "count", "completions the target NIC refused with VNI_NOT_FOUND (the "
     "sender's VNI is not one it serves)"),
]

_AUTH = re.compile(r"cxip_gen_auth_key failed:\s*(-?\d+)")
_VNI = re.compile(r"\berr:\s*\d+,\s*VNI_NOT_FOUND\b")


def _detect(text: str) -> float:
    head = text[:262144]
    return 0.85 if _AUTH.search(head) or _VNI.search(head) else 0.0


@parser(
    "libfabric-log",
    detect=_detect,
    summary="Libfabric's cxi provider (Slingshot) log: no VNI for the process (auth key, VNI_NOT_FOUND)",
    facts=FACTS,
    command="FI_LOG_LEVEL=debug FI_LOG_PROV=cxi <the failing launch> 2>&1 | grep -E 'auth_key|VNI'",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "Libfabric's cxi provider log")
    auth = _AUTH.search(text)
    vni = len(_VNI.findall(text))
    if not auth and not vni:
        raise ParseError("no 'cxip_gen_auth_key failed' line and no VNI_NOT_FOUND completion: not the cxi provider's log")
    facts: dict[str, Any] = {}
    if auth:
        facts["libfabric.cxi_auth_key_failed"] = int(auth.group(1))
    if vni:
        facts["libfabric.cxi_vni_not_found"] = vni
    return facts
