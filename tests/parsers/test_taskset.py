"""taskset -cp and the same answer from other helpers: one process's binding, and several processes' together."""

from __future__ import annotations

from tests.corpus import load
from troubleshooter import parsers


def test_ranks_that_all_inherited_one_core():
    f = parsers.run("taskset", load("taskset/olcf-numa-api-torchrun.txt"))
    assert f["proc.affinity_by_pid"] == {"884147": "1", "884145": "1", "884146": "1", "884141": "1"}
    assert f["proc.shared_narrow_binding"] == 4
    assert f["proc.cpus_allowed_list"] == "1" and f["proc.pid"] == 884141  # the last line, as for one process


def test_ranks_bound_to_seven_cores_each_share_nothing():
    f = parsers.run("taskset", load("taskset/olcf-numa-api-srun-reference.txt"))
    assert f["proc.affinity_by_pid"] == {"1132004": "1-7", "1132006": "17-23", "1132008": "33-39", "1132009": "41-47"}
    assert f["proc.shared_narrow_binding"] == 0


def test_one_process_alone_gives_no_comparison():
    f = parsers.run("taskset", "pid 4391's current affinity list: 0-27,56-83\n")
    assert "proc.affinity_by_pid" not in f and f["proc.cpus_allowed_count"] == 56
