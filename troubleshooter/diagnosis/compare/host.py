"""Host vs target: the runtime-topology facts of the host and of the job's container or step, and which
differences matter (case 4: ``NCCL_TOPO_FILE`` and the file not reaching the container).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
from typing import Any, Mapping

from troubleshooter.model.facts import FactSet, Unknown

# ====================================================================== host vs target

#: The sources run on both sides by ``compare --host``.
HOST_SOURCES = ("env-self", "nccl-conf", "nccl-topo-file", "ib-sysfs", "nvml", "nvidia-smi-q",
                "proc-status-self", "limits", "container-markers")

#: Environment variables compared between host and target: these prefixes (and NVIDIA_VISIBLE_DEVICES).
ENV_PREFIXES = ("NCCL_", "UCX_", "NVSHMEM_", "CUDA_", "FI_")
ENV_EXTRA = ("NVIDIA_VISIBLE_DEVICES",)
#: Variables that always differ between two contexts and are never compared (``--all-env`` included).
ENV_IGNORE = ("PWD", "OLDPWD", "SHLVL", "_", "TERM", "SHELL", "PS1", "TMUX", "TMUX_PANE", "SSH_*",
              "XDG_*", "LS_COLORS", "MAIL", "SLURM_*", "SLURMD_*", "PMI_*", "PMIX_*", "OMPI_*")
#: NCCL_-named variables NCCL itself does not read: labels a container image sets (NVIDIA's images set
#: NCCL_VERSION to the NCCL they ship). They are compared, but never "matter".
ENV_INFORMATIONAL = frozenset({"NCCL_VERSION"})
#: HOSTNAME is ignored when both sides run on the same host (a container may rename itself).
ENV_IGNORE_SAME_HOST = ("HOSTNAME",)


@dataclasses.dataclass(frozen=True)
class Item:
    fact: str
    label: str
    category: str
    matters: bool


#: What ``compare --host`` compares, besides the environment and nccl.conf variables.
HOST_ITEMS = (
    Item("nccl.topo_file.path", "topology file NCCL would load", "topology-file", False),
    Item("nccl.topo_file.visible", "topology file present", "topology-file", True),
    Item("nccl.topo_file.readable", "topology file readable", "topology-file", True),
    Item("nccl.topo_file.sha256", "topology file sha256", "topology-file", True),
    Item("nccl.etc_topo.visible", "/etc/nccl/topo.xml present", "topology-file", True),
    Item("nccl.etc_topo.sha256", "/etc/nccl/topo.xml sha256", "topology-file", True),
    Item("nccl_conf.present", "nccl.conf present", "nccl-conf", True),
    Item("nccl_conf.files", "nccl.conf files", "nccl-conf", True),
    Item("ib.sysfs_present", "/sys/class/infiniband present", "rdma", True),
    Item("ib.dev_infiniband_visible", "/dev/infiniband visible", "rdma", True),
    Item("ib.uverbs_devices", "verbs devices (/dev/infiniband/uverbs*)", "rdma", True),
    Item("ib.device_names", "HCAs visible", "rdma", True),
    Item("gpu.count", "GPUs visible", "gpu", True),
    Item("limits.memlock", "locked memory limit (ulimit -l, KiB)", "limits", True),
    Item("limits.shm_kb", "/dev/shm size (KiB)", "limits", False),
    Item("limits.nofile", "open files limit", "limits", False),
    Item("proc.cpus_allowed_count", "CPUs allowed (affinity)", "cpu", False),
    Item("proc.mems_allowed_count", "NUMA memory nodes allowed", "cpu", False),
)
_ONLY_WHEN_BOTH = {"nccl.topo_file.sha256", "nccl.etc_topo.sha256"}  # absence is told by 'present'


@dataclasses.dataclass
class Diff:
    key: str  # what is compared, for people: "env NCCL_TOPO_FILE", "topology file present"
    fact: str  # the fact name compared
    category: str  # env, topology-file, nccl-conf, rdma, gpu, limits, cpu
    host: Any  # None: absent on that side
    target: Any
    status: str  # differs, host-only, target-only, unknown
    matters: bool
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class HostComparison:
    diffs: list[Diff]
    same: list[str]  # facts equal on both sides
    unknown: list[dict[str, str]]  # facts neither side could establish
    context: dict[str, dict[str, Any]]  # side -> container.inside/runtime, hostname

    @property
    def matters(self) -> list[Diff]:
        return [d for d in self.diffs if d.matters]

    def as_dict(self) -> dict[str, Any]:
        return {"differences": [d.as_dict() for d in self.diffs if d.status != "unknown"],
                "undetermined": [d.as_dict() for d in self.diffs if d.status == "unknown"],
                "same": self.same, "unknown": self.unknown, "context": self.context,
                "matters": len(self.matters)}


_ABSENT = object()


def _side_value(fs: FactSet | Mapping[str, Any], name: str) -> Any:
    """The value, ``_ABSENT`` (its source ran and it is not there), or :class:`Unknown` (no source ran)."""
    if isinstance(fs, FactSet):
        if name in fs:
            return fs[name].value
        from troubleshooter import sources

        producers = sources.producers_of(name)
        ran = {f.source for f in fs.values()}  # sources that gave facts ("" : canned facts, all given)
        if "" in ran or ran & set(producers):
            return _ABSENT
        return fs.get_value(name, producers)
    return fs[name] if name in fs else _ABSENT


def _env_names(fs: FactSet | Mapping[str, Any], *, all_env: bool, ignore: tuple[str, ...]) -> set[str]:
    names = {k[len("env.var."):] for k in fs if k.startswith("env.var.")}
    keep = set()
    for n in names:
        if any(fnmatch.fnmatchcase(n, pat) for pat in ignore):
            continue
        if all_env or n.startswith(ENV_PREFIXES) or n in ENV_EXTRA:
            keep.add(n)
    return keep


def _plain(v: Any) -> Any:
    return None if v is _ABSENT or isinstance(v, Unknown) else v


def _compare_one(key: str, fact: str, category: str, matters: bool, h: Any, t: Any,
                 diffs: list[Diff], same: list[str], unknown: list[dict[str, str]]) -> None:
    hu, tu = isinstance(h, Unknown), isinstance(t, Unknown)
    if hu and tu:
        unknown.append({"fact": fact, "host": h.reason, "target": t.reason})
        return
    if hu or tu:
        if (h if tu else t) is _ABSENT:
            return  # absent on one side, unknown on the other: nothing to tell
        side, why = ("host", h.reason) if hu else ("target", t.reason)
        diffs.append(Diff(key, fact, category, _plain(h), _plain(t), "unknown", False, f"cannot tell on the {side}: {why}"))
        return
    if h is _ABSENT and t is _ABSENT:
        return
    if fact in _ONLY_WHEN_BOTH and (h is _ABSENT or t is _ABSENT):
        return
    if _norm(h) == _norm(t):
        same.append(fact)
        return
    status = "host-only" if t is _ABSENT else "target-only" if h is _ABSENT else "differs"
    note = {"host-only": "set on the host only", "target-only": "set on the target only"}.get(status, "")
    diffs.append(Diff(key, fact, category, _plain(h), _plain(t), status, matters, note))


def _norm(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return json.dumps(list(v), sort_keys=True, default=str)
    if isinstance(v, dict):
        return json.dumps(v, sort_keys=True, default=str)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def host_vs_target(host: FactSet | Mapping[str, Any], target: FactSet | Mapping[str, Any], *,
                   all_env: bool = False, same_host: bool = True) -> HostComparison:
    """What differs between the host's and the target's runtime topology, and whether it matters.

    *Matters* (exit 1 of ``compare --host``): any ``NCCL_*`` variable (environment or nccl.conf), the
    topology file, RDMA visibility, the GPU count, the locked-memory limit.
    """
    ignore = ENV_IGNORE + (ENV_IGNORE_SAME_HOST if same_host else ())
    diffs: list[Diff] = []
    same: list[str] = []
    unknown: list[dict[str, str]] = []
    h_env_known = not isinstance(_side_value(host, "env.names"), Unknown)
    t_env_known = not isinstance(_side_value(target, "env.names"), Unknown)
    for name in sorted(_env_names(host, all_env=all_env, ignore=ignore) | _env_names(target, all_env=all_env, ignore=ignore)):
        fact = f"env.var.{name}"
        h = _side_value(host, fact) if h_env_known else Unknown(fact, "the environment could not be read")
        t = _side_value(target, fact) if t_env_known else Unknown(fact, "the environment could not be read")
        _compare_one(f"env {name}", fact, "env", name.startswith("NCCL_") and name not in ENV_INFORMATIONAL, h, t,
                     diffs, same, unknown)
    for item in HOST_ITEMS:
        _compare_one(item.label, item.fact, item.category, item.matters, _side_value(host, item.fact),
                     _side_value(target, item.fact), diffs, same, unknown)
        if item.fact == "nccl_conf.files":
            conf = sorted({k for fs in (host, target) for k in fs if k.startswith("nccl_conf.var.")})
            for fact in conf:
                name = fact[len("nccl_conf.var."):]
                _compare_one(f"nccl.conf {name}", fact, "nccl-conf", name.startswith("NCCL_"),
                             _side_value(host, fact), _side_value(target, fact), diffs, same, unknown)
    context = {}
    for side, fs in (("host", host), ("target", target)):
        context[side] = {k: _plain(_side_value(fs, f)) for k, f in (
            ("container", "container.inside"), ("runtime", "container.runtime"), ("slurm_job", "slurm.job_id"),
            ("node", "slurm.node"))}
    return HostComparison(diffs, same, unknown, context)


# ====================================================================== before vs after
