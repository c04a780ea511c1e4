"""cloud-init refusing to configure networking because two interfaces share a MAC address (an IPoIB one among them).

Real sample (Azure's HB/HC/N-series known issues, from a VM's boot log; tests/data/cloud-init)::

    “Starting Network Service...RuntimeError: duplicate mac found! both 'eth1' and 'ib0' have mac”.

Read: the interfaces cloud-init found with one MAC ('duplicate mac found! both X and Y have mac'), as it names them.

What it means here: cloud-init (its network config from the platform's metadata) stops at the duplicate and the
network service does not come up as configured; on Azure's InfiniBand VMs the IPoIB interface and the accelerated
Ethernet VF report the same MAC, so a reboot or an image generalised from such a VM loses its network setup.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("cloudinit.duplicate_mac_ifaces", "list", "", "the interfaces cloud-init found sharing one MAC address ('duplicate "
     "mac found! both 'eth1' and 'ib0' have mac'), as named"),
]

# cloudinit/net/__init__.py: "duplicate mac found! both '%s' and '%s' have mac '%s'"
_DUP = re.compile(r"duplicate mac found! both '([^']{1,32})' and '([^']{1,32})' have mac")


def _detect(text: str) -> float:
    return 0.85 if _DUP.search(text[:262144]) else 0.0


@parser(
    "cloud-init",
    detect=_detect,
    summary="cloud-init's network errors (two interfaces with one MAC, an IPoIB one among them)",
    facts=FACTS,
    command="journalctl -b -u cloud-init --no-pager | tail -50   (or /var/log/cloud-init.log)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "cloud-init's log")
    ifaces: list[str] = []
    for m in _DUP.finditer(text):
        for name in m.groups():
            if name not in ifaces and len(ifaces) < 16:
                ifaces.append(name)
    if not ifaces:
        raise ParseError("no 'duplicate mac found! both ... have mac' line: not cloud-init's network error")
    return {"cloudinit.duplicate_mac_ifaces": ifaces}
