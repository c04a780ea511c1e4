"""``dcgmi diag -r N``: DCGM's diagnostic table, test by test, with its Warning / Info rows.

Real sample (4x A10G, DCGM 3.3.9, ``-r 3``; tests/data/dcgm-diag)::

    +-----  Stress  ------------+------------------------------------------------+
    | Targeted Stress           | Pass - All                                     |
    | Targeted Power            | Pass - GPUs: 0, 2, 3                           |
    |                           | Fail - GPU: 1                                  |
    | Warning                   | GPU 1 Max power of 224.1 did not reach desire  |
    |                           | d power minimum target_power_min_ratio of 224  |
    |                           | .2 for GPU 1 Verify that the clock speeds and  |
    |                           |  GPU utilization are high.                     |

A test's result is ``Pass``, ``Fail``, ``Warn``, ``Skip`` or ``Not Run``, for all GPUs or listed ones (``Fail -
GPU: 1``, ``FAIL - GPU 3: message``); a result continued on the next row (first column blank) belongs to the test
above; a Warning / Error / Info message wrapped over rows is joined back. Section rows (``-----  Stress ---``) and
the metadata (DCGM version, driver) are read too; a fragment without the table's frame is read as far as it goes.

What it means: a failed DCGM test is the vendor's own verdict that a GPU misbehaves under that test (power,
stress, memory, PCIe, NVLink); its Warning rows say what was seen. A node whose GPUs pass is evidence against a
GPU hardware cause, not proof of a healthy job. The verdict alone names no configuration cause.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

MAX_TEXT = 400

FACTS = [
    ("dcgm.version", "string", "", "DCGM version the diagnostic ran with"),
    ("gpu.driver_version", "string", "", "NVIDIA driver version"),
    ("dcgm.results", "dict", "", "test -> its result rows as printed ('Targeted Power' -> ['Pass - GPUs: 0, 2, 3', 'Fail - GPU: 1'])"),
    ("dcgm.failed_tests", "list", "", "tests with a Fail result, in order"),
    ("dcgm.failed_gpus", "list", "", "GPU indexes named in Fail results, sorted ('All' gives none)"),
    ("dcgm.messages", "list", "", "the Warning and Error rows, each joined back into one message"),
    ("dcgm.all_passed", "bool", "", "every test run passed (Skip and Not Run aside)"),
]

_ROW = re.compile(r"^\s*\|\s?((?:.*?\S)??)\s*\|\s?((?:.*?\S)??)\s*(?:\|\s*)?$")
_SECTION = re.compile(r"^\s*[|+]-{3,}\s+(\w(?:[\w ]*\w)?)\s+-+\+")
_RESULT = re.compile(r"^(Pass|Fail|FAIL|PASS|Warn|WARN|Skip|SKIP|Not Run)\b(?:\s*-\s*(.*))?$")
_GPUS = re.compile(r"GPUs?:?\s*([\d,\s]+)")


def _detect(text: str) -> float:
    head = text[:262144]
    if "Successfully ran diagnostic" in head or re.search(r"^[^\S\n]*\|\s*Diagnostic\s*\|\s*Result\s*\|", head, re.MULTILINE):
        return 0.9
    rows = re.findall(r"^[^\S\n]*\|\s*(?:GPU Memory|Targeted Stress|Targeted Power|Memory Bandwidth|PCIe|Diagnostic|Denylist|"
                      r"NVML Library|SM Stress|Memtest|NVLink)\s*\|\s*(?:Pass|Fail|FAIL|Skip|Warn)", head, re.MULTILINE)
    return 0.8 if rows else 0.0


@parser(
    "dcgm-diag",
    detect=_detect,
    summary="dcgmi diag -r N: DCGM's diagnostic results per test, failed GPUs, warnings",
    facts=FACTS,
    command="dcgmi diag -r 2",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "dcgmi diag output")
    results: dict[str, list[str]] = {}
    messages: list[str] = []
    version = driver = None
    last_test: str | None = None
    last_msg: int | None = None  # index into messages of the message being continued
    for raw in text.split("\n"):
        if _SECTION.match(raw):
            last_test, last_msg = None, None
            continue
        m = _ROW.match(raw)
        if not m or set(raw.strip()) <= set("+=-|"):
            continue
        name, value = m.group(1).strip(), m.group(2).rstrip()
        if name in ("Diagnostic",) and value.strip() == "Result":
            continue
        if not name:
            if last_msg is not None:  # a wrapped message: the row's text joins as printed (words may be split)
                messages[last_msg] = (messages[last_msg] + value)[:MAX_TEXT]
            elif last_test is not None and _RESULT.match(value.strip()):
                results[last_test].append(value.strip())
            continue
        if name == "DCGM Version":
            version = value.strip()
            continue
        if name == "Driver Version Detected":
            driver = value.strip()
            continue
        if name in ("Warning", "Error", "Info"):
            last_test = None
            if name == "Info":
                last_msg = None
                continue
            messages.append(value.strip())
            last_msg = len(messages) - 1
            continue
        last_msg = None
        r = _RESULT.match(value.strip())
        if r:
            results.setdefault(name, []).append(value.strip())
            last_test = name
        else:
            last_test = None
    if not results:
        raise ParseError("no DCGM test result row ('| GPU Memory | Pass - All |') found")
    failed = [t for t, rs in results.items() if any(x.upper().startswith("FAIL") for x in rs)]
    gpus: set[int] = set()
    for t in failed:
        for x in results[t]:
            if x.upper().startswith("FAIL"):
                g = _GPUS.search(x)
                if g:
                    gpus.update(int(n) for n in re.findall(r"\d+", g.group(1)))
    facts: dict[str, Any] = {"dcgm.results": results, "dcgm.failed_tests": failed, "dcgm.failed_gpus": sorted(gpus),
                             "dcgm.messages": messages,
                             "dcgm.all_passed": all(x.upper().startswith(("PASS", "SKIP", "NOT RUN")) for rs in results.values() for x in rs)}
    if version:
        facts["dcgm.version"] = version
    if driver:
        facts["gpu.driver_version"] = driver
    return facts
