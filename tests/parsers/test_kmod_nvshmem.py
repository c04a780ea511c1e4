"""lsmod / modinfo and NVSHMEM's log, read from real pastes with exact values."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_lsmod_rows_without_the_header() -> None:
    f = parsers.run("kmod", load("kmod/gpud39-lsmod-peermem-ib-core-nvidia.txt"))
    assert f == {"kmod.loaded": ["nvidia_peermem", "ib_core", "nvidia"], "kmod.listing_complete": False}


def test_modinfo_of_the_peer_memory_module() -> None:
    text = load("kmod/nvpeermem46-lsmod-grep-empty-modinfo-nv-peer-mem.txt")
    modinfo = text[text.index("# modinfo"):]
    assert parsers.run("kmod", modinfo) == {"kmod.installed": ["nv_peer_mem"], "kmod.versions": {"nv_peer_mem": "1.0-8"}}


def test_nvshmem_says_no_peer_memory_module() -> None:
    f = parsers.run("nvshmem", load("nvshmem/deepep223-peermem-chunk.txt"))
    assert f["nvshmem.peermem_missing"] is True and f["nvshmem.init_failed"] is True
    assert f["nvshmem.sites"] == ["modules/transport/ibrc/ibrc.cpp", "host/topo/topo.cpp", "host/init/init.cu"]
    assert f["nvshmem.errors"][:2] == ["neither nv_peer_mem, or nvidia_peermem detected. Skipping transport.",
                                       "[GPU 1] Peer GPU 0 is not accessible, exiting ..."]
    g = parsers.run("nvshmem", load("nvshmem/deepep223-bootstrap-chunk.txt"))
    assert "nvshmem.peermem_missing" not in g
    # messages run together on one line are split at each location
    assert g["nvshmem.errors"][:2] == ["non-zero status: -6", "non-zero status: -6 allgather of ipc handles failed"]
    assert "Message truncated : received 58 bytes instead of 8" in g["nvshmem.errors"]


def test_nvshmem_from_nvidias_binary_builds_and_its_ipc_socket_failure() -> None:
    # the pip wheel's paths (/dvs/p4/.../main_nvshmem/src/...) were not taken for NVSHMEM's
    f = parsers.run("nvshmem", load("nvshmem/sglang-notes-wheel-build-ibgda-unable-to-create-ah.txt"))
    assert f == {"nvshmem.errors": ["NULL value Unable to create ah.", "non-zero status: 7 create DCT share err.",
                                    "non-zero status: 7 connect EPS failed"],
                 "nvshmem.sites": ["modules/transport/ibgda/ibgda.cpp", "host/transport/transport.cpp"],
                 "nvshmem.init_failed": False}
    text = load("nvshmem/deepep316-wheel-ipc-socket-enoent-fatal-ipc-failure.txt")
    assert parsers.detect(text) == "nvshmem"
    g = parsers.run("nvshmem", text)
    assert g["nvshmem.ipc_socket_error"] == "No such file or directory"
    assert g["nvshmem.sites"] == ["host/mem/mem_heap.cpp"] and g["nvshmem.errors"] == ["Fatal IPC Failure"]


@pytest.mark.parametrize("kind", ["kmod", "nvshmem"])
@pytest.mark.parametrize("text", ["", "hello\nworld\n", "NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"])
def test_other_text_is_refused(kind: str, text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run(kind, text)
    assert parsers.get(kind).detect(text) < parsers.DETECT_MIN


def test_a_key_value_log_is_not_an_environment() -> None:
    # logfmt lines (time=... level=INFO msg=...) repeat one name on every line; an environment lists each once
    text = load("unknown/ollama12136-logfmt-gpu-discovery.txt")
    assert parsers.get("env").detect(text) < parsers.DETECT_MIN
    with pytest.raises(parsers.ParseError, match="cannot tell what tool printed this"):
        parsers.detect(text)


def test_modprobe_finding_no_module_for_the_running_kernel():
    text = load("kmod/gcpgpuinstall10-modprobe-nvidia-kernel-5-13-0-1025-gcp.txt")
    assert parsers.detect(text) == "kmod"
    assert parsers.run("kmod", text) == {"kmod.missing_for_kernel": {"nvidia": "5.13.0-1025-gcp"}}


def test_insmod_refusing_modules_of_another_kernels_tree():
    f = parsers.run("kmod", load("kmod/gcpgpuinstall10-find-insmod-kernel-5-13-0-1025-gcp.txt"))
    assert f == {"kmod.insert_failed": [
        "/lib/modules/5.13.0-1024-gcp/kernel/drivers/gpu/drm/drm.ko: File exists",
        "/lib/modules/5.13.0-1024-gcp/kernel/drivers/video/nvidia.ko: Invalid parameters"]}


@pytest.mark.parametrize("rel, refusal", [
    ("kmod/jpnotes-modprobe-peermem-unknown-symbol-inbox-ib-core.txt",
     "nvidia_peermem: Unknown symbol in module, or unknown parameter (see dmesg)"),
    ("kmod/journal-systemd-modules-load-peermem-invalid-argument.txt", "nvidia_peermem: Invalid argument"),
    ("kmod/talos12021-error-loading-module-nvidia-peermem.txt", "nvidia_peermem: invalid argument"),
])
def test_the_kernel_refusing_the_peer_memory_module_as_modprobe_systemd_and_talos_log_it(rel, refusal):
    text = load(rel)
    assert parsers.detect(text) == "kmod"
    assert parsers.run("kmod", text)["kmod.insert_failed"] == [refusal]


def test_the_symbols_the_kernel_could_not_resolve_for_a_module():
    f = parsers.run("kmod", load("kmod/jpnotes-modprobe-peermem-unknown-symbol-inbox-ib-core.txt"))
    assert f["kmod.unknown_symbols"] == {"nvidia_peermem": ["ib_register_peer_memory_client",
                                                            "ib_unregister_peer_memory_client"]}
