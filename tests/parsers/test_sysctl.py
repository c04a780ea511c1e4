"""sysctl key = value lines, read from real captures with exact values."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_sysctl_a_excerpt_with_numa_balancing_on() -> None:
    text = load("sysctl/csit-sut-sysctl-a-kernel-numa-balancing-1-ubuntu1604.txt")
    assert parsers.detect(text) == "sysctl"
    f = parsers.run("sysctl", text)
    assert f["sysctl.numa_balancing"] == 1
    v = f["sysctl.values"]
    assert len(v) == 58
    assert v["kernel.numa_balancing_scan_period_max_ms"] == "60000"
    assert v["kernel.printk"] == "4 4 1 7" and v["kernel.modprobe"] == "/sbin/modprobe"


def test_the_source_s_own_output_here() -> None:
    f = parsers.run("sysctl", load("sysctl/this-sandbox-sysctl-kernel-numa-balancing-0.txt"))
    assert f == {"sysctl.values": {"kernel.numa_balancing": "0"}, "sysctl.numa_balancing": 0}


@pytest.mark.parametrize("text", ["", "hello\nworld\n", "NCCL_DEBUG=INFO\nPATH=/usr/bin\n", "a = b\nc = d\n"])
def test_other_text_is_refused(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run("sysctl", text)
    assert parsers.get("sysctl").detect(text) < parsers.DETECT_MIN
