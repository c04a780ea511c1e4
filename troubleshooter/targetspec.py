"""What a guided session runs against, enough to recreate the target when the session is resumed.

A module of its own (re-exported by :mod:`troubleshooter.guide`) so that the app's entry point can build one
without importing the guide and everything behind it before the first frame.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from troubleshooter.sources.base import Params


@dataclasses.dataclass
class TargetSpec:
    """Enough to recreate a target when a session is resumed."""

    bundle: str | None = None
    job: str | None = None
    node: str | None = None
    container_name: str | None = None
    exec_prefix: str | None = None
    pid: int | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    def make(self):
        from troubleshooter.targets import make_target

        return make_target(bundle=self.bundle, job=self.job, node=self.node, container_name=self.container_name,
                           exec_prefix=self.exec_prefix)

    def params(self) -> Params:
        from troubleshooter.sources.base import Params

        p = Params(pid=self.pid)
        p.extra.update(self.extra)
        if self.job:
            p.extra.setdefault("job", self.job)
        return p
