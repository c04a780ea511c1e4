"""The nccl-debug parser as it was before its fast paths (issue 14), kept verbatim but for the registration, which
the live module does, and for NCCL 2.19's completion format ("Got completion from peer ... with status=12"), an
error in both since: tests/parsers/test_fast_paths.py checks the live parser gives the same facts. The original
docstring follows.

NCCL's own log (``NCCL_DEBUG=INFO``): which network NCCL really used, with which HCAs, plugin and topology.

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
from collections import Counter, deque
from typing import Any, Iterable, Iterator

from troubleshooter.parsers.base import ParseError, require_text, to_number

MAX_WARNINGS = 20
MAX_ERRORS = 20
MAX_TEXT = 300
MAX_HOSTS = 10000  # distinct host names kept (a job's hosts; garbage cannot grow the set past this)

FACTS = [
    ("nccl.version", "string", "", "NCCL version from the log ('NCCL version 2.18.3+cuda12.2' -> 2.18.3)"),
    ("nccl.net", "string", "", "network transport NCCL used: IB, Socket, or the plugin's network (Libfabric, IBext, ...); the most frequent when ranks differ"),
    ("nccl.nets", "list", "", "every network transport named in the log, sorted (more than one: ranks disagree)"),
    ("nccl.net_plugin", "string", "", "external net plugin NCCL loaded (e.g. 'AWS Libfabric', 'IBext_v8'); absent when none loaded"),
    ("nccl.net_plugin_failed", "bool", "", "a net plugin was loaded or explicitly requested and failed (init error, missing symbol, load error other than 'file not found')"),
    ("nccl.net_plugin_absent", "bool", "", "the log says no external net plugin was found and NCCL used its internal one (normal on IB/RoCE, wrong on AWS EFA)"),
    ("nccl.socket_fallback", "bool", "", "NCCL's network is Socket (TCP) for at least one rank"),
    ("nccl.ib_no_device", "bool", "", "NCCL found no usable IB/RoCE device ('NET/IB : No device found.' or libibverbs could not be opened)"),
    ("nccl.hcas", "list", "", "RDMA ports NCCL says it uses ('NET/IB : Using [0]mlx5_0:1/IB ...' -> 'mlx5_0:1'), in NCCL's order"),
    ("nccl.hca_transports", "dict", "", "'mlx5_0:1' -> IB or RoCE, as NCCL lists them"),
    ("nccl.topo_file_used", "string", "", "topology file path NCCL loaded, or that NCCL_TOPO_FILE was set to"),
    ("nccl.topo_file_loaded", "bool", "", "true: NCCL logged 'Loading topology file' (GRAPH subsystem) and no topology-file error; false: a topology-file error; absent when the log shows neither"),
    ("nccl.topo_file_error", "string", "", "the warning when the topology file failed to open or parse (NCCL then autodetects)"),
    ("nccl.topo_max_bw", "number", "GB/s", "maxBw of NCCL's topology print ('=== System : maxBw 48.0 totalBw 370.8 ===', NCCL_DEBUG_SUBSYS=GRAPH)"),
    ("nccl.topo_total_bw", "number", "GB/s", "totalBw of NCCL's topology print"),
    ("nccl.topo_min_pci_bw", "number", "GB/s", "slowest PCI link in NCCL's topology print (PCI[0.2] in a VM with emulated switches: NCCL routes around it badly)"),
    ("nccl.channels", "number", "count", "most channels NCCL reported ('24 coll channels', 'Channel 00/24 :')"),
    ("nccl.rings", "number", "count", "distinct rings (channel ring prints 'Channel NN/MM : ranks', or 'Ring NN' lines in old logs)"),
    ("nccl.trees", "number", "count", "distinct tree indices in 'Trees [i] ...' lines"),
    ("nccl.env_set", "dict", "", "NCCL_* variables NCCL reports as set ('NAME set by environment to VALUE'); last value wins"),
    ("nccl.warnings", "list", "", f"NCCL WARN messages, deduplicated, at most {MAX_WARNINGS}"),
    ("nccl.errors", "list", "", "error lines: completion errors, unhandled system/cuda errors, internal errors, remote errors"),
    ("nccl.ranks", "number", "count", "communicator size (largest nranks seen)"),
    ("nccl.hosts", "list", "", "sorted distinct host names of the log prefixes"),
    ("nccl.init_complete", "bool", "", "some communicator logged 'Init COMPLETE'; false when init started (Init START) or failed (init.cc:N -> err) without completing; absent otherwise"),
]

# host:pid:tid [dev] [file.cc:line] NCCL LEVEL message
_PREFIXED = re.compile(
    r"(?<![\w.\-])(?P<host>[\w.\-]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] (?:(?P<loc>\S+:\d+) )?NCCL (?P<lvl>INFO|WARN|TRACE)\b ?(?P<msg>.*)$"
)
_BARE = re.compile(r"(?:^|\s)(?:(?P<loc>\S+\.\w+:\d+) )?NCCL (?P<lvl>INFO|WARN)\b ?(?P<msg>.*)$")
_VERSION = re.compile(r"\bNCCL version (\d+\.\d+\.\d+)")
_USING_NET = re.compile(r"^Using (?:internal )?[Nn]etwork (.+?)\s*$")
_ASSIGNED = re.compile(r"^Assigned NET plugin (.+?) to comm")
_VIA_NET = re.compile(r"via NET/([A-Za-z]\w*)")
_IB_USING = re.compile(r"^NET/IB\s*:\s*Using\s+(.*)$")
_HCA = re.compile(r"\[\d+\]([^\s:\[\]]+):(\d+)/(\w+)")
_LOADED_PLUGIN = re.compile(r"Loaded net plugin (.+?)\s*\(v\d+\)\s*$")
_P2P_PLUGIN = re.compile(r"^P2P plugin (\S+)")
_PLUGIN_ABSENT = re.compile(r"No plugin found|Could not find: libnccl-net|Using internal network plugin|using internal implementation")
_PLUGIN_LOAD_ERR = re.compile(r"(?:Plugin load|dlerror=|Failed to open libnccl-net|Unable to load libnccl-net)")
_PLUGIN_FAIL = re.compile(
    r"plugin/net\.cc:\d+ -> \d+|Failed to find ncclNetPlugin symbol|Failed to initiali[sz]e (?:NET|net) plugin|"
    r"NET/Plugin\s*:?\s*(?:.*)failed to initiali[sz]e"
)
_PLUGIN_BY_ENV = re.compile(r"Plugin name set by env to (\S+)")
_ENV_SET = re.compile(r"\b(NCCL_[A-Z0-9_]+) set (?:by environment )?to (.*?)\s*$")
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
    r"^\s*#?\s*(?:Avg bus bandwidth|size\s+count\s+type|nThread\s+\d+\s+nGpus|Out of bounds values)", re.MULTILINE
)
_ANY_NCCL = re.compile(r"NCCL (?:INFO|WARN)\b")


def _detect(text: str) -> float:
    head = text[:262144]
    n = len(_ANY_NCCL.findall(head))
    if n >= 5:
        score = 0.9
    elif n >= 2:
        score = 0.8
    elif n == 1:
        score = 0.6
    elif _VERSION.search(head):
        score = 0.4
    else:
        return 0.0
    if _TESTS_TABLE.search(head):
        # an nccl-tests run with NCCL_DEBUG=INFO: the nccl-tests parser owns it
        score = min(score, 0.5)
    return score


def _clip(s: str) -> str:
    s = " ".join(s.split())
    return s if len(s) <= MAX_TEXT else s[: MAX_TEXT - 1] + "…"


def _is_continuation(line: str) -> bool:
    """The tail of a WARN message that the paste (or the message's own newline) wrapped onto a new line."""
    s = line.strip()
    return 0 < len(s) <= 60 and "NCCL" not in s and not _PREFIXED.search(s) and not s.startswith(("#", "["))


def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "an NCCL_DEBUG=INFO log")
    return parse_stream(text.splitlines())


def _lookahead(lines: Iterable[str], n: int) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Each line with the (up to) ``n`` lines after it, reading ``lines`` once."""
    window: deque[str] = deque()
    for line in lines:
        window.append(line)
        if len(window) > n:
            first = window.popleft()
            yield first, tuple(window)
    while window:
        first = window.popleft()
        yield first, tuple(window)


def parse_stream(lines: Iterable[str]) -> dict[str, Any]:
    """:func:`parse` over an iterable of lines (a file of any size), in bounded memory: the same facts.

    Memory does not grow with the log: counters, distinct values (nets, HCAs, NCCL_* variables, ring and
    tree indices, at most :data:`MAX_HOSTS` hosts), at most :data:`MAX_WARNINGS` warnings and
    :data:`MAX_ERRORS` errors; channel, rank and PCI figures are kept as their max/min only.
    """
    version = None
    nets: Counter[str] = Counter()
    via_nets: Counter[str] = Counter()
    hcas: list[str] = []
    hca_transports: dict[str, str] = {}
    saw_ib_using = saw_socket_using = saw_ofi = False
    ib_no_device = False
    plugin = None
    p2p_plugin = None
    plugin_failed = False
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
    system_bw: tuple[float, float] | None = None
    min_pci_bw: float | None = None
    hosts: set[str] = set()
    init_start = init_complete = init_failed = False
    warnings: list[str] = []
    errors: list[str] = []
    nccl_lines = 0
    blank = True

    for raw, after in _lookahead(lines, 2):
        line = raw.rstrip()
        if blank and line.strip():
            blank = False
        # cheap substring tests gate the regular expressions: a log is mostly lines none of them match
        vm = _VERSION.search(line) if "NCCL version" in line else None
        if vm and version is None:
            version = vm.group(1)
        if "NCCL" not in line and "ncclInternalError" not in line and "ncclSystemError" not in line:
            continue  # neither prefix pattern, no error pattern, no version can match
        m = _PREFIXED.match(line) or _PREFIXED.search(line)  # match: the usual line starts with its host
        if m:
            if len(hosts) < MAX_HOSTS:
                hosts.add(m.group("host"))
        else:
            m = _BARE.search(line)
        if not m:
            if "NCCL error" in line or "ncclInternalError" in line or "ncclSystemError" in line:
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
            msg = re.sub(r"\s{2,}\[\d+/\d+\]$", "", msg)
        low = msg.lower()
        err = ("error" in low or "exited" in low or "status=" in low) and _ERROR.search(msg)
        if m.group("lvl") == "WARN":
            for nxt in after:
                if not _is_continuation(nxt):
                    break
                msg = f"{msg} {nxt.strip()}"
            w = _clip(msg)
            if w not in warnings and len(warnings) < MAX_WARNINGS:
                warnings.append(w)
            if err and w not in errors and len(errors) < MAX_ERRORS:
                errors.append(w)
            if topo_error is None and ("xml" in low or "topology file" in low) and (re.search(r"\bXML\b|topology file", msg, re.IGNORECASE)):
                topo_error = w
        elif err and not re.match(r"^\S+\.cc:\d+ -> \d+", msg):
            e = _clip(msg)
            if e not in errors and len(errors) < MAX_ERRORS:
                errors.append(e)

        u = _USING_NET.match(msg) if msg.startswith("Using") else None
        if u:
            nets[u.group(1)] += 1
        v = _VIA_NET.search(msg) if "via NET/" in msg else None
        if v:
            via_nets[v.group(1)] += 1
        ib = _IB_USING.match(msg) if msg.startswith("NET/IB") else None
        if ib:
            saw_ib_using = True
            for dev, port, kind in _HCA.findall(ib.group(1).split(";")[0]):
                key = f"{dev}:{port}"
                if key not in hca_transports:
                    hcas.append(key)
                hca_transports[key] = kind
        if msg.startswith("NET/Socket") and "Using" in msg:
            saw_socket_using = True
        if msg.startswith("NET/OFI"):
            saw_ofi = True
        if msg.startswith("NET/IB : No device found") or msg.startswith("NET/IB: No device found") or "Failed to open libibverbs" in msg:
            ib_no_device = True

        if "plugin" in low or "libnccl-net" in low or "internal" in low or "dlerror" in low:
            lp = _LOADED_PLUGIN.search(msg)
            if lp and "collnet" not in low:
                plugin = lp.group(1)
            pp = _P2P_PLUGIN.match(msg)
            if pp:
                p2p_plugin = pp.group(1)
            if _PLUGIN_BY_ENV.search(msg) and msg.startswith("NET/Plugin"):
                plugin_requested = True
            if _PLUGIN_ABSENT.search(msg):
                plugin_absent = True
            if _PLUGIN_LOAD_ERR.search(msg):
                if "No such file or directory" in msg or "cannot open shared object file" in msg:
                    plugin_absent = True
                else:
                    plugin_failed = True
            if _PLUGIN_FAIL.search(msg):
                plugin_failed = True

        e = _ENV_SET.search(msg) if " set " in msg else None
        if e:
            value = e.group(2)
            if re.fullmatch(r"-?\d+\.", value):
                value = value[:-1]
            env[e.group(1)] = value
        t = _TOPO_LOADING.search(msg) if "Loading topology file" in msg else None
        if t:
            topo_loading = t.group(1)
        tf = _TOPO_OPEN_FAIL.search(msg) if "Could not open XML" in msg else None
        if tf and topo_error is None:
            topo_error = _clip(f"Could not open XML topology file {tf.group(1)} : {tf.group(2)}")

        cc = _COLL_CHANNELS.match(msg)
        if cc:
            max_channels = max(int(cc.group(1)), max_channels or 0)
        rp = _RING_PRINT.match(msg)
        if rp:
            ring_ids.add(int(rp.group(1)))
            if rp.group(2) and int(rp.group(2)) > 0:
                max_channels = max(int(rp.group(2)), max_channels or 0)
        else:
            rc = _RING_CONN.match(msg)
            if rc:
                ring_conn_ids.add(int(rc.group(1)))
        tr = _TREES.match(msg)
        if tr:
            tree_ids.update(int(x) for x in re.findall(r"\[(\d+)\]", tr.group(1)))
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
        if msg.startswith("init.cc") and re.match(r"^init\.cc:\d+ -> [1-9]", msg):
            init_failed = True  # an error returned through ncclCommInitRank
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
    facts["nccl.net_plugin_failed"] = plugin_failed
    facts["nccl.net_plugin_absent"] = plugin_absent and plugin is None
    facts["nccl.ib_no_device"] = ib_no_device
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
    if ring_ids:
        facts["nccl.rings"] = len(ring_ids)
    elif ring_conn_ids:
        facts["nccl.rings"] = len(ring_conn_ids)
    if tree_ids:
        facts["nccl.trees"] = len(tree_ids)
    facts["nccl.env_set"] = env
    facts["nccl.warnings"] = warnings
    facts["nccl.errors"] = errors
    if max_nranks is not None:
        facts["nccl.ranks"] = max_nranks
    facts["nccl.hosts"] = sorted(hosts)
    if init_complete:
        facts["nccl.init_complete"] = True
    elif init_start or init_failed:
        facts["nccl.init_complete"] = False
    return facts
