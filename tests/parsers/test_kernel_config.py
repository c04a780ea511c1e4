import os

import pytest
from hypothesis import given, settings, strategies as st

from troubleshooter.model import facts as factreg
from troubleshooter import parsers, sources
from troubleshooter.model.evidence import Status
from troubleshooter.parsers import ParseError
from troubleshooter.probe.targets import LocalTarget
from tests.corpus import load

KIND = "kernel-config"
LOCAL = "kernel_config/x86_64-6.18.44-firecracker-vm-proc-config-gz.txt"


def parse(text):
    return parsers.run(KIND, text)


def test_real_x86_config():
    f = parse(load(LOCAL))
    assert f["kernel.config.count"] == 3051
    assert f["kernel.config.complete"] is True
    assert f["kernel.config.arch"] == "x86" and f["kernel.config.version"] == "6.18.44"
    assert f["kernel.config.CONFIG_CC_VERSION_TEXT"] == "gcc (GCC) 15.3.0"  # quotes removed
    assert f["kernel.config.CONFIG_IOMMUFD"] == "n"  # '# CONFIG_IOMMUFD is not set'
    assert f["kernel.config.CONFIG_HZ"] == "250"
    assert f["kernel.config.CONFIG_NUMA"] == "y"
    assert "kernel.config.CONFIG_TEGRA241_CMDQV" not in f  # not an arm64 kernel
    # a complete .config: options that are absent cannot be on
    assert f["kernel.cmdqv_configured"] is False
    assert f["kernel.arm_smmu_v3"] is False
    assert f["kernel.iommufd_configured"] is False
    assert f["kernel.numa_configured"] is True
    assert f["kernel.page_size_kb"] == 4


def test_arm64_fragment():
    # synthetic fragment in the arm64 .config syntax (no real Grace config was found to cite)
    f = parse("CONFIG_ARM64=y\nCONFIG_ARM64_64K_PAGES=y\nCONFIG_ARM_SMMU_V3=y\nCONFIG_ARM_SMMU_V3_IOMMUFD=y\n"
              "CONFIG_TEGRA241_CMDQV=y\nCONFIG_IOMMUFD=m\n")
    assert f["kernel.cmdqv_configured"] is True and f["kernel.iommufd_configured"] is True
    assert f["kernel.arm_smmu_v3"] is True and f["kernel.arm_smmu_v3_iommufd"] is True
    assert f["kernel.page_size_kb"] == 64
    assert f["kernel.config.complete"] is False


def test_fragment_without_the_option_leaves_it_unknown():
    f = parse("CONFIG_ARM64=y\nCONFIG_ARM64_4K_PAGES=y\n# CONFIG_TEGRA241_CMDQV is not set\n")
    assert f["kernel.cmdqv_configured"] is False
    assert "kernel.iommufd_configured" not in f
    assert f["kernel.page_size_kb"] == 4


@pytest.mark.parametrize("text", ["", "\n", "# just a comment\n", "CONFIG=1\n"])
def test_empty_or_not_a_config(text):
    with pytest.raises(ParseError):
        parse(text)


def test_detected():
    assert parsers.detect(load(LOCAL)) == KIND
    assert parsers.detect("CONFIG_A=y\nCONFIG_B=m\n# CONFIG_C is not set\n") == KIND


def test_declared_facts():
    p = parsers.get(KIND)
    for name in parse(load(LOCAL)):
        assert factreg.is_known_name(name), name
        assert name in p.facts or name.startswith("kernel.config.CONFIG_"), name


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(), st.binary().map(lambda b: b.decode("utf-8", errors="replace")),
                 st.lists(st.sampled_from(["CONFIG_X=y", "# CONFIG_Y is not set", 'CONFIG_S="a\\"b"', 'CONFIG_Q="',
                                           "# Linux/arm64 6.8 Kernel Configuration", "CONFIG_ARM64_64K_PAGES=y", ""]))
                 .map("\n".join)))
def test_only_parse_errors(text):
    try:
        parse(text)
    except ParseError:
        pass


def test_real_source_here():
    ev = LocalTarget().run(sources.get("kernel-config"), sources.Params(pid=os.getpid()))
    release = os.uname().release
    if os.path.exists(f"/boot/config-{release}") or os.path.exists("/proc/config.gz"):
        assert ev.status is Status.OK, ev.reason  # here: /proc/config.gz
        f = parse(ev.text)
        assert f["kernel.config.count"] > 1000
        assert f["kernel.config.version"] == release.split("-")[0]
    else:
        assert ev.status is Status.ERROR
        assert f"no kernel config found at /boot/config-{release} or /proc/config.gz" in ev.reason


def test_no_config_is_a_clear_error():
    from troubleshooter.probe.runner import run_command
    from troubleshooter.sources.kernel_log import KERNEL_CONFIG_SCRIPT

    script = KERNEL_CONFIG_SCRIPT.replace("/boot/config-", "/nonexistent/config-").replace(
        "/proc/config.gz", "/nonexistent/config.gz")
    ev = run_command(["sh", "-c", script], source_id="kernel-config", timeout=10)
    assert ev.status is Status.ERROR
    assert "no kernel config found at /nonexistent/config-" in ev.reason and ev.rc == 3
