"""The fast paths of the fan-out's hot parsers give exactly what the code they replaced gave.

``nvidia-smi -q`` (its per-line regular expression replaced by string operations, the GPU sections it never
reads skipped) and ``turbostat`` (blank lines short-cut, the preamble's expressions compiled once) are compared
with verbatim copies of the previous code (tests/parsers/*_reference.py) on every corpus file, the practice
captures, and reports mutated the ways real captures are mangled (lines lost, re-indented, odd whitespace and
colons, CRs, trailing blank lines as in bench/fanout_bench.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus import files, strip_header
from tests.parsers import nccl_debug_reference, nccl_tests_reference, nvidia_smi_q_reference, turbostat_reference
from troubleshooter.parsers import nccl_debug, nccl_tests, nvidia_smi_q, turbostat
from troubleshooter.parsers.base import ParseError

ROOT = Path(__file__).resolve().parents[2]
PRACTICE = sorted((ROOT / "decision_trees" / "practice").glob("*/outputs"))


def _texts(kind_dir: str, practice_name: str) -> list[tuple[str, str]]:
    """Every real capture of the kind in tests/data (the corpus files, copied with provenance) and the
    practice outputs: the same set on every machine, CI's clean clone included."""
    paths = list(files(kind_dir)) + [d / practice_name for d in PRACTICE if (d / practice_name).exists()]
    return [(str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p),
             strip_header(p.read_bytes().decode("utf-8", errors="replace"))) for p in paths]


NSQ = _texts("nvidia-smi", "nvidia-smi-q.txt")
TURBO = _texts("turbostat", "turbostat.txt")
# captures of formats the parsers learnt after their reference copy was taken (old NCCL lines without the "NCCL"
# word, a re-wrapped interface list, nccl-tests' init abort): checked by their own tests, not against the copy
NEW_FORMATS = {"nccl-old-warn-lines-container-socket-creation-failed.txt",
               "nccltests128-reduce-scatter-rows-alone-no-header.txt",  # rows without their header (learnt after)
               "nccl1292-netplugin-v8-symbol-probe-info.txt",  # the symbol probe is no plugin failure (learnt after the copy)
               "quoted-net-socket-list-rewrapped-docker-bridges.txt",
               "old-nccl-failure-unhandled-system-error-at-init-quoted.txt",
               "nccltests264-h100-system-not-yet-initialized.txt", "msn24-duplicate-gpu-warn-text-alone.txt",
               "nccl210-old-warn-with-location-no-prefix-socket-creation-failed.txt",
               "nccltests228-p2p-level-loc-line-quoted-alone.txt",
               "nccl1837-socket-ifname-eth2-last-error-family-garbage.txt",
               "thomaskalnik-rank-and-rank-both-on-cuda-device-retold.txt",
               "horovod110-two-hosts-named-mtk-0-1-via-p2p-ipc.txt",
               "polaris-ofi1.21-cxi-no-eligible-providers-init-failed.txt",  # "No eligible providers" (learnt after)
               "cscs-ofi-plugin-not-found-network-aws-libfabric-not-found.txt",  # a requested network missing (learnt after)
               "nccl1838-l4-shm-cc-cuda-failure-217-cumem-host.txt",  # CUDA error 217 named in a WARN (learnt after)
               "nccl187-short-hostname-ring-ranks-2-and-10-on-device-2.txt"}  # NCCL 2.3's 'INFO Ring' lines (learnt after)
NTESTS = [(n, t) for n, t in _texts("nccl-tests", "nccl-allgather.txt") if Path(n).name not in NEW_FORMATS]
NDEBUG = [(n, t) for n, t in _texts("nccl-debug", "nccl-debug-log.txt") if Path(n).name not in NEW_FORMATS]


def _outcome(func, text: str):
    try:
        return ("ok", func(text))
    except ParseError as exc:
        return ("error", str(exc))


#: facts of nvidia-smi -q sections the parser learnt after its reference copy was taken (the driver's GPU Reset Status
#: / GPU Recovery Action, Compute Mode, the InfoROM warning): checked by their own tests, left out of the comparison with the copy
NSQ_LATER_FACTS = ("gpu.recovery_actions", "gpu.recovery_needed", "gpu.compute_exclusive", "gpu.inforom_corrupted")


def _nsq_parse(text: str) -> dict:
    facts = nvidia_smi_q.parse(text)
    return {k: v for k, v in facts.items() if k not in NSQ_LATER_FACTS}


def test_the_corpus_is_there() -> None:
    assert len(NSQ) >= 7 and any("practice" in name for name, _ in NSQ)
    assert len(TURBO) >= 6


@pytest.mark.parametrize("name,text", NSQ, ids=[n for n, _ in NSQ])
def test_nvidia_smi_q_same_as_before(name: str, text: str) -> None:
    assert _outcome(_nsq_parse, text) == _outcome(nvidia_smi_q_reference.parse, text)
    with_blanks = text + "\n" * 300
    assert _outcome(_nsq_parse, with_blanks) == _outcome(nvidia_smi_q_reference.parse, with_blanks)


@pytest.mark.parametrize("name,text", TURBO, ids=[n for n, _ in TURBO])
def test_turbostat_same_as_before(name: str, text: str) -> None:
    assert _outcome(turbostat.parse, text) == _outcome(turbostat_reference.parse, text)
    with_blanks = text + "\n" * 300 + "   \n\t\n"
    assert _outcome(turbostat.parse, with_blanks) == _outcome(turbostat_reference.parse, with_blanks)


def test_kv_matches_the_expression_it_replaced() -> None:
    """nvidia_smi_q._kv and the _KV expression agree on lines built to hit every branch."""
    pieces = ["", " ", "\t", "\u00a0", "\x1c", ":", " : ", ": ", " :", "::", "Key", "GPU 0000:4F:00.0", "a b",
              "N/A", "x:y", "16x", "\r"]
    checked = 0
    for a in pieces:
        for b in pieces:
            for c in pieces:
                line = (a + b + c).rstrip()
                if not line:
                    continue
                m = nvidia_smi_q._KV.match(line)
                want = (m.group(2).strip(), (m.group(3) or "").strip()) if m else None
                assert nvidia_smi_q._kv(line) == want, repr(line)
                checked += 1
    assert checked > 4000


_EDITS = st.lists(st.tuples(
    st.sampled_from(["drop", "dup", "indent", "dedent", "tab", "kv", "colon", "blank", "cr", "junk"]),
    st.integers(min_value=0, max_value=10_000),
    st.sampled_from(["Clocks", "SM", "Pending", "Product Name", "Idle", "Process ID", "Bus Id", "Current", "Max",
                     "Volatile", "Busy%", "Bzy_MHz", "current_driver", "cpu0", "-", "GPU 00000000:18:00.0",
                     "Temperature", "ECC Errors", "Remapped Rows", "Single Bit", "Total"]),
    st.sampled_from(["", "1", "Active", "Not Active", "No", "Yes", "12.5 W", "N/A", "0x1f", "nan", "16x", ": 3"]),
), max_size=12)


def _mutate(text: str, edits) -> str:
    lines = text.split("\n")
    for op, pos, key, value in edits:
        if not lines:
            break
        i = pos % len(lines)
        ln = lines[i]
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, ln)
        elif op == "indent":
            lines[i] = "    " + ln
        elif op == "dedent":
            lines[i] = ln[2:] if ln.startswith("  ") else ln.lstrip()
        elif op == "tab":
            lines[i] = ln.replace("    ", "\t", 1)
        elif op == "kv":
            lines.insert(i, f"{' ' * (pos % 13)}{key}{' ' * (pos % 3)}: {value}")
        elif op == "colon":
            lines[i] = ln.replace(" : ", ":", 1) if pos % 2 else ln.replace(":", " :: ", 1)
        elif op == "blank":
            lines.insert(i, " " * (pos % 5))
        elif op == "cr":
            lines[i] = ln + "\r"
        else:
            lines.insert(i, f"{key}\u00a0{value}\x1c{pos}")
    return "\n".join(lines)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(NSQ), _EDITS)
def test_nvidia_smi_q_same_as_before_on_mangled_reports(sample, edits) -> None:
    text = _mutate(sample[1], edits)
    assert _outcome(_nsq_parse, text) == _outcome(nvidia_smi_q_reference.parse, text)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(TURBO), _EDITS)
def test_turbostat_same_as_before_on_mangled_output(sample, edits) -> None:
    text = _mutate(sample[1], edits)
    assert _outcome(turbostat.parse, text) == _outcome(turbostat_reference.parse, text)


def test_gpu_sections_skipped_are_never_read(monkeypatch) -> None:
    """With every section kept in the tree (GPU_KEYS None), the devices are the same: device() reads none of the
    sections _tree leaves out."""
    for name, text in NSQ:
        fast = _outcome(nvidia_smi_q.read, text)
        monkeypatch.setattr(nvidia_smi_q, "GPU_KEYS", None)
        full = _outcome(nvidia_smi_q.read, text)
        monkeypatch.undo()
        assert fast == full, name


def test_turbostat_is_value_matches_the_expression() -> None:
    tokens = ["1", "0", "15.04", "15.", ".5", "1..2", "-", "--", "-1", "+1.5", "-1.5", "nan", "-NaN", "inf", "-inf",
              "+inf", "0x1F", "0xZZ", "1e5", "", "١٢", "1.٢", "²", "Avg_MHz", "3577\u00a0", "0.00", "100.0.0"]
    for t in tokens:
        assert turbostat._is_value(t) == bool(turbostat._VALUE.match(t)), repr(t)


# ---------------------------------------------------------------- nccl-tests and nccl-debug (issue 14)
def test_the_nccl_corpus_is_there() -> None:
    assert len(NTESTS) >= 10 and len(NDEBUG) >= 9


# Facts a parser gained after its reference copy was taken (checked by their own tests, not against the copy).
NEW_FACTS = {"nccl.warn_sites", "nccl.gdr_disabled_hcas", "nccl.gdr_enabled", "nccl.socket_interfaces",
             "nccl.no_socket_interface", "nccl_tests.nccl_error", "nccl.affinity_masks", "nccl.affinity_cpus_min",
             "nccl.affinity_spread", "nccl.affinity_distinct", "nccl.ib_channels_gdr", "nccl.ib_channels_no_gdr",
             "nccl.ib_recv_channels_no_gdr", "nccl.bootstrap_failed", "nccl.channels_via_shm", "nccl.channels_via_p2p",
             "nccl.ibverbs_missing", "nccl_tests.no_result", "gpu.compute_exclusive", "gpu.inforom_corrupted",
             "nccl_tests.banners_at_start", "nccl.local_links_same_gpu"}


def _old(outcome):
    kind, out = outcome
    return (kind, {k: v for k, v in out.items() if k not in NEW_FACTS}) if kind == "ok" else outcome


_NO_TABLE = "no nccl-tests table found"


def _same(new, before) -> None:
    """The live parser's outcome is the copy's, but for what it learnt after: new facts (NEW_FACTS), and table rows
    pasted without any header, which the copy refused ("no nccl-tests table found") and the live parser reads."""
    new = _old(new)
    if before[0] == "error" and before[1].startswith(_NO_TABLE):
        assert new[0] == "ok" and new[1]["nccl_tests.rows"] or (new[0] == "error" and new[1].startswith(_NO_TABLE))
        return
    assert new == before


def _both(fast, ref, text: str) -> None:
    _same(_outcome(fast.parse, text), _outcome(ref.parse, text))
    lines = text.split("\n")
    _same(_outcome(fast.parse_stream, lines), _outcome(ref.parse_stream, lines))


@pytest.mark.parametrize("name,text", NTESTS, ids=[n for n, _ in NTESTS])
def test_nccl_tests_same_as_before(name: str, text: str) -> None:
    _both(nccl_tests, nccl_tests_reference, text)
    _both(nccl_tests, nccl_tests_reference, "\n".join(t for _, t in NTESTS))  # many runs in one text
    _both(nccl_tests, nccl_tests_reference, "\n".join("> " + ln for ln in text.split("\n")))  # mail quoting


@pytest.mark.parametrize("name,text", NDEBUG, ids=[n for n, _ in NDEBUG])
def test_nccl_debug_same_as_before(name: str, text: str) -> None:
    _both(nccl_debug, nccl_debug_reference, text)
    _both(nccl_debug, nccl_debug_reference, "\n".join(t for _, t in NDEBUG))


# rows and lines built to reach every branch of the fast paths: odd types and reductions, nan/inf, N/A, commas,
# signs, unicode digits, the old error column, roots, truncated rows, WARN continuations, channel/ring/tree prints
_ROW_TOKENS = ["1024", "8589934592", "-1", "0", "3", "float", "half", "bfloat16", "sum", "none", "avg", "weird",
               "N/A", "nan", "-nan", "inf", "1e308", "2e-07", "0.5*", "1,024", "+5", "\u0663", "\u00b2", "12.5", "1_0",
               "Test", "FAILED", "size", "Rank", "_x"]
_DEBUG_LINES = [
    "h1:1:1 [0] NCCL INFO Using network IB", "h2:2:2 [1] NCCL INFO Using network Socket",
    "h1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB eth0:10.0.0.1<0>",
    "h1:1:1 [0] NCCL INFO NET/IB : No device found.", "h1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
    "h1:1:1 [0] NCCL INFO NET/OFI Selected provider is efa", "h1:1:1 [0] NCCL INFO 24 coll channels, 32 p2p channels",
    "h1:1:1 [0] NCCL INFO Channel 00/24 :    0   1   2   3", "h1:1:1 [0] NCCL INFO Ring 01 : 0 -> 1 -> 2",
    "h1:1:1 [0] NCCL INFO Ring 02 : 3[3] -> 4[4] via P2P/IPC", "h1:1:1 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 2/-1/-1->0->-1",
    "h1:1:1 [0] NCCL INFO === System : maxBw 48.0 totalBw 370.8 ===", "h1:1:1 [0] NCCL INFO + PCI[0.2] - PCI/0-65000",
    "h1:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 16 cudaDev 0 - Init COMPLETE", "h1:1:1 [0] NCCL INFO Init START",
    "h1:1:1 [0] NCCL INFO init.cc:1234 -> 3", "h1:1:1 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_0.",
    "h1:1:1 [0] NCCL INFO NCCL_IB_QPS_PER_CONNECTION set to 4.", "h1:1:1 [0] NCCL INFO Loading topology file /t.xml",
    "h1:1:1 [0] misc/xml.cc:1 NCCL WARN Could not open XML topology file /t.xml : No such file",
    "h1:1:1 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer 1 with error 12, opcode 0",
    "   wrapped tail of the warning", "h1:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v6)",
    "h1:1:1 [0] NCCL INFO NET/Plugin : Plugin name set by env to libnccl-net-x.so", "h1:1:1 [0] NCCL INFO Failed to open libibverbs.so",
    "h1:1:1 [0] NCCL INFO \u0663 coll channels", "h1:1:1 [0] NCCL INFO Channel 01/0 : 0 1", "NCCL version 2.18.3+cuda12.2",
    "h1:1:1 [0] NCCL INFO via NET/IB/0/GDRDMA", "h1:1:1 [0] NCCL INFO Connected all rings      [22/1819]",
    "ncclInternalError: internal error", "[rank0]: step 10 loss 2.3", "h1:1:1 [0] NCCL INFO P2P plugin IBext_v8",
    "h1:1:1 [0] NCCL INFO Using internal network plugin.", "", "h1:1:1 [0] NCCL TRACE comm 0x1 nranks 4",
    "[W730 10:12:01.000 ProcessGroupNCCL.cpp:1168] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS is the default now",
    "  launcher: NCCL INFO Using network IB", "x NCCL WARN short", "NCCL error: ncclSystemError: System call failed",
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(NTESTS), st.lists(st.tuples(st.integers(0, 10_000), st.lists(st.sampled_from(_ROW_TOKENS), min_size=3,
                                                                                    max_size=14)), max_size=8), _EDITS)
def test_nccl_tests_same_as_before_on_odd_rows(sample, inserts, edits) -> None:
    lines = _mutate(sample[1], edits).split("\n")
    for pos, toks in inserts:
        lines.insert(pos % (len(lines) + 1), "  ".join(toks))
    _both(nccl_tests, nccl_tests_reference, "\n".join(lines))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(NDEBUG), st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from(_DEBUG_LINES)), max_size=12), _EDITS)
def test_nccl_debug_same_as_before_on_odd_lines(sample, inserts, edits) -> None:
    lines = _mutate(sample[1], edits).split("\n")
    for pos, line in inserts:
        lines.insert(pos % (len(lines) + 1), line)
    _both(nccl_debug, nccl_debug_reference, "\n".join(lines))


def test_nccl_tests_fast_row_agrees_with_the_general_path() -> None:
    """Every row _fast_row takes, the general path reads the same; on the rest it declines."""
    import itertools

    checked = 0
    for n in (7, 8, 9, 11, 12, 13):
        for combo in itertools.islice(itertools.product(_ROW_TOKENS, repeat=3), 0, None, 7):
            for fill in ("1", "2e-07", "N/A", "nan", "0.5*"):
                toks = ["1024", "256", "float", *combo] + [fill] * (n - 6)
                for error_col in (False, True):
                    fast = nccl_tests._fast_row(toks, error_col)
                    if fast is not None:
                        assert fast == nccl_tests._parse_row(" ".join(toks), error_col), toks
                        checked += 1
    assert checked > 2000


def _dmesg_texts() -> list[tuple[str, str]]:
    import random

    files = sorted((ROOT / "tests" / "data" / "dmesg").iterdir()) + sorted(
        (ROOT / "decision_trees" / "practice").glob("*/outputs/dmesg*"))
    out = [(f.name, f.read_text(errors="replace")) for f in files if f.is_file()]
    lines = [ln for _, t in out for ln in t.split("\n")]
    rng = random.Random(14)
    for i in range(300):  # lines of every capture mixed, some upper- or lower-cased (the case-blind expressions)
        t = "\n".join(rng.choice(lines) for _ in range(rng.randint(1, 60)))
        r = rng.random()
        t = t.upper() if r < 0.15 else t.lower() if r < 0.3 else t.replace("s", "\u017f") if r < 0.35 else t
        out.append((f"mixed-{i}", t))
    return out


def test_dmesg_same_as_before() -> None:
    """dmesg's expressions run only behind substring tests: the same facts as the previous parser
    (tests/parsers/dmesg_reference.py) on every capture and 300 mixed ones."""
    from tests.parsers import dmesg_reference
    from troubleshooter.parsers import dmesg

    texts = _dmesg_texts()
    assert len(texts) > 300
    new = {"dmesg.fabric_out_of_sync", "dmesg.fabric_manager_absent", "dmesg.hca_fw_outdated",  # learnt after the copy
           "dmesg.sxid_events", "dmesg.sxid_codes", "dmesg.sxid_fatal_codes", "dmesg.xid_nonfatal_codes",
           "dmesg.nvidia_module_flavor", "dmesg.kmod_flavor_refused", "dmesg.kmod_flavor_needed",
           "dmesg.aer_fatal", "dmesg.aer_nonfatal", "dmesg.aer_corrected", "dmesg.aer_devices", "dmesg.aer_gpu_devices",
           "dmesg.aer_recovery_failed", "dmesg.gpu_bar_invalid", "dmesg.rm_init_failed", "dmesg.gsp_firmware_missing",
           "dmesg.gpu_legacy_unsupported", "dmesg.api_mismatch", "dmesg.hca_cmd_failures"}
    for name, text in texts:
        # NVSwitch lines, Talos' prefix and a follow-on Xid naming its cause (its code joins xid_codes): learnt after
        # the copy, and read by the parser's own tests
        # dmesg -H's relative timestamps and AER lines as a kernel log's only markers: learnt after the copy too, as are
        # VT-d fault lines naming a device without its domain ("Request device [02:00.0]")
        if ("SXid (" in text or " kern: " in text or "caused by previous Xid" in text or "[  +" in text or "AER-aware" in text
                or " AER: " in text.upper().replace("\u017f", "S") or "Request device [" in text
                or "(PCI:0000:XX" in text  # an anonymised bus in an Xid line: learnt in session 18
                or re.search(r"Xid \d{1,3}:\s+[A-Z]", text)):  # an Xid quoted without its bus ("Xid 78: ..."): session 18
            continue
        kind, out = _outcome(dmesg.parse, text)
        if kind == "ok":
            out = {k: v for k, v in out.items() if k not in new}
        assert (kind, out) == _outcome(dmesg_reference.parse, text), name
