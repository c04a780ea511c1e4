"""The screenshots' PNGs show the spaces the terminal shows (issue 13 item 7: "^pp alette", "Commands(enter")."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from troubleshooter.tui.screenshots import keep_spaces

SVG = ('<svg class="rich-terminal" viewBox="0 0 200 30" xmlns="http://www.w3.org/2000/svg">'
       '<text x="0" y="20" textLength="24.4">^p</text><text x="24.4" y="20" textLength="97.6">&#160;palette</text></svg>')


def test_text_runs_keep_their_leading_space(tmp_path):
    p = tmp_path / "s.svg"
    p.write_text(SVG)
    keep_spaces(p)
    keep_spaces(p)  # once only
    text = p.read_text()
    assert text.count('xml:space="preserve"') == 1 and text.startswith('<svg xml:space="preserve" ')
    if shutil.which("rsvg-convert") is None:
        pytest.skip("rsvg-convert not installed (apt-get install librsvg2-bin)")
    assert subprocess.run(["rsvg-convert", "-o", str(tmp_path / "s.png"), str(p)]).returncode == 0
