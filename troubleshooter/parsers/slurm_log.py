"""Slurm's daemon logs on GPUs and GRES: ``slurmd.log``, ``slurmctld.log``, ``journalctl -u slurmd`` (and the
lines ``systemctl status slurmd`` shows), ``slurmd -G``, with or without their timestamps; and slurmstepd's report,
in a job's output, of a step its memory cgroup killed (``Detected 1 oom-kill event(s) in StepId=4242.batch``: the job's
host memory, not the GPUs').

Real samples (ComputeCanada/puppet-magic_castle#27 and #361, an OKE GB200 test log, NVIDIA/deepops#1214,
SlinkyProject/slurm-operator#57, BiBiServ/bibigrid#705; tests/data/slurm-log)::

    Feb 20 18:59:13 node2.int.rubberducky.calculquebec.cloud slurmd[57977]: fatal: gres.conf duplicate records for gpu
    May 23 12:49:52 mgmt1 slurmctld[80708]: slurmctld: _node_config_validate: gres/gpu: Count changed on node nodegpu1 (4 != 3)
    May 23 12:49:52 mgmt1 slurmctld[80708]: slurmctld: error: Setting node nodegpu1 state to INVAL with reason:gres/gpu count reported lower than configured (3 < 4)
    We were configured to autodetect nvml functionality, but we weren't able to find that lib when Slurm was configured.
    [2022-08-23T15:24:51.389] gpu/nvml: _get_system_gpu_list_nvml: 4 GPU system device(s) detected
    [2025-10-06T15:42:05] error: Discarding the following config-only GPU due to lack of File specification:

The messages are Slurm's own (src/interfaces/gres.c, src/interfaces/gpu.c, src/plugins/gres/gpu/gres_gpu.c,
src/plugins/gpu/nvml/gpu_nvml.c): a line is read by its message, whatever prefix the log or the journal put
before it (``[timestamp]``, ``host slurmd[PID]:``, ``slurmctld:``, ``error:``/``fatal:``), and a person's Markdown
``**bold**`` around it.

What it means: slurmd refuses a gres.conf it cannot read (``gres.conf duplicate records for gpu``: two GPU
records with neither File= nor Type=, as AutoDetect=nvml plus bare ``Name=gpu`` lines give); slurmctld drains a
node whose slurmd reports fewer GPUs than slurm.conf configures (``gres/gpu count reported lower than configured
(M < N)``): a configuration that no longer fits the node (a MIG re-partition, a typo), a GPU gone, or (0 reported)
a slurmd that cannot detect GPUs at all. ``We were configured to autodetect nvml functionality, but we weren't able
to find that lib when Slurm was configured`` is slurmd saying it was built without NVML while gres.conf asks for
AutoDetect=nvml; ``We were configured with nvml functionality, but that lib wasn't found on the system`` is a build
with NVML on a node where libnvidia-ml.so cannot be loaded (the driver's library, not Slurm's build).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("slurm.log.gres_messages", "list", "", "Slurm's GPU/GRES log messages as printed (timestamps and daemon prefixes "
     "cut), at most 20"),
    ("slurm.log.gres_conf_error", "string", "", "slurmd refused gres.conf: its message ('gres.conf duplicate records "
     "for gpu', 'some records have File specification while others do not', 'Invalid GRES record ...')"),
    ("slurm.log.gres_mismatch", "list", "", "slurmd's own reports that the GPUs configured and those it detected "
     "disagree (autodetected GPUs ignored, a config-only GPU discarded, mismatching Cores/Links, a file-less GPU "
     "ignored, MIG enabled without instances, an invalid core specification)"),
    ("slurm.log.gpu_count_reported", "number", "count", "GPUs the node's slurmd reported where slurmctld configures "
     "more ('gres/gpu count reported lower than configured (M < N)': M)"),
    ("slurm.log.gpu_count_configured", "number", "count", "GPUs slurmctld configures for that node (N)"),
    ("slurm.log.gpu_count_changed", "list", "", "nodes whose GPU count changed between registrations "
     "('Count changed on node X (4 != 3)'): 'X: 4 -> 3'"),
    ("slurm.log.gres_invalid_nodes", "list", "", "nodes slurmctld set INVAL or drained for a GRES reason"),
    ("slurm.log.nvml_not_built", "bool", "", "slurmd says gres.conf asks for AutoDetect=nvml but Slurm was built "
     "without NVML ('we weren't able to find that lib when Slurm was configured')"),
    ("slurm.log.nvml_lib_not_found", "bool", "", "slurmd (built with NVML) could not load libnvidia-ml.so on this node"),
    ("slurm.log.plugins_not_found", "list", "", "plugins slurmd could not find or load ('gpu/nvml', 'cgroup/v2')"),
    ("slurm.log.gpus_detected", "number", "count", "GPUs slurmd's GPU plugin detected ('N GPU system device(s) "
     "detected')"),
    ("slurm.log.gres_gpu_count", "number", "count", "GPUs in slurmd's GRES list ('Gres Name=gpu ... Count=N' lines, "
     "as slurmd -G prints them), summed"),
    ("slurm.log.gres_cores_not_socket_aligned", "list", "", "GPU core ranges Slurm refused because they do not cover "
     "whole sockets as slurm.conf describes them ('gres/gpu GRES autodetected core affinity 0-7 on node node0 doesn't "
     "match socket boundaries. (Socket 0 is cores 0-1)'), each as 'RANGE (socket N is cores A-B)'"),
    ("slurm.log.oom_killed_steps", "list", "", "job steps in which slurmstepd saw the cgroup's out-of-memory killer "
     "('Detected 1 oom-kill event(s) in StepId=4242.batch', 'Detected 1 oom_kill event in StepId=440575.0'): the job "
     "used more host memory than it asked for"),
    ("slurm.log.gres_files_missing", "list", "", "device files gres.conf names that do not exist on the node "
     "('can't stat gres.conf file /dev/nvidia0')"),
]

# what the log or the journal puts before the message: "[2024-01-02T03:04:05.678] ", "Feb 20 18:59:13 host
# slurmd[57977]: ", "slurmctld: ", "error: ", a Markdown "**"
_STAMP = re.compile(r"^\s*(?:\*\*)?\s*(?:\[\d{4}-\d\d-\d\d[T ][\d:.]+(?:[+-]\d\d:?\d\d|Z)?\]\s*)?")
_SYSLOG = re.compile(r"^(?:[A-Z][a-z]{2}\s+\d{1,2}\s+[\d:]{8}|\d{4}-\d\d-\d\dT[\d:.]+(?:[+-]\d\d:?\d\d|Z)?)\s+\S+\s+"
                     r"(?=(?:slurmd|slurmctld|slurmstepd)(?:\[\d+\])?:)")
# (slurmd -D -v prints "slurmd-HOSTNAME: ")
_DAEMON = re.compile(r"^(?:slurmd|slurmctld|slurmstepd)(?:-[\w.-]+)?(?:\[\d+\])?:\s*")
_LEVEL = re.compile(r"^(?:fatal|error|warning|info|verbose|debug\d?)\s*:\s*", re.IGNORECASE)
_GPU_NAMES = r"(?:gpu|mps|shard|nvidia\w*)"

_CONF_ERRORS = [re.compile(p) for p in (
    rf"gres\.conf duplicate records for {_GPU_NAMES}\b",
    rf"gres\.conf for {_GPU_NAMES}, some records have \"?(?:File|Type=?)\"? specification while others do not",
    rf"Invalid GRES record for {_GPU_NAMES}, (?:invalid count|count does not match File value)",
    r"can't parse File=\S+",
    rf"{_GPU_NAMES} duplicate device file name \(\S+\)",
    r"gres\.conf: duplicate node-local AutoDetect specification does not match the first",
    rf"Some {_GPU_NAMES} GRES in slurm\.conf have a type while others do not",
    r"MultipleFiles does not contain multiple files|File and MultipleFiles options are mutually exclusive",
    r"\S+ is not a valid character or block device, fix your gres\.conf",
)]
_MISMATCH = [re.compile(p) for p in (
    r"The following autodetected GPUs are being ignored",
    r"Discarding the following config-only GPU due to lack of File specification",
    r"This GPU specified in \[slurm\|gres\]\.conf has mismatching Cores or Links",
    r"Ignoring file-less GPU \S+ from final GRES list",
    rf"A line in gres\.conf for GRES {_GPU_NAMES}\S* has \d+ more configured than expected in slurm\.conf",
    r"If using AutoDetect the amount of GPUs configured in slurm\.conf does not match what was detected",
    r"gres/gpu: invalid GRES core specification",
    r"MIG mode is enabled, but no MIG devices were found",
    r"gres/gpu: \S*:? ?has CPUs configured for only some of the records",
)]
# src/interfaces/gres.c: the cores a GPU is bound to (autodetected from NVML, or gres.conf's Cores=) must be
# whole sockets of slurm.conf's node description; the message also reaches a node's Reason=
_SOCKETS = re.compile(r"GRES (?:autodetected core affinity|core specification) ([\d,-]+)\b.{0,120}?doesn't match "
                      r"socket boundaries\.?(?: \(Socket (\d+) is cores ([\d,-]+)\))?")
_OOM = re.compile(r"Detected \d+ oom[-_]kill events?(?:\(s\))? in (?:step |StepId=)(\d+(?:\.\w+)?)")
_LOWER = re.compile(r"gres/gpu count reported lower than configured \((\d+) < (\d+)\)")
_CHANGED = re.compile(r"gres/gpu:? Count changed on node (\S+) \((\d+) != (\d+)\)")
_INVAL = re.compile(r"Setting node (\S+) state to INVAL with reason:\s*(gres/gpu.*)$")
_NOT_BUILT = re.compile(r"We were configured to autodetect nvml functionality, but we weren't able to find that lib "
                        r"when Slurm was configured")
_LIB_MISSING = re.compile(r"We were configured with nvml functionality, but that lib wasn't found on the system")
_PLUGIN = re.compile(r"(?:Couldn't find the specified plugin name for|cannot find \w+ plugin for|cannot create \w+ "
                     r"context for|Couldn't load specified plugin name for) ([\w]+/[\w.-]+?)(?::| looking|\s*$)")
_DETECTED = re.compile(r"(?:gpu/\w+: _get_system_gpu_list_\w+: )?(?<!\d)(\d+) GPU system device\(s\) detected")
_GRES_LINE = re.compile(r"^Gres Name=gpu Type=\S+ Count=(\d+)\b")
_FILE_MISSING = re.compile(r"(?:can't stat gres\.conf file|Waiting for gres\.conf file) (\S+?)(?::|\s*$)")
# a GRES/GPU message worth keeping as printed
_KEEP = re.compile(r"gres|GRES|gpu/|GPU|nvml|NVML|gpu_nvml|INVAL")
_FAST = re.compile(r"gres|GRES|socket boundaries|oom[-_]kill|nvml|GPU system device|autodetected GPU|config-only GPU|file-less GPU|MIG mode")
MAX_LINE = 4000


def message(line: str) -> str:
    """The log message without what the log file or the journal put before it."""
    s = _STAMP.sub("", line, count=1).lstrip("*")
    s = _SYSLOG.sub("", s, count=1)
    for _ in range(2):  # "slurmctld[80708]: slurmctld: error: ..."
        s = _DAEMON.sub("", s, count=1)
    s = _LEVEL.sub("", s, count=1)
    return s.strip().rstrip("*").strip()


def _signal(msg: str) -> bool:
    return bool(any(rx.search(msg) for rx in _CONF_ERRORS) or any(rx.search(msg) for rx in _MISMATCH)
                or _LOWER.search(msg) or _CHANGED.search(msg) or _NOT_BUILT.search(msg) or _LIB_MISSING.search(msg)
                or _SOCKETS.search(msg) or _OOM.search(msg) or _DETECTED.search(msg) or _GRES_LINE.match(msg) or _FILE_MISSING.search(msg)
                or (_PLUGIN.search(msg) and "gpu/" in msg))


def _detect(text: str) -> float:
    head = text[:65536]
    if not _FAST.search(head):
        return 0.0
    hits = sum(1 for ln in head.split("\n")[:3000] if len(ln) < MAX_LINE and _FAST.search(ln) and _signal(message(ln)))
    return 0.9 if hits else 0.0


@parser(
    "slurm-log",
    detect=_detect,
    summary="Slurm's daemon logs on GPUs/GRES: slurmd.log, slurmctld.log, journalctl -u slurmd, slurmd -G",
    facts=FACTS,
    command="journalctl -u slurmd --since -1h | grep -iE 'gres|gpu|nvml'   (on the node; slurmctld's log on the "
            "controller; or slurmd -G)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "slurmd/slurmctld log lines on GRES ('fatal: gres.conf duplicate records for gpu')")
    kept: list[str] = []
    conf_error = ""
    mismatch: list[str] = []
    changed: list[str] = []
    invalid: list[str] = []
    plugins: list[str] = []
    missing: list[str] = []
    aligned: list[str] = []
    oom: list[str] = []
    lower: tuple[int, int] | None = None
    not_built = lib_missing = False
    detected: int | None = None
    gres_count = 0
    gres_lines = 0
    signals = 0
    for raw in text.split("\n"):
        if len(raw) > MAX_LINE or not raw.strip():
            continue
        msg = message(raw)
        if not msg:
            continue
        signal = False
        for rx in _CONF_ERRORS:
            m = rx.search(msg)
            if m:
                conf_error = conf_error or m.group(0)
                signal = True
                break
        for rx in _MISMATCH:
            m = rx.search(msg)
            if m:
                add_clipped(mismatch, m.group(0))
                signal = True
                break
        m = _LOWER.search(msg)
        if m:
            signal = True
            lower = lower or (int(m.group(1)), int(m.group(2)))
        m = _OOM.search(msg) if "kill" in msg else None
        if m:
            signal = True
            add_clipped(oom, m.group(1))
        m = _SOCKETS.search(msg)
        if m:
            signal = True
            add_clipped(aligned, f"{m.group(1)} (socket {m.group(2)} is cores {m.group(3)})" if m.group(3) else m.group(1))
        m = _CHANGED.search(msg)
        if m:
            signal = True
            add_clipped(changed, f"{m.group(1)}: {m.group(2)} -> {m.group(3)}")
        m = _INVAL.search(msg)
        if m:
            add_clipped(invalid, m.group(1))
        if _NOT_BUILT.search(msg):
            not_built = signal = True
        if _LIB_MISSING.search(msg):
            lib_missing = signal = True
        m = _PLUGIN.search(msg)
        if m:
            add_clipped(plugins, m.group(1))
            signal = signal or "gpu/" in m.group(1)
        m = _DETECTED.search(msg)
        if m:
            detected = int(m.group(1))
            signal = True
        m = _GRES_LINE.match(msg)
        if m:
            gres_count += int(m.group(1))
            gres_lines += 1
            signal = True
        m = _FILE_MISSING.search(msg)
        if m:
            add_clipped(missing, m.group(1))
            signal = True
        signals += signal
        if signal or _KEEP.search(msg):
            add_clipped(kept, msg)
    if not signals:
        raise ParseError("no Slurm GRES/GPU log message ('gres.conf duplicate records for gpu', 'gres/gpu count "
                         "reported lower than configured', 'N GPU system device(s) detected') and no oom-kill report")
    facts: dict[str, Any] = {"slurm.log.gres_messages": kept}
    if conf_error:
        facts["slurm.log.gres_conf_error"] = conf_error
    if mismatch:
        facts["slurm.log.gres_mismatch"] = mismatch
    if lower:
        facts["slurm.log.gpu_count_reported"], facts["slurm.log.gpu_count_configured"] = lower
    if changed:
        facts["slurm.log.gpu_count_changed"] = changed
    if aligned:
        facts["slurm.log.gres_cores_not_socket_aligned"] = aligned
    if oom:
        facts["slurm.log.oom_killed_steps"] = oom
    if invalid:
        facts["slurm.log.gres_invalid_nodes"] = invalid
    if not_built:
        facts["slurm.log.nvml_not_built"] = True
    if lib_missing:
        facts["slurm.log.nvml_lib_not_found"] = True
    if plugins:
        facts["slurm.log.plugins_not_found"] = plugins
    if detected is not None:
        facts["slurm.log.gpus_detected"] = detected
    if gres_lines:
        facts["slurm.log.gres_gpu_count"] = gres_count
    if missing:
        facts["slurm.log.gres_files_missing"] = missing
    return facts
