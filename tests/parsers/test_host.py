import os
import platform
import shutil
import subprocess

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.model.evidence import Status
from troubleshooter.parsers import ParseError
from troubleshooter.sources import Params, get as get_source
from troubleshooter.sources.host import VIRT_SCRIPT
from troubleshooter.probe.targets import LocalTarget

HOST_KINDS = ("meminfo", "procstat", "virt")


def test_meminfo_this_sandbox():
    f = parsers.run("meminfo", load("host/proc-meminfo-this-sandbox.txt"))
    assert f == {
        "mem.total_kb": 24684084, "mem.available_kb": 24361972, "mem.hugepages_total": 0, "mem.hugepages_free": 0,
        "mem.hugepage_size_kb": 2048, "mem.anon_hugepages_kb": 0, "mem.hugetlb_kb": 0,
    }


def test_meminfo_cma_counted_and_not() -> None:
    vm = parsers.run("meminfo", load("host/proc-meminfo-vm-mem-monitor-cma-0-hugepages-64.txt"))
    assert (vm["mem.cma_total_kb"], vm["mem.cma_free_kb"], vm["mem.cma_uncounted_kb"]) == (0, 0, 0)
    assert (vm["mem.total_kb"], vm["mem.hugepages_total"], vm["mem.hugepages_free"]) == (2860040, 64, 50)
    # the two Cma lines alone, the poster's arrow note after one value, MemFree converted to GiB (not read)
    text = load("host/proc-meminfo-dspark259-cma-free-over-total-kho.txt")
    assert parsers.detect(text) == "meminfo"
    assert parsers.run("meminfo", text) == {"mem.cma_total_kb": 0, "mem.cma_free_kb": 940604,
                                           "mem.cma_uncounted_kb": 940604}


def test_meminfo_1g_pages():
    f = parsers.run("meminfo", "MemTotal:       2113524700 kB\nMemFree: 5 kB\nAnonHugePages:  10240000 kB\n"
                               "HugePages_Total:     512\nHugePages_Free:      500\nHugepagesize:    1048576 kB\n")
    assert (f["mem.hugepages_total"], f["mem.hugepages_free"], f["mem.hugepage_size_kb"]) == (512, 500, 1048576)
    assert f["mem.anon_hugepages_kb"] == 10240000


def test_procstat_this_sandbox():
    f = parsers.run("procstat", load("host/proc-stat-this-sandbox.txt"))
    # cpu  4464 0 2293 123776 357 0 68 9 0 0 -> total 130967
    assert f["cpu.steal_pct"] == round(9 * 100 / 130967, 3)
    assert f["cpu.iowait_pct"] == round(357 * 100 / 130967, 3)
    assert f["cpu.idle_since_boot_pct"] == round((123776 + 357) * 100 / 130967, 3)
    assert f["cpu.stat_cpus"] == 2


def test_procstat_heavy_steal_and_old_kernel():
    f = parsers.run("procstat", "cpu  600 0 100 200 0 0 0 100 50 0\ncpu0 600 0 100 200 0 0 0 100 50 0\nctxt 1\n")
    assert f["cpu.steal_pct"] == 10.0 and f["cpu.stat_cpus"] == 1
    f = parsers.run("procstat", "cpu  10 0 10 80\n")  # 4 fields only: no iowait, no steal
    assert "cpu.steal_pct" not in f and "cpu.iowait_pct" not in f and f["cpu.idle_since_boot_pct"] == 80.0


def test_virt_this_sandbox():
    f = parsers.run("virt", load("host/virt-this-sandbox-kvm.txt"))
    assert f == {
        "host.virt": "kvm", "host.virt_method": "systemd-detect-virt", "host.virtualized": True,
        "host.hypervisor_flag": True, "host.page_size": 4096, "host.kernel_release": "6.18.44-fc-v669",
        "host.arch": "x86_64",
    }


@pytest.mark.parametrize("text,virt,method,virtualized", [
    ("virt=none\ncpu_hypervisor_flag=no\narch=x86_64\n", "none", "systemd-detect-virt", False),
    ("dmi_sys_vendor=Amazon EC2\ndmi_product_name=p5.48xlarge\ncpu_hypervisor_flag=yes\narch=x86_64\n", "amazon", "dmi", True),
    ("dmi_sys_vendor=Microsoft Corporation\ndmi_product_name=Virtual Machine\narch=x86_64\n", "microsoft", "dmi", True),
    ("dmi_sys_vendor=QEMU\ndmi_product_name=Standard PC (Q35 + ICH9, 2009)\narch=x86_64\n", "qemu", "dmi", True),
    ("sys_hypervisor_type=xen\narch=x86_64\nkernel_release=5.10\n", "xen", "sys-hypervisor", True),
    ("dmi_sys_vendor=Supermicro\ncpu_hypervisor_flag=no\narch=x86_64\n", "none", "cpuid-flag", False),
])
def test_virt_fallbacks(text, virt, method, virtualized):
    f = parsers.run("virt", text)
    assert (f["host.virt"], f["host.virt_method"], f["host.virtualized"]) == (virt, method, virtualized)


def test_virt_unknown_hypervisor_and_arm_without_flag():
    f = parsers.run("virt", "dmi_sys_vendor=Some Cloud\ncpu_hypervisor_flag=yes\narch=x86_64\npage_size_smaps_kb=4 kB\n")
    assert "host.virt" not in f and f["host.virtualized"] is True and f["host.page_size"] == 4096
    f = parsers.run("virt", "dmi_sys_vendor=NVIDIA\npage_size=65536\narch=aarch64\nkernel_release=6.8.0-1013-nvidia-64k\n")
    assert "host.virt" not in f and "host.virtualized" not in f and f["host.page_size"] == 65536


def test_virt_script_fallbacks_without_systemd_detect_virt_and_getconf(tmp_path):
    """Run the real script with a PATH that lacks systemd-detect-virt and getconf."""
    for tool in ("sh", "grep", "cat", "uname", "sed"):
        path = shutil.which(tool)
        assert path, tool
        os.symlink(path, tmp_path / tool)
    out = subprocess.run([str(tmp_path / "sh"), "-c", VIRT_SCRIPT], capture_output=True, text=True, timeout=10,
                         env={"PATH": str(tmp_path), "LC_ALL": "C"})
    assert out.returncode == 0, out.stderr
    assert "virt=" not in out.stdout.split("page_size")[0].replace("sys_hypervisor", "")
    f = parsers.run("virt", out.stdout)
    assert f["host.page_size"] == os.sysconf("SC_PAGE_SIZE")  # from /proc/self/smaps
    assert f["host.kernel_release"] == platform.release()
    assert f["host.arch"] == platform.machine()
    assert f["host.hypervisor_flag"] is True  # this machine is a KVM guest (x86 flag present)
    assert f["host.virtualized"] is True


@pytest.mark.parametrize("kind", HOST_KINDS)
@pytest.mark.parametrize("text", ["", "  \n", "hello world\n"])
def test_empty_or_garbage(kind, text):
    with pytest.raises(ParseError):
        parsers.run(kind, text)




@pytest.mark.parametrize("source_id", ["meminfo", "procstat", "virt"])
def test_sources_run_here(source_id):
    ev = LocalTarget().run(get_source(source_id), Params())
    assert ev.status is Status.OK, ev.reason
    f = parsers.run(get_source(source_id).parser, ev.text)
    if source_id == "meminfo":
        assert f["mem.total_kb"] > 0
    elif source_id == "procstat":
        assert 0 <= f["cpu.steal_pct"] <= 100
    else:
        assert f["host.page_size"] == os.sysconf("SC_PAGE_SIZE")
        assert f["host.kernel_release"] == platform.release()
        assert f["host.arch"] == platform.machine()
        assert f.get("host.virt") != "docker"  # --vm only: /.dockerenv exists here without a container
