"""What Slurm's client side prints into a job's output: ``srun:``, ``salloc:``, ``sbatch:`` and ``slurmstepd:``
messages (errors, fatals, warnings and the step's own notices), read wherever they stand in the paste.

Real samples (HPC centres' user documentation: CSCS, LUMI, Sherlock; public job logs; tests/data/slurm-client)::

    srun: error: plugin_load_from_file: dlopen(/usr/lib64/slurm/switch_hpe_slingshot.so): libjson-c.so.3: cannot open shared object file: No such file or directory
    srun: error: Couldn't load specified plugin name for switch/hpe_slingshot: Dlopen of plugin file failed
    srun: error: Unable to create step for job 4203072: Invalid generic
                  resource (gres) specification
    srun: Job 63094233 step creation temporarily disabled, retrying (Requested nodes are busy)
    srun: error: nid001: task 3: Exited with exit code 1
    slurmstepd: error: *** STEP 1234.0 ON nid001 CANCELLED AT 2024-03-01T10:00:00 DUE TO TIME LIMIT ***

Read: the messages as printed (the program's prefix kept, a host's ``slurmstepd-node:`` form too), and from them:
why a step could not be created or an allocation was refused (Slurm's own reason, a line the paste wrapped rejoined),
a step left waiting for resources, plugins srun could not load (and the library the loader could not find), the MPI
plugin srun has no such plugin for, tasks that ended badly (exit code, signal), steps and jobs cancelled (and why:
time limit, node failure, preemption), task launches refused on a node, CPU binding outside the step's CPUs.

The messages are Slurm's (src/srun/, src/common/plugin.c, src/slurmd/slurmstepd/, src/api/step_launch.c): the same
words whatever Slurm version; what stands before them (a timestamp, a launcher's rank prefix) is skipped.

What it means here: a step that cannot be created never ran (its GPUs were never touched): the reason is Slurm's
(a GPU count the node cannot give a step that inherits the job's --gpus, a site policy). A plugin srun cannot load
for a missing system library means this srun is not running on the node's own Slurm installation as built: most
often an srun started inside a container image (a batch script run in the container), which lacks the host's
libraries. A step cancelled at its time limit is how a hang ends; that is the symptom, not its cause.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

MAX_ITEMS = 20
MAX_TEXT = 300

FACTS = [
    ("slurm.client.messages", "list", "", f"Slurm's client messages as printed ('srun: error: ...'), deduplicated, at most "
     f"{MAX_ITEMS}"),
    ("slurm.client.step_create_failed", "list", "", "why srun could not create the step (Slurm's reason after 'Unable to "
     "create step for job N:'): 'Invalid generic resource (gres) specification', 'Requested node configuration is not "
     "available', 'More processors requested than permitted', 'Memory required by task is not available' ..."),
    ("slurm.client.alloc_failed", "list", "", "why an allocation or a batch submission was refused ('Unable to allocate "
     "resources: ...', 'Batch job submission failed: ...'): Slurm's reason"),
    ("slurm.client.step_waiting", "bool", "", "srun said the step waits for resources ('step creation temporarily "
     "disabled, retrying', 'Requested nodes are busy')"),
    ("slurm.client.plugins_failed", "list", "", "plugins srun/slurmstepd could not load, as 'type/name' ('switch/"
     "hpe_slingshot', 'mpi/pmix')"),
    ("slurm.client.missing_libraries", "list", "", "shared libraries the loader could not find for a Slurm plugin "
     "('libjson-c.so.3' from 'dlopen(...switch_hpe_slingshot.so): libjson-c.so.3: cannot open shared object file')"),
    ("slurm.client.mpi_plugin_unknown", "list", "", "MPI plugin types srun has no plugin for ('Couldn't find the "
     "specified plugin name for mpi/pmix', 'Invalid MPI type', 'cannot create mpi context for mpi/pmix')"),
    ("slurm.client.task_failures", "list", "", "tasks that ended badly, as srun reports them ('nid001: task 3: Exited "
     "with exit code 1', 'node2: tasks 0-7: Killed')"),
    ("slurm.client.task_signals", "list", "", "the signals srun reports tasks died of (Killed, Segmentation fault, Bus "
     "error, Aborted ...), deduplicated"),
    ("slurm.client.cancelled", "list", "", "steps and jobs slurmstepd reports cancelled ('STEP 1234.0 ON nid001 "
     "CANCELLED AT ... DUE TO TIME LIMIT'), as 'STEP 1234.0 on nid001: TIME LIMIT' ('by 1234' when a user cancelled it, "
     "'no reason given' when slurmstepd gives none, as when srun ends a step whose task failed)"),
    ("slurm.client.cancel_reasons", "list", "", "why they were cancelled: TIME LIMIT, NODE FAILURE, PREEMPTION, "
     "by UID, no reason given ..., deduplicated"),
    ("slurm.client.launch_failed", "list", "", "task launches a node refused ('Task launch for StepId=X failed on node "
     "N: Invalid job credential', 'task 0 launch failed: Plugin initialization failed'), as 'N: reason' or 'task 0: "
     "reason'"),
    ("slurm.client.node_failures", "list", "", "nodes srun reported failing during the step ('Node failure on nid001')"),
    ("slurm.client.cpu_bind_outside", "bool", "", "srun asked to bind tasks to CPUs outside the step's allocation "
     "('CPU binding outside of job step allocation')"),
]

# the client programs (a site's wrapper named 'salloc.exe', as NIH Biowulf's), and slurmstepd as a node names it
# ("slurmstepd-nid001: error: ...")
_PROG = r"(?:(?:srun|salloc|sbatch|sacct|squeue|scontrol|sinfo|scancel|sattach)(?:\.exe)?|slurmstepd(?:-[\w.-]+)?)"
# what may stand before the program's name: nothing, spaces, a launcher's prefix, the '^C' a terminal echoes
_LINE = re.compile(rf"(?:^|[\s\]>)`]|\^C)({_PROG}): ((?:(?:error|fatal|warning|Warning|debug\d?|info|verbose): )?)(.*)$")
# a reply's quote markers ('> ', '>   ') before a pasted line
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_STEP_CREATE = re.compile(r"Unable to create step for job (?:\d+)?\s*:\s*(.(?:.*\S)?)\s*$")
_ALLOC = re.compile(r"(?:Unable to allocate resources|Batch job submission failed|Job submit/allocate failed)\s*:\s*(.(?:.*\S)?)\s*$")
_WAITING = re.compile(r"step creation temporarily disabled, retrying|Requested nodes are busy")
_DLOPEN = re.compile(r"plugin_load_from_file: dlopen\(([^()]{1,300})\): (.{1,300}?): cannot open shared object file")
_PLUGIN_NAME = re.compile(r"(?:Couldn't load specified plugin name for|Can't find plugin for|Couldn't find the specified "
                          r"plugin name for|cannot create \w+ context for|Cannot create context for)\s+([\w-]+/[\w.-]+)",
                          re.IGNORECASE)
_SO_NAME = re.compile(r"/(\w+?)_([\w.-]+?)\.so$")
_MPI_UNKNOWN = re.compile(r"(?:Couldn't find the specified plugin name for|cannot create mpi context for|"
                          r"Cannot create context for|cannot find mpi plugin for)\s+mpi/([\w.-]+)|Invalid MPI type '([^']{1,40})'",
                          re.IGNORECASE)
_TASK = re.compile(r"^([\w.-]+): (tasks? [\d,\-\[\] ]+): (.{1,200}?)\s*$")
_CANCEL = re.compile(r"\*\*\* (STEP|JOB) ([\d.+a-z_]+) ON ([\w.-]+) CANCELLED AT \S+(?: DUE TO ([A-Z][A-Z ]+?)| BY [^*]+?)? \*\*\*")
_LAUNCH = re.compile(r"Task launch for (?:StepId=)?([\w.+]+) failed on node ([\w.-]+): (.{1,200}?)\s*$")
_TASK_LAUNCH = re.compile(r"^task (\d+) launch failed: (.{1,200}?)\s*$")
_NODE_FAIL = re.compile(r"Node failure on ([\w.\-\[\],]+)")
_CPU_BIND = re.compile(r"CPU binding outside of job step allocation")
_SIGNALED = re.compile(r"^(?:Exited with exit code \d+|Killed|Terminated|Segmentation fault|Bus error|Aborted|"
                       r"Floating point exception|Illegal instruction|Hangup|Interrupt|Out Of Memory)", re.IGNORECASE)


def _messages(text: str) -> list[tuple[str, str, str]]:
    """(program, level, message) of every client line, a message the paste wrapped onto an indented next line
    rejoined (LUMI's guide shows 'Invalid generic' / '      resource (gres) specification')."""
    out: list[tuple[str, str, str]] = []
    lines = [_QUOTE.sub("", ln.rstrip("\r")) for ln in text.split("\n")[:200000]]
    for i, ln in enumerate(lines):
        if len(ln) > 4000 or ":" not in ln:
            continue
        m = _LINE.search(ln)
        if not m or (m.start(1) > 0 and not re.match(r"^[\s\[\]<>\w:.,\-^`]*$", ln[:m.start(1)])):
            continue
        msg = m.group(3).strip().rstrip("`").strip()
        if not msg.strip(".… "):
            continue  # a message elided by the person who pasted it ('srun: error: ...')
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        # a message a page or a reply wrapped: its rest on an indented next line that starts in lower case
        # (LUMI's 'Invalid generic' / 'resource (gres) specification'; a quoted 'More' / 'processors requested ...')
        if (nxt[:1].isspace() and nxt.strip()[:1].islower() and not _LINE.search(nxt) and len(nxt) < 300
                and not msg.endswith((".", ":", ")", "***"))):
            msg = f"{msg} {nxt.strip()}"
        out.append((m.group(1).removesuffix(".exe"), m.group(2).rstrip(": ").lower(), msg))
    return out


def _detect(text: str) -> float:
    head = text[:262144]
    if not re.search(rf"(?m)(?:^|[\s\]>)]|\^C){_PROG}: ", head):
        return 0.0
    msgs = _messages(head)
    strong = sum(1 for _, lvl, msg in msgs if lvl in ("error", "fatal") or _STEP_CREATE.search(msg)
                 or _WAITING.search(msg) or _CANCEL.search(msg))
    if not strong:
        # an allocation's own notices ('salloc: Granted job allocation 63094233', 'srun: job 1 queued and waiting
        # for resources') when they start the paste's lines
        starts = len(re.findall(r"(?m)^(?:srun|salloc|sbatch)(?:\.exe)?: (?:Granted job allocation|Pending job "
                                r"allocation|job \d+ (?:queued|has been allocated)|Nodes \S+ are ready|Submitted batch job)",
                                head))
        return 0.6 if starts >= 2 else 0.0
    # pyxis's own errors go to the pyxis kind, slurmstepd's out-of-memory report to the daemon logs' kind
    if all("pyxis" in msg or "oom-kill" in msg or "oom_kill" in msg for _, _, msg in msgs):
        return 0.0
    return 0.7


@parser(
    "slurm-client",
    detect=_detect,
    summary="Slurm's messages in a job's output: srun/salloc/sbatch/slurmstepd errors, steps refused or cancelled",
    facts=FACTS,
    command="the job's output file (slurm-JOBID.out), or the terminal where srun/salloc/sbatch ran",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "Slurm's client messages ('srun: error: ...')")
    msgs = _messages(text)
    if not msgs:
        raise ParseError("no Slurm client line ('srun: error: ...', 'sbatch: error: ...', 'slurmstepd: error: ...')")
    shown: list[str] = []
    step: list[str] = []
    alloc: list[str] = []
    plugins: list[str] = []
    libs: list[str] = []
    mpi: list[str] = []
    tasks: list[str] = []
    signals: list[str] = []
    cancelled: list[str] = []
    reasons: list[str] = []
    launch: list[str] = []
    nodes: list[str] = []
    waiting = bind = False
    for prog, lvl, msg in msgs:
        add_clipped(shown, f"{prog}: {lvl + ': ' if lvl else ''}{msg}", MAX_ITEMS, MAX_TEXT)
        if m := _STEP_CREATE.search(msg):
            add_clipped(step, m.group(1), MAX_ITEMS, MAX_TEXT)
        if m := _ALLOC.search(msg):
            add_clipped(alloc, m.group(1), MAX_ITEMS, MAX_TEXT)
        waiting = waiting or bool(_WAITING.search(msg))
        if m := _DLOPEN.search(msg):
            add_clipped(libs, m.group(2).strip(), MAX_ITEMS, MAX_TEXT)
            if so := _SO_NAME.search(m.group(1)):
                add_clipped(plugins, f"{so.group(1)}/{so.group(2)}", MAX_ITEMS, MAX_TEXT)
        if m := _PLUGIN_NAME.search(msg):
            add_clipped(plugins, m.group(1), MAX_ITEMS, MAX_TEXT)
        if m := _MPI_UNKNOWN.search(msg):
            add_clipped(mpi, m.group(1) or m.group(2), MAX_ITEMS, MAX_TEXT)
        if (m := _TASK.match(msg)) and _SIGNALED.match(m.group(3)):
            add_clipped(tasks, msg, MAX_ITEMS, MAX_TEXT)
            how = m.group(3)
            if not how.lower().startswith("exited with exit code"):
                add_clipped(signals, re.sub(r"(?<!\s)\s*\(core dumped\)$", "", how), MAX_ITEMS, MAX_TEXT)
        if m := _CANCEL.search(msg):
            why = (m.group(4) or ("by " + m.group(0).split(" BY ", 1)[1].rstrip(" *") if " BY " in m.group(0) else "no reason given")).strip()
            add_clipped(cancelled, f"{m.group(1)} {m.group(2)} on {m.group(3)}: {why}", MAX_ITEMS, MAX_TEXT)
            add_clipped(reasons, why, MAX_ITEMS, MAX_TEXT)
        if m := _LAUNCH.search(msg):
            add_clipped(launch, f"{m.group(2)}: {m.group(3)}", MAX_ITEMS, MAX_TEXT)
        elif m := _TASK_LAUNCH.match(msg):
            add_clipped(launch, f"task {m.group(1)}: {m.group(2)}", MAX_ITEMS, MAX_TEXT)
        if m := _NODE_FAIL.search(msg):
            add_clipped(nodes, m.group(1), MAX_ITEMS, MAX_TEXT)
        bind = bind or bool(_CPU_BIND.search(msg))
    facts: dict[str, Any] = {"slurm.client.messages": shown}
    for name, val in (("step_create_failed", step), ("alloc_failed", alloc), ("plugins_failed", plugins),
                      ("missing_libraries", libs), ("mpi_plugin_unknown", mpi), ("task_failures", tasks),
                      ("task_signals", signals), ("cancelled", cancelled), ("cancel_reasons", reasons),
                      ("launch_failed", launch), ("node_failures", nodes)):
        if val:
            facts[f"slurm.client.{name}"] = val
    if waiting:
        facts["slurm.client.step_waiting"] = True
    if bind:
        facts["slurm.client.cpu_bind_outside"] = True
    return facts
