"""cloud-init parser: its duplicate-MAC refusal, on a real capture (exact values)."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_two_interfaces_with_one_mac_an_ipoib_one_among_them():
    text = load("cloud-init/azdocs-hbhc-duplicate-mac-eth1-ib0.txt")
    assert parsers.detect(text) == "cloud-init"
    assert parsers.run("cloud-init", text) == {"cloudinit.duplicate_mac_ifaces": ["eth1", "ib0"]}


def test_other_cloud_init_lines_are_refused():
    with pytest.raises(parsers.ParseError):
        parsers.run("cloud-init", "Cloud-init v. 23.1 running 'init' at Mon, 01 Jan 2024\n")
