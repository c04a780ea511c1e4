"""Comparisons that find what no single probe shows (docs/comparisons.md).

Three comparisons, all pure functions over facts (no I/O except reading bundles):

- **host vs target** (:func:`host_vs_target`): the runtime-topology facts of the host and of the job's
  container or step, and which differences matter (case 4: ``NCCL_TOPO_FILE`` and the file not reaching
  the container);
- **before vs after / node vs reference** (:func:`before_after`, :func:`compare_bundles`): facts that moved,
  checks whose verdict changed, measured numbers with their ratio and the 95% rule; :func:`waterfall`
  draws where a gap went, fix by fix;
- **node vs node** (:class:`NodeComparator`, :func:`compare_node_bundles`): every node of a job at once,
  streamed one bundle at a time; numbers by a robust outlier rule (median and MAD), values by majority,
  nodes that look alike grouped.
"""

from __future__ import annotations

from troubleshooter.diagnosis.compare.host import (  # noqa: F401
    Diff, ENV_EXTRA, ENV_IGNORE, ENV_IGNORE_SAME_HOST, ENV_PREFIXES, HOST_ITEMS, HOST_SOURCES, HostComparison, Item, host_vs_target,
)
from troubleshooter.diagnosis.compare.beforeafter import (  # noqa: F401
    BundleComparison, Change, MEASURED, VOLATILE, VerdictChange, before_after, bundle_collection, check_changes, compare_bundles, waterfall,
)
from troubleshooter.diagnosis.compare.nodes import (  # noqa: F401
    _natural, hostlist, ABS_FLOORS, FactOutliers, MAJORITY, MAX_SPLIT_VALUES, NODE_IGNORE, NodeComparator, NodeGroup, NodeOutlier, NodeReport, REL_FLOOR, Z_THRESHOLD, _MISSING, canonical, display,
)
from troubleshooter.diagnosis.compare.nodefacts import (  # noqa: F401
    FACTS_SIDECAR_FORMAT, bundle_facts, compare_node_bundles, find_bundles, iter_node_facts, node_name, sidecar_path, write_sidecar,
)
