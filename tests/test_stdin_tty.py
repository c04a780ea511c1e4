"""Outputs typed or pasted at a terminal into `parse -` and `diagnose --evidence -`: one Ctrl-D ends them.

Until session 26 standard input was read with read(1 MiB), which on a terminal goes on reading past the first
Ctrl-D: a user who pasted an output and pressed Ctrl-D on a line of its own waited, with no sign why, until a
second one. A real pseudo-terminal stands in for the user's (the pasted text is a real ibstat capture).
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.corpus import load

DATA = Path(__file__).resolve().parent / "data"
IBSTAT = DATA / "ibstat" / "ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt"


def typed(args: list[str], text: str, tmp_path: Path) -> subprocess.CompletedProcess:
    master, slave = pty.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO  # nobody reads the echo back here
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    env = {**os.environ, "TROUBLESHOOTER_DATA_DIR": str(tmp_path / "data"),
           "TROUBLESHOOTER_CONFIG": str(tmp_path / "no-config.yaml")}
    proc = subprocess.Popen([sys.executable, "-m", "troubleshooter", *args], stdin=slave, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    os.close(slave)
    try:
        os.write(master, text.encode() + b"\x04")  # the text, then one Ctrl-D on a line of its own
        out, err = proc.communicate(timeout=45)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("still reading standard input after one Ctrl-D")
    finally:
        os.close(master)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _text() -> str:
    return load("ibstat/" + IBSTAT.name)


def test_parse_reads_to_the_first_ctrl_d(tmp_path: Path) -> None:
    run = typed(["parse", "-", "--json"], _text(), tmp_path)
    assert run.returncode == 0, run.stderr
    assert b'"ib.down_ports"' in run.stdout and b'"mlx5_1:1"' in run.stdout


def test_diagnose_says_how_to_end_and_reads_to_the_first_ctrl_d(tmp_path: Path) -> None:
    # the tree's one question answered ahead: asked, it would be read from the same terminal after the Ctrl-D
    run = typed(["diagnose", "--evidence", "-", "--symptom", "one-slow-node", "--answer", "known=yes", "--json"], _text(),
                tmp_path)
    assert run.returncode == 1, run.stderr  # the port Down: a cause
    assert run.stderr.startswith(b"reading the outputs from standard input: paste them, then Ctrl-D on a line of its own")
    assert b'"fabric-port-down"' in run.stdout
