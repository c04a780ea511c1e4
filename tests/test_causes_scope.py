"""Causes ruled in from real pasted outputs, and kept out where the paste does not speak to them (issue 15):
the RDMA adapter's firmware, NCCL versions across nodes, an image without RDMA userspace, a topology file that
does not fit, and NCCL's sockets on one machine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from troubleshooter import sources
from troubleshooter.diagnosis import causes
from troubleshooter.diagnosis.pasted import EvidenceFacts
from troubleshooter.model.facts import FactSet, Unknown

DATA = Path(__file__).parent / "data"


def _specs(specs: list[str]) -> list[str]:
    """``SIDE:rel`` and ``KIND=rel`` specs relative to tests/data."""
    out = []
    for s in specs:
        side, sep, rest = s.rpartition(":") if ":" in s and not s.startswith("/") else ("", "", s)
        kind, eq, rel = rest.partition("=") if "=" in rest.split("/")[0] else ("", "", rest)
        path = rel if rel.startswith("/") else str(DATA / rel)
        out.append(f"{side or 'target'}:{kind + '=' if kind else ''}{path}")
    return out


def _found(specs: list[str]) -> list[tuple[str, str]]:
    """As tests.test_causes._found, with ``SIDE:rel`` and ``KIND=rel`` specs relative to tests/data too."""
    sources.load_all()
    ef = EvidenceFacts.from_specs(_specs(specs))
    return [(f.cause.id, f.signature.confidence) for f in causes.ruled_in(causes.load(), ef.lookup)]


def test_the_nic_driver_asking_for_newer_firmware_with_no_rdma_device_up() -> None:
    both = ["host:ibstatus/trinity219-fatal-sys-files-not-found.txt", "host:dmesg/trinity219-mlx4-lso-upgrade-fw-failing-node.txt"]
    assert ("hca-firmware-outdated", "likely") in _found(both)
    # the same driver on the repaired node says nothing of firmware; and a complaint alone, with ports up, is no cause
    assert _found(["dmesg/trinity219-mlx4-working-node.txt"]) == []
    assert [c for c, _ in _found(["dmesg/trinity219-mlx4-lso-upgrade-fw-failing-node.txt"])] == []


def test_two_nodes_pip_listings_that_disagree_on_nccl(tmp_path) -> None:
    a, b = "packages/nccl1267-pip-freeze-grep-nccl-problem-node.txt", "packages/nccl1267-pip-freeze-grep-nccl-other-nodes.txt"
    assert ("nccl-version-mismatch-across-nodes", "likely") in _found([a, b])
    assert ("nccl-version-mismatch-across-nodes", "likely") in _found([f"node1:{a}", f"node2:{b}"])
    # one listing, or the same versions twice, or a host beside the job's container (their NCCLs differ by design)
    assert _found([a]) == []
    copy = tmp_path / "same.txt"
    shutil.copy(DATA / a, copy)
    assert _found([a, str(copy)]) == []
    assert "nccl-version-mismatch-across-nodes" not in dict(_found([f"host:{a}", f"container:{b}"]))


def test_a_plain_cuda_image_given_rdma_devices_has_no_verbs_library() -> None:
    assert ("rdma-userspace-missing-in-container", "likely") in _found(
        ["container:k8s-pod/nvct1877-containers-section-only-infiniband-mount-shm-volume-unseen.txt"])
    # a framework image with the same RDMA devices: not this cause
    assert "rdma-userspace-missing-in-container" not in dict(_found(
        ["container:k8s-pod/kai-scheduler-job-8-gpus-rdma-shared-device-no-dshm.txt"]))
    # NCCL could not open libibverbs on a machine nothing says has RDMA: benign, no cause about RDMA at all
    found = dict(_found(["container:nccl-debug/nccl-old-warn-lines-container-socket-creation-failed.txt"]))
    assert "rdma-userspace-missing-in-container" not in found and "ib-not-visible-in-container" not in found


def test_a_health_checks_allreduce_collapse_with_a_forced_topology_file(tmp_path) -> None:
    cmd = tmp_path / "cmd.txt"
    cmd.write_text("root@vm:/azure-nhc# mpirun -np 8 -x NCCL_TOPO_FILE=/azure-nhc/topofiles/ndv5-topo.xml "
                   "/opt/nccl-tests/build/all_reduce_perf -b 16G -f 2 -g 1 -e 16G -c 1\n")
    nhc = "nhc/aznhc-h200-nccl-allreduce-15gbps-nhc2010.txt"
    assert ("topo-file-broken", "likely") in _found([nhc, str(cmd)])
    # the same collapse with no topology file forced points elsewhere
    assert "topo-file-broken" not in dict(_found([nhc]))


def test_sockets_on_one_workstation_are_not_a_fabric_fault() -> None:
    one = "container:nccl-debug/pytorch73790-one-workstation-container-socket-bridges-no-libibverbs.txt"
    found = dict(_found([one]))
    for cause in ("socket-ifname-wrong", "ib-not-visible-in-container", "rdma-userspace-missing-in-container"):
        assert cause not in found, cause


def test_no_socket_interface_found_is_an_ifname_that_matches_nothing(tmp_path) -> None:
    tb = "torch-distributed/openr1mm7-rank0-last-error-no-socket-interface-found.txt"
    assert ("socket-ifname-wrong", "likely") in _found([tb])
    # an environment read in full without NCCL_SOCKET_IFNAME: NCCL would have fallen back to lo; not this cause
    env = tmp_path / "env.txt"
    env.write_text("HOME=/root\nPATH=/usr/bin:/bin\nNCCL_DEBUG=INFO\nHOSTNAME=node1\n")
    assert "socket-ifname-wrong" not in dict(_found([tb, f"env={env}"]))


def test_the_walk_does_not_call_one_machines_sockets_a_fallback() -> None:
    from tests.test_causes import _diagnosed

    got = _diagnosed("nccl-debug/pytorch73790-one-workstation-container-socket-bridges-no-libibverbs.txt")
    assert "nccl-socket-fallback" not in got and "socket-ifname-wrong" not in got


def test_the_peer_memory_module_not_loaded() -> None:
    # installed (modinfo) but not loaded (lsmod | grep printed nothing), on a node whose RDMA module is there
    assert ("gdr-disabled", "likely") in _found(["host:kmod/nvpeermem46-lsmod-grep-empty-modinfo-nv-peer-mem.txt"])
    # both names grepped for, nothing found: not loaded; but nothing says this machine does RDMA, so no claim
    assert "gdr-disabled" not in dict(_found(["kmod/nccl988-lsmod-grep-both-peer-modules-empty.txt"]))
    # loaded: no cause
    assert "gdr-disabled" not in dict(_found(["kmod/gpud39-lsmod-peermem-ib-core-nvidia.txt"]))
    # NVSHMEM's own word
    assert ("gdr-disabled", "confirmed") in _found(["nvshmem/deepep223-peermem-chunk.txt"])
    assert "gdr-disabled" not in dict(_found(["nvshmem/deepep223-bootstrap-chunk.txt"]))


def test_a_cause_shown_by_an_earlier_output_that_a_later_one_of_the_same_machine_contradicts() -> None:
    from tests.test_causes import _diagnosed

    before, after = "kernel_config/nixos527847-gb10-sva-before.txt", "kernel_config/nixos527847-gb10-sva-after.txt"
    assert _diagnosed(after) == []
    # before and after the kernel change, given as one machine: the last file read stands for the machine, and
    # the cause the earlier one shows is still reported, saying which file shows it and which one disagrees
    assert _diagnosed(before, after) == ["smmu-sva-missing"]
    import json
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "troubleshooter", "diagnose", "--evidence", str(DATA / before),
                        "--evidence", str(DATA / after), "--json"], capture_output=True, text=True, timeout=120)
    summary = json.loads(r.stdout)["conclusions"][0]["summary"]
    assert "Shown by nixos527847-gb10-sva-before.txt" in summary and "y in nixos527847-gb10-sva-after.txt" in summary


def test_an_nccl_error_alone_is_walked_as_a_failure_with_its_own_checks() -> None:
    import json
    import subprocess
    import sys

    # a framework's 'unhandled system error' line and nothing else: the failure's checks, not a slowdown's
    tb = DATA / "torch-distributed/openr1mm7-rank0-last-error-no-socket-interface-found.txt"
    r = subprocess.run([sys.executable, "-m", "troubleshooter", "diagnose", "--evidence", str(tb), "--json"],
                       capture_output=True, text=True, timeout=120)
    doc = json.loads(r.stdout)
    assert doc["symptom"]["id"] == "nccl-fails"
    untested = {h["id"]: h for h in doc["hypotheses"] if h["state"] == "untested"}
    assert "shm-too-small" in untested and "gdr-disabled" in untested and "cstates-limited" not in untested
    assert [c["cause"] for c in doc["conclusions"]] == ["socket-ifname-wrong"]
    # a measured run is a slowdown, whatever errors its log also holds
    r = subprocess.run([sys.executable, "-m", "troubleshooter", "diagnose", "--evidence",
                        str(DATA / "nhc/aznhc-h200-nccl-allreduce-15gbps-nhc2010.txt"), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert json.loads(r.stdout)["symptom"]["id"] != "nccl-fails"


def test_the_jobs_own_limits_probe_with_a_64_mib_dev_shm_and_an_nccl_error() -> None:
    # NCCL's 'unhandled system error' alone names no cause
    err = "torch-distributed/deepspeed536-unhandled-system-error-nccl-n-2.7.8.txt"
    assert "shm-too-small" not in dict(_found([err]))
    # with the limits source run in a 64 MiB /dev/shm (Docker's default) beside it: shm-too-small
    shm = "limits=limits/this-sandbox-bwrap-shm-64mib-memlock-8192.txt"
    assert ("shm-too-small", "likely") in _found([shm, err])
    # the probe alone, with no failure, claims nothing; a 24 GB /dev/shm with the same error is not the size
    assert "shm-too-small" not in dict(_found([shm]))
    assert "shm-too-small" not in dict(_found(["limits=limits/this-sandbox-root-memlock-8192-shm-tmpfs.txt", err]))


def test_nccl_could_not_open_libibverbs_in_a_job_given_rdma_devices() -> None:
    # two real captures from different threads, put side by side: NCCL's libibverbs WARN in a container
    # (NVIDIA/nccl-tests#14) and a docker run line that passes the verbs devices (a Slurm + docker job script)
    warn = "container:nccl-debug/nccl-old-warn-lines-container-socket-creation-failed.txt"
    run = "container:docker-run/slurm-mpirun-docker-run-uverbs-rdma-cm-memlock.txt"
    assert ("rdma-userspace-missing-in-container", "confirmed") in _found([warn, run])


def test_a_fatal_nvswitch_sxid_is_an_nvlink_error_a_non_fatal_one_is_not() -> None:
    # Talos' log of an HGX A100 whose nvidia-nvswitch1 reports SXid 24007 at Severity 1 (fatal)
    assert _found(["host:dmesg/talos-hgx-a100-nvswitch-sxid-24007-severity1-ogkm1118.txt"]) == [
        ("gpu-nvlink-errors", "confirmed")]
    # a non-fatal MINION interrupt, and a Data line whose severity the paste does not show, claim nothing
    assert _found(["host:dmesg/hgx-nvswitch-sxid-22013-nonfatal-minion-link60.txt"]) == []
    assert _found(["host:dmesg/nvswitch-sxid-12028-data-line-only-dmesg-iso-gpud.txt"]) == []


def test_the_xid_catalogue_knows_blackwell_nvlink_xids() -> None:
    # open-gpu-kernel-modules nverror.h: 136 ALI_TRAINING_FAIL, 137 NVLINK_PRIV_ERR, 144-150 NVLINK_*_ERROR
    from troubleshooter.model.combine import xid_catalogue

    cat = xid_catalogue()
    assert {cat[c] for c in (74, 136, 137, 144, 145, 146, 147, 148, 149, 150, 155)} == {"interconnect"}
    assert cat[156] == cat[157] == "memory"


def test_nccl_s_cuda_failure_naming_an_old_driver_is_the_driver_runtime_mismatch() -> None:
    # NCCL prints cudaGetErrorString in its WARN: 'CUDA driver version is insufficient for CUDA runtime version'
    found = _found(["nccl-warn-lines/cuml5961-cuda-failure-driver-insufficient-for-runtime.txt"])
    assert found == [("cuda-driver-mismatch", "confirmed")]


def test_nccl_lost_the_nic_its_fusion_merged_is_an_nccl_to_upgrade() -> None:
    line = "nccl-warn-lines/nemo13996-could-not-find-net-with-id-0.txt"
    assert _found(["container:" + line]) == [("nccl-version-too-old", "likely")]
    # NCCL 2.27 keeps NET/0 (NVIDIA/nccl#1748): there the same line has another reason
    warn = "x:1:2 [0] graph/topo.h:230 NCCL WARN Could not find NET with id 0"
    loaded = causes.load()

    def found(values: dict) -> list[str]:
        fs = FactSet("target")
        fs.update_from(values, source="test", target="target", at=0.0)
        return [f.cause.id for f in causes.ruled_in(loaded, lambda n, s: fs.get_value(n))]

    assert found({"nccl.warnings": [warn]}) == ["nccl-version-too-old"]
    assert found({"nccl.warnings": [warn], "nccl.version_code": 22703}) == []
    assert found({"nccl.warnings": [warn], "nccl.effective.NCCL_ALGO": "Tree"}) == []


def test_numa_balancing_scans_measured_in_the_job_s_process() -> None:
    # deepseek-ai/DeepEP#624: task_numa_work calls of 8-31 ms in an SGLang scheduler thread
    both = ["host:kernel-tracing/funclatency-deepep624-task-numa-work-msecs.txt",
            "host:kernel-tracing/perf-script-deepep624-task-numa-work-stack.txt"]
    assert _found(both) == [("numa-balancing-enabled", "confirmed")]
    assert _found(both[1:]) == [("numa-balancing-enabled", "likely")]


def test_an_unlicensed_vgpu_is_the_cause_a_licensed_one_is_not(tmp_path) -> None:
    rel = "nvidia-smi-q-fragments/gpuoperator220-vgpu-license-section-unlicensed.txt"
    assert _found(["host:" + rel]) == [("vgpu-unlicensed", "confirmed")]
    licensed = tmp_path / "licensed.txt"
    licensed.write_text((DATA / rel).read_text().replace(": Unlicensed", ": Licensed (Expiry: 2025-6-18 20:49:9 GMT)"))
    assert _found([str(licensed)]) == []


def test_the_gpu_sharing_interposer_crashing_inside_nccl() -> None:
    assert _found(["container:hami-core/hamicore169-libvgpu-segfault-in-nccl-cumemcreate.txt"]) == [
        ("cuda-interposer-preload", "confirmed")]
    # HAMi-core's normal start-up lines in a training log: the interposer is there, nothing says it broke anything
    assert _found(["container:hami-core/hami-user-guide-training-log-warn-msg-initialized.txt"]) == []


def test_nvlink_xids_the_driver_marked_nonfatal_claim_no_nvlink_fault(tmp_path: Path) -> None:
    from tests.corpus import load

    both = "dmesg/gpud1174-gb200-nvlink-xid145-nonfatal-xid149-fatal.txt"
    assert _found(["host:" + both]) == [("gpu-nvlink-errors", "confirmed")]  # the Fatal Xid 149
    p = tmp_path / "dmesg.txt"
    p.write_text("\n".join(load(both).splitlines()[1:]) + "\n")  # the two Xid 145 Nonfatal lines of the same capture
    assert _found(["host:" + str(p)]) == []
    ef = EvidenceFacts.from_specs(["host:" + str(p)])
    assert ef.lookup("gpu.xid_classes") == ["corrected"] and ef.lookup("gpu.xid_node_codes") == []
    assert ef.lookup("gpu.xid_app_only") is False


def test_xid_45_tear_downs_naming_an_nvlink_xid_as_their_cause_are_an_nvlink_fault() -> None:
    # open-gpu-kernel-modules#1150: before, the follow-on Xid 45 alone read as "only application faults"
    assert _found(["host:dmesg/ogkm1150-xid45-caused-by-previous-xid145-149.txt"]) == [("gpu-nvlink-errors", "confirmed")]


def test_efa_that_libfabric_cannot_see_in_a_container_is_the_devices_not_passed() -> None:
    # aws/aws-ofi-nccl#1020: the plugin loaded and found no EFA provider; it was read as "the net plugin failed"
    line = "nccl-warn-lines/awsofi1020-ofi-fi-getinfo-no-data-available-container.txt"
    assert _found(["container:" + line]) == [("ib-not-visible-in-container", "likely")]
    # on the host the same line says no EFA device where NCCL runs, but not that a container hid it
    assert _found(["host:" + line]) == []


def test_free_cma_above_the_cma_total_is_the_uncounted_pageblocks_pins_fail_in() -> None:
    # MiaAI-Lab/...DGX-Spark#259: Kexec HandOver's scratch area released as CMA pageblocks (fixed with kho=off)
    found = _found(["host:host/proc-meminfo-dspark259-cma-free-over-total-kho.txt"])
    assert found == [("kernel-cma-rdma-enomem", "likely")]
    assert _found(["host:host/proc-meminfo-vm-mem-monitor-cma-0-hugepages-64.txt"]) == []


def test_fi_info_finding_no_efa_provider_in_a_container_is_the_devices_not_passed() -> None:
    # aws/aws-ofi-nccl#1020 again, as AWS's own check shows it: `fi_info -p efa` printing -61 in the container
    bare = "fi-info/awsofi1020-p5-container-without-dev-infiniband-61.txt"
    assert _found(["container:" + bare]) == [("ib-not-visible-in-container", "likely")]
    assert _found(["host:" + bare]) == []  # on the host: no EFA there, but no container hid it
    # a query for the shared-memory provider finding none says nothing of RDMA devices
    assert _found(["container:fi-info/sglang-oneccl-image-shm-provider-61.txt"]) == []
    # EFA listed inside a pod given the device: nothing to claim
    assert _found(["container:fi-info/eks-pod-efa-device-plugin-efa-direct-201.0.txt"]) == []


def test_healthy_nvbandwidth_outputs_claim_nothing() -> None:
    for rel in ("nvbandwidth/nvbw50-a6000-6gpu-pcie-d2d-read-ce-healthy.txt",
                "nvbandwidth/b300-7gpu-nvlink-v0.10-ce-host-and-d2d-bidirectional.txt"):
        assert _found(["host:" + rel]) == []


def test_the_device_plugin_without_nvml_is_the_runtime_not_defaulting_to_nvidia(tmp_path) -> None:
    plugin = "container:k8s-device-plugin/k8sdp23-failed-to-start-nvml-could-not-load-nvml-library.txt"
    assert _found([plugin]) == [("nvidia-runtime-not-default", "likely")]
    # newer wording (v0.17's 'Incompatible strategy detected auto'), the same finding
    assert _found(["container:k8s-device-plugin/k8sdp1220-incompatible-strategy-detected-auto.txt"]) == [
        ("nvidia-runtime-not-default", "likely")]
    # with the node's `docker info` saying runc is the default runtime (nvidia registered but not default): confirmed
    info = "docker-info/ctk-1.17.6-docker-28-systemd-cgroup2-nvidia-runtime.txt"
    assert _found([plugin, f"host:{info}"]) == [("nvidia-runtime-not-default", "confirmed")]
    # Docker defaulting to nvidia does not rule it out (the kubelet may run containerd): still only likely
    nvidia_default = tmp_path / "docker-info-nvidia-default.txt"
    nvidia_default.write_text((DATA / info).read_text().replace("Default Runtime: runc", "Default Runtime: nvidia"))
    assert _found([plugin, f"host:{nvidia_default}"]) == [("nvidia-runtime-not-default", "likely")]
    # plugins that registered their GPUs with the kubelet claim nothing
    assert _found(["container:k8s-device-plugin/k8sdp13-docker-run-runtime-nvidia-registered-with-kubelet.txt"]) == []
    assert _found(["k8s-device-plugin/bottlerocket4250-journal-registered-device-plugin-nvidia-gpu.txt"]) == []


def test_a_kernel_module_that_did_not_build_is_the_driver_not_loaded() -> None:
    for rel in ("nvidia-installer/konvoy1200-run-installer-470-modpost-gpl-only-rcu-read-unlock-strict.txt",
                "nvidia-installer/ukuu43-dkms-nvidia-435-bad-return-status-kernel-5.4.12.txt"):
        assert _found([f"host:{rel}"]) == [("gpu-driver-not-loaded", "likely")]
    # the host's make.log beside a container's output: read on the host side
    assert _found(["host:nvidia-installer/xanmod411-dkms-make-log-nvidia-545-gpl-only-rcu-read-lock.txt",
                   "container:hami-core/hami-user-guide-training-log-warn-msg-initialized.txt"]) == [
        ("gpu-driver-not-loaded", "likely")]
    # a module that compiled claims nothing
    assert _found(["host:nvidia-installer/microk8s44-driver-container-kernel-module-compilation-complete.txt"]) == []


def test_rdma_enomem_is_one_fact_the_memlock_and_cma_causes_both_read() -> None:
    ucx = "host:ucx/ompi-ucx-ibv-create-cq-enomem-memlock-64k-and-ucx-info.txt"
    verbs = "host:verbs-errors/cudfspark7632-ucx-shuffle-ibv-create-cq-enomem.txt"
    meminfo = "host:host/proc-meminfo-dspark259-cma-free-over-total-kho.txt"
    sources.load_all()
    ef = EvidenceFacts.from_specs([f"host:{DATA / verbs.split(':', 1)[1]}"])
    assert ef.lookup("rdma.enomem") == ["ERROR mlx5_0: ibv_create_cq() failed: Cannot allocate memory."]
    # Open MPI over UCX: two different calls failed with ENOMEM, each once (the log repeats them per rank)
    ef = EvidenceFacts.from_specs([f"host:{DATA / 'ucx/ompi-ucx-ibv-create-cq-enomem-memlock-64k-and-ucx-info.txt'}"])
    assert len(ef.lookup("rdma.enomem")) == 2  # ibv_create_cq and mlx5dv_create_cq, each once
    # the same ENOMEM beside uncounted CMA pageblocks is the kernel's, and the limit steps aside
    assert _found([verbs, meminfo]) == [("kernel-cma-rdma-enomem", "confirmed")]
    assert ("kernel-cma-rdma-enomem", "confirmed") in _found([ucx, meminfo])
    # alone (the 64 KiB limit is in the thread's prose, not in the paste) the limit is the usual reason
    assert _found([ucx]) == [("memlock-limit", "likely")]


def test_a_device_plugin_without_nvml_on_a_node_without_a_driver_is_the_driver_not_the_runtime() -> None:
    # amazon-eks-ami#1817's shape (the plugin on a node with no driver); two real captures of different threads
    # put side by side: k8s-device-plugin#23's log and a host nvidia-smi that cannot reach the driver
    plugin = "k8s-device-plugin/k8sdp23-failed-to-start-nvml-could-not-load-nvml-library.txt"
    smi = "nvidia-smi-status/no-driver-communication-rhel9-dkms-notes.txt"
    assert _found(["host:" + plugin]) == [("nvidia-runtime-not-default", "likely")]
    # the host's nvidia-smi that cannot reach its driver takes the runtime out; why no driver talks to the GPUs
    # (no module built for this kernel, a GPU the driver branch does not support, nouveau) the words do not say
    for specs in (["host:" + plugin, "host:" + smi], ["container:" + plugin, "host:" + smi]):
        assert _found(specs) == [], specs
        assert _suspected(specs)[:1] == ["gpu-driver-not-loaded"], specs


def test_a_driver_build_that_failed_for_another_kernel_says_nothing_of_the_running_one() -> None:
    dkms = "nvidia-installer/ukuu43-dkms-nvidia-435-bad-return-status-kernel-5.4.12.txt"
    assert ("gpu-driver-not-loaded", "likely") in _found(["host:" + dkms])
    # beside a uname -r of another kernel (this sandbox's, captured by the virt source)
    assert "gpu-driver-not-loaded" not in dict(_found(["host:" + dkms, "host:virt=host/virt-this-sandbox-kvm.txt"]))


def test_a_gpu_that_stopped_answering_on_the_bus_is_fallen_off() -> None:
    lspci = "host:lspci/shinecluster171-quadro-rtx-6000-1c00-rev-ff-fallen-off.txt"
    assert _found([lspci]) == [("gpu-fallen-off-bus", "confirmed")]
    lost = "host:nvidia-smi-status/gpu-lost-index-first-3080-beside-5070ti-csv-query.txt"
    assert _found([lost]) == [("gpu-fallen-off-bus", "confirmed")]
    unknown = "host:nvidia-smi-status/device-handle-unknown-error-xxd3vin19.txt"
    # the same words from a GeForce driver refusing a visible hypervisor (set BR's KubeVirt guest): possible, likely
    # where the machine says it is bare metal
    assert _found([unknown]) == []
    assert _suspected([unknown])[:1] == ["gpu-fallen-off-bus"]
    vm = "host:virt=host/virt-this-sandbox-kvm.txt"  # a KVM guest: still only possible
    assert "gpu-fallen-off-bus" not in dict(_found([unknown, vm]))
    # a laptop card reader at rev ff is not a GPU
    assert _found(["host:lspci/dell-laptop-lspci-v-ricoh-xd-rev-ff-unknown-header-7f.txt"]) == []


def test_the_daemon_that_starts_the_jobs_with_a_small_memlock_limit() -> None:
    # clustervision/trinityX#188: `ps -elf | grep slurm` names PID 3844, then /proc/3844/limits: 64 KiB
    both = "host:ps/trinityx188-ps-elf-slurmd-then-proc-limits-memlock-64k.txt"
    sources.load_all()
    ef = EvidenceFacts.from_specs([f"host:{DATA / both.split(':', 1)[1]}"])
    assert (ef.lookup("limits.pid"), ef.lookup("limits.process"), ef.lookup("limits.memlock_kb")) == (3844, "slurmd", 64)
    assert _found([both]) == [("memlock-limit", "likely")]
    # the same limit of a login shell, with no RDMA failure shown: not a cause by itself
    assert _found(["host:limits/ulimit-a-bash-memlock-64-fenced.txt"]) == []


def _hook(name: str) -> str:
    return f"nvidia-container-cli/{name}"


def test_the_nvidia_container_hook_refusing_an_image_for_a_newer_cuda_than_the_driver() -> None:
    for name in ("requirement-cuda-petric2-27-runc-shim-task-auto-detected-legacy-cuda-12.8.txt",
                 "requirement-cuda-nvdocker543-prestart-hook-1-hard-wrapped-mid-word-cuda-9.0.txt",
                 "requirement-cuda-vitisai103-prestart-hook-0-escaped-quotes-cuda-10.0.txt"):
        assert _found([_hook(name)]) == [("cuda-driver-mismatch", "confirmed")], name
    # given as the host's, beside another output of the job's container: the host side counts too
    assert _found(["host:" + _hook("requirement-cuda-vitisai103-prestart-hook-0-escaped-quotes-cuda-10.0.txt"),
                   "container:limits/proc-self-limits-sandbox.txt"]) == [("cuda-driver-mismatch", "confirmed")]
    # another failed condition (brand = tesla) is the last alternative the hook tried; where its command line shows
    # the image's cuda>=10.0 alternative, that one failed first (nvidia-docker#861, #931: drivers 390 under CUDA 10
    # images; Determined's troubleshooting page): likely, not confirmed
    assert _found([_hook("requirement-other-nvdocker921-brand-tesla-exec-command-require.txt")]) == [
        ("cuda-driver-mismatch", "likely")]


def test_the_hook_finding_no_cgroup_devices_controller() -> None:
    for name in ("cgroup-devices-dalle105-compose-wrapped-at-spaces-twice.txt",
                 "cgroup-devices-nvdocker1486-running-hook-1-then-runtime-nvidia-command.txt"):
        assert _found([_hook(name)]) == [("container-toolkit-cgroupv2-unsupported", "confirmed")], name


def test_the_hook_finding_no_driver_on_the_host() -> None:
    # possible, not likely: the same NVML words come from a GPU node without its driver and from a machine with no
    # GPU at all whose image or environment asked for one (set BB's dstack1942, set AI's awsomeai: CPU instances)
    for name in ("driver-not-loaded-nvct260-backticked-in-prose-failed-to-create-shim.txt",
                 "driver-not-loaded-kubeflow3098-docker-sdk-500-python-traceback.txt",
                 "nvml-library-missing-nvct154-docker-run-in-backticks-auto-detected-legacy.txt"):
        assert _found([_hook(name)]) == [], name
        assert "gpu-driver-not-loaded" in _suspected([_hook(name)]), name
    # a driver library inside the image that is too short to load is not a host without its driver
    assert _found([_hook("other-enroot212-libnvidia-ml-file-too-short.txt")]) == []


def test_the_hook_getting_nvmls_driver_library_mismatch() -> None:
    for name in ("driver-library-mismatch-labdao-plex18-shim-task-erro-line.txt",
                 "driver-library-mismatch-dalle104-compose-rewrapped-for-readability.txt",
                 # beside the node's own nvidia-smi saying the same: one cause
                 "driver-library-mismatch-k8sdp1431-containerd-task-with-nvidia-smi.txt"):
        assert _found([_hook(name)]) == [("driver-library-mismatch", "confirmed")], name


def test_docker_without_the_nvidia_container_toolkit() -> None:
    for name in ("no-gpu-runtime-bytetrack302-could-not-select-then-docker-run-command.txt",
                 "no-gpu-runtime-nvdocker501-unknown-runtime-specified-nvidia.txt",
                 "no-gpu-runtime-nvdocker958-exec-nvidia-container-runtime-hook-not-found.txt",
                 "no-gpu-runtime-charliecloud939-ch-fromhost-nvidia-container-cli-not-found.txt"):
        assert _found([_hook(name)]) == [("docker-nvidia-toolkit-missing", "confirmed")], name


def test_hook_errors_with_several_meanings_name_no_cause() -> None:
    # a GPU this node lacks or a device plugin's list strategy; a denied mount; the driver RPC failing; ldconfig
    # failing in a nested container (a driver file the image already has, 'file exists', names its cause since
    # session 12: test_the_hooks_mount_errors_name_what_is_in_the_way)
    for rel in (_hook("unknown-device-nvct632-compose-device-2-twice.txt"),
                _hook("unknown-device-nvct108-k3s-journal-volume-mounts-path.txt"),
                _hook("mount-error-enroot111-start-firmware-operation-not-permitted.txt"),
                _hook("other-nvct173-kubelet-event-containerd-task-cli-real-driver-error.txt"),
                "slurm/pyxis-arm64-libnvidia-container-1.17.7-cgroup-devices-allow-permission-denied.txt",
                "slurm/pyxis-slinky-k8s-ldcache-ldconfig-real-98-nvidia-hook-wrapped-lines.txt"):
        assert _found([rel]) == [], rel


def test_two_hook_errors_in_one_paste_name_both_causes(tmp_path) -> None:
    both = tmp_path / "both.txt"
    both.write_text("\n".join((DATA / _hook(n)).read_text() for n in (
        "requirement-cuda-vitisai103-prestart-hook-0-escaped-quotes-cuda-10.0.txt",
        "cgroup-devices-nvdocker1486-running-hook-1-then-runtime-nvidia-command.txt")))
    assert sorted(_found([str(both)])) == [("container-toolkit-cgroupv2-unsupported", "confirmed"),
                                           ("cuda-driver-mismatch", "confirmed")]


def test_slurm_not_confining_the_jobs_gpus() -> None:
    unconstrained = "slurm-conf/slurm-gcp-startup-cgroup-conf-constraindevices-commented-out.txt"
    gres = "slurm-conf/deepops1195-gres-conf-eight-gpus-cpus-affinity.txt"
    cause = [("slurm-cgroup-devices-unconstrained", "likely")]
    # cgroup.conf without ConstrainDevices=yes on a node whose gres.conf declares GPUs (two sites' files side by side)
    assert _found([unconstrained, gres]) == cause
    assert _found(["host:" + unconstrained, "host:" + gres]) == cause
    # ... or beside the GPUs listed by the tasks of a job
    assert _found([unconstrained, "nvidia-smi-status/deepops1102-srun-gpus-per-task-two-tasks-distinct-uuids.txt"]) == cause
    # the file alone says nothing of GPUs; a node that confines them is fine with its GPUs
    assert _found([unconstrained]) == []
    assert _found(["slurm-conf/ehb54-slurm-gpu-cgroup-conf-constraindevices-yes.txt",
                   "slurm-conf/ehb54-slurm-gpu-gres-conf-tesla-nvidia0-2.txt"]) == []
    assert _found(["slurm-conf/cluster-notes-root-cat-cgroup-conf-constraindevices-yes.txt", gres]) == []
    # ... or beside an srun that asked for a GPU (deepops#785's -G 1)
    assert _found([unconstrained, "srun/deepops785-srun-G1-container-image-execve-no-such-file.txt"]) == cause
    # GPU device nodes listed in the job's container are GPUs too
    assert _found([unconstrained, "container:dev-nvidia/docker-test-runtime-nvidia-gpu-image-short-listing.txt"]) == cause


def test_a_container_given_a_gpu_by_its_host_index_that_cuda_cannot_find(tmp_path) -> None:
    """pyxis#47's shape: no ConstrainDevices, the container holds /dev/nvidia2 but not /dev/nvidia0, CUDA finds no
    device. The listing is a real 8-GPU `ls -l` with the other GPUs' nodes taken out, as in such a container."""
    unconstrained = "slurm-conf/slurm-gcp-startup-cgroup-conf-constraindevices-commented-out.txt"
    nodev = "cuda-errors/cuda-samples-matrixmul-code-100-cudaErrorNoDevice.txt"
    real = (DATA / "dev-nvidia/linux-box-ls-l-eight-gpus-and-nvidia-caps.txt").read_text().split("\n")
    ls = tmp_path / "ls.txt"
    ls.write_text("\n".join([ln for ln in real if not any(ln.endswith(f"/dev/nvidia{i}") for i in (0, 1, 3, 4, 5, 6, 7))]
                            + [f"/usr/bin/ls: cannot access '/dev/nvidia{i}': No such file or directory" for i in (0, 1, 3)]))
    assert _found([unconstrained, f"container:{ls}", f"container:{nodev}"]) == [("slurm-cgroup-devices-unconstrained", "confirmed")]
    # without the no-device error nothing says the index went wrong: likely, from the GPUs the container holds
    assert _found([unconstrained, f"container:{ls}"]) == [("slurm-cgroup-devices-unconstrained", "likely")]
    # a node that confines devices, with the same container: not this cause
    assert "slurm-cgroup-devices-unconstrained" not in dict(_found(
        ["slurm-conf/ehb54-slurm-gpu-cgroup-conf-constraindevices-yes.txt", f"container:{ls}", f"container:{nodev}"]))


def test_tasks_of_a_pyxis_step_with_gpus_per_task_that_see_no_gpu(tmp_path) -> None:
    listing = "nvidia-smi-status/deepops1102-procid-gpus-per-task-three-of-four-no-devices.txt"
    # deepops#1102's four tasks, three without a GPU; the thread does not show the launch line, so alone the cause is
    # not decided (Slurm's own binding, --gpu-bind, was that thread's answer)
    assert _found([listing]) == []
    # the same listing under the launch line pyxis#73 shows (written here): srun --gpus-per-task in a container
    launched = tmp_path / "launched.txt"
    launch = ("$ srun --nodes=1 --ntasks=4 --gpus-per-task=1 --container-image nvcr.io#nvidia/pytorch:22.02-py3 "
              "bash -c 'echo \"PROCID=$SLURM_PROCID: $(nvidia-smi -L)\"'\n")
    launched.write_text(launch + (DATA / listing).read_text().split("\n\n", 1)[1])
    assert _found([str(launched)]) == [("enroot-restrict-dev-hides-task-gpus", "likely")]
    # after a run without the container whose tasks all had their GPU, in one paste (as pyxis#73 shows the two)
    both = tmp_path / "both.txt"
    both.write_text((DATA / "nvidia-smi-status/deepops1102-srun-gpus-per-task-two-tasks-distinct-uuids.txt").read_text()
                    .split("\n\n", 1)[1] + launched.read_text())
    assert _found([str(both)]) == [("enroot-restrict-dev-hides-task-gpus", "likely")]
    # the restriction already off for that launch; or no container; or every task with its GPU: not this cause
    off = tmp_path / "off.txt"
    off.write_text("$ ENROOT_RESTRICT_DEV=n " + launched.read_text()[2:])
    assert _found([str(off)]) == []
    bare = tmp_path / "bare.txt"
    bare.write_text(launched.read_text().replace(" --container-image nvcr.io#nvidia/pytorch:22.02-py3", ""))
    assert _found([str(bare)]) == []
    assert _found(["nvidia-smi-status/deepops1102-srun-gpus-per-task-two-tasks-distinct-uuids.txt"]) == []


def test_a_peer_the_ofi_plugin_cannot_reach_is_no_plugin_failure() -> None:
    """aws-ofi-nccl failing to insert a peer's EFA address while connecting (aws/aws-ofi-nccl#663: the security group
    lacked its self-referencing outbound rule) was read as the plugin failing (net-plugin-failed, set P's one wrong
    cause as it arrived). The plugin works; the peer is unreachable: a possible efa-peers-unreachable, with the
    commands that decide it, since the same message was reported with the rules in place."""
    spec = ["job:torch-distributed/awsofi663-ofi-av-insert-remote-address-rank1.txt"]
    assert _found(spec) == []
    ef = EvidenceFacts.from_specs([f"job:{DATA / spec[0].split(':', 1)[1]}"])
    assert [(f.cause.id, f.signature.confidence) for f in causes.suspected(causes.load(), ef.lookup)] == [
        ("efa-peers-unreachable", "possible")]
    # a plugin that fails while it sets itself up (aws/aws-ofi-nccl#241: built against another Libfabric) still has
    init = Path(__file__).parent / "realworld/cases/a-awsofi241-plugin-libfabric-mismatch/nccl-warn.txt"
    assert ("net-plugin-failed", "likely") in _found([str(init)])


def test_peer_mappings_exhausted_and_peer_access_unsupported_are_different_causes() -> None:
    """CUDA's 'peer mapping resources exhausted' (711: more than eight peers per GPU, NVIDIA/nccl#241) is
    cuda-p2p-peer-limit-exhausted; 'peer access is not supported' (217: GPUs without P2P) is not that cause."""
    assert _found(["cuda-errors/nccl241-enable-peer-access-peer-mapping-resources-exhausted.txt"]) == [
        ("cuda-p2p-peer-limit-exhausted", "confirmed")]
    unsupported = Path(__file__).parent / "realworld/cases/p-trtllm1625-ood-custom-allreduce-no-p2p-4090d"
    found = _found([str(p) for p in sorted(unsupported.glob("*.txt"))])
    assert "cuda-p2p-peer-limit-exhausted" not in [c for c, _ in found]


def test_an_infiniband_adapter_without_an_rdma_device() -> None:
    """Azure/azhpc-images#51: lspci lists a ConnectX-3 Pro VF and ibstatus finds no /sys/class/infiniband: no
    driver serves the adapter (MOFED 5.1+ dropped ConnectX-3). Where the driver says the firmware is the reason
    (trinity#219), that cause supersedes this one in the report; an adapter alone, or an Ethernet NIC, says nothing."""
    both = ["lspci/azhpcimages51-nc24rsv3-v100-connectx3-pro-vf.txt", "ibstatus/azhpcimages51-sys-files-not-found-connectx3-pro-vf.txt"]
    assert _found(both) == [("hca-without-rdma-device", "likely")]
    assert _found(both[:1]) == []
    assert _found(["lspci/cx6dx-grep-net-3fs283.txt", both[1]]) == []
    assert "hca-without-rdma-device" in next(c for c in causes.load() if c.id == "hca-firmware-outdated").supersedes


def test_one_rank_per_host_yet_connected_through_p2p_is_one_hostname_for_two_nodes() -> None:
    """horovod/horovod#110: two machines named 'mtk', one rank each (the mpirun line), and NCCL connects rank 0 to
    rank 1 via P2P/IPC, which only ranks of one machine can use. The NCCL lines alone, or eight ranks per host with
    P2P inside each (the h200 transcript), say nothing of hostnames."""
    line, nccl = "mpirun/horovod110-two-hosts-one-rank-each.txt", "nccl-debug/horovod110-two-hosts-named-mtk-0-1-via-p2p-ipc.txt"
    assert _found([line, nccl]) == [("duplicate-hostname-across-nodes", "likely")]
    assert _found([nccl]) == []
    assert "duplicate-hostname-across-nodes" not in [c for c, _ in _found(["nccl-tests/h200-baremetal-vs-kvm-vm-passthrough-collapse.txt"])]


def test_a_pyxis_step_given_gpus_whose_container_finds_no_driver() -> None:
    """NVIDIA/enroot#205: srun --gpus=2 --container-image=<a plain image>, and PyTorch in the container finds no
    driver: enroot's hook gave the container nothing (no NVIDIA_VISIBLE_DEVICES in the image). The no-driver words
    alone are only a possible gpu-driver-not-loaded (a host without its driver prints them too)."""
    step, torch = "job:srun/enroot205-gpus-2-container-image-pty.txt", "container:cuda-errors/enroot205-torch-found-no-nvidia-driver-in-container.txt"
    assert _found([step, torch]) == [("container-nvidia-visible-devices-unset", "likely")]
    assert _found([torch]) == []
    ef = EvidenceFacts.from_specs([f"{s.split(':', 1)[0]}:{DATA / s.split(':', 1)[1]}" for s in [torch]])
    assert [f.cause.id for f in causes.suspected(causes.load(), ef.lookup)] == ["gpu-driver-not-loaded"]


def test_slurmd_refusing_gres_conf_or_disagreeing_with_it() -> None:
    # slurmd's own words that gres.conf is unreadable: confirmed; gres.conf alone with the duplicate records: likely
    assert _found(["node2:slurm-log/magiccastle27-slurmd-fatal-gres-conf-duplicate-records.txt"]) == [
        ("slurm-gres-config-mismatch", "confirmed")]
    assert _found(["slurm-conf/magiccastle27-gres-conf-autodetect-plus-bare-name-gpu.txt"]) == [
        ("slurm-gres-config-mismatch", "likely")]
    # slurmd saying the autodetected GPUs and the configured ones disagree
    assert _found(["slurm-log/deepops1214-slurmd-log-mig-autodetected-gpus-ignored.txt"]) == [
        ("slurm-gres-config-mismatch", "likely")]
    assert _found(["slurm-log/slinky57-slurmd-rsmi-config-only-gpu-discarded.txt"]) == [
        ("slurm-gres-config-mismatch", "likely")]
    # GPUs detected, nothing wrong; a gres.conf with File= lines; a missing plugin that is no GPU one
    assert _found(["slurm-log/oke-gb200-slurmd-nvml-detected-healthy.txt"]) == []
    assert _found(["slurm-conf/deepops1195-gres-conf-eight-gpus-cpus-affinity.txt"]) == []


def _suspected(specs: list[str]) -> list[str]:
    sources.load_all()
    ef = EvidenceFacts.from_specs(_specs(specs))
    return [f.cause.id for f in causes.suspected(causes.load(), ef.lookup)]


def test_a_gpu_count_below_the_configured_one_is_possible_not_found() -> None:
    # (3 < 4) after a MIG re-partition, or a GPU gone from the bus: the log does not say which (nvidia-smi -L does)
    count = "slurm-log/magiccastle361-slurmctld-gres-count-changed-inval.txt"
    assert _found([count]) == []
    assert _suspected([count]) == ["slurm-gres-config-mismatch"]
    # a device file gres.conf names and the node lacks: no such GPU, or no driver to make it
    assert _suspected(["slurm-log/bibigrid705-slurmd-journal-cant-stat-dev-nvidia0.txt"]) == ["slurm-gres-config-mismatch"]


def test_slurm_built_without_nvml() -> None:
    # slurmd's own words: confirmed (and the 0 < 4 it causes is not also a suspected configuration mismatch)
    not_built = "slurm-log/oke-gb200-slurmd-nvml-not-built-count-zero.txt"
    assert _found([not_built]) == [("slurm-built-without-nvml", "confirmed")]
    assert _suspected([not_built]) == []
    # one version of the package has gpu_nvml.so, the next lacks it: likely
    assert _found(["slurm-plugins/ohpc1910-rpm-ql-grep-gpu-working-and-failing.txt"]) == [
        ("slurm-built-without-nvml", "likely")]


def test_a_gpu_less_hosts_build_without_nvml_is_no_fault() -> None:
    # NVIDIA/deepops#1295: Slurm's configure on a master without GPUs finds no NVML, as it should
    rel = "configure-log/deepops1295-slurm-configure-no-nvml-gpuless-master.txt"
    assert _found([rel]) == [] and _suspected([rel]) == []


def test_a_slurm_without_the_nvml_plugin_is_a_fault_only_where_gres_conf_autodetects(tmp_path) -> None:
    listing = tmp_path / "rpm.txt"
    listing.write_text("$ rpm -ql slurm | grep gpu\n/usr/lib64/slurm/gpu_generic.so\n/usr/lib64/slurm/gres_gpu.so\n")
    assert _found([str(listing)]) == []
    assert _suspected([str(listing)]) == ["slurm-built-without-nvml"]
    gres = tmp_path / "gres.txt"
    gres.write_text("$ cat /etc/slurm/gres.conf\nAutoDetect=nvml\n")
    assert _found([str(listing), str(gres)]) == [("slurm-built-without-nvml", "confirmed")]
    listed = tmp_path / "gres-files.txt"
    listed.write_text("$ cat /etc/slurm/gres.conf\nName=gpu File=/dev/nvidia[0-3]\n")
    assert _found([str(listing), str(listed)]) == []


def test_the_fabric_managers_own_words_that_it_did_not_start() -> None:
    fm = "fabric-manager-not-running"
    for rel in ("canvos700-b200-fm-precheck-ib-umad-not-loaded-journal.txt", "b200-al2-fm-ib-umad-not-loaded-quoted.txt",
                "b300-nvlsm-package-missing-quoted.txt", "talosext511-fm-config-item-invalid-node-ip.txt",
                "pytorch129749-fm-version-mismatch-quoted-bare.txt", "p5e-fm-version-mismatch-wrapped-quoted.txt",
                "h200-fm-version-mismatch-start-script-failed-journal.txt"):
        assert _found([f"host:systemctl-status/{rel}"]) == [(fm, "confirmed")], rel
    # nvlsm's words, not the fabric manager's: likely
    assert _found(["host:systemctl-status/siderolabs-docs581-talos-nvlsm-ib-umad-not-loaded.txt"]) == [(fm, "likely")]
    # a running fabric manager says nothing of the kind
    assert _found(["host:systemctl-status/rhelai-h100-fm-active-running.txt"]) == []


def test_a_kernel_module_of_the_wrong_flavor_for_the_gpu() -> None:
    k = "nvidia-kmod-flavor-mismatch"
    for rel in ("eksami2769-g7-blackwell-proprietary-kmod-requires-open.txt",
                "rtx50-laptop-proprietary-580-requires-open-dmesg-grep.txt", "ogkm696-pascal-open-kmod-no-gsp.txt",
                "negativo17-158-gt1030-open-kmod-560-journal.txt"):
        assert _found([f"host:dmesg/{rel}"]) == [(k, "confirmed")], rel
    # the open module loaded on a GPU it drives: no flavor fault (that log's cause is the GPU off the bus)
    assert k not in [c for c, _ in _found(["host:dmesg/gpu-fallen-off-bus-multiline-no-xid-nvsentinel.txt"])]


def test_the_driver_asking_for_a_gpu_reset() -> None:
    for rel in ("vllm8847-gpu-reset-status-reset-required-yes.txt", "rtx3090-i2-q-reset-required-yes-not-ready-key-lines.txt",
                "sichek-h200-570-recovery-action-reset-reset-status-deprecated.txt"):
        assert _found([f"host:nvidia-smi-q-fragments/{rel}"]) == [("gpu-errors", "confirmed")], rel
    assert _found(["host:nvidia-smi-q-fragments/sichek-h200-570-recovery-action-none-reset-status-deprecated.txt"]) == []


def test_bandwidthtest_slower_bound_to_another_node_is_numa_remote() -> None:
    # mpicbg-scicomp/gearshifft#82: 12.2 GB/s bound to the GPU's node, 3.8 bound to the other
    assert _found(["host:bandwidth-test/gearshifft82-p100-numactl-node0-node1.txt"]) == [("numa-remote", "likely")]
    # runs bound to no node, or on different machines, compare nothing
    assert _found(["host:bandwidth-test/cuda-demo-t4-v100-two-runs.txt"]) == []
    assert _found(["host:bandwidth-test/della-range-mode-two-clusters.txt"]) == []


def test_efa_provider_unable_to_open_a_listed_device_is_not_decided_by_the_paste() -> None:
    # ofiwg/libfabric#12708: ENOENT on a device the pod lists; the EFA devices were passed and an on-board ConnectX was
    # not (set S's case arrived claiming the EFA devices were not passed). The lines alone fit both: possible only
    rel = "container:fi-info/libfabric12708-efa-enodata-k8s-device-cgroup.txt"
    assert _found([rel]) == []
    assert _suspected([rel])[0] == "efa-init-aborted-by-foreign-verbs-device"
    # fi_getinfo -61 in a container without any open failure is still the devices not passed (aws/aws-ofi-nccl#1020)
    assert _found(["container:fi-info/awsofi1020-p5-container-without-dev-infiniband-61.txt"]) == [
        ("ib-not-visible-in-container", "likely")]


def test_a_device_filter_on_the_runtimes_slice_is_no_missing_driver(tmp_path) -> None:
    # pytorch/pytorch#190132: 'No devices were found' under a slice with systemd's sd_devices filter (set S arrived
    # claiming no driver was loaded: NVML answered, from a loaded driver, with no GPU it may show)
    nosmi = str(tmp_path / "pytorch190132-nvidia-smi.txt")
    Path(nosmi).write_text('$ systemd-run --user --scope -p "Slice=user-1009.slice" nvidia-smi\nNo devices were found\n')
    assert _found(["host:cgroup/pytorch190132-bpftool-user-slice-sd-devices.txt", "host:" + nosmi]) == [
        ("systemd-slice-device-filter-hides-gpus", "likely")]
    assert _found(["host:" + nosmi]) == []
    assert _found(["host:cgroup/aks-node-bpftool-tree-service-programs-healthy.txt", "host:" + nosmi]) == []


def test_libibverbs_without_a_provider_for_a_device_in_a_container() -> None:
    # NVIDIA/nccl-tests#41: the Singularity> prompt says where it ran (set S's case arrived missed)
    rel = "nccl-tests/nccltests41-singularity-no-libmlx5-internal-error.txt"
    assert _found([rel]) == [("rdma-userspace-missing-in-container", "likely")]
    assert _found(["host:" + rel]) == [("rdma-userspace-missing-in-container", "likely")]  # the prompt outranks the label
    ef = EvidenceFacts.from_specs(_specs([rel]))
    assert ef.lookup("rdma.devices_without_provider") == ["/sys/class/infiniband_verbs/uverbs0"]


def test_a_single_node_nccl_tests_run_that_prints_no_row_points_at_p2p(tmp_path) -> None:
    # NVIDIA/nccl-tests#115's shape: two PCIe GPUs of one host, ranks listed, no row; a hang or a cut paste: possible
    run = tmp_path / "hang.txt"
    run.write_text("# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
                   "#\n# Using devices\n#   Rank  0 Pid  28329 on   SAIS1020 device  0 [0x01] NVIDIA RTX A6000\n"
                   "#   Rank  1 Pid  28330 on   SAIS1020 device  1 [0x41] NVIDIA RTX A6000\n")
    assert _found([str(run)]) == []
    assert _suspected([str(run)])[0] == "p2p-iommu-acs"
    # a finished run, or one that failed with an error, says something else
    assert "p2p-iommu-acs" not in _suspected(["nccl-tests/nccltests41-singularity-no-libmlx5-internal-error.txt"])


def test_a_run_that_had_p2p_off_and_stopped_points_at_shm_not_p2p() -> None:
    # NVIDIA/nccl#606 as pasted (the evaluation case's file, verbatim): NCCL_P2P_DISABLE=1 on the launch line, one
    # node, cut before any row; P2P was off, so the path was NCCL's SHM transport in /dev/shm (the thread's cause)
    run = Path(__file__).parent / "realworld/cases/e-nccl606-shm-64m-nccltests-container/all_reduce_perf.txt"
    assert _found([str(run)]) == []
    assert _suspected([str(run)]) == ["shm-too-small"]


def test_a_shared_memory_segment_removed_under_nccl_is_not_a_small_dev_shm() -> None:
    # NVIDIA's guide: 'unlink shared memory ... No such file or directory' is systemd-logind's RemoveIPC (set T's case
    # arrived read as shm-too-small); failing to extend a segment stays shm-too-small
    assert _found(["nccl-debug/nccldocs-systemd-removeipc-unlink-shm.txt"]) == [("systemd-removeipc-deletes-shm", "likely")]


def test_a_roce_bond_among_ib_rails_is_an_hca_nccl_should_not_use() -> None:
    rel = "nccl-debug/mleng-net-ib-eight-ib-plus-mlx5-bond-roce.txt"
    assert _found([rel]) == [("ib-hca-mismatch", "likely")]
    ef = EvidenceFacts.from_specs(_specs([rel]))
    assert ef.lookup("nccl.hca_transport_outliers") == ["mlx5_bond_0:1 (RoCE among 8 IB)"]


def test_nccl_lists_of_one_link_layer_or_no_majority_have_no_outlier(tmp_path) -> None:
    for line, want in (("[0]mlx5_0:1/IB [1]mlx5_1:1/IB", []), ("[0]mlx5_0:1/RoCE [1]mlx5_1:1/IB", []),
                       ("[0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/IB", ["mlx5_2:1 (IB among 2 RoCE)"])):
        f = tmp_path / "n.txt"
        f.write_text(f"h:1:2 [0] NCCL INFO NET/IB : Using {line} ; OOB eth0:10.0.0.1<0>\n")
        got = EvidenceFacts.from_specs([str(f)]).lookup("nccl.hca_transport_outliers")
        assert (got if isinstance(got, list) else []) == want


def test_gpu_memory_registration_einval_on_efa_is_libfabric_too_old_not_a_failed_plugin() -> None:
    line = "nccl-debug/awsome203-ofi-register-rail-mr-type2-einval.txt"
    # the line alone: possible (the NCCL and Libfabric versions decide); never the plugin failing to load
    assert _found([line]) == []
    assert _suspected([line])[0] == "libfabric-too-old-for-nccl"
    # with the host's fi_info showing Libfabric 1.18's EFA provider (aws/aws-ofi-nccl#584): likely
    assert _found([line, "host:fi-info/awsofi584-efa-provider-118.20.txt"]) == [("libfabric-too-old-for-nccl", "likely")]


def test_ucx_running_out_of_dev_shm_is_shm_too_small() -> None:
    for rel in ("ucx/aicloudval643-pod-mm-iface-fifo-segfault.txt", "ucx/ucx1037-mm-posix-not-enough-dev-shm.txt"):
        assert _found([rel]) == [("shm-too-small", "likely")], rel


def test_a_cut_run_on_sxm_gpus_is_no_p2p_suspect() -> None:
    # NVIDIA/nccl#583's paste ends at the table header: on A100-SXM4 (NVLink) P2P through PCIe is not the suspect
    assert "p2p-iommu-acs" not in _suspected(["nccl-tests/a100-sxm4-8rank-header-hash-stripped-by-markdown-fork-columns.txt"])


def test_a_kernel_assertion_is_the_applications_not_the_gpus() -> None:
    assert _found(["cuda-errors/litllama306-aten-index-assert-vocab-size.txt"]) == []


def test_a_roce_queue_pair_refused_with_einval_is_roce_not_set_up() -> None:
    rel = "nccl-debug/jax22740-irdma-roce-modify-qp-einval.txt"
    assert _found([rel]) == [("roce-not-configured", "likely")]
    ef = EvidenceFacts.from_specs(_specs([rel]))
    assert ef.lookup("nccl.roce_hcas") == ["irdma0:1"]
    # the same failure on an InfiniBand HCA is not RoCE's
    assert "roce-not-configured" not in dict(_found(["nccl-debug/mleng-net-ib-eight-ib-plus-mlx5-bond-roce.txt"]))


def test_a_gpu_lost_to_an_unrecovered_pcie_error_is_fallen_off_the_bus() -> None:
    assert _found(["dmesg/returnn1500-aer-fatal-cmplto-reltime.txt"]) == [("gpu-fallen-off-bus", "likely")]
    assert _found(["dmesg/gpuburn1-aer-surprise-down-no-aer-driver-xid79.txt"]) == [("gpu-fallen-off-bus", "confirmed")]


def test_idle_gpus_at_p0_with_persistence_off() -> None:
    # possible: healthy servers on a vendor's reference pages show the same (set BT)
    smi = "host:nvidia-smi/shinecluster54-rtx3070-idle-p0-persistence-off.txt"
    assert _found([smi]) == []
    assert _suspected([smi]) == ["persistence-mode-disabled"]


def test_a_gpu_reset_refused_while_held_is_a_blocked_reset() -> None:
    for rel in ("nvidia-smi-status/migparted181-mig-parted-apply.txt", "nvidia-smi-status/gpuoperator118-mig-disable-and-gpu-reset.txt"):
        assert _found(["host:" + rel]) == [("gpu-reset-blocked-by-driver-client", "likely")], rel


def test_gpu_buffers_through_mpi_without_cuda_support() -> None:
    assert _found(["openmpi/condaforgeompi83-cuda-support-requested-not-compiled.txt"]) == [("mpi-not-cuda-aware", "confirmed")]
    for rel in ("ucx/ucx3776-backtrace-am-short-libc-copy.txt", "ucx/ucx7845-memcpy-ssse3-under-ucp-dt-pack.txt"):
        assert _found([rel]) == [("ucx-not-cuda-aware", "likely")], rel


def test_a_gpu_stack_library_off_the_loaders_path() -> None:
    for rel in ("loader/ucx3198-ucx-info-libgdrapi-not-found.txt", "loader/caffe-nccl-so1-not-on-loader-path.txt"):
        assert _found([rel]) == [("gpu-library-not-on-loader-path", "likely")], rel


def test_set_y_and_z_outputs_read_as_their_threads_settled_them() -> None:
    # DMA-BUF registration maps GPU memory, not counted against memlock: an oversized NCCL_BUFFSIZE is possible
    dmabuf = "nccl-debug/vllm19613-reg-dmabuf-mr-enomem.txt"
    assert _found([dmabuf]) == [] and _suspected([dmabuf])[0] == "nccl-tuning-env-harmful"
    assert _found(["nccl-debug/llmd191-got-async-error-event-port-error-flap.txt"]) == [("fabric-port-down", "likely")]
    assert _found(["verbs-errors/awsomedai647-efa-internal-error-enomem.txt"]) == [("memlock-limit", "likely")]
    assert _found(["host:ibstat/azhpcimages213-ibpanic-mlx5-an0-accelnet.txt"]) == []


def test_nccl_probing_a_plugins_symbols_is_no_failed_plugin() -> None:
    # NVIDIA/nccl#1292: "Failed to find ncclNetPlugin_v8 symbol" INFO lines are not a failure (set AA arrived wrong)
    assert _found(["nccl-debug/nccl1292-netplugin-v8-symbol-probe-info.txt"]) == []


def test_collnet_asked_for_on_a_fabric_without_sharp() -> None:
    assert _found(["nccl-debug/nccl1050-sharp-job-create-fails-collnet-fallback.txt"]) == [("collnet-sharp-unavailable", "confirmed")]


def test_the_hosts_kernel_log_speaks_for_the_job_on_it() -> None:
    # a container's own outputs (here its environment) beside the host's kernel log: the container runs on that
    # kernel and those GPUs, so a GPU the host's kernel lost is the job's GPU lost too
    xid79 = "dmesg/rtx5090-xid79-fallen-off-bus-gsp-rpc-failed-open-kmod-595.txt"
    env = "env/proc-self-environ-bwrap-container-nccl-slurm-nul.txt"
    assert ("gpu-fallen-off-bus", "confirmed") in _found([env, f"host:{xid79}"])
    ef = EvidenceFacts.from_specs(_specs([env, f"host:{xid79}"]))
    assert ef.lookup("dmesg.fallen_off_bus") is True
    assert "host side" in ef.factset("target").get("dmesg.fallen_off_bus").source
    # a container's view of its own devices and environment is never the host's
    ef = EvidenceFacts.from_specs(_specs([env, "host:env/srun-env-grep-slurm-job476-cn1.txt"]))
    assert ef.lookup("env.slurm") != ef.lookup("env.slurm", "host")
    assert ef.lookup("slurm.job_id") != 476  # the host listing's job, not the container's


def test_cuda_error_46_with_more_tasks_than_gpus_and_alone() -> None:
    rel = "srun/cscs-gh200-vectoradd-srun-n5-over-4-exclusive-gpus.txt"
    assert ("gpu-exclusive-process-oversubscribed", "likely") in _found([f"job:{rel}"])
    # the error line alone (read as CUDA errors only: no launch line, no GPU list): one possible cause, not decided
    assert "gpu-exclusive-process-oversubscribed" not in [c for c, _ in _found([f"cuda-errors={rel}"])]
    assert "gpu-exclusive-process-oversubscribed" in _suspected([f"cuda-errors={rel}"])


def test_the_inforom_warning_is_a_board_fault() -> None:
    assert _found(["nvidia-smi/gpuop-p100-inforom-corrupted-warning-rc14.txt"]) == [("gpu-inforom-corrupted", "confirmed")]


def test_a_bus_error_in_nccls_threads_is_a_small_dev_shm_in_a_container() -> None:
    rel = "ucx/pipedream76-sigbus-in-nccl-threads-docker-shm.txt"
    assert ("shm-too-small", "likely") in _found([f"container:{rel}"])
    # where it ran is not said: possible, with df -h /dev/shm to settle it
    assert "shm-too-small" not in [c for c, _ in _found([rel])] and "shm-too-small" in _suspected([rel])


def test_the_device_plugins_xid_79_is_a_gpu_off_the_bus() -> None:
    rel = "k8s-device-plugin/gpuop-health-xid79-marking-device-unhealthy.txt"
    assert ("gpu-fallen-off-bus", "confirmed") in _found([rel])
    ef = EvidenceFacts.from_specs(_specs([rel]))
    assert ef.lookup("gpu.xid_classes") == ["bus"]  # classed like the kernel log's (decision_trees/xid.yaml)


def test_ranks_that_all_inherited_one_core_are_a_narrow_launcher_binding() -> None:
    assert ("launcher-cpu-affinity-narrow", "likely") in _found(["taskset/olcf-numa-api-torchrun.txt"])
    assert "launcher-cpu-affinity-narrow" not in [c for c, _ in _found(["taskset/olcf-numa-api-srun-reference.txt"])]


def test_selinux_denials_of_a_gpu_container_launch() -> None:
    avc = "selinux/nvdocker814-avc-nvidia-docker-entrypoint-docker-xserver-t.txt"
    assert ("selinux-blocks-gpu-container", "likely") in _found([avc])
    assert ("selinux-blocks-gpu-container", "likely") in _found(["selinux/selinuxpolicy1695-sealert-container-t-dev-nvidia0.txt"])
    # the host's policy holds for the containers it starts: given for the host beside a container's own output
    env = "env/proc-self-environ-bwrap-container-nccl-slurm-nul.txt"
    assert ("selinux-blocks-gpu-container", "likely") in _found([env, f"host:{avc}"])


def test_the_rdma_shared_plugin_refusing_exclusive_netns() -> None:
    assert _found(["rdma-device-plugin/rdmasdp87-exiting-incorrect-rdma-netns.txt"]) == [
        ("rdma-netns-exclusive-breaks-shared-plugin", "confirmed")]


def test_a_gpus_unassigned_bar_and_a_bare_rminitadapter_failure() -> None:
    assert _found(["dmesg/wucvgl-8gpu-4-shown-bar1-0m-pci-realloc.txt"]) == [("gpu-bar-unassigned", "confirmed")]
    # the refusal of the wrong module flavor names its reason: no BAR suspicion there
    assert "gpu-bar-unassigned" not in _suspected(["dmesg/rtx5090-xid79-fallen-off-bus-gsp-rpc-failed-open-kmod-595.txt"])


def test_nvmls_mismatch_in_a_singularity_run_without_nv_is_the_missing_flag() -> None:
    # the same words on a host are a driver upgraded under a loaded module; here the second run, with --nv, shows
    # the host's driver answering ("casper$" prompts: the host's name alone before '$')
    rel = "nvidia-smi-status/ncar-singularity-without-nv-mismatch-then-with-nv.txt"
    found = _found([rel])
    assert ("apptainer-nv-flag-missing", "likely") in found
    assert "driver-library-mismatch" in next(c for c in causes.load() if c.id == "apptainer-nv-flag-missing").supersedes
    ef = EvidenceFacts.from_specs(_specs([rel]))
    assert ef.lookup("container.nvml_error_without_nv") == "driver-library-mismatch"
    assert ef.lookup("gpu.driver_version") == "545.23.06"


def test_a_framework_refused_at_import_for_an_nccl_function_is_an_nccl_too_old() -> None:
    rel = "python-traceback/awsomeai-openvla-libtorch-cuda-undefined-nccl-symbol-wrapped.txt"
    assert _found([rel]) == [("nccl-version-too-old", "likely")]


def test_mpi_without_its_gpu_layer_and_without_pmix() -> None:
    assert _found(["openmpi/cscs-cray-mpich-gpu-support-gtl-not-linked.txt"]) == [("mpi-not-cuda-aware", "confirmed")]
    assert _found(["openmpi/cscs-ompi5-no-pmix-server-pmi2-detected.txt"]) == [("slurm-mpi-plugin-not-pmix", "likely")]


def test_the_hook_refusing_docker_gpus_in_csv_mode() -> None:
    rel = "nvidia-container-cli/nvct-readme-gpus-flag-hook-directly-csv-mode.txt"
    assert ("nvidia-runtime-not-default", "confirmed") in _found([rel])
    ef = EvidenceFacts.from_specs(_specs([rel]))
    assert ef.lookup("container_cli.error_kinds") == ["hook-without-runtime"]


def test_a_driver_without_its_gsp_firmware() -> None:
    rel = "dmesg/gpuop-relnotes-vgpu-open-kmod-no-gsp-firmware-image.txt"
    assert _found([rel]) == [("gsp-firmware-missing", "confirmed")]
    assert "gpu-bar-unassigned" not in _suspected([rel])  # the RmInitAdapter failure has its reason in the log


def test_the_mig_manager_refused_an_instance_a_process_holds() -> None:
    rel = "nvidia-smi-status/ocp-mig-manager-destroy-compute-instance-in-use.txt"
    assert _found([rel]) == [("gpu-reset-blocked-by-driver-client", "likely")]
    ef = EvidenceFacts.from_specs(_specs([rel]))
    assert ef.lookup("gpu.reset_blocked") == ["Compute instance for profile '(0, 0)'"]


def test_a_container_asking_for_two_shared_gpus() -> None:
    assert _found(["k8s-events/k8sdp-readme-timeslicing-request-2-too-large.txt"]) == [
        ("shared-gpu-request-over-one", "confirmed")]


def test_a_kernel_log_inside_another_output_is_read_only_with_kernel_words() -> None:
    # set AC's nvidia-smi paste with syslog's NVRM lines below it: the kernel lines are read
    rel = "nvidia-smi-status/ogkm862-no-devices-then-syslog-rminitadapter-cut.txt"
    ef = EvidenceFacts.from_specs(_specs([rel]))
    assert ef.lookup("dmesg.rm_init_failed") == ["0000:01:00.0"]
    assert "gpu-bar-unassigned" in _suspected([rel])  # the reason was cut away: possible, with the lines that decide
    # UCX's bracketed timestamps look like the kernel's, but no kernel line is there: no kernel-log facts (an empty
    # Xid list would speak for a log nobody gave)
    ef = EvidenceFacts.from_specs(_specs(["ucx/ucx1037-mm-posix-not-enough-dev-shm.txt"]))
    assert isinstance(ef.lookup("dmesg.xid_codes"), Unknown)


def test_threads_that_outnumber_their_cpus() -> None:
    assert _found(["thread-placement/olcf-frontier-srun-c1-omp2-threads-on-one-hwt.txt"]) == [
        ("cpu-threads-oversubscribed", "likely")]
    assert _found(["thread-placement/olcf-summit-jsrun-brs-two-tasks-one-core-set.txt"]) == [
        ("cpu-threads-oversubscribed", "likely")]
    assert _found(["thread-placement/olcf-frontier-srun-c2-omp2-reference.txt"]) == []


def test_no_kernel_image_for_the_device_is_likely_except_from_xla() -> None:
    # CUDA's definition of error 209 is the build's architectures; XLA's own compilation bugs print the same words
    # (set AL's JAX case), where the architectures listed decide
    rel = "cuda-errors/deepspeed-docs-no-kernel-image-for-device.txt"
    assert _found([rel]) == [("cuda-arch-not-in-build", "likely")]


def test_node_conditions_of_the_clouds_gpu_health_agents() -> None:
    assert _found(["k8s-node-conditions/oke-maintenancefault-ecc-row-remaps-exceeded.txt"]) == [("gpu-memory-errors", "likely")]
    assert _found(["k8s-node-conditions/oke-npd-rdmalink-true-gpuecc-unknown.txt"]) == [("fabric-port-down", "likely")]
    assert _found(["k8s-node-conditions/gpuop-describe-node-conditions-all-healthy.txt"]) == []


def test_a_driver_build_without_the_running_kernels_packages_supersedes_no_driver() -> None:
    from troubleshooter.service.diagnose import diagnose

    for rel in ("nvidia-installer/ibmrok-driver-pod-no-kernel-headers-eus.txt",
                "nvidia-installer/ocp-dtk-ctr-broken-toolkit-node-kernel-vs-package.txt"):
        assert ("driver-build-kernel-mismatch", "likely") in _found([rel])
        # gpu-driver-not-loaded holds too, and the catalogue lists it after: the more specific cause stands alone
        walk, _ = diagnose("below-reference", EvidenceFacts.from_specs(_specs([rel])), answers={}, profile_id=None,
                           target_desc={"kind": "evidence"})
        assert [c.cause for c in walk.conclusions] == ["driver-build-kernel-mismatch"], rel


def test_a_profiler_refused_the_gpus_counters() -> None:
    assert _found(["cuda-errors/jaxdocs-cupti-insufficient-privileges.txt"]) == [("gpu-profiling-restricted-to-admin", "confirmed")]


def test_gpu_cores_that_are_not_whole_sockets_in_slurm() -> None:
    for rel in ("slurm-log/slurmdocs-gres-autodetected-core-affinity-not-socket-aligned.txt",
                "slurm-log/unige3938-scontrol-reason-gres-core-specification-not-socket-aligned.txt"):
        assert _found([rel]) == [("slurm-gres-cores-not-socket-aligned", "confirmed")], rel
    # the node's own slurmd log, given for the host beside a job's env, speaks for it
    assert ("slurm-gres-cores-not-socket-aligned", "confirmed") in _found(
        ["env/proc-self-environ-bwrap-container-nccl-slurm-nul.txt",
         "host:slurm-log/slurmdocs-gres-autodetected-core-affinity-not-socket-aligned.txt"])


def test_the_hooks_refusal_answered_by_a_later_run_through_the_runtime() -> None:
    refusal = "host:nvidia-container-cli/hook-without-runtime-dcgmexp101-jetson-gpus-all-csv-mode.txt"
    later = "host:docker-run/dcgmexp101-jetson-runtime-nvidia-started-then-docker-ps-empty.txt"
    assert _found([refusal]) == [("nvidia-runtime-not-default", "confirmed")]
    # the same machine's next launch is the one the refusal asks for, and it went past the hook: not a root cause
    # (neither from the evidence as a whole nor from the earlier output alone), only the command that decides
    assert _found([refusal, later]) == []
    assert "nvidia-runtime-not-default" in _suspected([refusal, later])


def test_resolved_when_is_checked_like_a_signature(tmp_path) -> None:
    from troubleshooter.diagnosis import causes

    bad = tmp_path / "causes.yaml"
    bad.write_text("version: 1\ncauses:\n  - id: x\n    title: X\n    signatures:\n      - name: s\n        when: "
                   "{fact: a.b, op: exists}\n    resolved_when: {fact: a.b, op: sometimes}\n")
    with pytest.raises(causes.CauseError, match="resolved_when"):
        causes.load(bad)


def test_open_mpis_and_mpichs_own_words_on_memory_and_gpus() -> None:
    for rel in ("openmpi/ompi-users-4443-openib-btl-locked-memory-memlock-32768-torque.txt",
                "openmpi/ompifaq-openib-btl-locked-memory-memlock-32767.txt"):
        assert _found([rel]) == [("memlock-limit", "confirmed")], rel
    # ulimit -l is unlimited in that thread: the driver's table, not the process's limit
    for rel in ("openmpi/ompi-users-20124-registerable-memory-4096-of-32151-mib.txt",
                "openmpi/ompifaq-registerable-memory-32768-of-65476-mib.txt"):
        assert _found([rel]) == [("hca-registration-limit-low", "confirmed")], rel
    assert _found(["openmpi/mpichwiki-summit-yaksa-exclusive-mode-cuda-disabled.txt"]) == [
        ("gpu-exclusive-process-oversubscribed", "likely")]


def test_apptainer_nvccli_contain_without_visible_devices() -> None:
    assert _found(["nvidia-container-cli/visible-devices-unset-apptainerdocs-nvccli-contain.txt"]) == [
        ("container-nvidia-visible-devices-unset", "confirmed")]


def test_ranks_that_each_start_alone_under_one_launcher() -> None:
    for rel in ("mpi-ranks/apptainerdocs-host-mpich-mpirun-openmpi-container-rank-0-of-1.txt",
                "mpi-ranks/starcluster533-openmpi-mpirun-mpich2-build-process-0-of-1.txt",
                "mpi-ranks/mpich712-mpiexec-through-sudo-world-size-1.txt"):
        assert _found([rel]) == [("mpi-launcher-library-mismatch", "likely")], rel
    # after the fix, one job of two: nothing to say
    assert _found(["mpi-ranks/starcluster533-after-removing-mpich2-process-of-2.txt"]) == []


def test_srun_singletons_name_the_mpi_plugin_not_the_general_mismatch() -> None:
    assert _found(["mpi-ranks/ompi13523-srun-mpi-pmi2-ompi5-four-singletons.txt"]) == [("slurm-mpi-plugin-not-pmix", "likely")]
    assert "mpi-launcher-library-mismatch" not in _suspected(["mpi-ranks/ompi13523-srun-mpi-pmi2-ompi5-four-singletons.txt"])


def test_a_driver_that_ignores_a_legacy_gpu_and_a_module_missing_for_the_kernel() -> None:
    assert _found(["host:dmesg/charmedk8s646-kern-log-tesla-k80-legacy-notice-cut.txt"]) == [
        ("gpu-unsupported-by-driver-branch", "confirmed")]
    found = _found(["host:kmod/gcpgpuinstall10-modprobe-nvidia-kernel-5-13-0-1025-gcp.txt",
                    "host:kmod/gcpgpuinstall10-find-insmod-kernel-5-13-0-1025-gcp.txt"])
    assert found == [("kernel-update-breaks-nvidia-driver", "likely")]


def test_open_mpis_older_slurm_pmi_words_without_a_launch_line_are_only_possible() -> None:
    rel = "openmpi/trtllmdocs-pmi2-init-failed-direct-launch-not-built-with-slurm-pmi.txt"
    assert _found([rel]) == [] and "slurm-mpi-plugin-not-pmix" in _suspected([rel])


def test_the_hooks_mount_errors_name_what_is_in_the_way() -> None:
    for rel in ("nvidia-container-cli/mount-error-nvdocker825-hard-wrapped-mid-word-nvidia-smi-file-exists.txt",
                "nvidia-container-cli/mount-error-nvct176-wsl-libnvidia-ml-file-exists.txt"):
        assert _found([rel]) == [("container-image-bundles-driver-files", "likely")], rel
    assert _found(["nvidia-container-cli/mount-error-nvdocker885-host-run-bound-persistenced-socket-enxio.txt"]) == [
        ("container-mounts-host-run-over-driver-files", "likely")]
    # a mount refused for another reason names neither
    assert _found(["nvidia-container-cli/mount-error-enroot111-start-firmware-operation-not-permitted.txt"]) == []


def test_pyxis_directories_and_the_cpupower_wrapper() -> None:
    for rel in ("pyxis/awsomedai185-slurmd-journal-spank-epilog-enroot-data-mkdir-denied.txt",
                "slurm/pyxis-import-failed-mkdir-run-enroot-permission-denied.txt",
                "slurm/pyxis-slurmd-log-couldnt-mkdir-run-pyxis-plugin-init-failed.txt"):
        assert _found([rel]) == [("enroot-data-dir-not-writable", "confirmed")], rel
    # the node's user database (CSCS): the same mkdir fails, and no directory is to blame
    assert _found(["pyxis/cscsdocs-pyxis-unknown-uid-then-mkdir-scratch-denied.txt"]) == []
    assert _found(["host:cpupower/deepops215-prolog-cpupower-not-found-for-kernel-4-15-0-42.txt"]) == [
        ("cpupower-missing-for-running-kernel", "confirmed")]


def test_an_ngc_containers_banner_says_the_driver_is_too_old() -> None:
    for rel in ("ngc-banner/yolov5-1232-built-for-455-23-detected-450-66-cuinit-804.txt",
                "ngc-banner/tensorrt1160-built-for-450-51-detected-440-33-01.txt",
                "ngc-banner/llamafactory5962-built-for-545-23-butversion-run-together.txt"):
        assert _found([rel]) == [("cuda-driver-mismatch", "confirmed")], rel


def test_a_peer_advertising_its_docker_bridge_address() -> None:
    rel = "torch-distributed/openrlhf265-ray-wrapped-c10d-connect-timeout-docker-bridge-watchdog.txt"
    assert ("container-no-net-interface", "likely") in _found([rel])
    # the same timeout on loopback names no network cause
    assert _found(["torch-distributed/controlnet382-tcpstore-connect-timeout-loopback.txt"]) == []


def test_set_as_container_and_gdrcopy_faults() -> None:
    assert _found(["host:nvidia-container-cli/other-enroot105-warn-nvidia-uvm-not-loaded-driver-error.txt"]) == [
        ("gpu-driver-not-loaded", "likely")]
    assert _found(["host:nvidia-container-cli/mount-error-enroot15-stat-dev-nvidia-modeset-display-capability.txt"]) == [
        ("display-capability-without-modeset-node", "likely")]
    assert _found(["host:gdrcopy/gdrcopy234-gdrcopy-sanity.txt", "host:kmod/gdrcopy234-lsmod-proc-modules-gdrdrv.txt"]) == [
        ("gdrdrv-device-node-missing", "likely")]
    # without the module listing: only possible, with the commands that decide
    assert _found(["gdrcopy/gdrcopy234-gdrcopy-sanity.txt"]) == []
    assert "gdrdrv-device-node-missing" in _suspected(["gdrcopy/gdrcopy234-gdrcopy-sanity.txt"])


def test_an_inference_servers_shared_memory_region() -> None:
    for rel in ("python-traceback/triton6195-python-backend-shm-region-no-space.txt",
                "python-traceback/modelanalyzer749-triton-shm-region-no-space-in-backticks.txt",
                "python-traceback/triton5681-shm-pool-grow-failed-no-space.txt"):
        assert _found([rel]) == [("shm-too-small", "likely")], rel


def test_set_aw_gpu_health_outputs() -> None:
    assert _found(["gpud/gpud1151-states-fabric-manager-found-not-active.txt"]) == [("fabric-manager-not-running", "likely")]
    assert _found(["gpud/gpud604-xid79-event.txt"]) == [("gpu-fallen-off-bus", "confirmed")]
    assert _found(["gpud/gpud604-remapped-rows-error-gpu-is-lost.txt"]) == [("gpu-fallen-off-bus", "likely")]
    assert _found(["nvidia-smi-q-fragments/gpud80-remapped-rows-section-alone-pending.txt"]) == [("gpu-memory-errors", "confirmed")]
    assert _found(["nvlink-status/gpud1085-b200-gpu2-all-links-inactive.txt"]) == [("nvlink-down", "likely")]


def test_sets_ay_and_az_driver_mpi_and_dmabuf() -> None:
    assert _found(["host:dmesg/nvdocker182-journal-nvrm-api-mismatch-367-44-vs-367-35.txt"]) == [
        ("driver-library-mismatch", "confirmed")]
    assert ("nvidia-kmod-flavor-mismatch", "confirmed") in _found(["dmesg/ogkm230-open-nvidia-ko-only-data-center-gpus-rminitadapter.txt"]) \
        or ("nvidia-kmod-flavor-mismatch", "likely") in _found(["dmesg/ogkm230-open-nvidia-ko-only-data-center-gpus-rminitadapter.txt"])
    assert _found(["nccl-tests/nccltests213-two-banners-each-process-its-own-world.txt"]) == [
        ("mpi-launcher-library-mismatch", "likely")]
    assert _found(["nccl-debug/nccl778-ibv-reg-dmabuf-mr-operation-not-supported.txt"]) == [("ib-stack-lacks-dmabuf", "likely")]


def test_nvml_function_not_found_is_two_releases_pieces() -> None:
    assert _found(["host:nvidia-smi-status/nvdocker584-nvml-function-not-found-stale-links.txt"]) == [
        ("driver-library-mismatch", "likely")]


def test_libibverbs_with_no_provider_configuration_is_the_rdma_userspace_missing() -> None:
    scout = "verbs-errors/infractl5251-scout-ibv-devinfo-config-dir-missing.txt"
    assert _found([scout]) == [("rdma-userspace-missing-in-container", "likely")]
    assert _found(["verbs-errors/mmdet6002-config-dir-missing-four-uverbs-without-provider.txt"]) == [
        ("rdma-userspace-missing-in-container", "likely")]
    # given as the host's own output it says nothing of an image
    assert _found(["host:" + scout]) == []
    # devices without their provider on a host (a software IB driver without its library): not an image's fault
    pib = "verbs-errors/pib2-ibv-devinfo-no-userspace-driver-no-ib-devices.txt"
    assert _found([pib]) == []
    assert _found(["container:" + pib]) == [("rdma-userspace-missing-in-container", "likely")]


def test_a_job_whose_cores_miss_a_gpus_socket() -> None:
    topo = "nvidia-smi-topo/a100pcie-x8-srun-c32-gpu4-7-empty-cpu-affinity.txt"
    assert _found([topo]) == [("job-cpuset-lacks-gpu-local-cores", "likely")]
    assert _found(["job:" + topo]) == [("job-cpuset-lacks-gpu-local-cores", "likely")]
    # every GPU with its cores (the same machine's layout seen from the whole node): nothing
    assert _found(["nvidia-smi-topo/a100-epyc-8numa-tabs-10nic-pxb.txt"]) == []


def test_an_srun_line_for_one_node_says_the_job_is_on_one_node() -> None:
    sources.load_all()
    one = EvidenceFacts.from_specs(_specs(["nvidia-smi-status/deepops1102-srun-gpus-per-task-two-tasks-distinct-uuids.txt"]))
    assert one.lookup("slurm.srun.options")["--nodes"] == "1"
    assert one.lookup("job.multi_node") is False


def test_tensorflows_kernel_dso_mismatch_is_the_driver_library_mismatch() -> None:
    for rel in ("cuda-errors/tf4768-cuda-diagnostics-kernel-352-dso-361.txt",
                "cuda-errors/jax11477-xla-kernel-515-dso-510-one-line.txt",
                "nvidia-smi-status/tf4349-nvidia-smi-mismatch-cuda-diagnostics-kernel-460-dso-470.txt"):
        assert _found([rel]) == [("driver-library-mismatch", "confirmed")], rel
    # inside a container the libcuda compared may be the image's own copy (nvidia-docker#1704): not decided here
    assert _found(["container:cuda-errors/tf4768-cuda-diagnostics-kernel-352-dso-361.txt"]) == []


def test_an_nccl_that_cannot_be_captured_in_a_cuda_graph() -> None:
    warn = "nccl-warn-lines/vllm3069-nccl-2-19-3-cuda11-0-cannot-be-captured-in-a-graph.txt"
    assert _found([warn]) == [("nccl-build-cannot-graph-capture", "confirmed")]
    sources.load_all()
    ef = EvidenceFacts.from_specs(_specs([warn]))
    assert ef.lookup("nccl.version") == "2.19.3"


def test_gpus_the_device_plugin_withholds_from_the_node() -> None:
    for rel in ("k8s-node-conditions/k8sdp234-describe-node-allocatable-6-of-8.txt",
                "k8s-node-conditions/k8sdp58-get-node-yaml-allocatable-0-of-16.txt"):
        assert _found([rel]) == [("device-plugin-gpu-stuck-unhealthy", "likely")], rel
    assert _found(["k8s-node-conditions/gpuop-describe-node-conditions-all-healthy.txt"]) == []


def test_ucx_without_cuda_transports_is_likely_only_with_the_ucx_tls_that_left_them_out() -> None:
    tcp = "ucx/trtllm18373-nixl-agent-ucx-tls-tcp-cuda-support-not-found.txt"
    assert _found([tcp]) == [("ucx-not-cuda-aware", "likely")]
    # UCX's own warning alone: a build without CUDA, or a CUDA build whose modules were not found (ucx_info decides)
    warn = "ucx/lmcache605-warn-cuda-transports-not-available.txt"
    assert _found([warn]) == []
    assert _suspected([warn]) == ["ucx-not-cuda-aware"]


def test_a_ucx_built_without_verbs_on_an_ib_node() -> None:
    build = "ucx/ucx10298-configured-with-without-verbs-bold-quoted.txt"
    errors = "ucx/ucx10298-mpirun-invalid-active-speed-mlx5-ndr.txt"
    assert _found([build, errors]) == [("ucx-built-without-ib-transports", "likely")]
    # the build line alone does not say the node has an HCA; a build with verbs beside the same errors is not it
    assert _found([build]) == []
    assert _found(["ucx/ucx8808-ucx-info-bdv-configured-with-rc-ud-dc-cuda.txt", errors]) == []


def test_cdi_refusals_name_a_stale_or_a_missing_spec() -> None:
    assert _found(["cdi/nvct885-podman-failed-to-stat-cdi-host-device-renderd129.txt"]) == [("cdi-spec-stale", "likely")]
    assert _found(["cdi/nixpkgs420638-podman-unresolvable-cdi-devices-gpu-all.txt"]) == [("cdi-spec-missing", "likely")]
    # another kind (a VFIO set-up's nvidia.com/pgpu, a scheduler's name by GPU UUID): the name may be the wrong one
    kata = "cdi/kata12549-containerd-cold-plug-unresolvable-cdi-pgpu-vfio1.txt"
    assert _found([kata]) == []
    assert _suspected([kata]) == ["cdi-spec-missing"]


def test_an_errno_less_ibv_reg_mr_failure_under_a_small_locked_memory_limit(tmp_path) -> None:
    warn = "nccl-warn-lines/hhhyunwoo-ibvwrap-call-to-ibv-reg-mr-failed-no-errno.txt"
    assert _found([warn, "limits/ulimit-a-bash-memlock-64-fenced.txt"]) == [("memlock-limit", "likely")]
    assert _found([warn]) == []  # no limit in the paste: nothing says which
    unlimited = tmp_path / "ulimit.txt"
    unlimited.write_text("$ ulimit -a | grep lock\nmax locked memory       (kbytes, -l) unlimited\n")
    assert _found([warn, str(unlimited)]) == []
    # 'with error Bad address' is the GPU memory path (ATS in a VM), whatever the limit
    efault = "nccl-debug/h200-kvm-vm-topo-system-print-pci-0.2-and-ibv_reg_mr-warn.txt"
    assert "memlock-limit" not in dict(_found([efault, "limits/ulimit-a-bash-memlock-64-fenced.txt"]))


def test_a_container_started_without_asking_for_gpus() -> None:
    err = "cuda-errors/simqcd149-gpugetdevicecount-insufficient-driver-in-container.txt"
    smi = "nvidia-smi-status/simqcd149-container-prompt-nvidia-smi-command-not-found.txt"
    assert _found([err, smi]) == [("container-run-without-gpu-request", "likely")]
    assert _found(["container:" + err, "container:" + smi]) == [("container-run-without-gpu-request", "likely")]
    # the CUDA error alone is still the driver/runtime mismatch it names
    assert _found([err]) == [("cuda-driver-mismatch", "confirmed")]
    # a run line that asked (nvidia-docker 1 without its driver volume, nvidia-docker#180): not a missing request,
    # and with no nvidia-smi in the container not a mismatch either
    assert _found(["nvidia-smi-status/nvdocker180-container-devicequery-35-and-nvidia-smi-not-found.txt"]) == []


def test_a_runtimes_own_architecture_check_is_likely_code_not_built_for_the_gpu() -> None:
    for rel in ("cuda-errors/kokkos1944-cuda-initialize-compiled-for-cc-0-0-device-5-0.txt",
                "cuda-errors/easydiffusion1477-hip-no-binary-for-gpu-rtx3050-laptop.txt"):
        assert _found([rel]) == [("cuda-arch-not-in-build", "likely")], rel


def test_a_device_plugin_that_refuses_its_config() -> None:
    for rel in ("k8s-device-plugin/k8sdp410-gfd-init-cannot-unmarshal-device-list-strategy.txt",
                "k8s-device-plugin/sirzzang-time-slicing-replicas-1-config-error-wrapped.txt"):
        assert _found([rel]) == [("device-plugin-config-invalid", "confirmed")], rel


def test_a_cuda_error_ending_a_training_log_is_read_with_the_next_runs_error() -> None:
    ecc = "steps/bigscience-tr1-iterations-then-cuda-ecc-uncorrectable.txt"
    oom = "cuda-errors/bigscience-tr1-restart-same-node-cuda-out-of-memory.txt"
    # the traceback under the iteration lines is read too (the block is the step-time kind), and the two CUDA logs of
    # the job add up instead of the later one replacing the earlier's error
    assert _found([ecc]) == [("gpu-memory-errors", "confirmed")]
    assert _found([ecc, oom]) == [("gpu-memory-errors", "confirmed")]


def _walk_causes(specs: list[str]) -> list[str]:
    from troubleshooter.service.diagnose import diagnose

    sources.load_all()
    ef = EvidenceFacts.from_specs(_specs(specs))
    walk, _ = diagnose("below-reference", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
    return [c.cause for c in walk.conclusions]


def test_pcie_cards_whose_bridges_leave_the_same_links_down_are_no_nvlink_down() -> None:
    # two H100 PCIe cards, 12 of 18 links up on each (three bridges): the build, not a fault
    assert _walk_causes(["host:nvlink-status/hpe-h100pcie-x2-three-bridges-12-of-18-links.txt"]) == []
    # SXM parts with links down still are (a V100 SXM2 with two links inactive; a B200 with none up)
    assert _walk_causes(["host:nvlink-status/v100-sxm2-gpu3-links-3-5-inactive-azhpc.txt"]) == ["nvlink-down"]
    assert _walk_causes(["host:nvlink-status/gpud1085-b200-gpu2-all-links-inactive.txt"]) == ["nvlink-down"]


def test_shm_open_refused_with_permission_denied_is_dev_shm_not_writable_not_too_small() -> None:
    found = dict(_found(["nccl-debug/nccl328-shm-open-permission-denied-dev-shm.txt"]))
    assert found.get("dev-shm-not-writable") == "likely"
    assert "shm-too-small" not in found  # /dev/shm is there and has room: its mode refuses the job's user


def test_nccls_segment_that_could_not_be_extended_is_shm_too_small() -> None:
    found = dict(_found(["nccl-debug/nccltests166-failed-to-extend-dev-shm.txt"]))
    assert found.get("shm-too-small") == "confirmed" and "dev-shm-not-writable" not in found


def test_a_refused_peer_memory_module_without_p2pdma_leaves_no_gpudirect_rdma_path() -> None:
    both = dict(_found(["host:kmod/talos12021-error-loading-module-nvidia-peermem.txt",
                        "host:kernel_config/talos12021-grep-p2pdma-not-set-after-prompt.txt"]))
    assert both.get("gdr-disabled") == "likely"
    # the refusal alone: DMA-BUF may still carry GPUDirect RDMA (NVSHMEM on DGX Spark does without the module)
    assert "gdr-disabled" not in dict(_found(["kmod/journal-systemd-modules-load-peermem-invalid-argument.txt"]))
    assert "gdr-disabled" in _suspected(["kmod/journal-systemd-modules-load-peermem-invalid-argument.txt"])


def test_cuda_error_217_in_nccls_shm_transport_or_at_init_of_a_cumem_host_release() -> None:
    assert dict(_found(["nccl-debug/nccl1838-l4-shm-cc-cuda-failure-217-cumem-host.txt"])).get(
        "nccl-cumem-host-needs-peer-access") == "confirmed"
    assert dict(_found(["cuda-errors/easyr1579-ray-runner-nccl-2273-cuda-failure-217.txt"])).get(
        "nccl-cumem-host-needs-peer-access") == "likely"


def test_a_kata_cold_plug_refused_by_the_kubelets_podresources_get() -> None:
    assert dict(_found(["k8s-events/coco-kata-cold-plug-podresources-get-disabled.txt"])).get(
        "kubelet-podresources-get-disabled") == "confirmed"


def test_the_tcp_btl_taking_another_ranks_connection_is_a_wrong_interface() -> None:
    assert dict(_found(["openmpi/horovod1516-btl-tcp-unexpected-process-identifier.txt"])).get(
        "mpi-btl-tcp-wrong-interface") == "likely"


def test_the_gpu_operators_own_log_decides_its_causes() -> None:
    assert dict(_found(["gpu-operator/gpuop149-no-gpu-present-nodes-no-kernel-version.txt"])).get(
        "gpu-operator-nfd-labels-missing") == "likely"
    assert dict(_found(["gpu-operator/gpuop106-nfd-master-namespace-not-allowed.txt"])).get(
        "nfd-rejects-gfd-label-namespace") == "confirmed"
    # a disabled device-plugin state alone may be another plugin serving the nodes on purpose
    alone = "gpu-operator/sirzzang-eks-device-plugin-state-disabled-json.txt"
    assert "k8s-device-plugin-not-deployed" not in dict(_found([alone]))
    assert "k8s-device-plugin-not-deployed" in _suspected([alone])


def test_a_disabled_device_plugin_state_with_pods_short_of_gpus_is_the_plugin_not_deployed() -> None:
    assert dict(_found(["gpu-operator/sirzzang-eks-device-plugin-state-disabled-json.txt",
                        "k8s-events/sirzzang-eks-insufficient-nvidia-gpu-full-stop.txt"])).get(
        "k8s-device-plugin-not-deployed") == "likely"


@pytest.mark.parametrize("rel", ["libfabric-log/lci110-deltaai-cxip-gen-auth-key-failed-38.txt",
                                 "libfabric-log/prrte2004-vni-not-found-completion.txt"])
def test_the_cxi_providers_vni_refusals_are_a_process_without_a_slingshot_vni(rel) -> None:
    assert dict(_found([rel])).get("slingshot-vni-not-granted") == "likely"


def test_gdb_stopping_on_sigbus_in_ncclshmopen_in_a_container_is_shm_too_small() -> None:
    rel = "gdb-backtrace/jaxtoolbox183-sigbus-ncclshmopen-proxy-service.txt"
    assert dict(_found([f"container:{rel}"])).get("shm-too-small") == "likely"
    assert "shm-too-small" in _suspected([rel])  # not said to be in a container
    assert not _found(["gdb-backtrace/monero-lmdb-sigbus-mdb-rpage-get.txt"])


def test_cuda_ipc_refused_between_ranks_bound_to_one_gpu_each() -> None:
    found = dict(_found(["cuda-errors/e3sm4834-perlmutter-gtl-cuipcopenmemhandle-invalid-value.txt",
                         "job-script/e3sm4834-sbatch-gpus-per-task-gpu-bind-map-gpu.txt"]))
    assert found.get("slurm-per-task-gpu-binding-blocks-cuda-ipc") == "likely"
    # GTL's line alone: the binding is the likely reason, not shown
    alone = "cuda-errors/agcnotes-deltaai-gtl-cuipcopenmemhandle-line-369.txt"
    assert not _found([alone]) and "slurm-per-task-gpu-binding-blocks-cuda-ipc" in _suspected([alone])


def test_two_ranks_on_one_gpu_of_one_machine_joined_by_p2p_are_two_machines_with_one_name() -> None:
    rel = "nccl-debug/nccl187-short-hostname-ring-ranks-2-and-10-on-device-2.txt"
    assert dict(_found([rel])).get("duplicate-hostname-across-nodes") == "likely"
    # one host's ranks each on its own GPU, the same hostname on both machines but no GPU shared in the lines shown
    assert "duplicate-hostname-across-nodes" not in dict(_found(["nccl-debug/horovod110-two-hosts-named-mtk-0-1-via-p2p-ipc.txt"]))


def test_a_hosts_device_listing_without_nvidia_uvm_is_the_nodes_not_created() -> None:
    rel = "dev-nvidia/singularity1441-ls-dev-grep-nvidia-bare-names-no-uvm.txt"
    assert dict(_found([f"host:{rel}"])).get("nvidia-device-nodes-not-created") == "likely"
    assert "nvidia-device-nodes-not-created" in _suspected([rel])  # whose listing it is not said
    assert "nvidia-device-nodes-not-created" not in dict(_found(["host:dev-nvidia/linux-box-ls-l-eight-gpus-and-nvidia-caps.txt"]))


def test_the_toolkits_imex_refusal_is_its_release_regression() -> None:
    assert dict(_found(["nvidia-container-cli/eksami2062-containerd-imex-channel-value-all-legacy.txt"])).get(
        "container-toolkit-release-regression") == "confirmed"


def test_the_device_plugin_refused_mig_memory_info_lacks_the_mig_monitor_capability() -> None:
    assert dict(_found(["k8s-device-plugin/k8sdp399-mig-memory-info-insufficient-permissions.txt"])).get(
        "mig-monitor-devices-unset") == "likely"


def test_cloud_init_refusing_an_ipoib_interfaces_shared_mac() -> None:
    assert dict(_found(["cloud-init/azdocs-hbhc-duplicate-mac-eth1-ib0.txt"])).get("cloud-init-ib-duplicate-mac") == "confirmed"
    assert not _found(["benign-messages/azdocs-hb-sched-llc-sibling-not-on-same-node.txt"])


def test_no_kernel_verbs_interface_is_an_hca_without_its_rdma_device_only_where_rdma_is_there() -> None:
    # the same line on a development machine with no HCA at all: possible, never found
    for rel in ("verbs-errors/horovod288-ssh-ibv-devinfo-function-not-implemented.txt",
                "verbs-errors/rdmanotes-ibv-devices-function-not-implemented-no-rdma-host.txt"):
        assert "hca-without-rdma-device" not in dict(_found([rel]))
        assert "hca-without-rdma-device" in _suspected([rel])
    # beside an lspci that lists the InfiniBand adapter: likely
    ib = next(p for p in sorted((DATA / "lspci").glob("*")) if "nfiniband" in p.read_text(errors="replace"))
    found = dict(_found([f"lspci/{ib.name}", "verbs-errors/horovod288-ssh-ibv-devinfo-function-not-implemented.txt"]))
    assert found.get("hca-without-rdma-device") == "likely"


def test_the_toolkit_made_default_in_rke2s_generated_config_is_undone_by_rke2() -> None:
    assert dict(_found(["gpu-operator/gpuop473-rke2-values-toolkit-config-toml-default.txt"])).get(
        "nvidia-runtime-not-default") == "likely"
    assert not _found(["gpu-operator/rke2notes-flow-style-toolkit-env-default-false.txt"])  # a RuntimeClass on purpose


def test_a_slurm_command_whose_plugin_cannot_load_its_library_points_at_a_container() -> None:
    # CSCS's guide (srun in a batch script run in the image) and HiDEF-seq's (sacct in Singularity): the loader's
    # refusal alone does not say where the command ran (a host missing the package prints it too): possible
    for rel in ("slurm-client/cscsdocs-sbatch-environment-srun-switch-hpe-slingshot-libjson-c.txt",
                "slurm-client/hidefseq-sacct-in-singularity-auth-munge-libmunge-missing.txt"):
        assert _found([rel]) == []
        assert _suspected([rel]) == ["slurm-command-inside-container"]


def test_a_step_refused_for_its_gres_is_a_possible_request_beyond_the_node() -> None:
    assert _found(["slurm-client/lumidocs-overlap-step-invalid-gres-wrapped.txt"]) == []
    assert _suspected(["slurm-client/lumidocs-overlap-step-invalid-gres-wrapped.txt"]) == ["slurm-step-gpu-request-exceeds-node"]
    # a step refused for another reason (the allocation already ending) is not that
    assert _suspected(["slurm-client/candle-biowulf-srun-step-creation-temporarily-disabled-salloc-exe.txt"]) == []


def test_tasks_killed_for_host_memory_are_noted_not_a_cause() -> None:
    from troubleshooter.output.summary import noted_lines
    rel = "slurm-log/tusas149-slurmstepd-oom-kill-event-newer-wording.txt"
    assert _found([rel]) == [] and _suspected([rel]) == []
    ef = EvidenceFacts.from_specs(_specs([rel]))
    assert noted_lines(ef) == ["the job's host memory ran out (Slurm's out-of-memory killer, step 440575.0): ask for "
                               "more (--mem) or use less; not a GPU or fabric fault"]


def test_tasks_killed_by_a_bus_error_name_no_cause_alone() -> None:
    # the program was overwritten while it ran (the post): a full /dev/shm prints the same; nothing is claimed
    rel = "slurm-client/cndaqiang-srun-tasks-bus-error-program-overwritten.txt"
    assert _found([rel]) == [] and _suspected([rel]) == []


def test_the_fabric_managers_log_read_for_its_causes() -> None:
    # a GPU NVLink fatal error in the switch tray's log is an NVLink fault, as the driver's fatal SXid is
    assert _found(["fabricmanager-log/oci-gb200-runbook-nmx-gpu-nvl-fatal-error-block.txt"]) == [("gpu-nvlink-errors", "confirmed")]
    # a corrected (non-fatal) NVSwitch error is shown, not a cause
    healthy = "fabricmanager-log/gpud-hgx-multicast-teams-then-nvswitch-nonfatal-12028.txt"
    assert _found([healthy]) == [] and _suspected([healthy]) == []
    # the host fabric manager giving up on the GPUs' local instances: started too early, or a GPU that never
    # registers; a later start tells them apart (possible, with that command)
    race = "fabricmanager-log/ciinfra552-fm-started-from-cloud-init-local-instances-not-finished.txt"
    assert _found([race]) == []
    assert _suspected([race]) == ["fabric-manager-start-race-at-boot"]


def test_libfabric_refusing_a_registration_for_memory_is_possible_memlock_or_efa_pages() -> None:
    # ENOMEM from the EFA provider: a locked-memory limit (awsome-distributed-ai#647) or the device's page budget
    # (libfabric#9739); the log says neither: both possible, each with the command that decides
    enomem = "libfabric-log/awsofinccl141-efa-mr-and-rx-pool-cannot-allocate-memory.txt"
    assert _found([enomem]) == []
    assert sorted(_suspected([enomem])) == ["efa-mr-page-limit-small-pages", "memlock-limit"]
    # refused for its address (a DMA-BUF GPU buffer the provider could not map, nixl#1609): neither
    assert _suspected(["libfabric-log/nixl1609-gb200-efa-dmabuf-mr-reg-bad-address.txt"]) == []


def test_port_error_counters_are_a_possible_failing_link_never_a_found_one() -> None:
    # one reading counts since the last reset (a link downed count grows with each reboot of the other end):
    # possible, with two readings under load as the command that decides
    for rel in ("ib-counters/ibexporter12-ibqueryerrors-details-switch-port-all-symbol-linkdowned-xmitwait.txt",
                "ib-counters/gpud943-sysfs-ib-counters-saturated-link-downed-255-xmit-discards-65535.txt"):
        assert _found([rel]) == []
        assert _suspected([rel]) == ["fabric-link-errors"]
    healthy = "ib-counters/treydockibexp-fixture-perfquery-x-two-ports-healthy-xmitwait.txt"
    assert _found([healthy]) == [] and _suspected([healthy]) == []


def test_dkms_holding_the_driver_only_as_added_with_no_driver_loaded_is_a_kernel_the_driver_did_not_follow() -> None:
    # a homelab's write-up: the HWE kernel moved on, the legacy 390 driver stayed 'added' in DKMS (never built), the
    # runtime could not initialise NVML; the same paste without the DKMS line says only that no driver is loaded
    rel = "nvidia-container-cli/homelab-node04-cdi-auto-nvml-driver-not-loaded-dkms-added.txt"
    assert _found([rel]) == [("kernel-update-breaks-nvidia-driver", "likely")]
    # a DKMS listing where the build failed by hand, with the module of another package installed, keeps its cause
    assert "kernel-update-breaks-nvidia-driver" not in [c for c, _ in _found(
        ["nvidia-installer/ogkm526-dkms-status-added-then-install-nvidia-390-kernel-6.4.1-zen.txt"])]


def test_dcgm_reporting_nvlink_links_down_is_possible_until_the_part_is_known() -> None:
    # a PCIe A100 without a bridge (NVSentinel#1481) and a two-GPU host whose thread did not settle (DCGM#198): DCGM
    # says 'down' for both; only the GPU's part tells a fault from a card with no NVLink
    for rel in ("dcgmi/nvsentinel1481-a100pcie-health-c-nvlink-links-down.txt",
                "dcgmi/dcgm198-nvlink-link-status-all-down-diag-r2-passes.txt"):
        assert _found([rel]) == []
        assert _suspected([rel]) == ["nvlink-down"]
    # a report that says Healthy claims nothing, and dcgmi's own errors name no GPU cause
    for rel in ("dcgmi/dcgm263-dmon-xider-120-health-json-healthy-gpu-needs-reset.txt",
                "dcgmi/dcgmexporter193-discovery-l-unable-to-connect-host-engine-openstack-vm.txt"):
        assert _found([rel]) == [] and _suspected([rel]) == []


def test_a_fabric_manager_that_found_no_nvswitch_is_not_a_fabric_left_unconfigured() -> None:
    # its first run on these helper-gathered journals called the RTX 4090 box's exit 'confirmed': the NVSwitch driver's
    # 'nothing to do' means there is no NVSwitch, normal on PCIe cards; possible, with lspci to tell an HGX apart
    for rel in ("systemctl-status/cubestudio29-rtx4090-start-sh-nv-warn-nothing-to-do-journal.txt",
                "systemctl-status/gpuoperator610-a40-nvlink-bridge-nv-warn-nothing-to-do-journal.txt"):
        assert _found([rel]) == []
        assert _suspected([rel]) == ["fabric-manager-not-running"]
    # CUDA's 802 on an H100 box whose fabric manager was not installed yet stays found (the blog's cause)
    assert [c for c, _ in _found(["docker-run/ramalama-blog-aws-h100-devicequery-802-before-fm-installed.txt"])] == ["fabric-manager-not-running"]


def test_pmix_without_munge_in_the_ranks_is_its_cause_only_when_pmix_init_fails() -> None:
    # pyxis#139: the container's PMIx cannot open psec/munge and pmix_init fails; ompi#11557: the same banner, no failure
    fatal = _found(["container:openmpi/pyxis139-srun-container-pmix-psec-munge-not-found.txt"])
    assert ("pmix-psec-munge-unavailable", "confirmed") in fatal
    warning = ["openmpi/ompi11557-srun-pmix-v4-psec-munge-warning.txt"]
    assert _found(warning) == [] and "pmix-psec-munge-unavailable" in _suspected(warning)


def test_pytorchs_capability_warning_and_error_209_outside_xla_are_the_build() -> None:
    warned = "cuda-errors/sdwebuinix9-journal-torch-sm120-not-compatible-no-kernel-image.txt"
    assert _found([warned]) == [("cuda-arch-not-in-build", "likely")]
    assert _found(["cuda-errors/pytorch149845-repl-rtx5090d-no-kernel-image.txt"]) == [("cuda-arch-not-in-build", "likely")]


def test_a_local_protection_error_on_gpu_buffers_is_likely_acs() -> None:
    # NVIDIA/nccl#928 ('IB error 4 is usually due to ACS'), openucx/ucx#3564 (osu_bw D D, ACS on in the BIOS)
    assert _found(["nccl-debug/nccl928-title-ib-completion-error-4-vendor-81.txt"]) == [("p2p-iommu-acs", "likely")]
    assert ("p2p-iommu-acs", "likely") in _found(["verbs-errors/ucx3564-osu-bw-device-buffers-local-protection-error.txt"])


def test_nvshmem_unable_to_reach_a_local_peers_ipc_socket_is_a_shared_hostname() -> None:
    assert _found(["nvshmem/deepep316-wheel-ipc-socket-enoent-fatal-ipc-failure.txt"]) == [
        ("duplicate-hostname-across-nodes", "likely")]
    assert _found(["nvshmem/sglang-notes-wheel-build-ibgda-unable-to-create-ah.txt"]) == []


def test_enroots_hook_failing_in_ldconfig_is_a_nested_container_when_taken_inside_one() -> None:
    # SlinkyProject/containers#2: slurmd in a pod starts pyxis/enroot, the hook's ldconfig fails
    rel = "slurm/pyxis-slinky-k8s-ldcache-ldconfig-real-98-nvidia-hook-wrapped-lines.txt"
    assert ("enroot-nested-ldcache-regeneration-fails", "likely") in _found([f"container:{rel}"])
    assert [c for c, _ in _found([rel])] == [] and "enroot-nested-ldcache-regeneration-fails" in _suspected([rel])


def test_ranks_of_a_node_that_all_see_every_gpu_are_not_bound() -> None:
    assert _found(["gpu-affinity/alcf-polaris-hello-affinity-all-ranks-see-4-gpus.txt"]) == [("ranks-not-bound-to-gpus", "likely")]
    # the CSCS page's paste: the unbound run, then the bound one after the prompt: the last run shown stands
    assert _found(["gpu-affinity/cscs-affinity-cuda-unbound-then-gpus-per-task.txt"]) == []


def test_nvidia_docker_1_says_the_driver_is_older_than_the_image() -> None:
    assert ("cuda-driver-mismatch", "confirmed") in _found(["nvidia-container-cli/v1-nvdockerwiki-unsupported-cuda-driver-7.0-image-7.5.txt"])


def test_a_cdi_spec_without_the_uvm_node_is_the_node_missing_when_it_was_generated() -> None:
    assert _found(["host:cdi-spec/nvct50-spec-generated-before-uvm-nvidiactl-only.txt"]) == [
        ("nvidia-device-nodes-not-created", "likely")]
    assert _found(["cdi-spec/docker-docs-g4dn-buildkit-spec-with-uvm.txt"]) == []
    assert _found(["cdi-spec/wsl2-spec-dxg-only.txt"]) == []


def test_no_nvidia_smi_in_a_distribution_image_under_the_nvidia_runtime_is_no_gpu_request() -> None:
    snap = "nvidia-container-cli/smi-not-found-dockersnap184-runtime-nvidia-ubuntu.txt"
    assert ("container-nvidia-visible-devices-unset", "likely") in _found([snap])
    # nvidia/cuda asks for the GPUs itself: the same words there are not this
    cuda = "nvidia-container-cli/smi-not-found-nvdocker600-runtime-nvidia-cuda-image-sh-too.txt"
    assert "container-nvidia-visible-devices-unset" not in [c for c, _ in _found([cuda])]


def test_no_rdma_class_directory_and_enosys_without_an_hca_named_is_possible() -> None:
    # oneflow#9115: openibd stopped; ibv_devinfo's ENOSYS and ibstatus' 'No devices' say no RDMA device is up, and
    # nothing in the paste says the node has an adapter (a machine without one prints the same): possible, with lspci
    # and lsmod as the commands that decide
    paste = "host:transcripts/oneflow9115-ibv-devinfo-enosys-ibstatus-no-devices-openibd-stopped.txt"
    assert _found([paste]) == []
    assert "hca-without-rdma-device" in _suspected([paste])


def test_crun_finding_no_nvidia_smi_beside_an_installed_toolkit_is_no_gpu_request() -> None:
    # nvidia-container-runtime#190: podman's --gpus all is accepted and ignored; the host has the toolkit (its hook's
    # version banner), so the container got no GPU request its engine acts on
    crun = "host:nvidia-container-cli/smi-not-found-nvcr190-podman-crun-gpus-all-ignored.txt"
    versions = "host:container-toolkit-version/nvct190-hook-1.13.5-runtime-banner-cut.txt"
    assert ("container-run-without-gpu-request", "likely") in _found([crun, versions])
    # crun's words alone: a host without the toolkit, or without a GPU, says the same
    assert "container-run-without-gpu-request" not in [c for c, _ in _found([crun])]
    assert "container-run-without-gpu-request" in _suspected([crun])


def test_a_toolkit_release_with_a_known_start_defect_is_possible_from_its_version() -> None:
    # podman#24502: nvidia-cdi-hook 1.17.0, whose create-symlinks hook was fixed in 1.17.1; the version alone is a
    # lead, not a finding
    hook = "host:container-toolkit-version/podman24502-cdi-hook-1.17.0-command-line-no-prompt.txt"
    assert _found([hook]) == []
    assert "container-toolkit-release-regression" in _suspected([hook])
    # 1.14.6 and 1.17.3's cli banners: 1.17.3 is in the IMEX range, 1.14.6 is before it
    assert "container-toolkit-release-regression" in _suspected(
        ["container-toolkit-version/chatbot-readme-docker-nvidia-smi-version-cli-1.17.3.txt"])
    assert "container-toolkit-release-regression" not in _suspected(
        ["container-toolkit-version/ustc-guide-1.14.6-ctk-cli-runtime-hook-rhel.txt"])


def test_ranks_working_on_one_gpu_while_another_holds_their_contexts() -> None:
    # mpi4jax#194: both ranks' work on GPU 0, a context of each on GPU 1: they see both GPUs and use the first
    assert ("ranks-not-bound-to-gpus", "likely") in _found(["gpustat/gpustat-mpi4jax-194-all-on-gpu0.txt"])
    # ranks bound one per GPU that also touched GPU 0 (PS-MT#20, MGD-SSSS#2): the healthy shape, nothing
    for ok in ("nvidia-smi/nvsmi-psmt-20-ddp-extra-ctx-first-gpu.txt", "nvidia-smi/nvsmi-mgd-ssss-2-ddp-extra-ctx-gpu0.txt",
               "gpustat/issue157_rtx4090_8gpu_user_gdm.txt", "gpustat/dadm_readme_mixed_3090_2080ti.txt"):
        assert "ranks-not-bound-to-gpus" not in [c for c, _ in _found([ok])] + _suspected([ok]), ok


def test_crowding_by_pid_in_nvidia_smi_processes() -> None:
    from troubleshooter.model import combine
    from troubleshooter.model.facts import Fact, FactSet

    def crowded(rows: list[tuple[int, int, int]]) -> tuple[object, object]:
        fs = FactSet()
        fs.add(Fact("gpu.processes", [{"gpu": g, "pid": pid, "type": "C", "name": "python", "mem_mib": m}
                                      for g, pid, m in rows], "", "test", "", 0.0))
        combine.apply(fs)
        return tuple(fs[n].value if n in fs else None
                     for n in ("gpu.processes_crowded", "gpu.processes_crowded_see_all"))

    # the same two PIDs working on GPU 0 and holding contexts on GPU 1
    assert crowded([(0, 11, 30000), (0, 12, 29000), (1, 11, 500), (1, 12, 500)]) == (
        "GPU 0: 2 working processes (30000, 29000 MiB); GPU 1: contexts only (500, 500 MiB)", True)
    # other processes' contexts on GPU 1: crowded, not shown to be one job's ranks
    assert crowded([(0, 11, 30000), (0, 12, 29000), (1, 13, 500)])[1] is False
    # one working process per GPU: not crowded
    assert crowded([(0, 11, 30000), (0, 12, 900), (1, 12, 29000)]) == (None, None)
