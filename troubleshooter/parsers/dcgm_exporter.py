"""NVIDIA dcgm-exporter's own log (the Prometheus exporter of DCGM's GPU metrics, a DaemonSet of the GPU Operator):
what it started with, what it could not collect, and what stopped it.

Real samples (NVIDIA/gpu-monitoring-tools#141, NVIDIA/dcgm-exporter#398, #459, #368; tests/data/dcgm-exporter),
in its three logging styles (logrus' key=value until 3.x, logrus' text, Go's slog from 4.x)::

    time="2020-12-15T11:28:40Z" level=fatal msg="Error watching fields: This request is serviced by a module of DCGM that is not currently loaded"
    INFO[0000] Collecting DCP Metrics
    2025/03/03 06:51:55 INFO Not collecting DCP metrics: This request is serviced by a module of DCGM that is not currently loaded
    2025/03/03 06:51:55 WARN Skipping line 38 ('DCGM_FI_PROF_GR_ENGINE_ACTIVE'): metric not enabled

What it means here: the exporter is monitoring, not the job's path: an exporter that stopped ('level=fatal') leaves
the GPUs unwatched but the GPUs and the job as they were. 'Not collecting DCP metrics' says DCGM's profiling module
is not available to it: a GPU without profiling metrics (consumer, older Tesla such as M60, some A10 fields), another
DCGM or profiler holding the counters, or MIG; the profiling metrics are then skipped ('metric not enabled'), the
others still collected. A remote host engine (-r HOST:PORT) means the GPUs it reports are that host's.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, logrus_entry, parser, require_text

MAX_ITEMS = 40

FACTS = [
    ("dcgm_exporter.started", "bool", "", "dcgm-exporter's start line is in the log ('Starting dcgm-exporter')"),
    ("dcgm_exporter.version", "string", "", "dcgm-exporter's version, where its start line gives it (4.x: "
     "'Starting dcgm-exporter Version=4.1.1-4.0.4')"),
    ("dcgm_exporter.stopped_on", "string", "", "the message dcgm-exporter exited on (its level=fatal / FATA line: "
     "'Error watching fields: Feature not supported'); the exporter stopped, the GPUs did not"),
    ("dcgm_exporter.dcp_collecting", "bool", "", "the exporter set out to collect profiling (DCP) metrics ('Collecting "
     "DCP Metrics')"),
    ("dcgm_exporter.dcp_unavailable", "string", "", "why dcgm-exporter collects no profiling (DCP) metrics ('Not "
     "collecting DCP metrics: This request is serviced by a module of DCGM that is not currently loaded')"),
    ("dcgm_exporter.skipped_metrics", "list", "", "metrics the exporter skipped as not enabled (DCGM_FI_PROF_* where "
     "profiling is unavailable)"),
    ("dcgm_exporter.remote_hostengine", "string", "", "the remote DCGM host engine the exporter connected to "
     "('Attemping to connect to remote hostengine at my-gpu-vm:5555'): the GPUs it reports are that host's"),
]

_MARK = re.compile(r"Starting dcgm-exporter|Collecting DCP Metrics|Not collecting DCP metrics|DCGM successfully "
                   r"initialized|remote hostengine at|Skipping line \d+ \('DCGM_FI_|Failed to watch metrics")
# the message of one log line in each style: logrus' two (base.logrus_entry) and 'YYYY/MM/DD HH:MM:SS LEVEL ...' (Go's
# slog), with its level (greedy and stripped in code, as logrus_entry does: a lazy group before \s*$ was quadratic)
_SLOG = re.compile(r"\b\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\s+(INFO|WARN|ERROR|FATAL|DEBUG)\s+(.*)$")
_VERSION = re.compile(r"Starting dcgm-exporter\S*\s+(?:Version=)?\"?([\w.+-]*\d[\w.+-]*)")
_SKIP = re.compile(r"Skipping line \d+ \('(DCGM_FI_\w+)'\)")
_REMOTE = re.compile(r"remote hostengine at\s+(\S+?)[\"\s]*$")
_FATAL_LEVELS = ("fatal", "panic")


def _detect(text: str) -> float:
    hits = len(_MARK.findall(text[:262144]))
    return 0.85 if hits >= 2 else 0.7 if hits == 1 else 0.0


def _lines(text: str):
    """(level, message) of each of the exporter's log lines, in any of its three styles; other lines are skipped."""
    for raw in text.split("\n"):
        entry = logrus_entry(raw)
        if entry:
            yield entry
            continue
        m = _SLOG.search(raw)
        if m:
            yield m.group(1).lower(), m.group(2).strip()
            continue
        if _MARK.search(raw):  # a message quoted without its level (a thread's one line)
            yield "", raw.strip()


@parser(
    "dcgm-exporter",
    detect=_detect,
    summary="NVIDIA dcgm-exporter's log: what stopped it, profiling (DCP) metrics it cannot collect, a remote host engine",
    facts=FACTS,
    command="kubectl logs -n gpu-operator -l app=nvidia-dcgm-exporter --tail=100",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "dcgm-exporter's log ('Starting dcgm-exporter', 'Collecting DCP Metrics', ...)")
    if not _MARK.search(text):
        raise ParseError("no dcgm-exporter line ('Starting dcgm-exporter', 'Collecting DCP Metrics', 'Not collecting "
                         "DCP metrics', 'Skipping line N (...)')")
    facts: dict[str, Any] = {}
    skipped: list[str] = []
    for level, msg in _lines(text):
        if msg.startswith("Starting dcgm-exporter"):
            facts["dcgm_exporter.started"] = True
            v = _VERSION.match(msg)
            if v:
                facts["dcgm_exporter.version"] = v.group(1)
        elif msg.startswith("Collecting DCP Metrics"):
            facts["dcgm_exporter.dcp_collecting"] = True
        elif msg.startswith("Not collecting DCP metrics"):
            facts.setdefault("dcgm_exporter.dcp_unavailable", msg.split(":", 1)[-1].strip() or msg)
        elif "remote hostengine at" in msg:
            r = _REMOTE.search(msg)
            if r:
                facts["dcgm_exporter.remote_hostengine"] = r.group(1)
        s = _SKIP.search(msg)
        if s:
            add_clipped(skipped, s.group(1), MAX_ITEMS, 80)
        if level in _FATAL_LEVELS and "dcgm_exporter.stopped_on" not in facts:
            facts["dcgm_exporter.stopped_on"] = msg[:300]
    if skipped:
        facts["dcgm_exporter.skipped_metrics"] = list(dict.fromkeys(skipped))
    if not facts:
        raise ParseError("dcgm-exporter's words found, but no start, stop, profiling or host engine line to read")
    return facts
