"""The CLI run in this process, for tests that read what a verb printed and its exit code."""

from __future__ import annotations

import pytest

from troubleshooter import cli


def main(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    """``troubleshooter ARGS`` in this process: (exit code, stdout, stderr); argparse's own exits become the code."""
    try:
        rc = cli.main(list(args))
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    out, err = capsys.readouterr()
    return rc, out, err
