"""gpu-operator parser: the GPU Operator's controller log and NFD's label refusals, on real captures (exact values)."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_json_lines_with_a_disabled_state_and_the_states_not_ready():
    text = load("gpu-operator/gpuop1310-clusterpolicy-states-not-ready-json.txt")
    assert parsers.detect(text) == "gpu-operator"
    f = parsers.run("gpu-operator", text)
    assert f["gpu_operator.disabled_states"] == ["state-cc-manager"]
    assert f["gpu_operator.not_ready_states"] == ["state-operator-validation", "state-device-plugin",
                                                  "state-dcgm-exporter", "gpu-feature-discovery", "state-mig-manager"]
    assert f["gpu_operator.no_gpu_labelled_nodes"] is False


def test_zap_console_lines():
    f = parsers.run("gpu-operator", load("gpu-operator/gpuop377-console-format-operator-validation-not-ready.txt"))
    assert f["gpu_operator.states"] == {"state-operator-validation": "notReady"}


def test_the_device_plugin_state_disabled_and_the_gpu_nodes_counted():
    f = parsers.run("gpu-operator", load("gpu-operator/sirzzang-eks-device-plugin-state-disabled-json.txt"))
    assert f["gpu_operator.disabled_states"] == ["state-device-plugin", "state-mps-control-daemon"]
    assert f["gpu_operator.gpu_node_count"] == 2


def test_no_node_with_nfds_labels():
    f = parsers.run("gpu-operator", load("gpu-operator/gpuop149-no-gpu-present-nodes-no-kernel-version.txt"))
    assert f["gpu_operator.no_gpu_labelled_nodes"] is True and f["gpu_operator.kernel_version_missing"] is True
    assert f["gpu_operator.states"] == {}


def test_nfd_master_refusing_a_label_namespace():
    text = load("gpu-operator/gpuop106-nfd-master-namespace-not-allowed.txt")
    assert parsers.detect(text) == "gpu-operator"
    assert parsers.run("gpu-operator", text) == {"nfd.rejected_label_namespaces": ["nvidia.com"]}


def test_a_json_log_of_another_controller_is_not_the_operators():
    with pytest.raises(parsers.ParseError):
        parsers.run("gpu-operator", '{"level":"info","logger":"controllers.Other","msg":"x"}\n')


@pytest.mark.parametrize("rel, default", [("gpu-operator/gpuop473-rke2-values-toolkit-config-toml-default.txt", True),
                                          ("gpu-operator/rke2notes-flow-style-toolkit-env-default-false.txt", False)])
def test_the_toolkit_env_of_the_operators_helm_values_block_and_flow_style(rel, default):
    text = load(rel)
    assert parsers.detect(text) == "gpu-operator"
    assert parsers.run("gpu-operator", text) == {
        "gpu_operator.toolkit_containerd_config": "/var/lib/rancher/rke2/agent/etc/containerd/config.toml",
        "gpu_operator.toolkit_sets_default": default}
