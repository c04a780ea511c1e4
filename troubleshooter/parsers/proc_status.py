"""``/proc/PID/status`` of a process (where it may run and allocate, how often it is preempted), optionally
followed by its cpuset and cgroup, as printed by the ``proc-status`` sources' fixed script::

    Name:   python3
    Pid:    3526
    Threads:        1
    Cpus_allowed:   3
    Cpus_allowed_list:      0-1
    Mems_allowed_list:      0
    voluntary_ctxt_switches:        0
    nonvoluntary_ctxt_switches:     0
    ==> cpuset <==
    /
    ==> cgroup <==
    0::/
    ==> cpuset.cpus.effective /sys/fs/cgroup/cpuset/cpuset.effective_cpus <==
    0-1

(a real capture from the development machine is in tests/data/proc_status/). The markers are ours: the
script prints ``==> NAME <==`` before each extra file so the parser knows which is which.

What it means for training speed: ``Cpus_allowed_list`` is the set of CPUs the training process (or the
context we run in) may use: a data loader squeezed onto a few cores, or sharing cores with host services,
stalls (case 2: housekeeping threads pinned to the data loaders' cores). ``Mems_allowed_list`` shows a
memory binding. Many ``nonvoluntary_ctxt_switches`` relative to voluntary ones mean the process is
preempted: something else wants its cores.

>>> f = parse("Name:\\tpython\\nPid:\\t42\\nCpus_allowed_list:\\t0-7,56-63\\nThreads:\\t12\\n")
>>> f["proc.cpus_allowed_count"], f["proc.threads"]
(16, 12)
"""

from __future__ import annotations

import re

from troubleshooter.parsers.base import ParseError, parser, require_text
from troubleshooter.parsers.numactl import cpu_list, expand_cpu_list

FACTS = [
    ("proc.name", "string", "", "command name (Name:)"),
    ("proc.pid", "number", "", "process id (Pid:)"),
    ("proc.ppid", "number", "", "parent process id (PPid:)"),
    ("proc.state", "string", "", "scheduler state letter (R, S, D, ...)"),
    ("proc.threads", "number", "count", "threads of the process"),
    ("proc.cpus_allowed_list", "string", "", "CPUs the process may run on, as a cpulist '0-7,56-63'"),
    ("proc.cpus_allowed_count", "number", "count", "how many CPUs the process may run on"),
    ("proc.mems_allowed_list", "string", "", "NUMA nodes the process may allocate memory from"),
    ("proc.mems_allowed_count", "number", "count", "how many NUMA nodes the process may allocate from"),
    ("proc.voluntary_ctxt_switches", "number", "count", "times the process gave up its CPU (waiting on I/O, locks)"),
    ("proc.nonvoluntary_ctxt_switches", "number", "count", "times the process was preempted (something else wanted its CPU)"),
    ("proc.nonvoluntary_ctxt_pct", "number", "%", "nonvoluntary / (voluntary + nonvoluntary) context switches"),
    ("proc.vm_rss_kb", "number", "kB", "resident memory (VmRSS)"),
    ("proc.hugetlb_kb", "number", "kB", "hugetlbfs pages mapped (HugetlbPages)"),
    ("proc.cpuset", "string", "", "the process's cpuset path (/proc/PID/cpuset)"),
    ("proc.cgroup", "string", "", "the process's cgroup v2 path ('0::' line of /proc/PID/cgroup), or the cpuset v1 one"),
    ("proc.cgroup_cpus", "string", "", "CPUs its cpuset cgroup grants (cpuset.cpus.effective / cpuset.effective_cpus)"),
    ("proc.cgroup_cpus_count", "number", "count", "how many CPUs its cpuset cgroup grants"),
]

_MARKER = re.compile(r"^==> (\S+)(?: (.*?))? <==$")
_FIELD = re.compile(r"^([A-Za-z_][A-Za-z0-9_()]*):\s*(.*)$")
_KNOWN = ("Name", "Pid", "Tgid", "PPid", "State", "Threads", "Cpus_allowed_list", "Mems_allowed_list",
          "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches", "VmRSS", "Uid", "Gid", "SigQ")


def _detect(text: str) -> float:
    head = text[:20000]
    hits = sum(bool(re.search(rf"^{k}:\s", head, re.MULTILINE)) for k in _KNOWN)
    if hits >= 4 and re.search(r"^(Cpus_allowed_list|Tgid|PPid):", head, re.MULTILINE):
        return 0.95
    return 0.2 * min(hits, 2)


def _int(value: str) -> int | None:
    v = value.strip().split()[0] if value.strip() else ""
    return int(v) if v.isdigit() else None


@parser(
    "proc-status",
    detect=_detect,
    summary="a process's status: allowed CPUs and memory nodes, threads, context switches, cpuset (/proc/PID/status)",
    facts=FACTS,
    command="cat /proc/PID/status",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "the contents of /proc/PID/status")
    sections: dict[str, list[str]] = {"status": []}
    paths: dict[str, str] = {}
    cur = "status"
    for raw in text.split("\n"):
        line = raw.rstrip()
        m = _MARKER.match(line.strip())
        if m:
            cur = m.group(1)
            sections.setdefault(cur, [])
            if m.group(2):
                paths[cur] = m.group(2)
            continue
        sections[cur].append(line)
    fields: dict[str, str] = {}
    for line in sections["status"]:
        m = _FIELD.match(line.strip())
        if m and m.group(1) not in fields:
            fields[m.group(1)] = m.group(2).strip()
    if not any(k in fields for k in ("Pid", "Cpus_allowed_list", "Tgid")) or "Name" not in fields:
        raise ParseError("not /proc/PID/status (no Name:, Pid: or Cpus_allowed_list: lines)")
    facts: dict[str, object] = {"proc.name": fields["Name"]}
    for key, fact in (("Pid", "proc.pid"), ("PPid", "proc.ppid"), ("Threads", "proc.threads"),
                      ("voluntary_ctxt_switches", "proc.voluntary_ctxt_switches"),
                      ("nonvoluntary_ctxt_switches", "proc.nonvoluntary_ctxt_switches"),
                      ("VmRSS", "proc.vm_rss_kb"), ("HugetlbPages", "proc.hugetlb_kb")):
        if key in fields:
            v = _int(fields[key])
            if v is not None:
                facts[fact] = v
    if fields.get("State"):
        facts["proc.state"] = fields["State"].split()[0]
    for key, fact in (("Cpus_allowed_list", "proc.cpus_allowed"), ("Mems_allowed_list", "proc.mems_allowed")):
        if key in fields:
            ids = expand_cpu_list(fields[key])
            if ids is not None:
                facts[f"{fact}_list"] = cpu_list(ids)
                facts[f"{fact}_count"] = len(set(ids))
    vol, nonvol = facts.get("proc.voluntary_ctxt_switches"), facts.get("proc.nonvoluntary_ctxt_switches")
    if isinstance(vol, int) and isinstance(nonvol, int) and vol + nonvol > 0:
        facts["proc.nonvoluntary_ctxt_pct"] = round(100.0 * nonvol / (vol + nonvol), 2)
    cpuset = [ln.strip() for ln in sections.get("cpuset", []) if ln.strip()]
    if cpuset and cpuset[0].startswith("/"):
        facts["proc.cpuset"] = cpuset[0]
    cgroup = [ln.strip() for ln in sections.get("cgroup", []) if ln.strip()]
    for line in cgroup:
        if line.startswith("0::"):
            facts["proc.cgroup"] = line[3:] or "/"
            break
    else:
        for line in cgroup:
            parts = line.split(":", 2)
            if len(parts) == 3 and "cpuset" in parts[1].split(","):
                facts["proc.cgroup"] = parts[2]
                break
    eff = [ln.strip() for ln in sections.get("cpuset.cpus.effective", []) if ln.strip()]
    if eff:
        ids = expand_cpu_list(eff[0])
        if ids is not None and ids:
            facts["proc.cgroup_cpus"] = cpu_list(ids)
            facts["proc.cgroup_cpus_count"] = len(set(ids))
    return facts
