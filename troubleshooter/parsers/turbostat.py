"""turbostat: per-CPU frequency, busy time, C-state residency and package power, plus its config preamble.

Real sample (Westmere laptop, turbostat 20.03.20, from ../shared/corpus/turbostat; TAB separated)::

    turbostat version 20.03.20 - Len Brown <lenb@kernel.org>
    9 * 133.3 = 1200.0 MHz max efficiency frequency
    18 * 133.3 = 2399.9 MHz base frequency
    20 * 133.3 = 2666.6 MHz max turbo 2 active cores
    22 * 133.3 = 2933.3 MHz max turbo 1 active cores
    cpu0: MSR_PKG_CST_CONFIG_CONTROL: 0x00000403 (UNlocked, pkg-cstate-limit=3 (pc6))
    current_driver: intel_idle
    cpu0: cpufreq driver: acpi-cpufreq
    cpu0: cpufreq governor: ondemand
    Node  Core  CPU  Avg_MHz  Busy%  Bzy_MHz  TSC_MHz  IRQ ... C1%   C1E%  C3%    C6%   CPU%c1  CPU%c3  CPU%c6
    -     -     -    395      26.14  1493     2430     12  ... 1.50  0.59  73.54  0.00  28.45   45.41   0.00
    -1    0     0    239      16.27  1473     2397     3   ... 5.92  0.00  79.10  0.00  51.50   32.23   0.00
    -1    0     1    784      50.12  1574     2385     3   ... 0.00  2.37  47.20  0.00  17.26

The row whose CPU column is ``-`` is the system summary; the others are per CPU. Sibling threads print fewer
columns (core- and package-level counters only on the first thread), so a row's values map to a prefix of
the header. The header repeats every interval; we read the last complete interval.

What matters for training speed (reference case 2): busy cores stuck well below the SKU's max turbo
(``Bzy_MHz`` of busy CPUs vs the preamble's ``max turbo`` ratios) while idle cores sit in C1 instead of C6
(``C6%`` / ``CPU%c6`` near 0): idle cores keep drawing package power, so busy cores cannot turbo.

Robustness: quoted-printable pastes (``=3D``, ``=20``, ``=`` soft breaks) are decoded; rows hard-wrapped
by a terminal (a wrapped header is followed by wrapped rows, each first half ending in blanks) are
re-joined; a header with two names fused (``GFXWattRAMWatt``) is split again; warning lines
(``turbostat: cpu3 jitter ...``) are skipped; ``-nan`` values are omitted.

>>> f = parse("Core\\tCPU\\tAvg_MHz\\tBusy%\\tBzy_MHz\\tTSC_MHz\\tC1%\\tC6%\\n-\\t-\\t900\\t30.00\\t3000\\t2400\\t60.00\\t5.00\\n")
>>> f["cpu.busy_mhz"], f["cpu.c1_pct"], f["cpu.c6_pct"]
(3000, 60.0, 5.0)
"""

from __future__ import annotations

import quopri
import re
import statistics
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text, to_number
from troubleshooter.parsers.cpuidle import is_deep

FACTS = [
    ("cpu.busy_mhz", "number", "MHz", "system-wide Bzy_MHz: average clock while not idle (turbostat summary row)"),
    ("cpu.avg_mhz", "number", "MHz", "system-wide Avg_MHz: average clock over the interval including idle time"),
    ("cpu.tsc_mhz", "number", "MHz", "TSC_MHz: the nominal (base) clock the time stamp counter runs at"),
    ("cpu.busy_pct", "number", "%", "system-wide Busy%: share of time CPUs were in C0"),
    ("cpu.c1_pct", "number", "%", "system-wide C1 residency (C1% column, else the hardware CPU%c1 column)"),
    ("cpu.c6_pct", "number", "%", "system-wide C6 residency (C6% column, else the hardware CPU%c6 column); absent when the machine has no C6"),
    ("cpu.hw_c1_pct", "number", "%", "system-wide hardware core C1 residency (CPU%c1)"),
    ("cpu.hw_c6_pct", "number", "%", "system-wide hardware core C6 residency (CPU%c6)"),
    ("cpu.deep_cstates_available", "bool", "", "a deep idle state (C3/C6 class or deeper) has a column, i.e. the idle driver offers one"),
    ("cpu.cstate_pct", "dict", "%", "system-wide residency per requested idle state column (POLL%, C1%, C1E%, C6%...), by state name"),
    ("cpu.pkg_watt", "number", "W", "package power (PkgWatt, summed over packages in the summary row)"),
    ("cpu.busy_cores_mhz", "number", "MHz", "median Bzy_MHz of the CPUs at least 50% busy; absent when none is"),
    ("cpu.busy_cores", "number", "count", "CPUs at least 50% busy in the interval read"),
    ("cpu.idle_cores_c6_pct", "number", "%", "mean C6 residency of the CPUs under 10% busy (same column as cpu.c6_pct)"),
    ("cpu.turbostat_columns", "list", "", "the columns turbostat printed"),
    ("cpu.turbostat_cpus", "number", "count", "per-CPU rows in the interval read"),
    ("cpu.turbostat_version", "string", "", "turbostat's version (preamble)"),
    ("cpu.max_turbo_mhz", "number", "MHz", "highest 'max turbo' frequency in the preamble (1 active core)"),
    ("cpu.all_core_turbo_mhz", "number", "MHz", "lowest 'max turbo' frequency in the preamble (most active cores)"),
    ("cpu.max_efficiency_mhz", "number", "MHz", "'max efficiency frequency' in the preamble (lowest efficient clock)"),
    ("cpu.base_mhz", "number", "MHz", "'base frequency' in the preamble"),
    ("cpu.pkg_cstate_limit", "string", "", "package C-state limit set by the BIOS (pkg-cstate-limit, e.g. pc6; pc0 = no package C-states)"),
    ("cpu.idle_driver", "string", "", "cpuidle driver named in the preamble (intel_idle, acpi_idle, haltpoll...)"),
    ("cpu.idle_governor", "string", "", "cpuidle governor named in the preamble (menu, teo, ladder, haltpoll)"),
    ("cpu.cpufreq_driver", "string", "", "cpufreq driver named in the preamble (intel_pstate, acpi-cpufreq, amd-pstate...)"),
    ("cpu.cpufreq_governor", "string", "", "cpufreq governor named in the preamble (performance, powersave, schedutil, ondemand)"),
    ("cpu.freq.boost", "bool", "", "turbo/boost enabled (preamble 'cpufreq boost: 1')"),
    ("cpu.cstates.available", "list", "", "idle states the idle driver offers, shallow to deep (preamble 'cpu0: C1: MWAIT 0x00' lines)"),
]

# Columns that only turbostat prints; a header line must carry one of them.
_KEY_COLUMNS = {"Avg_MHz", "Busy%", "Bzy_MHz", "TSC_MHz", "PkgWatt", "CorWatt", "CPU%c1", "CPU%c6", "IPC", "Pkg%pc2", "Pkg%pc6"}
_TOPOLOGY = ("Package", "Die", "Node", "L3", "Core", "CPU")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_%+\-]*$")
_VALUE = re.compile(r"^(-|[-+]?\d+(\.\d+)?|[-+]?nan|-?inf|0x[0-9a-fA-F]+)$", re.IGNORECASE)
_UNIT = r"(?:Watt|_J|MHz|Tmp|%)"
_FUSED = re.compile(rf"^([A-Za-z][A-Za-z0-9_%]*?{_UNIT})([A-Z][A-Za-z0-9_%]*{_UNIT})$")
_RATIO = re.compile(r"^\s*\d+\s*\*\s*[\d.]+\s*=\s*([\d.]+)\s*MHz\s+(max turbo|max efficiency|base frequency|TDP Level)", re.IGNORECASE)
_CSTATE_DECL = re.compile(r"^cpu\d+:\s+(POLL|C\d+[\w-]*):\s+\S")
# the preamble's lines (_preamble), compiled once
_P_VERSION = re.compile(r"^turbostat version (\S+)")
_P_PKG_LIMIT = re.compile(r"pkg-cstate-limit=\d+\s*\((\w+)\)")
_P_IDLE_DRIVER = re.compile(r"^current_driver:\s*(\S+)")
_P_IDLE_GOV = re.compile(r"^current_governor(?:_ro)?:\s*(\S+)")
_P_FREQ_DRIVER = re.compile(r"^cpu\d+:\s*cpufreq driver:\s*(\S+)")
_P_FREQ_GOV = re.compile(r"^cpu\d+:\s*cpufreq governor:\s*(\S+)")
_P_BOOST = re.compile(r"^cpufreq boost:\s*([01])\s*$")


def _detect(text: str) -> float:
    names = sum(n in text for n in ("Avg_MHz", "Busy%", "Bzy_MHz", "TSC_MHz", "PkgWatt", "CPU%c1"))
    if names >= 2:
        return 0.95
    if "turbostat version" in text or re.search(r"^turbostat:", text, re.MULTILINE) and names:
        return 0.9
    score = 0.0
    if re.search(r"MHz max turbo \d+ active cores", text):
        score = 0.8
    if re.search(r"^CPUID\(\d\):", text, re.MULTILINE) and re.search(r"^current_driver:", text, re.MULTILINE):
        score = max(score, 0.85)
    return score


def _looks_qp(text: str) -> bool:
    return len(re.findall(r"=\n", text)) >= 2 and len(re.findall(r"=(?:20|3D|09)", text)) >= 2


def _qp_decode(text: str) -> str:
    raw = quopri.decodestring(text.encode("utf-8", errors="replace"))
    return raw.decode("utf-8", errors="replace")


def _is_header(tokens: list[str]) -> bool:
    if len(tokens) < 2:
        return False
    c = tokens[0][0]
    if not ("A" <= c <= "Z" or "a" <= c <= "z"):  # what _NAME needs first: a values row fails here, at once
        return False
    return (
        all(_NAME.match(t) for t in tokens)
        and any(t in _KEY_COLUMNS for t in tokens)
    )


def _is_names(tokens: list[str]) -> bool:
    return bool(tokens) and all(_NAME.match(t) and not _VALUE.match(t) for t in tokens)


def _is_values(tokens: list[str]) -> bool:
    """``all(_is_value(t) for t in tokens)`` for a non-empty list, inlined (a loop without a call per token is
    half the cost: every turbostat row of every node of a fan-out goes through here)."""
    if not tokens:
        return False
    for t in tokens:
        if t.isdecimal():
            continue
        whole, dot, frac = t.partition(".")
        if dot and whole.isdecimal() and frac.isdecimal():
            continue
        if _VALUE.match(t) is None:
            return False
    return True


def _is_value(token: str) -> bool:
    """``_VALUE.match(token)``, the common shapes ('3577', '15.04') without the expression: ``\\d`` is what
    ``str.isdecimal`` tests (Unicode category Nd)."""
    if token.isdecimal():
        return True
    whole, dot, frac = token.partition(".")
    if dot and whole.isdecimal() and frac.isdecimal():
        return True
    return _VALUE.match(token) is not None


def _unwrap(lines: list[str]) -> list[str]:
    """Re-join rows a terminal hard-wrapped: only when the header itself was wrapped (it ends in blanks and
    the next line holds more column names); then each row whose line ends in blanks continues on the next."""
    out: list[str] = []
    i = 0
    wrapped = False
    while i < len(lines):
        line = lines[i]
        toks = line.split()
        if not toks:  # a blank line is neither a header nor values: kept as it is
            out.append(line)
            i += 1
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if _is_header(toks) and line != line.rstrip() and _is_names(nxt.split()):
            wrapped = True
            out.append(line.rstrip() + "\t" + nxt.strip())
            i += 2
            continue
        if wrapped and _is_values(toks) and line != line.rstrip() and _is_values(nxt.split()):
            out.append(line.rstrip() + "\t" + nxt.strip())
            i += 2
            continue
        if _is_header(toks):
            wrapped = False
        out.append(line)
        i += 1
    return out


def _fix_fused(header: list[str], width: int) -> list[str]:
    """A header one name short of the rows: split a fused name such as 'GFXWattRAMWatt'."""
    if width != len(header) + 1:
        return header
    for i, name in enumerate(header):
        m = _FUSED.match(name)
        if m and name not in _KEY_COLUMNS:
            return header[:i] + [m.group(1), m.group(2)] + header[i + 1:]
    return header


def _num(row: dict[str, str], col: str) -> float | int | None:
    v = row.get(col)
    return None if v is None else to_number(v)


def _preamble(lines: list[str]) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    turbo: list[float] = []
    cstates: list[str] = []
    cstate_cpu = None
    for line in lines:
        s = line.strip()
        if not s:  # no pattern below matches an empty line
            continue
        if ":" not in s and "=" not in s and not s.startswith("turbostat version"):
            continue  # every pattern below needs one of these (a table row has none): 9 expressions skipped
        m = _RATIO.match(s)
        if m:
            mhz = float(m.group(1))
            kind = m.group(2).lower()
            if kind == "max turbo":
                turbo.append(mhz)
            elif kind == "max efficiency":
                facts["cpu.max_efficiency_mhz"] = mhz
            elif kind == "base frequency":
                facts["cpu.base_mhz"] = mhz
            continue
        m = _P_VERSION.match(s)
        if m:
            facts["cpu.turbostat_version"] = m.group(1)
            continue
        m = _P_PKG_LIMIT.search(s)
        if m:
            facts["cpu.pkg_cstate_limit"] = m.group(1)
            continue
        m = _P_IDLE_DRIVER.match(s)
        if m:
            facts["cpu.idle_driver"] = m.group(1)
            continue
        m = _P_IDLE_GOV.match(s)
        if m:
            facts.setdefault("cpu.idle_governor", m.group(1))
            continue
        m = _P_FREQ_DRIVER.match(s)
        if m:
            facts["cpu.cpufreq_driver"] = m.group(1)
            continue
        m = _P_FREQ_GOV.match(s)
        if m:
            facts["cpu.cpufreq_governor"] = m.group(1)
            continue
        m = _P_BOOST.match(s)
        if m:
            facts["cpu.freq.boost"] = m.group(1) == "1"
            continue
        m = _CSTATE_DECL.match(s)
        if m:
            cpu = s.split(":", 1)[0]
            if cstate_cpu is None:
                cstate_cpu = cpu
            if cpu == cstate_cpu and m.group(1) not in cstates:
                cstates.append(m.group(1))
    if turbo:
        facts["cpu.max_turbo_mhz"] = max(turbo)
        facts["cpu.all_core_turbo_mhz"] = min(turbo)
    if cstates:
        facts["cpu.cstates.available"] = cstates
    return facts


def _intervals(lines: list[str]) -> list[tuple[list[str], list[dict[str, str]], list[dict[str, str]]]]:
    """(header, summary rows, per-CPU rows) per interval."""
    out: list[tuple[list[str], list[dict[str, str]], list[dict[str, str]]]] = []
    header: list[str] | None = None
    cur: tuple[list[str], list[dict[str, str]], list[dict[str, str]]] | None = None
    for line in lines:
        toks = line.split()
        if not toks:
            continue  # blank: neither a header nor values
        if _is_header(toks):
            header = toks
            cur = (header, [], [])
            out.append(cur)
            continue
        if header is None or cur is None or not _is_values(toks):
            continue  # preamble, warnings ('turbostat: cpu3 jitter ...'), the '0.001871 sec' line
        if len(toks) > len(header):
            fixed = _fix_fused(header, len(toks))
            if fixed is not header:
                header = fixed
                cur = (header, cur[1], cur[2])
                out[-1] = cur
        row = dict(zip(header, toks))
        if "CPU" in header:
            is_summary = row.get("CPU") == "-"
        elif any(c in header for c in _TOPOLOGY):
            is_summary = any(row.get(c) == "-" for c in _TOPOLOGY)
        else:
            is_summary = True  # --Summary: one system row per interval
        if is_summary:
            if cur[1] or cur[2]:  # a second summary without a new header: a new interval
                cur = (header, [], [])
                out.append(cur)
            cur[1].append(row)
        else:
            cur[2].append(row)
    return [iv for iv in out if iv[1] or iv[2]]


def _c_col(header: list[str], n: str) -> str | None:
    if f"C{n}%" in header:
        return f"C{n}%"
    if f"CPU%c{n}" in header:
        return f"CPU%c{n}"
    return None


@parser(
    "turbostat",
    detect=_detect,
    summary="turbostat table (per-CPU and summary rows) with or without its configuration preamble",
    facts=FACTS,
    command="turbostat --interval 1 --num_iterations 3",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "turbostat output (turbostat --interval 1 --num_iterations 3)")
    if _looks_qp(text):
        text = _qp_decode(text)
    lines = _unwrap(text.split("\n"))
    facts = _preamble(lines)
    intervals = _intervals(lines)
    if not intervals:
        if facts:
            return facts
        raise ParseError("no turbostat table (a header with Avg_MHz/Busy%/Bzy_MHz) and no turbostat preamble found")
    most = max(len(iv[2]) for iv in intervals)
    complete = [iv for iv in intervals if iv[1] and len(iv[2]) == most] or [iv for iv in intervals if iv[1]] or intervals
    header, summaries, cpus = complete[-1]
    facts["cpu.turbostat_columns"] = list(header)
    facts["cpu.turbostat_cpus"] = len(cpus)
    summary = summaries[-1] if summaries else None
    if summary is not None:
        for col, name in (("Bzy_MHz", "cpu.busy_mhz"), ("Avg_MHz", "cpu.avg_mhz"), ("TSC_MHz", "cpu.tsc_mhz"),
                          ("Busy%", "cpu.busy_pct"), ("PkgWatt", "cpu.pkg_watt"), ("CPU%c1", "cpu.hw_c1_pct"),
                          ("CPU%c6", "cpu.hw_c6_pct")):
            v = _num(summary, col)
            if v is not None:
                facts[name] = v
        for n, name in (("1", "cpu.c1_pct"), ("6", "cpu.c6_pct")):
            col = _c_col(header, n)
            v = _num(summary, col) if col else None
            if v is not None:
                facts[name] = v
        residency = {}
        for col in header:
            m = re.match(r"^(POLL|C\d+\w*)%$", col)
            v = _num(summary, col) if m else None
            if m and v is not None:
                residency[m.group(1)] = v
        if residency:
            facts["cpu.cstate_pct"] = residency
            # turbostat prints one column per idle state the driver registers (disabled ones too): the columns
            # say which C-states this machine offers at all (intel_idle.max_cstate=1 leaves POLL and C1)
            facts["cpu.deep_cstates_available"] = any(is_deep(state) for state in residency)
    busy_mhz = []
    idle_c6 = []
    c6col = _c_col(header, "6")
    busies = [_num(row, "Busy%") for row in cpus]  # each row's, read once (it was read three times)
    for row, busy in zip(cpus, busies):
        if busy is None:
            continue
        if busy >= 50:
            mhz = _num(row, "Bzy_MHz")
            if mhz is not None:
                busy_mhz.append(mhz)
        elif busy < 10 and c6col:
            c6 = _num(row, c6col)
            if c6 is not None:
                idle_c6.append(c6)
    if any(b is not None for b in busies):
        facts["cpu.busy_cores"] = len([b for b in busies if (b or 0) >= 50])
    if busy_mhz:
        facts["cpu.busy_cores_mhz"] = statistics.median(busy_mhz)
    if idle_c6:
        facts["cpu.idle_cores_c6_pct"] = round(statistics.fmean(idle_c6), 2)
    return facts
