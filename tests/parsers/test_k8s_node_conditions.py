"""A Kubernetes node's conditions, as kubectl describe node and the clouds' GPU health agents print them."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_one_condition_as_fields():
    f = parsers.run("k8s-node-conditions", load("k8s-node-conditions/oke-maintenancefault-ecc-row-remaps-exceeded.txt"))
    assert f == {"k8s.node_conditions": {"oci.oraclecloud.com/MaintenanceFault": "True"},
                 "k8s.node_problems": ["oci.oraclecloud.com/MaintenanceFault: HPCGPU-0002-02: The GPU has exceeded the "
                                       "maximum number of ECC defective row remaps."]}


def test_compact_rows_with_an_unknown_check():
    f = parsers.run("k8s-node-conditions", load("k8s-node-conditions/oke-npd-rdmalink-true-gpuecc-unknown.txt"))
    assert f["k8s.node_conditions"] == {"GpuCount": "False", "GpuEcc": "Unknown", "RdmaLink": "True"}
    assert f["k8s.node_problems"] == ["RdmaLink: RdmaLinkHasIssues: Healthcheck:: RDMA Link Error"]


def test_describe_nodes_table_with_timestamps_all_healthy():
    f = parsers.run("k8s-node-conditions", load("k8s-node-conditions/gpuop-describe-node-conditions-all-healthy.txt"))
    assert f["k8s.node_conditions"] == {"MemoryPressure": "False", "DiskPressure": "False", "PIDPressure": "False",
                                        "Ready": "True"}
    assert f["k8s.node_problems"] == []


def test_no_condition():
    with pytest.raises(ParseError):
        parsers.run("k8s-node-conditions", "Conditions:\n")


def test_gpus_the_node_registers_and_offers():
    # kubectl describe node's Capacity/Allocatable blocks, with no Conditions table beside them
    f = parsers.run("k8s-node-conditions", load("k8s-node-conditions/k8sdp234-describe-node-allocatable-6-of-8.txt"))
    assert f == {"k8s.gpu_capacity": {"nvidia.com/gpu": 8}, "k8s.gpu_allocatable": {"nvidia.com/gpu": 6},
                 "k8s.gpus_withheld": ["nvidia.com/gpu: 6 of 8"]}
    # the same under status in kubectl get node -o yaml, allocatable first, counts quoted
    y = parsers.run("k8s-node-conditions", load("k8s-node-conditions/k8sdp58-get-node-yaml-allocatable-0-of-16.txt"))
    assert y["k8s.gpus_withheld"] == ["nvidia.com/gpu: 0 of 16"]
    # a Conditions table alone says nothing of GPU counts
    healthy = parsers.run("k8s-node-conditions", load("k8s-node-conditions/gpuop-describe-node-conditions-all-healthy.txt"))
    assert "k8s.gpus_withheld" not in healthy and "k8s.gpu_capacity" not in healthy
    # equal counts: nothing withheld
    same = parsers.run("k8s-node-conditions", "Capacity:\n  nvidia.com/gpu:  8\nAllocatable:\n  nvidia.com/gpu:  8\n")
    assert same["k8s.gpus_withheld"] == []
