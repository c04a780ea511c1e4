"""k8s-pod parser: pod specs and manifests with pod templates, on a real capture (exact values)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_job_with_gpus_and_a_shared_rdma_device_but_no_memory_backed_shm():
    text = load("k8s-pod/kai-scheduler-job-8-gpus-rdma-shared-device-no-dshm.txt")
    assert parsers.detect(text) == "k8s-pod"
    assert parsers.run("k8s-pod", text) == {
        "k8s.kinds": ["Job"], "k8s.containers": ["trainer"], "k8s.images": ["nvcr.io/nvidia/pytorch:24.06-py3"], "k8s.gpus": 8,
        "k8s.rdma_resources": ["rdma/rdma_shared_device_a"], "k8s.rdma_devices": True, "k8s.privileged": False,
        "k8s.capabilities": [], "k8s.host_network": False, "k8s.host_ipc": False, "k8s.shm_memory_volume": False,
        "k8s.shm_limited": True, "env.var.NCCL_IB_DISABLE": "0", "env.var.NCCL_NET_GDR_LEVEL": "5"}


def test_pod_with_dshm_ipc_lock_and_multus_annotation():
    text = """apiVersion: v1
kind: Pod
metadata:
  name: w0
  annotations:
    k8s.v1.cni.cncf.io/networks: rdma-net
spec:
  containers:
  - name: t
    image: img
    securityContext: {capabilities: {add: ["IPC_LOCK"]}}
    resources: {limits: {nvidia.com/gpu: 4}}
    volumeMounts: [{name: dshm, mountPath: /dev/shm}]
  volumes: [{name: dshm, emptyDir: {medium: Memory, sizeLimit: 64Gi}}]
"""
    f = parsers.run("k8s-pod", text)
    assert f["k8s.shm_memory_volume"] is True and f["k8s.shm_size_limit"] == "64Gi" and f["k8s.shm_limited"] is False
    assert f["k8s.capabilities"] == ["IPC_LOCK"] and f["k8s.networks_annotation"] == "rdma-net"
    assert f["k8s.rdma_devices"] is False and f["k8s.gpus"] == 4


def test_yaml_without_containers_or_broken_yaml_is_a_parse_error():
    with pytest.raises(ParseError):
        parsers.run("k8s-pod", "apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n")
    with pytest.raises(ParseError):
        parsers.run("k8s-pod", "apiVersion: v1\nkind: Pod\nspec:\n  containers: [\n")


def test_the_containers_section_alone_as_pasted_from_a_manifest():
    text = load("k8s-pod/nvct1877-containers-section-only-infiniband-mount-shm-volume-unseen.txt")
    assert parsers.detect(text) == "k8s-pod"
    f = parsers.run("k8s-pod", text)
    assert f["k8s.containers"] == ["nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04"]  # no name: the image stands for it
    assert (f["k8s.gpus"], f["k8s.rdma_devices"], f["k8s.capabilities"]) == (1, True, ["IPC_LOCK"])
    assert f["env.var.NCCL_IB_HCA"] == "mlx5_0:1,mlx5_1:1" and f["env.var.NCCL_IB_GID_INDEX"] == "3"
    # /dev/shm comes from a volume the paste does not show: its size is not known, so not "limited"
    assert "k8s.shm_limited" not in f and f["k8s.shm_memory_volume"] is False
