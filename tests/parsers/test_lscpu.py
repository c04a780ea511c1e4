import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.model.evidence import Status
from troubleshooter.parsers import ParseError
from troubleshooter.parsers.lscpu import cpu_list_count
from troubleshooter.sources import Params, get as get_source
from troubleshooter.probe.targets import LocalTarget

KIND = "lscpu"


def parse(name):
    return parsers.run(KIND, load(f"lscpu/{name}"))


def test_epyc74f3_tree_format_excerpt():
    f = parse("lscpu-epyc74f3-1s-nps4-bios-model-name-unknown-cpu.txt")
    assert f == {
        "cpu.arch": "x86_64", "cpu.vendor": "AuthenticAMD", "cpu.model": "AMD EPYC 74F3 24-Core Processor",
        "cpu.count": 48, "cpu.online_list": "0-47", "cpu.online_count": 48, "cpu.sockets": 1,
        "cpu.cores_per_socket": 24, "cpu.threads_per_core": 2, "cpu.max_mhz": 4037.5, "cpu.min_mhz": 1500.0,
        "cpu.freq.boost": True,
    }  # cut before the virtualization lines: cpu.virtualized is not guessed


def test_epyc7502p_offline_cpus_and_min_mhz_zero():
    f = parse("lscpu-epyc7502p-hetzner-offline-cpus-32-63-min-mhz-0.txt")
    assert (f["cpu.count"], f["cpu.online_list"], f["cpu.offline_list"], f["cpu.online_count"]) == (64, "0-31", "32-63", 32)
    assert f["cpu.threads_per_core"] == 1
    assert f["cpu.max_mhz"] == 2500.0
    assert "cpu.min_mhz" not in f  # lscpu printed 0.0000
    assert f["cpu.freq.boost"] is False
    assert "cpu.virtualized" not in f


def test_epyc8434p_old_flat_format_8_numa():
    f = parse("lscpu-epyc8434p-siena-1s-8numa-old-format.txt")
    assert (f["cpu.count"], f["cpu.sockets"], f["cpu.cores_per_socket"], f["cpu.threads_per_core"]) == (96, 1, 48, 2)
    assert f["cpu.model"] == "AMD EPYC 8434P 48-Core Processor"
    assert (f["cpu.max_mhz"], f["cpu.min_mhz"]) == (3107.9099, 1500.0)
    assert f["numa.node_count"] == 8
    assert f["numa.node_cpus"]["0"] == "0-5,48-53" and f["numa.node_cpus"]["7"] == "42-47,90-95"
    assert f["numa.cpuless_nodes"] == []
    assert f["cpu.virtualized"] is False and "cpu.hypervisor" not in f  # 'Virtualization: AMD-V' is host support


def test_gh200_vm_dash_sockets_and_cpuless_nodes():
    f = parse("lscpu-gh200-lambda-vm-neoverse-v2-9-numa-empty.txt")
    assert (f["cpu.arch"], f["cpu.model"], f["cpu.count"]) == ("aarch64", "Neoverse-V2", 64)
    assert "cpu.sockets" not in f  # 'Socket(s): -'
    assert "cpu.cores_per_socket" not in f  # only 'Core(s) per cluster'
    assert f["numa.node_count"] == 9
    assert f["numa.node_cpus"] == {"0": "0-63", **{str(n): "" for n in range(1, 9)}}
    assert f["numa.cpuless_nodes"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert len(f["cpu.flags"]) == 47 and f["cpu.flags"][0] == "fp" and "sve2" in f["cpu.flags"]
    assert "cpu.virtualized" not in f  # Arm: no hypervisor line does not prove bare metal


def test_gh200_first_char_lost():
    f = parse("lscpu-gh200-rocky93-neoverse-v2-72c-first-char-truncated.txt")
    assert f["cpu.arch"] == "aarch64"  # from 'rchitecture:'
    assert (f["cpu.count"], f["cpu.sockets"], f["cpu.cores_per_socket"]) == (72, 1, 72)
    assert (f["cpu.max_mhz"], f["cpu.min_mhz"]) == (3447.0, 81.0)
    assert f["cpu.flags"][-1] == "dgh" and len(f["cpu.flags"]) == 44


def test_numa_section_only():
    f = parse("lscpu-numa-section-gh200-9-nodes-8-cpuless.txt")
    assert f == {
        "numa.node_count": 9,
        "numa.node_cpus": {"0": "0-71", **{str(n): "" for n in range(1, 9)}},
        "numa.cpuless_nodes": [1, 2, 3, 4, 5, 6, 7, 8],
    }


def test_spr_8462_indented_even_odd_numa():
    f = parse("lscpu-spr-8462yplus-mi300x-host-even-odd-numa-interleave.txt")
    assert (f["cpu.count"], f["cpu.sockets"], f["cpu.cores_per_socket"], f["cpu.threads_per_core"]) == (128, 2, 32, 2)
    assert f["cpu.model"] == "Intel(R) Xeon(R) Platinum 8462Y+"
    assert (f["cpu.max_mhz"], f["cpu.min_mhz"]) == (4100.0, 800.0)
    assert f["numa.node_cpus"]["0"].startswith("0,2,4,") and f["numa.node_cpus"]["1"].endswith(",125,127")
    assert cpu_list_count(f["numa.node_cpus"]["1"]) == 64
    assert len(f["cpu.flags"]) == 169 and f["cpu.flags"][-1] == "arch_capabilities"
    assert f["cpu.virtualized"] is False


def test_spr_8480_wrapped_flags_rejoined():
    f = parse("lscpu-spr-8480plus-ht-off-snc4-8numa-wrapped-flags-plus-numactl-H.txt")
    assert (f["cpu.count"], f["cpu.sockets"], f["cpu.cores_per_socket"], f["cpu.threads_per_core"]) == (112, 2, 56, 1)
    assert f["numa.node_count"] == 8 and f["numa.node_cpus"]["7"] == "98-111"
    flags = f["cpu.flags"]
    for whole in ("pdpe1gb", "ds_cpl", "3dnowprefetch", "invpcid", "cqm_llc", "avx512_vbmi2", "serialize"):
        assert whole in flags  # each was split across a wrap
    assert not {"pd", "pe1gb", "ds", "_cpl", "se", "rialize"} & set(flags)
    assert len(flags) == 160 and flags[-1] == "arch_capabilities"
    assert f["cpu.virtualized"] is False


def test_this_machine_shape_hypervisor():
    text = ("Architecture: x86_64\nCPU(s): 2\nOn-line CPU(s) list: 0,1\nSocket(s): 1\n"
            "Flags: fpu hypervisor lahf_lm\nHypervisor vendor: KVM\nVirtualization type: full\n")
    f = parsers.run(KIND, text)
    assert (f["cpu.hypervisor"], f["cpu.virtualization_type"], f["cpu.virtualized"]) == ("KVM", "full", True)
    assert f["cpu.online_count"] == 2


@pytest.mark.parametrize("text", ["", "\n  \n", "foo: bar\n", "Kernel command line: ro quiet\n"])
def test_empty_or_not_lscpu(text):
    with pytest.raises(ParseError):
        parsers.run(KIND, text)




def test_source_runs_here():
    import os
    ev = LocalTarget().run(get_source("lscpu"), Params())
    assert ev.status is Status.OK, ev.reason
    f = parsers.run(KIND, ev.text)
    assert f["cpu.count"] == os.cpu_count()
    assert isinstance(f["cpu.virtualized"], bool)
