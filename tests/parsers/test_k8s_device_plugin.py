"""The NVIDIA Kubernetes device plugin's log, read from real pastes of three generations of its wording."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers

KIND = "k8s-device-plugin"


def test_the_1x_plugin_could_not_load_nvml() -> None:
    text = load("k8s-device-plugin/k8sdp23-failed-to-start-nvml-could-not-load-nvml-library.txt")
    assert parsers.detect(text) == KIND
    assert parsers.run(KIND, text) == {
        "k8s_device_plugin.nvml_missing": True, "k8s_device_plugin.nvml_error": "could not load NVML library",
        "k8s_device_plugin.registered": False,
        "k8s_device_plugin.errors": ["Failed to start nvml with error: could not load NVML library"]}


@pytest.mark.parametrize("rel", ["k8s-device-plugin/k8sdp303-kubectl-logs-failed-to-initialize-nvml-could-not-load.txt",
                                 "k8s-device-plugin/k8sdp444-cri-log-stderr-failed-to-initialize-nvml.txt"])
def test_the_0x_plugin_asking_about_dockers_default_runtime(rel: str) -> None:
    """The same lines behind log.Printf dates, and behind the CRI log file's '<time> stderr F' as well."""
    text = load(rel)
    assert parsers.detect(text) == KIND
    assert parsers.run(KIND, text) == {
        "k8s_device_plugin.nvml_missing": True, "k8s_device_plugin.nvml_error": "could not load NVML library",
        "k8s_device_plugin.registered": False,
        "k8s_device_plugin.errors": ["Failed to initialize NVML: could not load NVML library."]}


def test_a_newer_plugin_on_a_non_nvml_platform() -> None:
    f = parsers.run(KIND, load("k8s-device-plugin/eksami1817-klog-detected-non-nvml-platform-incompatible.txt"))
    assert f == {
        "k8s_device_plugin.nvml_missing": True, "k8s_device_plugin.registered": False,
        "k8s_device_plugin.nvml_error": "could not load NVML library: libnvidia-ml.so.1: cannot open shared object "
                                        "file: No such file or directory",
        "k8s_device_plugin.errors": ["Incompatible platform detected", "error starting plugins: error creatin"]}


def test_incompatible_strategy_auto_is_nvml_not_found() -> None:
    text = load("k8s-device-plugin/k8sdp1220-incompatible-strategy-detected-auto.txt")
    assert parsers.detect(text) == KIND
    assert parsers.run(KIND, text) == {"k8s_device_plugin.nvml_missing": True, "k8s_device_plugin.registered": False,
                                       "k8s_device_plugin.errors": ["Incompatible strategy detected auto"]}


def test_plugins_that_registered_with_the_kubelet() -> None:
    old = load("k8s-device-plugin/k8sdp13-docker-run-runtime-nvidia-registered-with-kubelet.txt")
    assert parsers.run(KIND, old) == {"k8s_device_plugin.nvml_missing": False, "k8s_device_plugin.registered": True,
                                      "k8s_device_plugin.errors": []}
    new = load("k8s-device-plugin/bottlerocket4250-journal-registered-device-plugin-nvidia-gpu.txt")
    assert parsers.detect(new) == KIND
    assert parsers.run(KIND, new) == {"k8s_device_plugin.nvml_missing": False, "k8s_device_plugin.registered": True,
                                      "k8s_device_plugin.resources": ["nvidia.com/gpu"], "k8s_device_plugin.errors": []}


def test_no_devices_and_an_nvml_that_loads_but_fails() -> None:
    f = parsers.run(KIND, "2021/07/15 20:49:32 Loading NVML\n2021/07/15 20:49:32 Failed to initialize NVML: Unknown "
                          "Error.\n2021/07/15 20:49:32 No devices found. Waiting indefinitely.\n")
    assert (f["k8s_device_plugin.nvml_missing"], f["k8s_device_plugin.nvml_error"]) == (False, "Unknown Error")
    assert f["k8s_device_plugin.no_devices"] is True


@pytest.mark.parametrize("text", ["hello\nworld\n", "Failed to initialize NVML: Unknown Error\n",
                                  "I0402 20:02:41.844145       1 main.go:238] Starting FS watcher\n"])
def test_other_text_is_refused(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run(KIND, text)
    assert parsers.get(KIND).detect(text) < parsers.DETECT_MIN


def test_the_health_checks_xid_and_the_device_it_marked_unhealthy():
    f = parsers.run("k8s-device-plugin", load("k8s-device-plugin/gpuop-health-xid79-marking-device-unhealthy.txt"))
    assert f["k8s_device_plugin.xid_codes"] == [79]
    assert f["k8s_device_plugin.unhealthy"] == ["GPU-adb24b25-1db1-436e-d958-ddee5da83d07"]
    assert f["k8s_device_plugin.errors"] == []


def test_gpu_feature_discoverys_log_with_the_non_nvml_line_among_others():
    text = load("k8s-device-plugin/gfd36-k3s-gfd-log-non-nvml-platform-no-labels.txt")
    assert parsers.detect(text) == "k8s-device-plugin"
    f = parsers.run("k8s-device-plugin", text)
    assert f["k8s_device_plugin.nvml_missing"] is True
    assert f["k8s_device_plugin.nvml_error"].startswith("could not load NVML: libnvidia-ml.so.1: cannot open shared object file")


def test_the_plugin_refusing_its_config_file():
    one = parsers.run("k8s-device-plugin", load("k8s-device-plugin/k8sdp410-gfd-init-cannot-unmarshal-device-list-strategy.txt"))
    assert one["k8s_device_plugin.config_error"] == (
        "unmarshal error: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go struct field "
        "PluginCommandLineFlags.flags.plugin.deviceListStrategy of type string")
    # broken after 'unmarshaling JSON:' as posted: the reason is read from the next line
    wrapped = load("k8s-device-plugin/sirzzang-time-slicing-replicas-1-config-error-wrapped.txt")
    assert parsers.detect(wrapped) == "k8s-device-plugin"
    assert parsers.run("k8s-device-plugin", wrapped)["k8s_device_plugin.config_error"] == (
        "unmarshal error: error unmarshaling JSON: while decoding JSON: number of replicas must be >= 2")


def test_the_plugin_refused_a_mig_devices_memory_info():
    text = load("k8s-device-plugin/k8sdp399-mig-memory-info-insufficient-permissions.txt")
    assert parsers.detect(text) == "k8s-device-plugin"
    f = parsers.run("k8s-device-plugin", text)
    assert f["k8s_device_plugin.mig_memory_info_denied"] is True and f["k8s_device_plugin.registered"] is False

