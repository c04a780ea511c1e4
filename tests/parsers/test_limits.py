"""limits parser: the limits probe, and the limits as people paste them (ulimit -a of bash and dash,
/proc/PID/limits), with exact values on real captures."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def parse(text):
    return parsers.run("limits", text)


def test_bash_ulimit_a_fenced_with_its_command_line_memlock_64k():
    text = load("limits/ulimit-a-bash-memlock-64-fenced.txt")
    assert parsers.detect(text) == "limits"
    assert parse(text) == {"limits.memlock": "64", "limits.memlock_unlimited": False, "limits.memlock_kb": 64,
                           "limits.nofile": 1024, "limits.stack_kb": 8192}


def test_bash52_ulimit_a_with_the_realtime_nonblocking_line():
    f = parse(load("limits/ulimit-a-bash5.2-sandbox-memlock-8192.txt"))
    assert f == {"limits.memlock": "8192", "limits.memlock_unlimited": False, "limits.memlock_kb": 8192,
                 "limits.nofile": 20000, "limits.stack_kb": 8192}


def test_dash_ulimit_a():
    text = load("limits/ulimit-a-dash-sandbox-memlock-8192.txt")
    assert parsers.detect(text) == "limits"
    assert parse(text) == {"limits.memlock": "8192", "limits.memlock_unlimited": False, "limits.memlock_kb": 8192,
                           "limits.nofile": 20000, "limits.stack_kb": 8192}


def test_proc_pid_limits_soft_and_hard_in_bytes_become_kib():
    text = load("limits/proc-self-limits-sandbox.txt")
    assert parsers.detect(text) == "limits"
    assert parse(text) == {"limits.memlock": "8192", "limits.memlock_unlimited": False, "limits.memlock_kb": 8192,
                           "limits.memlock_hard": "8192", "limits.nofile": 20000, "limits.nofile_hard": 20000,
                           "limits.stack_kb": 8192}


def test_unlimited_memlock_in_bash_format():
    f = parse("max locked memory       (kbytes, -l) unlimited\nopen files                      (-n) 1048576\n")
    assert f["limits.memlock"] == "unlimited" and f["limits.memlock_unlimited"] is True
    assert "limits.memlock_kb" not in f


def test_text_with_no_limit_it_reads_is_a_parse_error():
    with pytest.raises(ParseError):
        parse("core file size          (blocks, -c) 0\npipe size            (512 bytes, -p) 8\n")
    with pytest.raises(ParseError):
        parse("max locked memory is 64 kB on this box, I think\n")


def test_the_pid_whose_limits_a_command_line_names():
    from troubleshooter import parsers

    text = "$ cat /proc/3844/limits  | grep locked\nMax locked memory         65536                65536                bytes     \n"
    f = parsers.run("limits", text)
    assert (f["limits.pid"], f["limits.memlock"], f["limits.memlock_hard"]) == (3844, "64", "64")
    assert "limits.pid" not in parsers.run("limits", text.split("\n", 1)[1])
