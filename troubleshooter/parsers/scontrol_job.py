"""``scontrol show job J``: the job's state, allocation and resources as the Slurm controller sees them.

Real sample (TGCC Irene, Slurm, embedded in a site epilogue report; trimmed)::

    JobId=2120478 JobName=MPI_PMV
       UserId=tabernera(4224) GroupId=ocre(3000) MCS_label=cont001
       JobState=RUNNING Reason=None Dependency=(null)
       RunTime=00:00:23 TimeLimit=00:03:00 TimeMin=N/A
       Partition=rome AllocNode:Sid=inti6015:171559
       NodeList=inti6015
       NumNodes=1 NumCPUs=16 NumTasks=16 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
       TRES=cpu=16,mem=30000M,node=1,billing=16
       JOB_GRES=(null)
         Nodes=inti6015 CPU_IDs=16-47 Mem=30000 GRES=
       Command=/tmp/MPI_job16.sh_PvQDDi
       WorkDir=/ccc/work/cont001/ocre/tabernera/MPI/MPI_PMV_1.1

The format: ``Key=value`` pairs separated by spaces over indented lines. Values hold no spaces except on
the keys Slurm prints alone on their line (``Command=``, ``WorkDir=``, ``StdOut=``, ``Comment=``...):
those take the rest of the line. The indented ``Nodes=... CPU_IDs=...`` lines (``scontrol show job -d``)
are the per-node allocation. Text around the record (a site's epilogue banner, sacct tables after it) is
skipped: the record starts at ``JobId=`` and ends at the first blank line. Several records (an array job):
the first is read, and ``slurm.job.records`` counts them. ``scontrol show job -o`` (one line) works too.

What it tells: where the job runs (nodes, CPUs, GPUs), for how long, and why it waits (``Reason=``). The
nodelist and GRES are what the per-node comparison and the srun --overlap probes need.
"""

from __future__ import annotations

import re

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("slurm.job.id", "string", "", "JobId (array jobs: ArrayJobId_TaskId is in slurm.job.array)"),
    ("slurm.job.array", "string", "", "ArrayJobId_ArrayTaskId for an array task"),
    ("slurm.job.name", "string", "", "JobName"),
    ("slurm.job.state", "string", "", "JobState (RUNNING, PENDING, COMPLETED...)"),
    ("slurm.job.reason", "string", "", "Reason (None when running normally)"),
    ("slurm.job.partition", "string", "", "Partition"),
    ("slurm.job.nodelist", "string", "", "NodeList (compressed form, e.g. gpu[001-004]); absent while pending"),
    ("slurm.job.num_nodes", "number", "count", "NumNodes"),
    ("slurm.job.num_cpus", "number", "count", "NumCPUs"),
    ("slurm.job.num_tasks", "number", "count", "NumTasks"),
    ("slurm.job.tres", "dict", "", "TRES (allocated trackable resources): cpu, mem, node, gres/gpu..."),
    ("slurm.job.gres", "string", "", "GRES requested or allocated (JOB_GRES, TresPerNode, Gres); empty when (null)"),
    ("slurm.job.gpus", "number", "count", "GPUs allocated, from TRES gres/gpu"),
    ("slurm.job.run_time_s", "number", "s", "RunTime in seconds"),
    ("slurm.job.time_limit_s", "number", "s", "TimeLimit in seconds; absent when UNLIMITED"),
    ("slurm.job.user", "string", "", "user name (UserId without the uid)"),
    ("slurm.job.uid", "number", "", "numeric uid"),
    ("slurm.job.account", "string", "", "Account"),
    ("slurm.job.command", "string", "", "Command (the batch script or program)"),
    ("slurm.job.work_dir", "string", "", "WorkDir"),
    ("slurm.job.batch_host", "string", "", "BatchHost"),
    ("slurm.job.node_alloc", "list", "", "per-node allocation (scontrol show job -d): {nodes, cpu_ids, mem, gres}"),
    ("slurm.job.fields", "dict", "", "every Key=value of the record, as printed"),
    ("slurm.job.records", "number", "count", "job records in the input (array tasks print one each)"),
]

# Keys printed alone on their line whose value may hold spaces.
REST_OF_LINE = ("Command", "WorkDir", "StdErr", "StdIn", "StdOut", "Comment", "AdminComment", "SystemComment",
                "OS", "Reason", "Features", "ActiveFeatures", "AvailableFeatures")
_KEY = re.compile(r"(?:^|(?<=\s))([A-Za-z][A-Za-z0-9_/:.]*)=")


def split_fields(line: str) -> list[tuple[str, str]]:
    """``Key=value`` pairs of one scontrol line (values may contain '=': TRES=cpu=16,mem=...)."""
    out: list[tuple[str, str]] = []
    starts = [m for m in _KEY.finditer(line)]
    i = 0
    while i < len(starts):
        m = starts[i]
        key = m.group(1)
        if key in REST_OF_LINE and _rest_ok(key, line, starts, i):
            out.append((key, line[m.end():].strip()))
            break
        # the value ends where the next ' Key=' starts; a next key inside our own value ("TRES=cpu=1")
        # is not preceded by whitespace, so the regex never matches it
        end = starts[i + 1].start() if i + 1 < len(starts) else len(line)
        out.append((key, line[m.end():end].strip()))
        i += 1
    return out


def _rest_ok(key: str, line: str, starts: list, i: int) -> bool:
    # Reason and Features share their line with others in `show job` (Reason=None Dependency=(null));
    # take the rest of the line only where they come last (node Reason=... [user@time]) or are alone.
    if key in ("Reason", "Features", "ActiveFeatures", "AvailableFeatures"):
        return i == len(starts) - 1
    return True


def _seconds(text: str) -> int | None:
    m = re.fullmatch(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)", text.strip())
    if not m:
        return None
    d, h, mi, s = (int(x) if x else 0 for x in m.groups())
    return ((d * 24 + h) * 60 + mi) * 60 + s


def parse_tres(value: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for part in value.split(","):
        k, eq, v = part.partition("=")
        if eq and k:
            out[k] = int(v) if v.isdigit() else v
    return out


def records(text: str, first_key: str) -> list[list[tuple[int, str]]]:
    """Lines of each record starting with ``first_key=`` (at line start), up to a blank line."""
    recs: list[list[tuple[int, str]]] = []
    cur: list[tuple[int, str]] | None = None
    start = re.compile(rf"^\s*{first_key}=\S")
    for no, line in enumerate(text.split("\n"), 1):
        if start.match(line):
            cur = [(no, line)]
            recs.append(cur)
        elif cur is not None:
            if not line.strip():
                cur = None
            else:
                cur.append((no, line))
    return recs


def _detect(text: str) -> float:
    head = text[:65536]
    if re.search(r"^[^\S\n]*JobId=\d+\S* JobName=", head, re.M):
        return 0.95 if re.search(r"JobState=", head) else 0.7
    return 0.0


@parser(
    "scontrol-job",
    detect=_detect,
    summary="Slurm job record (scontrol show job J)",
    facts=FACTS,
    command="scontrol show job -d JOBID",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "scontrol show job output")
    recs = records(text, "JobId")
    if not recs:
        raise ParseError("no 'JobId=' record found (expected scontrol show job output)")
    fields: dict[str, str] = {}
    node_alloc: list[dict[str, str]] = []
    for _no, line in recs[0]:
        pairs = split_fields(line)
        if pairs and pairs[0][0] == "Nodes" and any(k == "CPU_IDs" for k, _ in pairs):
            d = {k.lower(): v for k, v in pairs}
            node_alloc.append({"nodes": d.get("nodes", ""), "cpu_ids": d.get("cpu_ids", ""), "mem": d.get("mem", ""),
                               "gres": d.get("gres", "")})
            continue
        for k, v in pairs:
            fields.setdefault(k, v)
    f: dict[str, object] = {"slurm.job.fields": fields, "slurm.job.records": len(recs)}

    def put(fact: str, key: str, conv=None) -> None:
        v = fields.get(key)
        if v is None or v in ("(null)", "N/A", ""):
            return
        v2 = conv(v) if conv else v
        if v2 is not None:
            f[fact] = v2

    num = lambda v: int(v) if v.isdigit() else None  # noqa: E731
    put("slurm.job.id", "JobId")
    if fields.get("ArrayJobId") and fields.get("ArrayTaskId"):
        f["slurm.job.array"] = f"{fields['ArrayJobId']}_{fields['ArrayTaskId']}"
    put("slurm.job.name", "JobName")
    put("slurm.job.state", "JobState")
    put("slurm.job.reason", "Reason")
    put("slurm.job.partition", "Partition")
    put("slurm.job.nodelist", "NodeList")
    put("slurm.job.num_nodes", "NumNodes", num)
    put("slurm.job.num_cpus", "NumCPUs", num)
    put("slurm.job.num_tasks", "NumTasks", num)
    put("slurm.job.run_time_s", "RunTime", _seconds)
    put("slurm.job.time_limit_s", "TimeLimit", _seconds)
    put("slurm.job.account", "Account")
    put("slurm.job.command", "Command")
    put("slurm.job.work_dir", "WorkDir")
    put("slurm.job.batch_host", "BatchHost")
    uid = re.fullmatch(r"([^()]*)\((\d+)\)", fields.get("UserId", ""))
    if uid:
        f["slurm.job.user"] = uid.group(1)
        f["slurm.job.uid"] = int(uid.group(2))
    elif fields.get("UserId"):
        f["slurm.job.user"] = fields["UserId"]
    if fields.get("TRES") not in (None, "", "(null)"):
        tres = parse_tres(fields["TRES"])
        f["slurm.job.tres"] = tres
        gpus = tres.get("gres/gpu")
        if isinstance(gpus, int):
            f["slurm.job.gpus"] = gpus
    for key in ("JOB_GRES", "TresPerNode", "Gres", "TresPerJob"):
        if key in fields:
            v = fields[key]
            f["slurm.job.gres"] = "" if v == "(null)" else v
            if v != "(null)":
                break
    if node_alloc:
        f["slurm.job.node_alloc"] = node_alloc
    if "slurm.job.id" not in f:
        raise ParseError("the JobId= record has no job id")
    return f
