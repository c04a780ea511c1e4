"""Listings of Slurm's plugin files (rpm -ql, dpkg -L, ls of the plugin directory), read from a real paste."""

from __future__ import annotations

import pytest

from tests.corpus import DATA, load
from troubleshooter import parsers
from troubleshooter.diagnosis.pasted import EvidenceFacts

OHPC = "slurm-plugins/ohpc1910-rpm-ql-grep-gpu-working-and-failing.txt"


def test_two_builds_listed_through_rpm_and_grep_one_without_gpu_nvml() -> None:
    # "[ ~]# rpm -ql ..." (user@host cut out) cuts the paste in two listings, each read with its command line
    ef = EvidenceFacts.from_specs([str(DATA / OHPC)])
    read = [f for f in ef.files if f.kind == "slurm-plugins"]
    assert [f.facts["slurm.plugins.package"] for f in read] == ["slurm-ohpc-22.05.2-14.103.ohpc.2.6.x86_64",
                                                                "slurm-ohpc-22.05.10-2.1.ohpc.2.6.2.x86_64"]
    assert read[0].facts["slurm.plugins.gpu"] == ["gpu_generic", "gpu_nvml"]
    assert read[0].facts["slurm.plugins.gpu_nvml"] is True
    assert read[1].facts == {"slurm.plugins.listed": ["acct_gather_energy_gpu", "gpu_generic", "gres_gpu"],
                             "slurm.plugins.gpu": ["gpu_generic"], "slurm.plugins.gpu_nvml": False,
                             "slurm.plugins.package": "slurm-ohpc-22.05.10-2.1.ohpc.2.6.2.x86_64"}
    assert ef.lookup("slurm.plugins.nvml_dropped") == [
        "slurm-ohpc: gpu_nvml.so in slurm-ohpc-22.05.2-14.103.ohpc.2.6.x86_64, not in "
        "slurm-ohpc-22.05.10-2.1.ohpc.2.6.2.x86_64 (ohpc1910-rpm-ql-grep-gpu-working-and-failing.txt)"]
    assert parsers.detect(load(OHPC)) == "slurm-plugins"


FAILING = "/usr/lib64/slurm/acct_gather_energy_gpu.so\n/usr/lib64/slurm/gpu_generic.so\n/usr/lib64/slurm/gres_gpu.so\n"


@pytest.mark.parametrize("command, absent", [
    ("", False),                                   # no command shown: the listing as it stands
    ("rpm -ql slurm | grep gpu", False),           # the grep would have printed gpu_nvml.so
    ("rpm -ql slurm | grep -i 'GPU'", False),
    ("rpm -ql slurm | grep gpu_generic", None),    # it would not: absence says nothing
    ("rpm -ql slurm | grep gpu | head -2", None),  # cut further: unknown
])
def test_absence_is_claimed_only_where_the_listing_would_show_it(command: str, absent: bool | None) -> None:
    text = (f"$ {command}\n" if command else "") + FAILING
    assert parsers.run("slurm-plugins", text).get("slurm.plugins.gpu_nvml") is absent


def test_a_debian_split_package_list_says_nothing_of_the_nvml_plugin() -> None:
    # Debian ships gpu_nvml.so in a package of its own: slurm-wlm-basic-plugins' list lacks it whatever is installed
    text = ("$ dpkg -L slurm-wlm-basic-plugins | grep gpu\n/usr/lib/x86_64-linux-gnu/slurm-wlm/gpu_generic.so\n"
            "/usr/lib/x86_64-linux-gnu/slurm-wlm/gres_gpu.so\n")
    f = parsers.run("slurm-plugins", text)
    assert f["slurm.plugins.gpu"] == ["gpu_generic"] and "slurm.plugins.gpu_nvml" not in f
    # the plugin directory itself covers every package
    ls = "$ ls /usr/lib/x86_64-linux-gnu/slurm-wlm/ | grep gpu\ngpu_generic.so\ngres_gpu.so\n"
    assert parsers.run("slurm-plugins", ls)["slurm.plugins.gpu_nvml"] is False


@pytest.mark.parametrize("text", ["", "hello\nworld\n", "/usr/lib64/libnccl.so.2\n/usr/bin/sinfo\n",
                                  "/usr/lib64/slurm/gpu_generic.so\nsome\nwords\nthat\nare\nnot\npaths\n"])
def test_other_text_is_refused(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run("slurm-plugins", text)
    assert parsers.get("slurm-plugins").detect(text) < parsers.DETECT_MIN
