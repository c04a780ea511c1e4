"""verbs-errors parser: RDMA verbs failures printed outside NCCL's and UCX's formats, on real captures."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_a_bare_ibv_create_cq_enomem_line_from_a_container_client():
    text = load("verbs-errors/cudfspark7632-ucx-shuffle-ibv-create-cq-enomem.txt")
    assert parsers.detect(text) == "verbs-errors"
    assert parsers.run("verbs-errors", text) == {
        "rdma.verbs_errors": ["ERROR mlx5_0: ibv_create_cq() failed: Cannot allocate memory."]}


def test_perftest_memory_registration_failure_after_its_banner():
    text = load("verbs-errors/softiwarp23-ib-send-bw-couldnt-allocate-mr.txt")
    assert parsers.detect(text) == "verbs-errors"
    assert parsers.run("verbs-errors", text)["rdma.verbs_errors"] == [
        "Couldn't allocate MR", "failed to create mr", "Failed to create MR"]


def test_nccl_and_ucx_lines_are_left_to_their_own_kinds():
    nccl = "h:1:2 [0] misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory\n"
    with pytest.raises(ParseError):
        parsers.run("verbs-errors", nccl)
    assert parsers.detect(nccl) == "nccl-debug"


def test_a_banner_alone_is_not_a_failure():
    with pytest.raises(ParseError):
        parsers.run("verbs-errors", " rdma_cm QPs\t : OFF\n Link type       : Ethernet\n")


def test_failed_work_completions_from_uct_verbs():
    text = load("verbs-errors/ucx3564-osu-bw-device-buffers-local-protection-error.txt")
    assert parsers.detect(text) == "verbs-errors"
    assert parsers.run("verbs-errors", text)["rdma.verbs_errors"] == [
        "mlx5: got completion with error:", "rc_verbs_iface.c:67 send completion with error: local protection error"]
    # OSU's header says both buffers were on the GPU (osu_bw D D): GPUDirect RDMA
    assert parsers.run("verbs-errors", text)["rdma.gpu_buffers"] is True
    assert "rdma.gpu_buffers" not in parsers.run("verbs-errors", load("verbs-errors/softiwarp23-ib-send-bw-couldnt-allocate-mr.txt"))


def test_a_device_libibverbs_has_no_provider_for_read_among_another_tools_output():
    text = load("nccl-tests/nccltests41-singularity-no-libmlx5-internal-error.txt")
    assert parsers.run("verbs-errors", text) == {
        "rdma.verbs_errors": [], "rdma.devices_without_provider": ["/sys/class/infiniband_verbs/uverbs0"]}
    # libibverbs' 'couldn't load driver' lines are its tries for providers without hardware: not read
    with pytest.raises(ParseError):
        parsers.run("verbs-errors", "libibverbs: Warning: couldn't load driver 'libvmw_pvrdma-rdmav34.so': "
                                    "libvmw_pvrdma-rdmav34.so: cannot open shared object file: No such file or directory\n")


def test_libfabrics_efa_provider_aborting_on_enomem():
    f = parsers.run("verbs-errors", load("verbs-errors/awsomedai647-efa-internal-error-enomem.txt"))
    assert f["rdma.verbs_errors"] == ["Libfabric error: (-12) Cannot allocate memory",
                                      "EFA internal error: (4112) Failure to post internal receive buffers"]


def test_libibverbs_without_any_provider_configuration():
    # the image had rdma-core and ibverbs-utils but not ibverbs-providers (infra-controller#5251)
    text = load("verbs-errors/infractl5251-scout-ibv-devinfo-config-dir-missing.txt")
    assert parsers.detect(text) == "verbs-errors"
    assert parsers.run("verbs-errors", text) == {"rdma.verbs_errors": [], "rdma.provider_config_missing": "/etc/libibverbs.d"}
    # once per process in a training log, with the four devices it then cannot drive (mmdetection#6002)
    f = parsers.run("verbs-errors", load("verbs-errors/mmdet6002-config-dir-missing-four-uverbs-without-provider.txt"))
    assert f["rdma.provider_config_missing"] == "/etc/libibverbs.d"
    assert f["rdma.devices_without_provider"] == [f"/sys/class/infiniband_verbs/uverbs{i}" for i in (1, 3, 0, 2)]


def test_devices_without_provider_on_a_host_and_without_libibverbs_prefix():
    f = parsers.run("verbs-errors", load("verbs-errors/pib2-ibv-devinfo-no-userspace-driver-no-ib-devices.txt"))
    assert f == {"rdma.verbs_errors": [], "rdma.devices_without_provider": [
        "/sys/class/infiniband_verbs/uverbs1", "/sys/class/infiniband_verbs/uverbs0"]}
    assert "rdma.provider_config_missing" not in f
    # a program that re-prints the warning without libibverbs' prefix (horovod/horovod#1117's NCCL fallback)
    line = "Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0\n"
    assert parsers.detect(line) == "verbs-errors"
    assert parsers.run("verbs-errors", line)["rdma.devices_without_provider"] == ["/sys/class/infiniband_verbs/uverbs0"]


@pytest.mark.parametrize("rel", ["verbs-errors/horovod288-ssh-ibv-devinfo-function-not-implemented.txt",
                                 "verbs-errors/rdmanotes-ibv-devices-function-not-implemented-no-rdma-host.txt"])
def test_libibverbs_finding_no_kernel_verbs_interface(rel):
    text = load(rel)
    assert parsers.detect(text) == "verbs-errors"
    assert parsers.run("verbs-errors", text) == {"rdma.verbs_errors": [], "rdma.uverbs_missing": True}
