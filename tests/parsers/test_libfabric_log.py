"""libfabric-log parser: the cxi provider's VNI refusals, on real captures (exact values)."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_no_authorization_key_for_the_process():
    text = load("libfabric-log/lci110-deltaai-cxip-gen-auth-key-failed-38.txt")
    assert parsers.detect(text) == "libfabric-log"
    assert parsers.run("libfabric-log", text) == {"libfabric.cxi_auth_key_failed": -38}


def test_a_completion_refused_for_its_vni():
    text = load("libfabric-log/prrte2004-vni-not-found-completion.txt")
    assert parsers.detect(text) == "libfabric-log"
    assert parsers.run("libfabric-log", text) == {"libfabric.cxi_vni_not_found": 1}


def test_other_libfabric_text_is_refused():
    with pytest.raises(parsers.ParseError):
        parsers.run("libfabric-log", "err : Function not implemented\n")
