"""NCCL's own log (``NCCL_DEBUG=INFO``): which network NCCL really used, with which HCAs, plugin and topology.

Real sample (on-prem RoCE node where a stray aws-ofi-nccl plugin is loaded, fails, and NCCL falls back to
its internal IB transport; from ../shared/corpus/nccl-debug)::

    tpgds-aihub0008:207007:207007 [0] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v6)
    tpgds-aihub0008:207007:207007 [0] NCCL INFO Successfully loaded external plugin libnccl-net.so
    tpgds-aihub0008:207008:207008 [1] NCCL INFO NET/OFI Invalid type of PCI bus returned 0
    tpgds-aihub0008:207008:207008 [1] NCCL INFO plugin/net.cc:118 -> 2
    tpgds-aihub0008:207008:207008 [1] NCCL INFO NCCL_IB_HCA set to mlx5_0,mlx5_1,mlx5_2,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_11
    tpgds-aihub0008:207008:207008 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ... [RO]; OOB enp25s0np0:10.99.91.63<0>
    tpgds-aihub0008:207008:207008 [1] NCCL INFO Using network IB

Lines are ``host:pid:tid [cudaDev] NCCL INFO|WARN message`` (WARN lines carry ``file.cc:line`` before
``NCCL``), possibly behind a launcher's tag (``MLVM2: ``, ``[1,0]<stdout>:``), indented, and interleaved
with the application's own output. What matters for speed:

- ``Using network Socket`` (``nccl.socket_fallback``): inter-node traffic over TCP, typically 5-20x
  slower than RDMA. Causes: no ``/dev/infiniband`` in the container (``NET/IB : No device found.``),
  ``NCCL_IB_HCA`` matching nothing, ``NCCL_IB_DISABLE=1``.
- the net plugin: on AWS EFA the aws-ofi-nccl (Libfabric) plugin must load; elsewhere a stray plugin
  can load and fail (``nccl.net_plugin_failed``) before NCCL falls back.
- ``NET/IB : Using [0]mlx5_0:1/IB ...``: the HCAs NCCL uses (``nccl.hcas``); a RoCE or bonded port
  mixed into an IB list (``nccl.hca_transports``) drags every ring to the slowest rail.
- ``NCCL_TOPO_FILE set by environment to ...`` / ``Loading topology file``: whether the topology file
  reached this process (case 4); a parse warning (``XML Parse``) or ``Could not open XML topology
  file`` means NCCL ran on autodetection.
- channel and tree counts, ``Init COMPLETE``, and WARN lines with completion errors (``error 12``:
  transport retry exceeded, a fabric problem) or internal errors.

Facts that the log does not show are omitted (an excerpt without a ``Using network`` line has no
``nccl.net``, unless the channel lines say ``via NET/IB/...``).
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import chain
from typing import Any, Iterable

from troubleshooter.parsers._nccl_facts import (FACTS, MAX_WARNINGS, VERSION, count_ib_channel, ib_channel_facts, link_devices,
                                                mask_cpus)
from troubleshooter.parsers._nccl_plugin import (_LOADED_PLUGIN, _NAMED_PLUGIN_MISSING, _NET_NOT_FOUND, _OFI_INIT_FAIL,
                                                 _OFI_NO_PROVIDER, _P2P_PLUGIN, _PLUGIN_ABSENT, _PLUGIN_BY_ENV,
                                                 _PLUGIN_FAIL, _PLUGIN_LOAD_CUT, _PLUGIN_LOAD_ERR)
from troubleshooter.parsers.base import STREAMS, ParseError, clip, parser, require_text, to_number
from troubleshooter.parsers.cuda_errors import codes_in_nccl_lines

MAX_ERRORS = 20
MAX_TEXT = 300
MAX_HOSTS = 10000  # distinct host names kept (a job's hosts; garbage cannot grow the set past this)

# host:pid:tid [dev] [file.cc:line] NCCL LEVEL message; NCCL before 2.4 printed no "NCCL" word
# ("e66aa18dc444:3171:3171 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]")
_PREFIXED = re.compile(
    r"(?<![\w.\-])(?P<host>[\w.\-]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] (?:(?P<loc>\S+:\d+) )?(?:NCCL )?(?P<lvl>INFO|WARN|TRACE)\b ?(?P<msg>.*)$"
)
_BARE = re.compile(r"(?:^|\s)(?:(?P<loc>\S+\.\w+:\d+) )?NCCL (?P<lvl>INFO|WARN)\b ?(?P<msg>.*)$")
# a line quoted back without its prefix and without the "NCCL" word ("INFO NET/Socket : Using"): read only
# when the message is one NCCL's own subsystems print
_OLD_PREFIX_HINT = re.compile(r":\d+:\d+ \[\d+\] ")
_BARE_OLD = re.compile(
    r"^[^\S\n]*(?:(?P<loc>\S+\.\w+:\d+) )?(?P<lvl>INFO|WARN) (?P<msg>(?:NET/|Bootstrap ?:|Channel \d|Ring \d|Trees \[|"
    r"Using network|NCCL_[A-Z_]+ set|comm 0x|Connected all|Init COMPLETE|GPU Direct RDMA).*)$")
# a line of an interface or HCA list that a ticket or a quoted reply re-wrapped: "[3]br-dd40dc616638:172.30.0.1<0>"
_LIST_CONT = re.compile(r"^[^\S\n]*(?:\[\d+\][^\s\[\]]+\s*)+$")
_LIST_CONT_ANY = re.compile(r"^[ \t]*\[\d+\][^\s\[\]]+", re.MULTILINE)  # a line that may be such a piece
MAX_JOINED = 65536
_USING_NET = re.compile(r"^Using (?:internal )?[Nn]etwork (.(?:.*\S)?)\s*$")
_ASSIGNED = re.compile(r"^Assigned NET plugin (.+?) to comm")
_VIA_NET = re.compile(r"via NET/([A-Za-z]\w*)(?:/\d+)?(/GDRDMA)?")
_IB_USING = re.compile(r"^NET/IB\s*:\s*Using\s+(.*)$")
_HCA = re.compile(r"\[\d+\]([^\s:\[\]]+):(\d+)/(\w+)")
_ENV_SET = re.compile(r"\b(NCCL_[A-Z0-9_]+) set (?:by environment )?to (.*\S|)\s*$")
_TOPO_LOADING = re.compile(r"Loading topology file (\S+)")
_TOPO_OPEN_FAIL = re.compile(r"Could not open XML topology file (\S+)\s*:\s*(.*)$")
_COLL_CHANNELS = re.compile(r"^(\d+) coll channels")
_RING_PRINT = re.compile(r"^(?:Channel|Ring) (\d+)(?:/(\d+))? :\s+(\d+(?:\s+\d+)*)\s*$")
_RING_CONN = re.compile(r"^Ring (\d+) : \d+")
_TREES = re.compile(r"^Trees (\[\d+\].*)$")
_SYSTEM = re.compile(r"=== System : maxBw ([\d.]+) totalBw ([\d.]+) ===")
_PCI_LINK = re.compile(r"\+ PCI\[([\d.]+)\] - ")
_NRANKS = re.compile(r"\bnranks (\d+)", re.IGNORECASE)
_ERROR = re.compile(
    r"Got completion from peer.*with (?:error|status=)|completion error|with error \d+, opcode|"
    r"unhandled (?:system|cuda) error|internal error|remote process exited|"
    r"ncclSystemError|ncclInternalError|ncclUnhandledCudaError|ncclRemoteError|ncclInvalidUsage",
    re.IGNORECASE,
)
_TESTS_TABLE = re.compile(
    r"^[^\S\n]*+(?:#\s*)?(?:Avg bus bandwidth|size\s+count\s+type|nThread\s+\d+\s+nGpus|Out of bounds values)", re.MULTILINE
)
# "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)", "... for HCA mlx5_0 (no peermem)",
# "NET/IB : GPU Direct RDMA (DMABUF) enabled for HCA 0 'rocep1s0f0'"
_GDR = re.compile(r"GPU Direct RDMA (?:\(\w+\) )?(Disabled|Enabled|disabled|enabled) for HCA (?:\d+ )?'?([\w.\-]+)'?")
_IFACE = re.compile(r"\[\d+\]([\w.\-]+?)(?::|\.?<)")  # "[0]eth0:10.0.0.1<0>", a redacted "[0]ib0.<ip>"
_OLD_IFACE = re.compile(r"Using interface ([\w.\-]+)[:\s]")
_BOOT_IFACE = re.compile(r"Using ([\w.\-]+):")
_ANY_NCCL = re.compile(r"NCCL (?:INFO|WARN)\b")
_TRAILING_DOT = re.compile(r"-?\d+\.")
_TREE_IDX = re.compile(r"\[(\d+)\]")
_INIT_FAILED = re.compile(r"^init\.cc:\d+ -> [1-9]")
_BOOTSTRAP_FAILED = re.compile(r"^bootstrap\.cc:\d+ -> [1-9]")
_OOB_IFACE = re.compile(r";\s*OOB ([\w.\-]+):")
_SCROLLBACK = re.compile(r"(?<!\s)\s{2,}\[\d+/\d+\]$")
_WARN_LOC = re.compile(r"^\S+\.cc:\d+ -> \d+")
_NO_IFACE = re.compile(r"no socket interface found|no usable listening interface|Socket creation failed|"
                       r"NET/Socket\s*:\s*no interface found|Bootstrap\s*:\s*no (?:usable )?interface", re.IGNORECASE)
_XML_OR_TOPO = re.compile(r"\bXML\b|topology file", re.IGNORECASE)


_OLD_LINE = re.compile(r"^[^\S\n]*(?:[\w.\-]+:\d+:\d+ \[\d+\] (?:\S+:\d+ )?(?:INFO|WARN) |(?:INFO|WARN) (?:NET/|Bootstrap ?:)|"
                       r"[\w./\-]+\.(?:cc|cu|h|c|cpp):\d+ WARN |(?:Duplicate GPU detected : |Error: )?rank \d+ and rank \d+ both on CUDA |"
                       r"NCCL_[A-Z0-9_]+ set by environment to \S)",
                       re.MULTILINE)
# NCCL's WARN messages distinctive enough to be read when quoted with neither prefix nor level
_BARE_WARN_TEXT = re.compile(r"^(?P<lvl>WARN) (?P<loc>)(?:Error: )?(?P<msg>(?:Duplicate GPU detected : )?rank \d+ and rank \d+ both on "
                             r"CUDA device .*)$")
_LAUNCH_TAG = re.compile(r"^\[[\w.|:-]{1,64}\]:\s*")  # "[trainer0|0]:", "[rank3]:" before a line
_BARE_ENV_TEXT = re.compile(r"^(?P<lvl>INFO) (?P<loc>)(?P<msg>NCCL_[A-Z0-9_]+ set by environment to \S.*)$")
# an old WARN quoted without its host:pid:tid prefix keeps NCCL's source location ("include/socket.h:344 WARN
# Socket creation failed : ..."): the location is NCCL's, so any message is read
_BARE_OLD_LOC = re.compile(r"^[^\S\n]*(?P<loc>[\w./\-]+\.(?:cc|cu|h|c|cpp):\d+) (?P<lvl>WARN|INFO) (?P<msg>.*)$")


_IFACE_PIECE = re.compile(r"^[^\S\n]*\[\d+\][\w.\-]+:\S+<\d+>\s*$", re.MULTILINE)


def _detect(text: str) -> float:
    head = text[:262144]
    n = len(_ANY_NCCL.findall(head)) + len(_OLD_LINE.findall(head))
    if n:  # the pieces of a re-wrapped interface list ("[3]br-dd40dc616638:172.30.0.1<0>") are NCCL's too
        n += len(_IFACE_PIECE.findall(head))
    if n >= 5:
        score = 0.9
    elif n >= 2:
        score = 0.8
    elif n == 1:
        score = 0.6
    elif VERSION.search(head):
        score = 0.4
    else:
        return 0.0
    if _TESTS_TABLE.search(head):
        # an nccl-tests run with NCCL_DEBUG=INFO: the nccl-tests parser owns it
        score = min(score, 0.5)
    return score


def _clip(s: str) -> str:
    return clip(s, MAX_TEXT)


# "Setting affinity for GPU 0 to ff", "... to ffffffff,00000000,ffffffff" (32-bit groups, most significant first);
# recent releases print a CPU list instead: "... to 0-23,48-71"
_AFFINITY = re.compile(r"Setting affinity for GPU (\d+) to ([0-9a-fA-F]+(?:[,-][0-9a-fA-F]+)*)\s*$")


def _is_continuation(line: str) -> bool:
    """The tail of a WARN message that the paste (or the message's own newline) wrapped onto a new line."""
    s = line.strip()
    return 0 < len(s) <= 60 and "NCCL" not in s and not _PREFIXED.search(s) and not s.startswith(("#", "["))


@parser(
    "nccl-debug",
    detect=_detect,
    summary="NCCL_DEBUG=INFO log: network, plugin, HCAs, topology file, channels, warnings",
    facts=FACTS,
    command="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV,GRAPH <your job> 2>&1 | tee nccl.log",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "an NCCL_DEBUG=INFO log")
    # the re-wrapped list pieces are rare: a log without any is read without the joining pass over every line
    return parse_stream(text.splitlines(), rewrapped=_LIST_CONT_ANY.search(text) is not None)


def _join_wrapped(lines: Iterable[str]) -> Iterable[str]:
    """Lines with the pieces of a re-wrapped interface or HCA list ("INFO NET/Socket : Using" then one
    "[0]bond0:192.168.1.161<0>" per line) put back on the line they belong to; every other line as it is."""
    pending: str | None = None
    for ln in lines:
        if pending is not None and "]" in ln and "Using" in pending and _LIST_CONT.match(ln) and len(pending) < MAX_JOINED:
            pending = f"{pending.rstrip()} {ln.strip()}"
            continue
        if pending is not None:
            yield pending
        pending = ln
    if pending is not None:
        yield pending


_END = object()  # marks the two places after the last line in parse_stream's look-ahead


def parse_stream(lines: Iterable[str], rewrapped: bool = True) -> dict[str, Any]:
    """:func:`parse` over an iterable of lines (a file of any size), in bounded memory: the same facts.

    Memory does not grow with the log: counters, distinct values (nets, HCAs, NCCL_* variables, ring and
    tree indices, at most :data:`MAX_HOSTS` hosts), at most :data:`MAX_WARNINGS` warnings and
    :data:`MAX_ERRORS` errors; channel, rank and PCI figures are kept as their max/min only.
    """
    version = None
    nets: Counter[str] = Counter()
    via_nets: Counter[str] = Counter()
    via_ib_gdr = [0, 0, 0]  # channels over NET/IB without and with /GDRDMA; receiving ones without
    via_local = [0, 0]  # channels through host shared memory (SHM/...), through peer-to-peer (P2P/...)
    local_devs: dict[tuple[str, str], set[str]] = {}  # (host, device) -> ranks NCCL joined there by P2P/SHM
    hcas: list[str] = []
    hca_transports: dict[str, str] = {}
    saw_ib_using = saw_socket_using = saw_ofi = False
    ib_no_device = ibverbs_missing = ofi_no_provider = False
    no_iface = False
    warn_sites: list[str] = []
    gdr_disabled: list[str] = []
    gdr_enabled = False
    socket_ifs: list[str] = []
    plugin = None
    p2p_plugin = None
    plugin_failed = ofi_init_failed = False
    plugin_absent = False
    plugin_requested = False
    env: dict[str, str] = {}
    topo_loading = None
    topo_error = None
    max_channels: int | None = None
    ring_ids: set[int] = set()
    ring_conn_ids: set[int] = set()
    tree_ids: set[int] = set()
    max_nranks: int | None = None
    affinity: dict[str, list[str]] = {}
    system_bw: tuple[float, float] | None = None
    min_pci_bw: float | None = None
    hosts: set[str] = set()
    init_start = init_complete = init_failed = bootstrap_failed = False
    warnings: list[str] = []
    errors: list[str] = []
    nccl_lines = 0
    blank = True

    # each line is read with the two after it (a WARN message's wrapped tail), without a window object per line
    ahead1: Any = _END
    ahead2: Any = _END
    for incoming in chain(_join_wrapped(lines) if rewrapped else lines, (_END, _END)):
        raw, ahead1, ahead2 = ahead1, ahead2, incoming
        if raw is _END:
            continue
        if blank and raw.strip():
            blank = False
        # cheap substring tests gate the regular expressions: a log is mostly lines none of them match
        if "NCCL" not in raw:
            # NCCL < 2.4's lines, or one quoted back without its prefix: the level is a word of its own ("INFO "),
            # which a job's logger lines ("INFO:megatron...", "[INFO]") are not
            if "INFO " in raw or "WARN " in raw:  # the level as a word of its own (checked below), no lstrip() copy
                line = raw.rstrip()
                vm = m = None
                # gates first: a job log's own "INFO" lines are many, and a prefix search over each is not cheap
                hint = _OLD_PREFIX_HINT.search(line) if "] " in line else None
                if hint is not None:
                    m = _PREFIXED.match(line) or _PREFIXED.search(line, max(0, hint.start() - 256))
                    if m and len(hosts) < MAX_HOSTS:
                        hosts.add(m.group("host"))
                if m is None:
                    words = line.split(None, 2)
                    if words and (words[0] in ("INFO", "WARN") or (len(words) > 1 and words[1] in ("INFO", "WARN"))):
                        m = _BARE_OLD.match(line) or _BARE_OLD_LOC.match(line)
            elif "rror" not in raw and "both on CUDA" not in raw:
                continue  # a job's own line: two substring tests, the common case of a job log
            elif "Last error:" in raw:
                # NCCL's last WARN as a framework re-raises it: on this line, or alone on the next
                last = raw.split("Last error:", 1)[1].strip()
                if not last and ahead1 is not _END:
                    last = _LAUNCH_TAG.sub("", ahead1.strip(), count=1).strip()
                if last and not last.startswith(("Traceback", "File ", "Exception raised")):
                    w = _clip(last)
                    if w not in warnings and len(warnings) < MAX_WARNINGS:
                        warnings.append(w)
                continue
            elif "both on CUDA device" in raw:
                # NCCL's WARN text quoted alone (no prefix, no level), or its core retold ("Error: rank 27 and rank
                # 19 both on CUDA device 53000"): distinctive enough to read as that WARN
                m = _BARE_WARN_TEXT.match("WARN " + raw.strip())
                line = raw.rstrip()
                vm = None
            elif "Error" not in raw or ("ncclInternalError" not in raw and "ncclSystemError" not in raw):
                continue  # neither prefix pattern, no error pattern, no version can match
            else:
                line = raw.rstrip()
                vm = m = None
        else:
            line = raw.rstrip()
            vm = VERSION.search(line) if "NCCL version" in line else None
            if vm and version is None:
                version = vm.group(1)
            # both line patterns need "NCCL INFO" / "NCCL WARN" ("NCCL TRACE"): other lines naming NCCL (a job's
            # ProcessGroupNCCL warnings, TORCH_NCCL_* variables) skip the expressions
            if "NCCL INFO" in line or "NCCL WARN" in line:
                m = _PREFIXED.match(line) or _PREFIXED.search(line)  # match: the usual line starts with its host
                if m:
                    if len(hosts) < MAX_HOSTS:
                        hosts.add(m.group("host"))
                else:
                    m = _BARE.search(line)
            elif "NCCL TRACE" in line:
                m = _PREFIXED.match(line) or _PREFIXED.search(line)
                if m and len(hosts) < MAX_HOSTS:
                    hosts.add(m.group("host"))
            elif " set by environment to " in line:
                m = _BARE_ENV_TEXT.match("INFO " + line.strip())  # "NCCL_P2P_LEVEL set by environment to LOC" quoted alone
            else:
                m = None
        if not m:
            if "rror" in line and ("NCCL error" in line or "ncclInternalError" in line or "ncclSystemError" in line):
                if _ERROR.search(line) and len(errors) < MAX_ERRORS:
                    e = _clip(line)
                    if e not in errors:
                        errors.append(e)
            if vm:
                nccl_lines += 1
            continue
        nccl_lines += 1
        msg = m.group("msg").strip()
        # drop a terminal scrollback marker glued to the end ("... 512/640/512      [22/1819]")
        if msg.endswith("]"):
            msg = _SCROLLBACK.sub("", msg)
        low = msg.lower()
        err = ("error" in low or "exited" in low or "status=" in low) and _ERROR.search(msg)
        if m.group("lvl") == "WARN":
            loc = m.group("loc")
            if loc:
                site = loc.rsplit(":", 1)[0]
                if site not in warn_sites and len(warn_sites) < MAX_WARNINGS:
                    warn_sites.append(site)
            for nxt in (ahead1, ahead2):
                if nxt is _END or not _is_continuation(nxt):
                    break
                msg = f"{msg} {nxt.strip()}"
            w = _clip(msg)
            if w not in warnings and len(warnings) < MAX_WARNINGS:
                warnings.append(w)
            if err and w not in errors and len(errors) < MAX_ERRORS:
                errors.append(w)
            if topo_error is None and (("xml" in low or "topology file" in low) and _XML_OR_TOPO.search(msg)
                                       or (loc and loc.startswith("graph/xml."))):
                topo_error = w  # a WARN from NCCL's XML reader is about the topology (or graph) file it read
        elif err and not _WARN_LOC.match(msg):
            e = _clip(msg)
            if e not in errors and len(errors) < MAX_ERRORS:
                errors.append(e)

        c = msg[:1]  # the tests below gate on the message's first character where the pattern is anchored
        if c == "U":
            u = _USING_NET.match(msg)
            if u:
                nets[u.group(1)] += 1
        vpos = msg.find("via ")
        v = _VIA_NET.search(msg, vpos) if vpos >= 0 and "via NET/" in msg else None
        if vpos >= 0 and v is None:
            link_devices(m.groupdict().get("host") or "", msg, local_devs)
            if msg.startswith("SHM", vpos + 4):
                via_local[0] += 1
            elif msg.startswith("P2P", vpos + 4):
                via_local[1] += 1
        if v:
            via_nets[v.group(1)] += 1
            if v.group(1) == "IB":
                count_ib_channel(via_ib_gdr, bool(v.group(2)), "[receive]" in msg)
        if c == "N" and msg.startswith("NET/"):
            ib = _IB_USING.match(msg) if msg.startswith("NET/IB") else None
            if ib:
                saw_ib_using = True
                for dev, port, kind in _HCA.findall(ib.group(1).split(";")[0]):
                    key = f"{dev}:{port}"
                    if key not in hca_transports:
                        hcas.append(key)
                    hca_transports[key] = kind
                oob = _OOB_IFACE.search(msg) if "OOB" in msg else None  # the IB transport's socket side
                if oob and oob.group(1) not in socket_ifs and len(socket_ifs) < 64:
                    socket_ifs.append(oob.group(1))
            if msg.startswith("NET/Socket") and "Using" in msg:
                saw_socket_using = True
            if msg.startswith("NET/OFI"):
                saw_ofi = True
                ofi_no_provider = ofi_no_provider or bool(_OFI_NO_PROVIDER.search(msg))
                ofi_init_failed = ofi_init_failed or bool(_OFI_INIT_FAIL.search(msg))
            if msg.startswith("NET/IB : No device found") or msg.startswith("NET/IB: No device found"):
                ib_no_device = True
            if "GPU Direct RDMA" in msg and not msg.startswith("NET/Socket"):  # sockets have no GDR to lose
                g = _GDR.search(msg)
                if g and g.group(1).lower() == "disabled":
                    if g.group(2) not in gdr_disabled and len(gdr_disabled) < 64:
                        gdr_disabled.append(g.group(2))
                elif g:
                    gdr_enabled = True
            if msg.startswith("NET/Socket") and "Using" in msg:
                for iface in _IFACE.findall(msg):
                    if iface not in socket_ifs and len(socket_ifs) < 64:
                        socket_ifs.append(iface)
        if c == "N" and "Using interface" in msg:
            # NCCL < 2.4: "NET : Using interface eth0:10.0.0.1<0>", "NET/IB : Using interface ib0 for sideband communication"
            for iface in _OLD_IFACE.findall(msg):
                if iface not in socket_ifs and len(socket_ifs) < 64:
                    socket_ifs.append(iface)
        if c == "B" and msg.startswith("Bootstrap") and "Using" in msg:
            for iface in _IFACE.findall(msg) or _BOOT_IFACE.findall(msg):
                if iface not in socket_ifs and len(socket_ifs) < 64:
                    socket_ifs.append(iface)
        if "Failed to open libibverbs" in msg:
            ib_no_device = ibverbs_missing = True
        if not no_iface and m.group("lvl") == "WARN" and ("nterface" in msg or "Socket creation" in msg) \
                and _NO_IFACE.search(msg):
            no_iface = True

        if "plugin" in low or "libnccl-net" in low or "internal" in low or "dlerror" in low:
            lp = _LOADED_PLUGIN.search(msg)
            if lp and "collnet" not in low:
                plugin = lp.group(1)
            pp = _P2P_PLUGIN.match(msg)
            if pp:
                p2p_plugin = pp.group(1)
            if (_PLUGIN_BY_ENV.search(msg) and msg.startswith("NET/Plugin")) or _NAMED_PLUGIN_MISSING.search(msg):
                plugin_requested = True
            if _PLUGIN_ABSENT.search(msg):
                plugin_absent = True
            if _PLUGIN_LOAD_ERR.search(msg):
                if "No such file or directory" in msg or "cannot open shared object file" in msg:
                    plugin_absent = True
                elif not _PLUGIN_LOAD_CUT.search(msg):
                    plugin_failed = True
            if _PLUGIN_FAIL.search(msg):
                plugin_failed = True

        if "not found" in msg and _NET_NOT_FOUND.search(msg):
            plugin_failed = True  # the network NCCL_NET asks for: its plugin did not load
        e = _ENV_SET.search(msg) if " set " in msg else None
        if e:
            value = e.group(2)
            if _TRAILING_DOT.fullmatch(value):
                value = value[:-1]
            env[e.group(1)] = value
        if "topology file" in msg:
            t = _TOPO_LOADING.search(msg) if "Loading topology file" in msg else None
            if t:
                topo_loading = t.group(1)
            tf = _TOPO_OPEN_FAIL.search(msg) if "Could not open XML" in msg else None
            if tf and topo_error is None:
                topo_error = _clip(f"Could not open XML topology file {tf.group(1)} : {tf.group(2)}")

        if c.isdecimal():  # what \d matches
            cc = _COLL_CHANNELS.match(msg)
            if cc:
                max_channels = max(int(cc.group(1)), max_channels or 0)
        elif c == "C" or c == "R":
            rp = _RING_PRINT.match(msg)
            if rp:
                ring_ids.add(int(rp.group(1)))
                if rp.group(2) and int(rp.group(2)) > 0:
                    max_channels = max(int(rp.group(2)), max_channels or 0)
            elif c == "R":
                rc = _RING_CONN.match(msg)
                if rc:
                    ring_conn_ids.add(int(rc.group(1)))
        elif c == "T":
            tr = _TREES.match(msg)
            if tr:
                tree_ids.update(int(x) for x in _TREE_IDX.findall(tr.group(1)))
        elif c == "S" and msg.startswith("Setting affinity for GPU "):
            af = _AFFINITY.match(msg)
            if af:
                masks = affinity.setdefault(af.group(1), [])
                if af.group(2) not in masks and len(masks) < 8:
                    masks.append(af.group(2))
        elif c == "i" and msg.startswith("init.cc") and _INIT_FAILED.match(msg):
            init_failed = True  # an error returned through ncclCommInitRank
        elif c == "b" and msg.startswith("bootstrap.cc:") and _BOOTSTRAP_FAILED.match(msg):
            bootstrap_failed = True  # an error returned through the bootstrap (its TCP sockets)
        sb = _SYSTEM.search(msg) if "=== System" in msg else None
        if sb:
            mx, tot = to_number(sb.group(1)), to_number(sb.group(2))
            if mx is not None and tot is not None:
                system_bw = (float(mx), float(tot))
        pl = _PCI_LINK.search(msg) if "PCI[" in msg else None
        bw = to_number(pl.group(1)) if pl else None
        if bw is not None:
            min_pci_bw = float(bw) if min_pci_bw is None else min(min_pci_bw, float(bw))
        for n in (_NRANKS.findall(msg) if "nranks" in low else ()):
            max_nranks = int(n) if max_nranks is None else max(max_nranks, int(n))
        if "Init " in msg:
            if "Init START" in msg:
                init_start = True
            if "Init COMPLETE" in msg:
                init_complete = True

    if blank:
        raise ParseError("empty input: expected an NCCL_DEBUG=INFO log")
    if nccl_lines == 0:
        raise ParseError("no NCCL INFO/WARN lines found: this is not an NCCL_DEBUG=INFO log")

    facts: dict[str, Any] = {}
    if version:
        facts["nccl.version"] = version
    net = None
    if nets:
        net = nets.most_common(1)[0][0]
    elif via_nets:
        net = via_nets.most_common(1)[0][0]
    elif saw_ib_using:
        net = "IB"
    elif saw_socket_using:
        net = "Socket"
    elif saw_ofi:
        net = "OFI"
    all_nets = set(nets) | set(via_nets)
    if net:
        all_nets.add(net)
        facts["nccl.net"] = net
        facts["nccl.nets"] = sorted(all_nets)
        facts["nccl.socket_fallback"] = "Socket" in all_nets
    if plugin is None:
        plugin = p2p_plugin
    if plugin is None and saw_ofi:
        plugin = "OFI"
    if plugin:
        facts["nccl.net_plugin"] = plugin
    if plugin_requested and plugin_absent and plugin is None:
        plugin_failed = True  # NCCL_NET_PLUGIN named a plugin that is not there
    # aws-ofi-nccl gives up ("Unable to find a protocol that worked", "initialization failed") after finding no
    # provider: that is no device to use (not passed to a container, no EFA attached), read as nccl.ofi_no_provider,
    # not a plugin that cannot set itself up
    facts["nccl.net_plugin_failed"] = plugin_failed or (ofi_init_failed and not ofi_no_provider)
    facts["nccl.net_plugin_absent"] = plugin_absent and plugin is None
    facts["nccl.ib_no_device"] = ib_no_device
    if ibverbs_missing:
        facts["nccl.ibverbs_missing"] = True
    if ofi_no_provider:
        facts["nccl.ofi_no_provider"] = True
    if hcas:
        facts["nccl.hcas"] = hcas
        facts["nccl.hca_transports"] = hca_transports
    topo_used = topo_loading or env.get("NCCL_TOPO_FILE")
    if topo_used:
        facts["nccl.topo_file_used"] = topo_used
    if topo_loading or topo_error:
        facts["nccl.topo_file_loaded"] = bool(topo_loading) and topo_error is None
    if topo_error:
        facts["nccl.topo_file_error"] = topo_error
    if system_bw:
        facts["nccl.topo_max_bw"], facts["nccl.topo_total_bw"] = system_bw
    if min_pci_bw is not None:
        facts["nccl.topo_min_pci_bw"] = min_pci_bw
    if max_channels is not None:
        facts["nccl.channels"] = max_channels
    if affinity:
        facts["nccl.affinity_masks"] = affinity
        widths = {g: [mask_cpus(m) for m in ms] for g, ms in affinity.items()}
        facts["nccl.affinity_cpus_min"] = min(min(w) for w in widths.values())
        facts["nccl.affinity_distinct"] = len({m for ms in affinity.values() for m in ms})
        spreads = [max(w) / min(w) for w in widths.values() if len(w) > 1 and min(w) > 0]
        if spreads:
            facts["nccl.affinity_spread"] = round(max(spreads), 2)
    if ring_ids:
        facts["nccl.rings"] = len(ring_ids)
    elif ring_conn_ids:
        facts["nccl.rings"] = len(ring_conn_ids)
    if tree_ids:
        facts["nccl.trees"] = len(tree_ids)
    facts["nccl.env_set"] = env
    facts["nccl.warnings"] = warnings
    if warn_sites:
        facts["nccl.warn_sites"] = warn_sites
    if gdr_disabled:
        facts["nccl.gdr_disabled_hcas"] = gdr_disabled
    if gdr_enabled:
        facts["nccl.gdr_enabled"] = True
    facts.update(ib_channel_facts(via_ib_gdr))
    if via_local[0] or via_local[1]:
        facts["nccl.channels_via_shm"], facts["nccl.channels_via_p2p"] = via_local
        facts["nccl.local_links_same_gpu"] = sum(len(r) > 1 for r in local_devs.values())
    if socket_ifs:
        facts["nccl.socket_interfaces"] = socket_ifs
    if no_iface:
        facts["nccl.no_socket_interface"] = True
    facts["nccl.errors"] = errors
    facts.update(codes_in_nccl_lines(warnings + errors))
    if max_nranks is not None:
        facts["nccl.ranks"] = max_nranks
    facts["nccl.hosts"] = sorted(hosts)
    if init_complete:
        facts["nccl.init_complete"] = True
    elif init_start or init_failed:
        facts["nccl.init_complete"] = False
    if bootstrap_failed:
        facts["nccl.bootstrap_failed"] = True
    return facts


STREAMS["nccl-debug"] = parse_stream
