"""gdrcopy: GDRCopy's gdr_open failure, from a real paste with exact values."""

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_the_sanity_suite_failing_to_open_gdrdrv():
    text = load("gdrcopy/gdrcopy234-gdrcopy-sanity.txt")
    assert parsers.detect(text) == "gdrcopy"
    assert parsers.run("gdrcopy", text) == {"gdrcopy.open_failed": True, "gdrcopy.open_lines": 6}


@pytest.mark.parametrize("text", ["", "Running suite(s): Sanity\n100%: Checks: 27, Failures: 0, Errors: 0\n"])
def test_other_text_is_refused(text):
    with pytest.raises(parsers.ParseError):
        parsers.run("gdrcopy", text)
