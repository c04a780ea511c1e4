"""Libfabric's ``fi_info``: the providers, fabrics and domains Libfabric can open here (AWS EFA's documented check is
``fi_info -p efa -t FI_EP_RDM``), or the error it prints when none matches the query.

Real samples (a p4d.24xlarge guide's ``fi_info -p efa -t FI_EP_RDM``, abridged; aws/aws-ofi-nccl#1020 in a
container started without ``/dev/infiniband``; ofiwg/libfabric#12708 in a Kubernetes pod)::

    provider: efa
        fabric: EFA-fe80::10d8:baff:fec9:6c1
        domain: rdmap16s27-rdm
        version: 111.20
        type: FI_EP_RDM
        protocol: FI_PROTO_EFA

    $ fi_info -p efa
    -61

    fi_getinfo: -61 (No data available)

What it means: each ``provider:`` block (one ``fi_info:`` struct after ``---`` with ``-v``) is an endpoint type
Libfabric can open on a domain, one domain per EFA or verbs device (``rdmap16s27-rdm`` is the RDM endpoint of
device rdmap16s27). When nothing matches the query, util/info.c prints ``fi_getinfo: -61`` (since libfabric 1.18
with the error text, ``(No data available)``; some builds print the bare number): -61 is -FI_ENODATA, no provider
matched. For ``-p efa`` or ``-p verbs`` that means Libfabric opened no RDMA device here: on a host without EFA, or
inside a container that was not given ``/dev/infiniband`` (the uverbs nodes the EFA provider opens), and NCCL's
OFI plugin then finds no provider either. ``fi_info -l`` lists the providers built in, devices or not.
``FI_LOG_LEVEL`` lines (``libfabric:<pid>:...``) are Libfabric's log, not the listing, and are skipped.

>>> parse("provider: efa\\n    fabric: efa\\n    domain: rdmap16s27-rdm\\n    version: 120.10\\n"
...       "    type: FI_EP_RDM\\n    protocol: FI_PROTO_EFA\\n")["libfabric.efa_rdm"]
True
>>> parse("$ fi_info -p efa\\n-61\\n")
{'libfabric.no_provider': True, 'libfabric.getinfo_code': -61, 'libfabric.query_provider': 'efa'}
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("libfabric.providers", "list", "", "the distinct providers fi_info listed (efa, efa;ofi_rxd, verbs;ofi_rxm ...), sorted"),
    ("libfabric.domains", "list", "", "the distinct domains listed, in order (rdmap16s27-rdm: the RDM endpoint of EFA device rdmap16s27)"),
    ("libfabric.fabrics", "list", "", "the distinct fabrics listed, in order (efa, efa-direct, or EFA-<link-local address> in older EFA providers)"),
    ("libfabric.entries", "list", "", "each fi_info entry: {provider, fabric, domain, version, type, protocol}, as printed ('' where not shown; at most 256)"),
    ("libfabric.efa_rdm", "bool", "", "the listing has an EFA provider endpoint of type FI_EP_RDM (what NCCL's OFI plugin uses on EFA)"),
    ("libfabric.no_provider", "bool", "", "fi_info found no provider for its query (fi_getinfo -61, -FI_ENODATA) and listed none; false "
     "when it listed at least one; absent when it printed neither"),
    ("libfabric.getinfo_code", "number", "", "the negative code fi_getinfo returned, as fi_info printed it (-61: no provider matched)"),
    ("libfabric.query_provider", "string", "", "the provider the pasted command line asked for (fi_info -p efa), when the paste shows it"),
    ("libfabric.registered_providers", "list", "", "the providers built into this Libfabric (fi_info -l), whether or not a device is there for them"),
    ("libfabric.efa_provider_release", "number", "", "the EFA provider's version before its dot, which follows Libfabric's release since 1.11 (118 in 'version: 118.20' = Libfabric 1.18; EFA installers before 1.29 ship 118 or older); absent without an efa entry"),
    ("libfabric.device_open_errnos", "list", "", "errno of each 'ibv_open_device failed! errno: N' Libfabric's EFA provider logged (FI_LOG_LEVEL=warn): 2 (ENOENT) is a verbs device listed in sysfs whose /dev/infiniband node is not there"),
    ("libfabric.efa_device_errors", "list", "", "err of each 'efa_device_construct_gid failed for device_idx N, err=E' (before Libfabric 2.2 the EFA provider gives up on every device at the first)"),
]

_PROVIDER = re.compile(r"^provider:\s*(\S+)\s*$")
_SHORT_FIELD = re.compile(r"^\s+(fabric|domain|version|type|protocol):\s*(.*\S|)\s*$")
_NESTED = re.compile(r"^( *)(\w+):\s*(.*\S|)\s*$")  # the verbose form: 'key: value' or a 'section:' header, by indent
_GETINFO = re.compile(r"^\s*(?:fi_getinfo:\s*)?(-\d{1,5})(?:\s*\(([^)]{0,200})\))?\s*$")
_COMMAND = re.compile(r"(?:^|[\s/$#>])fi_info(?:\s|$)(.*)$")
_QUERY = re.compile(r"(?:^|\s)(?:-p|--provider)(?:\s+|=)([\w;.-]+)")
_LOG = re.compile(r"^libfabric:")
_OPEN_FAILED = re.compile(r"ibv_open_device failed! errno: (\d+)")
_GID_FAILED = re.compile(r"efa_device_construct_gid failed for device_idx \d+, err=(-?\d+)")
_KNOWN = r"(?:efa|verbs|tcp|udp|shm|sm2|sockets|psm[23]|opx|cxi|usnic|ucx|lnx|net|ofi_\w+)"
_LISTED = re.compile(rf"^({_KNOWN}(?:;{_KNOWN})*):\s*$")
MAX_LINE = 4000
MAX_ENTRIES = 256
_FIELDS = ("provider", "fabric", "domain", "version", "type", "protocol")
# the verbose form's (section, key) -> the short form's field
_VERBOSE = {("fi_ep_attr", "type"): "type", ("fi_ep_attr", "protocol"): "protocol",
            ("fi_domain_attr", "name"): "domain",
            ("fi_fabric_attr", "name"): "fabric", ("fi_fabric_attr", "prov_name"): "provider",
            ("fi_fabric_attr", "prov_version"): "version"}


def _detect(text: str) -> float:
    head = text[:262144]
    if re.search(r"^provider: \S+\n\s+fabric: ", head, re.MULTILINE):
        return 0.95
    if re.search(r"^fi_info:\n\s+caps: \[", head, re.MULTILINE):
        return 0.95
    if re.search(r"^fi_getinfo: -\d+", head, re.MULTILINE):
        return 0.9
    if len(re.findall(rf"^{_KNOWN}(?:;{_KNOWN})*:\n {{4}}version: \d+\.\d+$", head, re.MULTILINE)) >= 2:
        return 0.8  # fi_info -l
    return 0.0


def _uniq(values: list[str]) -> list[str]:
    """The non-empty values, each once, in the order first seen."""
    return list(dict.fromkeys(v for v in values if v))


class _Reader:
    def __init__(self) -> None:
        self.entries: list[dict[str, str]] = []
        self.cur: dict[str, str] | None = None
        self.stack: list[tuple[int, str]] = []  # the verbose form's open sections: (indent, name)
        self.listed: list[str] = []  # fi_info -l
        self.code: int | None = None
        self.query: str | None = None
        self.open_errnos: list[int] = []
        self.gid_errors: list[int] = []

    def start(self) -> None:
        self.cur = None
        if len(self.entries) < MAX_ENTRIES:
            self.cur = dict.fromkeys(_FIELDS, "")
            self.entries.append(self.cur)

    def verbose(self, line: str) -> bool:
        m = _NESTED.match(line)
        if not m:
            return False
        indent, key, value = len(m.group(1)), m.group(2), m.group(3)
        while self.stack and self.stack[-1][0] >= indent:
            self.stack.pop()
        if not value:
            if indent == 0 and key == "fi_info":
                self.start()
            self.stack.append((indent, key))
            return True
        if self.stack and self.stack[0][1] == "fi_info":
            field = _VERBOSE.get((self.stack[-1][1], key))
            if field and self.cur is not None:
                self.cur[field] = value
            return True
        return False

    def line(self, line: str) -> None:
        m = _OPEN_FAILED.search(line) or _GID_FAILED.search(line)
        if m:  # the provider's own warnings (FI_LOG_LEVEL=warn), under any logger's prefix
            (self.open_errnos if m.re is _OPEN_FAILED else self.gid_errors).append(int(m.group(1)))
            return
        if _LOG.match(line):
            return
        m = _COMMAND.search(line)
        if m and self.query is None and not self.entries:
            q = _QUERY.search(m.group(1))
            self.query = q.group(1) if q else ""
            return
        m = _GETINFO.match(line)
        if m:
            self.code = int(m.group(1))
            return
        m = _PROVIDER.match(line)
        if m:
            self.stack = []
            self.start()
            if self.cur is not None:
                self.cur["provider"] = m.group(1)
            return
        m = _SHORT_FIELD.match(line)
        if m and self.cur is not None and not self.stack:
            self.cur[m.group(1)] = m.group(2)
            return
        m = _LISTED.match(line)
        if m and not self.entries:
            self.listed.append(m.group(1))
            self.stack = []
            return
        if line.strip() == "---":
            self.stack = []
            return
        self.verbose(line)


@parser(
    "fi-info",
    detect=_detect,
    summary="fi_info (Libfabric): the providers, fabrics and domains it can open (EFA, verbs ...), or fi_getinfo -61",
    facts=FACTS,
    command="fi_info -p efa -t FI_EP_RDM (/opt/amazon/efa/bin/fi_info on AWS), inside the job's container",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "fi_info output ('provider: efa' blocks, or 'fi_getinfo: -61')")
    rd = _Reader()
    for raw in text.split("\n"):
        if len(raw) <= MAX_LINE:
            rd.line(raw.rstrip())
    # (a lone 'provider: x' line is not an entry)
    entries = [e for e in rd.entries if e["provider"] and (e["fabric"] or e["domain"])]
    facts: dict[str, Any] = {}
    if entries:
        facts["libfabric.providers"] = sorted(_uniq([e["provider"] for e in entries]))
        facts["libfabric.domains"] = _uniq([e["domain"] for e in entries])
        facts["libfabric.fabrics"] = _uniq([e["fabric"] for e in entries])
        facts["libfabric.entries"] = entries
        if any(e["type"] for e in entries):
            facts["libfabric.efa_rdm"] = any(e["provider"] == "efa" and e["type"] == "FI_EP_RDM" for e in entries)
        facts["libfabric.no_provider"] = False
        efa = [e["version"].split(".")[0] for e in entries if e["provider"] == "efa" and e["version"]]
        if efa and efa[0].isdigit():
            facts["libfabric.efa_provider_release"] = int(efa[0])
    elif rd.code == -61:
        facts["libfabric.no_provider"] = True
    if rd.code is not None:
        facts["libfabric.getinfo_code"] = rd.code
    if rd.listed and not entries:
        facts["libfabric.registered_providers"] = _uniq(rd.listed)
    if not facts:  # (Libfabric's own log lines alone are not fi_info's answer)
        raise ParseError("no 'provider:' block, verbose 'fi_info:' entry, provider list or 'fi_getinfo: -61' line: "
                         "this is not fi_info output")
    if rd.open_errnos:
        facts["libfabric.device_open_errnos"] = rd.open_errnos
    if rd.gid_errors:
        facts["libfabric.efa_device_errors"] = rd.gid_errors
    if rd.query:
        facts["libfabric.query_provider"] = rd.query
    return facts
