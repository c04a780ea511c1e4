"""ps listings (real pastes): which process has which PID, in the -elf, -ef and aux/-u column sets."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def parse(name):
    return parsers.run("ps", load(f"ps/{name}"))


def test_ps_ef_through_grep_without_a_header():
    f = parse("ps-ef-grep-slurmd-psu-install-notes.txt")
    assert f["ps.processes"] == [{"pid": 19747, "command": "/usr/sbin/slurmd", "name": "slurmd"}]


def test_ps_u_columns_with_a_stopped_process():
    f = parse("ps-u-header-stopped-job-t-state.txt")
    assert [(p["pid"], p["name"]) for p in f["ps.processes"]] == [(2891, "bash"), (6468, "test"), (6475, "ps")]


def test_ps_aux_kernel_threads_and_a_poster_elision():
    f = parse("ps-aux-head-kernel-threads-stripped.txt")
    assert f["ps.names"] == ["init", "kthreadd", "rcu_gp", "rcu_par_gp"]
    assert f["ps.processes"][1] == {"pid": 2, "command": "[kthreadd]", "name": "kthreadd"}


def test_ps_elf_row_in_a_transcript():
    f = parsers.run("ps", load("ps/trinityx188-ps-elf-slurmd-then-proc-limits-memlock-64k.txt"))
    assert f["ps.processes"] == [{"pid": 3844, "command": "/usr/sbin/slurmd", "name": "slurmd"}]


@pytest.mark.parametrize("text", ["hello world\n", "1 2 3 4 5\n", "Max locked memory  65536  65536  bytes\n"])
def test_not_a_listing(text):
    with pytest.raises(ParseError):
        parsers.run("ps", text)
