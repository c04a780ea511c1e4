"""Compare use cases: the job's context against the host (what the job does not see).

Both faces call :func:`compare_host`: the CLI's ``compare --host`` and the app's compare screen read the same
sources on both sides at once and judge the differences the same way.
"""

from __future__ import annotations

import dataclasses
import socket
import threading
from typing import Any

from troubleshooter.diagnosis import compare
from troubleshooter.probe import collect
from troubleshooter.probe.targets import LocalTarget, Target
from troubleshooter.sources.base import Params


class CompareError(RuntimeError):
    """The target could not be read at all (the comparison would be empty, not "no difference")."""

    def __init__(self, message: str, host_desc: dict[str, Any]) -> None:
        super().__init__(message)
        self.host_desc = host_desc


@dataclasses.dataclass(frozen=True)
class HostRun:
    comparison: compare.HostComparison
    host_label: str
    target_label: str
    host_desc: dict[str, Any]
    target_desc: dict[str, Any]
    host_evidence: dict[str, Any]
    target_evidence: dict[str, Any]
    same_host: bool


def collect_both(target: Target, params: Params) -> tuple[LocalTarget, collect.Collection, collect.Collection]:
    """The host-side and target-side sources of the comparison, both sides at once."""
    host = LocalTarget()
    got: dict[str, Any] = {}

    def one(side: str, t: Target) -> None:
        got[side] = collect.collect(t, ids=compare.HOST_SOURCES, params=params, side=side)

    th = threading.Thread(target=one, args=("host", host))
    th.start()
    one("target", target)
    th.join()
    return host, got["host"], got["target"]


def compare_host(target: Target, params: Params, *, all_env: bool = False) -> HostRun:
    host, hc, tc = collect_both(target, params)
    env_ev = tc.evidence.get("env-self")
    if env_ev is None or not env_ev.ok:
        why = env_ev.describe() if env_ev is not None else "env-self did not run"
        raise CompareError(f"cannot read the target ({target.label}): {why}", host.describe())
    node = tc.facts.get_value("slurm.node")
    same_host = target.kind != "slurm" or (isinstance(node, str)
                                           and node.split(".")[0] == socket.gethostname().split(".")[0])
    cmp = compare.host_vs_target(hc.facts, tc.facts, all_env=all_env, same_host=same_host)
    return HostRun(cmp, host.label, target.label, host.describe(), target.describe(), dict(hc.evidence),
                   dict(tc.evidence), same_host)
