"""Package listings compared across the files of a paste: NCCL packages two nodes disagree on, a Slurm build that
dropped its NVML plugin. Facts no single file gives."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from troubleshooter.parsers.base import add_clipped

if TYPE_CHECKING:
    from troubleshooter.diagnosis.pasted import PastedFile


def listings_differ(files: list[PastedFile]) -> list[str]:
    """NCCL packages two package listings disagree on: listings of one side (several nodes' ``pip freeze``
    pasted side by side) or of two named nodes. A host and the job's container are not compared: a container
    brings its own NCCL by design."""
    lists = [f for f in files if f.kind == "packages" and not f.error and f.facts.get("packages.nccl")]
    out: list[str] = []
    for i, a in enumerate(lists):
        for b in lists[i + 1:]:
            if a.side != b.side and {a.side, b.side} & {"host", "target"}:
                continue
            for name, va in sorted(a.facts["packages.nccl"].items()):
                vb = b.facts["packages.nccl"].get(name)
                if vb is not None and vb != va:
                    add_clipped(out, f"{name}: {va} in {a.display}, {vb} in {b.display}")
    return out


def nvml_dropped(files: list[PastedFile]) -> list[str]:
    """Versions of one Slurm package whose file lists differ in gpu_nvml.so (``rpm -ql slurm-ohpc-22.05.2...``
    has it, ``rpm -ql slurm-ohpc-22.05.10...`` does not): a rebuild or an upgrade that dropped NVML."""
    lists = [(f, f.facts["slurm.plugins.package"]) for f in files if f.kind == "slurm-plugins" and not f.error
             and "slurm.plugins.gpu_nvml" in f.facts and re.match(r".+?-\d", f.facts.get("slurm.plugins.package", ""))]
    out: list[str] = []
    for a, pa in lists:
        name = re.match(r"(.+?)-\d", pa).group(1)  # type: ignore[union-attr]
        for b, pb in lists:
            if a.facts["slurm.plugins.gpu_nvml"] and not b.facts["slurm.plugins.gpu_nvml"] and pb.startswith(name + "-"):
                add_clipped(out, f"{name}: gpu_nvml.so in {pa}, not in {pb} ({b.path.name})")
    return out
