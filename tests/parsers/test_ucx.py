"""ucx parser: UCX log lines, Open MPI's UCX-component errors and ucx_info -d, on a real capture."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_ompi_ucx_enomem_and_ucx_info_cut_mid_line():
    text = load("ucx/ompi-ucx-ibv-create-cq-enomem-memlock-64k-and-ucx-info.txt")
    assert parsers.detect(text) == "ucx"
    f = parsers.run("ucx", text)
    assert f["ucx.errors"] == ["ibv_create_cq(cqe=4096) failed: Cannot allocate memory",
                               "Failed to create UCP worker",
                               "mlx5dv_create_cq(cqe=4096) failed: Cannot allocate memory",
                               "mlx5dv_create_cq(cqe=4608) failed: Cannot"]  # the excerpt ends there
    assert f["ucx.warnings"] == []
    assert f["ucx.error_sites"] == ["ib_iface.c", "ib_mlx5.c"]
    assert f["ucx.devices"] == ["mlx5_0:1"]
    assert f["ucx.transports"] == ["rc_verbs", "rc_mlx5", "dc_mlx5"]
    assert f["ucx.unopened_transports"] == ["rc_verbs", "rc_mlx5"]
    assert f["ucx.hosts"] == ["cn0022", "cn0337"]


def test_warn_line_and_a_sentence_naming_ucx():
    f = parsers.run("ucx", "[1700000000.1] [n1:10:0] ucp_context.c:1100 UCX  WARN  transport 'rc' is not available\n")
    assert f["ucx.warnings"] == ["transport 'rc' is not available"] and f["ucx.errors"] == []
    with pytest.raises(ParseError):
        parsers.run("ucx", "we use UCX for this job and it errors out\n")


def test_the_mm_transports_shared_memory_failures_with_or_without_their_prefix():
    f = parsers.run("ucx", load("ucx/aicloudval643-pod-mm-iface-fifo-segfault.txt"))
    assert f["ucx.shm_alloc_failures"] == ["mm_iface failed to allocate receive FIFO"] and f["ucx.errors"] == []
    f = parsers.run("ucx", load("ucx/ucx1037-mm-posix-not-enough-dev-shm.txt"))
    assert f["ucx.shm_alloc_failures"] == ["Not enough memory to write total of 4208440835 bytes. Please check that "
                                           "/dev/shm or the directory you specified has more available memory."]
    assert f["ucx.hosts"] == ["pod9"] and len(f["ucx.errors"]) == 2


def test_a_crash_in_a_cpu_copy_under_ucxs_send_path():
    f = parsers.run("ucx", load("ucx/ucx3776-backtrace-am-short-libc-copy.txt"))
    assert f["ucx.segfault"] is True and f["ucx.segfault_in_copy"] is True
    assert f["ucx.crash_frames"][:4] == ["libc.so.6+", "uct_rc_mlx5_ep_am_short", "ucp_tag_send_nbr", "mca_pml_ucx_send"]
    f = parsers.run("ucx", load("ucx/ucx7845-memcpy-ssse3-under-ucp-dt-pack.txt"))
    assert f["ucx.crash_frames"][:2] == ["__memcpy_ssse3", "ucp_dt_pack"] and f["ucx.segfault_in_copy"] is True


def test_the_crash_report_of_another_librarys_bus_error():
    # UCX's handler reports a SIGBUS in NCCL's threads (pipedream#76, Docker's 64 MB /dev/shm): read, not a UCX crash
    f = parsers.run("ucx", load("ucx/pipedream76-sigbus-in-nccl-threads-docker-shm.txt"))
    assert f["ucx.crash_signal"] == "Bus error"
    assert f["ucx.crash_frames"] == ["__nss_database_lookup", "ncclGroupEnd", "ncclGroupEnd", "ncclGetUniqueId",
                                     "ncclRedOpDestroy", "start_thread", "clone"]
    assert "ucx.segfault" not in f and "ucx.segfault_in_copy" not in f


def test_ucx_without_its_cuda_transports_and_the_ucx_tls_a_log_echoes():
    warn = parsers.run("ucx", load("ucx/lmcache605-warn-cuda-transports-not-available.txt"))
    assert warn["ucx.cuda_unavailable"] is True and "ucx.tls_in_log" not in warn
    nixl = load("ucx/trtllm18373-nixl-agent-ucx-tls-tcp-cuda-support-not-found.txt")
    assert parsers.detect(nixl) == "ucx"
    f = parsers.run("ucx", nixl)
    assert (f["ucx.cuda_unavailable"], f["ucx.tls_in_log"]) == (True, "tcp")
    # a transport asked for and missing that is not a CUDA one (UCX offering cuda_copy among the rest) is no such thing
    ud = parsers.run("ucx", "[1] [h:1:0] ucp_context.c:1100 UCX  WARN  transport 'ud' is not available, please use one "
                            "or more of: cuda_copy, cuda_ipc, rc_mlx5, self, sm, tcp\n")
    assert "ucx.cuda_unavailable" not in ud


def test_the_build_line_of_ucx_info_v():
    f = parsers.run("ucx", load("ucx/ucx10298-configured-with-without-verbs-bold-quoted.txt"))
    assert f["ucx.configured_without"] == ["go", "java", "dc", "dm", "gdrcopy", "ib-hw-tm", "knem", "mlx5-dv", "rc",
                                           "ud", "xpmem", "fuse3", "bfd", "rdmacm", "verbs", "rocm"]
    built = load("ucx/ucx8808-ucx-info-bdv-configured-with-rc-ud-dc-cuda.txt")
    assert parsers.detect(built) == "ucx"
    assert parsers.run("ucx", built)["ucx.configured_without"] == []
    # gcc -v prints a 'Configured with:' line too: not UCX's
    with pytest.raises(ParseError):
        parsers.run("ucx", "Configured with: ../src/configure -v --with-pkgversion='Ubuntu 11.4.0' --enable-languages=c,c++\n")


def test_ucx_13s_fatal_qp_error_behind_open_mpis_timestamped_rank_tags():
    # mpirun --tag-output --timestamp-output: "Mon Feb 26 12:09:14 2018[1,0]<stderr>:" before every line (the intake
    # takes it off, as it takes "[1,0]<stderr>:" alone); UCX 1.3's "[host:pid:thread:tid] file.c:line  FATAL: ..."
    from tests.corpus import DATA
    from troubleshooter.diagnosis.pasted import EvidenceFacts

    path = DATA / "ucx" / "ucx2346-ompi-timestamp-tag-output-ucx13-fatal-qp-retry-exceeded.txt"
    ef = EvidenceFacts.from_specs([str(path)])
    assert [(f.kind, f.error) for f in ef.files] == [("ucx", "")]
    assert ef.lookup("ucx.errors") == [
        "Error on QP 0x2e5d6 wqe[7]: Transport retry count exceeded (synd 0x15 vend 0x81) opcode RDMA_READ"]
    assert (ef.lookup("ucx.error_sites"), ef.lookup("ucx.hosts")) == (["ib_mlx5_log.c"], ["jazz21"])


@pytest.mark.parametrize("name, version, without", [
    # UCX 1.8's ucx_info -v: its version line, and the build line in lower case below it (no transport option in it:
    # below UCX's own version line it is UCX's)
    ("ucx5300-ucx-info-v-180-configured-with-lower-case.txt", "1.8.0", ["java"]),
    # RHEL 8.2's package: the build line alone, in lower case, its options wrapped onto eight lines
    ("ucx5611-ucx-info-v-rhel82-configured-with-wrapped.txt", None, ["gdrcopy", "rocm", "xpmem", "ugni", "java"]),
])
def test_ucx_info_v_of_releases_before_1_10(name, version, without):
    text = load(f"ucx/{name}")
    assert parsers.detect(text) == "ucx"
    f = parsers.run("ucx", text)
    assert (f.get("ucx.version"), f["ucx.configured_without"]) == (version, without)
    assert f["ucx.errors"] == []


def test_open_mpis_ucx_component_errors_before_its_next_message_are_ucx():
    # the pml_ucx lines of a real capture with Open MPI's next message under them: detection counted such a line
    # only when it was the text's last
    lines = load("ucx/ucx10298-mpirun-invalid-active-speed-mlx5-ndr.txt").strip("\n").split("\n")
    text = "\n".join(ln for ln in lines if "pml_ucx" in ln or "----" in ln or "No components" in ln) + "\n"
    assert text.count("pml_ucx.c:309") == 2 and text.rstrip().endswith("pml framework.")
    assert parsers.detect(text) == "ucx"
    f = parsers.run("ucx", text)
    assert f["ucx.errors"] == ["Failed to create UCP worker"] and f["ucx.hosts"] == ["gpu46"]
