"""Threads against the CPUs they were given: the runtimes' warnings and per-thread placement listings (OLCF's guides)."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_two_threads_of_each_rank_on_one_hardware_thread_and_crays_warning():
    f = parsers.run("thread-placement", load("thread-placement/olcf-frontier-srun-c1-omp2-threads-on-one-hwt.txt"))
    assert f == {"threads.oversubscription_warnings": ["may result in oversubscription of available CPU resources"],
                 "threads.placed": 4, "threads.sharing_hwt": 4}


def test_each_thread_on_its_own_hardware_thread():
    f = parsers.run("thread-placement", load("thread-placement/olcf-frontier-srun-c2-omp2-reference.txt"))
    assert f == {"threads.oversubscription_warnings": [], "threads.placed": 4, "threads.sharing_hwt": 0}


def test_jsruns_warning_for_two_tasks_on_one_core_set():
    f = parsers.run("thread-placement", load("thread-placement/olcf-summit-jsrun-brs-two-tasks-one-core-set.txt"))
    assert f == {"threads.oversubscription_warnings": ["more than 1 task/rank assigned to a core"]}


def test_neither_warning_nor_placement():
    with pytest.raises(ParseError):
        parsers.run("thread-placement", "16 0:4,4:4,8:4,12:4\n")
