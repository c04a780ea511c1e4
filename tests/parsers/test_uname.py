"""uname -a / -r on real captures (tests/data/uname), and through a transcript and a pdsh paste."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.diagnosis.pasted import EvidenceFacts
from troubleshooter.parsers import ParseError


def parse(text):
    return parsers.run("uname", text)


@pytest.mark.parametrize("name, release, arch, node", [
    ("azhpcimages51-uname-a-centos7-3.10.0-1127-bare-command.txt", "3.10.0-1127.el7.x86_64", "x86_64",
     "pkrvm226m165fgz"),
    ("tf4349-uname-a-ubuntu-5.4.0-88-prompt.txt", "5.4.0-88-generic", "x86_64", "Primer"),
    ("gh200-lambda-uname-a-6.8.0-nvidia-64k-aarch64.txt", "6.8.0-1013-nvidia-64k", "aarch64", "193b69069337"),
])
def test_uname_a(name, release, arch, node):
    text = load(f"uname/{name}")
    assert parsers.detect(text) == "uname"
    assert parse(text) == {"host.kernel_release": release, "host.arch": arch, "host.nodename": node}


def test_a_lone_release_is_read_under_its_uname_r_line_only():
    # the real release of the CentOS capture above, under the command line that prints it alone (put together here)
    assert parse("$ uname -r\n3.10.0-1127.el7.x86_64\n") == {"host.kernel_release": "3.10.0-1127.el7.x86_64"}
    with pytest.raises(ParseError):  # a version string alone is not said to be the kernel's
        parse("3.10.0-1127.el7.x86_64\n")
    with pytest.raises(ParseError):  # nor under another uname option
        parse("$ uname -m\nx86_64\n")
    assert "uname" not in [k for _, k in parsers.scores("3.10.0-1127.el7.x86_64\n")]


def test_pdsh_uname_gives_each_nodes_kernel(tmp_path):
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "data" / "pdsh"
    facts = EvidenceFacts.from_specs([str(data / "asokolsky-pdsh-uname-uptime-2-proxmox-hosts-kernel-differs.txt")])
    assert facts.lookup("host.kernel_release", "duo") == "5.13.19-3-pve"
    assert facts.lookup("host.kernel_release", "fuji") == "5.13.19-4-pve"
