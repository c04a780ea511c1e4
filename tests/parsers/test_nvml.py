"""The NVML wrapper, the nvml source and the nvml-json parser.

The real path must end in an explained state: ``no-gpu`` with a reason where there is no driver, the GPUs
where NVML works (a GPU node). The other states, and a working NVML, are
exercised by replacing pynvml functions with fakes that return what NVML returns (or raise pynvml's own
exception classes). The fake GPU carries the values of the corpus file
``nvidia-smi/rtx5080-laptop-driver580-full-q-event-reason-counters.txt``, so nvml-json and nvidia-smi-q
must give the same facts.
"""

import ctypes
import json
import types

import pynvml
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus import load
from troubleshooter.sources import nvml
from troubleshooter import parsers
from troubleshooter.model.evidence import Status
from troubleshooter.parsers import ParseError
import troubleshooter.sources.gpu  # noqa: F401  (declares the gpu sources)
from troubleshooter.sources import SOURCES, Params
from troubleshooter.probe.targets import LocalTarget

RTX5080 = "nvidia-smi/rtx5080-laptop-driver580-full-q-event-reason-counters.txt"


@pytest.fixture(autouse=True)
def _fresh_nvml():
    nvml.shutdown()
    yield
    nvml.shutdown()


def _raise(cls):
    def f(*args, **kwargs):
        raise cls()
    return f


def run_nvml():
    return LocalTarget().run(SOURCES["nvml"], Params())


# --- the real path on this machine -------------------------------------------------------------------

def _nvml_library_loads() -> bool:
    """Whether this machine has the driver's NVML library (a GPU node does; a CI container does not)."""
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


_EXPLAINED = tuple(nvml.REASONS.values()) + ("NVML error: ",)


def test_real_nvml_without_gpu_is_no_gpu_with_reason():
    ev = run_nvml()
    assert ev.source_id == "nvml"
    assert "Traceback" not in ev.reason
    if not _nvml_library_loads():
        # no driver in this context: no-gpu, and the reason says so
        assert ev.status is Status.NO_GPU
        assert ev.reason.startswith("NVML shared library not found: no NVIDIA driver in this context")
        assert ev.stdout == b""
        return
    # a GPU node: either NVML works and its JSON gives the GPUs, or it is one of the explained states
    if ev.status is Status.OK:
        facts = parsers.run("nvml-json", ev.stdout.decode())
        assert facts["gpu.count"] >= 1
        assert len(facts["gpu.names"]) >= 1
    else:
        assert ev.status in (Status.NO_GPU, Status.PERMISSION_DENIED, Status.ERROR)
        assert ev.reason.startswith(_EXPLAINED), ev.reason
        assert ev.stdout == b""


def test_real_init_raises_explained_state():
    if not _nvml_library_loads():
        with pytest.raises(nvml.NvmlUnavailable) as info:
            nvml.init()
        assert info.value.state == "library-not-found"
        return
    try:
        nvml.init()
    except nvml.NvmlUnavailable as exc:  # a driver that is not loaded, no permission ...: explained
        assert exc.state in ("driver-not-loaded", "no-permission", "version-mismatch", "error")
        assert exc.reason.startswith(_EXPLAINED), exc.reason
    else:
        nvml.init()  # once initialised, a second call is a no-op


# --- the other unusable states -----------------------------------------------------------------------

@pytest.mark.parametrize("cls, status, state, words", [
    (pynvml.NVMLError_DriverNotLoaded, Status.NO_GPU, "driver-not-loaded", "NVIDIA driver not loaded"),
    (pynvml.NVMLError_NoPermission, Status.PERMISSION_DENIED, "no-permission", "insufficient permissions"),
    (pynvml.NVMLError_LibRmVersionMismatch, Status.ERROR, "version-mismatch", "version mismatch"),
    (pynvml.NVMLError_Unknown, Status.ERROR, "error", "NVML error: Unknown Error"),
])
def test_init_errors_are_distinct_states(monkeypatch, cls, status, state, words):
    monkeypatch.setattr(pynvml, "nvmlInit", _raise(cls))
    with pytest.raises(nvml.NvmlUnavailable) as info:
        nvml.init()
    assert info.value.state == state
    ev = run_nvml()
    assert ev.status is status
    assert words in ev.reason


def test_no_device_is_no_gpu(monkeypatch):
    monkeypatch.setattr(pynvml, "nvmlInit", lambda: None)
    monkeypatch.setattr(pynvml, "nvmlShutdown", lambda: None)
    monkeypatch.setattr(pynvml, "nvmlDeviceGetCount", lambda: 0)
    ev = run_nvml()
    assert ev.status is Status.NO_GPU
    assert ev.reason.startswith("NVML found no GPU")


def test_a_wrapper_bug_is_evidence_not_a_traceback(monkeypatch):
    monkeypatch.setattr(nvml, "snapshot", _raise(RuntimeError))
    ev = run_nvml()
    assert ev.status is Status.ERROR
    assert ev.reason.startswith("NVML query failed: RuntimeError")


def test_init_is_lazy_and_once(monkeypatch):
    calls = []
    monkeypatch.setattr(pynvml, "nvmlInit", lambda: calls.append(1))
    monkeypatch.setattr(pynvml, "nvmlShutdown", lambda: None)
    nvml.init()
    nvml.init()
    assert calls == [1]


def test_not_supported_query_is_sentinel_and_error_entry():
    q = nvml.Queries()
    assert q.get("gpu0.remapped_rows", _raise(pynvml.NVMLError_NotSupported)) is nvml.NOT_SUPPORTED
    assert q.get("gpu0.x", _raise(pynvml.NVMLError_GpuIsLost)) is nvml.NOT_SUPPORTED
    assert q.get("gpu0.name", lambda: b"NVIDIA A40") == "NVIDIA A40"
    assert q.errors == {"gpu0.remapped_rows": "not supported", "gpu0.x": "GPU is lost"}
    assert not nvml.NOT_SUPPORTED


def test_decode_event_reasons():
    assert nvml.decode_event_reasons(0) == []
    assert nvml.decode_event_reasons(0x1 | 0x4) == ["gpu_idle", "sw_power_cap"]
    assert nvml.decode_event_reasons(0x8 | 0x40 | 0x80) == ["hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"]
    assert nvml.decode_event_reasons(0x20 | 0x100000) == ["sw_thermal_slowdown", "unknown_0x100000"]


# --- a working NVML (fake GPU = the RTX 5080 corpus file) ---------------------------------------------

def fake_rtx5080(monkeypatch, **overrides):
    MiB = 1024 * 1024
    procs = [(2573, 276), (2829, 49), (3346, 4), (4217, 25), (6013, 52), (12286, 65), (44735, 20)]
    funcs = {
        "nvmlInit": lambda: None,
        "nvmlShutdown": lambda: None,
        "nvmlDeviceGetCount": lambda: 1,
        "nvmlDeviceGetHandleByIndex": lambda i: f"handle{i}",
        "nvmlSystemGetDriverVersion": lambda: "580.173.02",
        "nvmlSystemGetCudaDriverVersion": lambda: 13000,
        "nvmlSystemGetNVMLVersion": lambda: "13.580.173.02",
        "nvmlDeviceGetName": lambda h: "NVIDIA GeForce RTX 5080 Laptop GPU",
        "nvmlDeviceGetUUID": lambda h: "GPU-49db0f63-042c-20f9-5de2-99d6a91a9d34",
        "nvmlDeviceGetPciInfo": lambda h: types.SimpleNamespace(busId=b"00000000:01:00.0"),
        "nvmlDeviceGetPerformanceState": lambda h: 8,
        "nvmlDeviceGetClockInfo": lambda h, t: {pynvml.NVML_CLOCK_SM: 427, pynvml.NVML_CLOCK_MEM: 405}[t],
        "nvmlDeviceGetMaxClockInfo": lambda h, t: {pynvml.NVML_CLOCK_SM: 3090, pynvml.NVML_CLOCK_MEM: 14001}[t],
        "nvmlDeviceGetPowerUsage": lambda h: 12720,
        "nvmlDeviceGetEnforcedPowerLimit": lambda h: 80000,
        "nvmlDeviceGetPowerManagementDefaultLimit": lambda h: 80000,
        "nvmlDeviceGetTemperature": lambda h, s: 49,
        "nvmlDeviceGetCurrentClocksEventReasons": lambda h: 0,
        "nvmlDeviceGetTotalEccErrors": _raise(pynvml.NVMLError_NotSupported),
        "nvmlDeviceGetRemappedRows": _raise(pynvml.NVMLError_NotSupported),
        "nvmlDeviceGetRetiredPages": _raise(pynvml.NVMLError_NotSupported),
        "nvmlDeviceGetNvLinkState": _raise(pynvml.NVMLError_NotSupported),
        "nvmlDeviceGetCurrPcieLinkGeneration": lambda h: 1,
        "nvmlDeviceGetMaxPcieLinkGeneration": lambda h: 5,
        "nvmlDeviceGetCurrPcieLinkWidth": lambda h: 8,
        "nvmlDeviceGetMaxPcieLinkWidth": lambda h: 16,
        "nvmlDeviceGetPersistenceMode": lambda h: 0,
        "nvmlDeviceGetVirtualizationMode": lambda h: pynvml.NVML_GPU_VIRTUALIZATION_MODE_NONE,
        "nvmlDeviceGetComputeRunningProcesses": lambda h: [],
        "nvmlDeviceGetGraphicsRunningProcesses": lambda h: [
            types.SimpleNamespace(pid=pid, usedGpuMemory=mb * MiB) for pid, mb in procs],
    }
    funcs.update(overrides)
    for name, func in funcs.items():
        monkeypatch.setattr(pynvml, name, func)


def test_fake_gpu_document(monkeypatch):
    fake_rtx5080(monkeypatch)
    ev = run_nvml()
    assert ev.status is Status.OK, ev.reason
    doc = json.loads(ev.stdout)
    assert doc["schema"] == 1
    assert doc["cuda_version"] == "13.0"
    assert doc["nvml_version"] == "13.580.173.02"
    gpu = doc["gpus"][0]
    assert gpu["bus_id"] == "00000000:01:00.0"
    assert gpu["power_w"] == 12.72 and gpu["power_limit_w"] == 80.0
    assert gpu["remapped_rows"] is None and gpu["nvlink"] is None and gpu["ecc_uncorrected_volatile"] is None
    assert gpu["processes"][0] == {"pid": 2573, "used_mb": 276, "type": "G"}
    assert doc["errors"] == {
        "gpu0.ecc_uncorrected": "not supported",
        "gpu0.ecc_corrected": "not supported",
        "gpu0.remapped_rows": "not supported",
        "gpu0.retired_pages": "not supported",
        "gpu0.nvlink": "not supported",
    }


def test_nvml_json_and_nvidia_smi_q_give_the_same_facts(monkeypatch):
    fake_rtx5080(monkeypatch)
    from_nvml = parsers.run("nvml-json", run_nvml().text)
    from_q = parsers.run("nvidia-smi-q", load(RTX5080))
    # NVML answers "not supported" for the GPU's first NVLink; nvidia-smi -q says nothing of NVLink
    assert from_nvml.pop("gpu.nvlink_present") is False and "gpu.nvlink_present" not in from_q
    # the report's 'GPU Recovery Action : None'; the nvml source does not ask NVML for the recovery action
    assert from_q.pop("gpu.recovery_actions") == {"0": "None"} and from_q.pop("gpu.recovery_needed") == []
    assert "gpu.recovery_actions" not in from_nvml
    # the report's 'Compute Mode : Default'; the nvml source does not ask NVML for the compute mode
    assert from_q.pop("gpu.compute_exclusive") == [] and "gpu.compute_exclusive" not in from_nvml
    assert from_nvml == from_q
    assert from_nvml["gpu.pcie_degraded"] == [{"index": 0, "gen": 1, "gen_max": 5, "width": 8, "width_max": 16}]
    assert from_nvml["gpu.persistence_off"] == [0]
    assert "gpu.nvlink_inactive" not in from_nvml  # no NVLink on this GPU


def test_nvlink_present_only_from_an_answer(monkeypatch):
    # a link query that failed for another reason than "not supported" says nothing of NVLink
    fake_rtx5080(monkeypatch, nvmlDeviceGetNvLinkState=_raise(pynvml.NVMLError_Unknown))
    doc = json.loads(run_nvml().stdout)
    assert "gpu0.nvlink" not in doc["errors"] and "gpu0.nvlink[0]" in doc["errors"]
    assert "gpu.nvlink_present" not in parsers.run("nvml-json", run_nvml().text)
    fake_rtx5080(monkeypatch, nvmlDeviceGetNvLinkState=lambda h, link: 1 if link < 18 else 0)
    assert parsers.run("nvml-json", run_nvml().text)["gpu.nvlink_present"] is True


def test_fake_gpu_throttled_with_nvlink_and_remaps(monkeypatch):
    def nvlink(h, link):
        if link >= 4:
            raise pynvml.NVMLError_InvalidArgument()
        return 0 if link == 2 else 1

    fake_rtx5080(
        monkeypatch,
        nvmlDeviceGetCount=lambda: 2,
        nvmlDeviceGetCurrentClocksEventReasons=lambda h: 0x4 | 0x40 if h == "handle1" else 0x1,
        nvmlDeviceGetClockInfo=lambda h, t: 1200 if h == "handle1" else 3090,
        nvmlDeviceGetNvLinkState=nvlink,
        nvmlDeviceGetRemappedRows=lambda h: (0, 1, 1, 0) if h == "handle1" else (0, 0, 0, 0),
        nvmlDeviceGetTotalEccErrors=lambda h, e, c: 3 if e == pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED else 0,
        nvmlDeviceGetRetiredPages=lambda h, cause: [],
        nvmlDeviceGetPersistenceMode=lambda h: 1,
        nvmlDeviceGetCurrPcieLinkGeneration=lambda h: 5,
        nvmlDeviceGetCurrPcieLinkWidth=lambda h: 16,
    )
    f = parsers.run("nvml-json", run_nvml().text)
    assert f["gpu.count"] == 2
    assert f["gpu.throttle_reasons"] == ["hw_thermal_slowdown", "sw_power_cap"]
    assert f["gpu.throttled"] == [1]
    assert f["gpu.sm_clock_ratio_min"] == round(1200 / 3090, 4)
    assert f["gpu.nvlink_inactive"] == 2  # link 2 on each GPU
    assert f["gpu.remapped_rows_pending"] == 1
    assert f["gpu.remapped_rows_failure"] == 0
    assert f["gpu.ecc_uncorrected_total"] == 6
    assert f["gpu.pcie_degraded"] == []
    assert f["gpu.persistence_off"] == []
    assert f["gpu.devices"][1]["retired_pages"] == 0


def test_old_driver_falls_back_to_throttle_reasons(monkeypatch):
    fake_rtx5080(
        monkeypatch,
        nvmlDeviceGetCurrentClocksEventReasons=_raise(pynvml.NVMLError_FunctionNotFound),
        nvmlDeviceGetCurrentClocksThrottleReasons=lambda h: 0x8,
    )
    ev = run_nvml()
    doc = json.loads(ev.stdout)
    assert doc["gpus"][0]["clocks_event_reasons"] == ["hw_slowdown"]
    assert "gpu0.clocks_event_reasons" not in doc["errors"]
    assert parsers.run("nvml-json", ev.text)["gpu.throttle_reasons"] == ["hw_slowdown"]


def test_lost_gpu_is_an_error_entry_not_a_failure(monkeypatch):
    def handle(i):
        if i == 1:
            raise pynvml.NVMLError_GpuIsLost()
        return f"handle{i}"

    fake_rtx5080(monkeypatch, nvmlDeviceGetCount=lambda: 2, nvmlDeviceGetHandleByIndex=handle)
    ev = run_nvml()
    assert ev.status is Status.OK
    doc = json.loads(ev.stdout)
    assert len(doc["gpus"]) == 1 and doc["errors"]["gpu1"] == "GPU is lost"


# --- the nvml-json parser ----------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "  \n", "not json", "[]", '{"schema": 2, "gpus": []}', '{"schema": 1}',
                                  '{"schema": 1, "gpus": [1, 2]}'])
def test_bad_documents_fail(text):
    with pytest.raises(ParseError):
        parsers.run("nvml-json", text)


def test_detect(monkeypatch):
    fake_rtx5080(monkeypatch)
    assert parsers.detect(run_nvml().text) == "nvml-json"


def test_declared_facts(monkeypatch):
    fake_rtx5080(monkeypatch)
    f = parsers.run("nvml-json", run_nvml().text)
    assert set(f) <= set(parsers.get("nvml-json").facts)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_random_text_only_parse_error(text):
    try:
        parsers.get("nvml-json").func(text)
    except ParseError:
        pass


_json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                            lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
                            max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["index", "name", "sm_clock_mhz", "sm_clock_max_mhz", "power_w",
                                                 "power_limit_w", "clocks_event_reasons", "remapped_rows", "nvlink",
                                                 "pcie_gen", "pcie_gen_max", "persistence_mode", "temp_c"]),
                                _json_values), max_size=3))
def test_random_gpu_dicts_only_parse_error(gpus):
    try:
        parsers.get("nvml-json").func(json.dumps({"schema": 1, "gpus": gpus}))
    except ParseError:
        pass


def test_a_vgpu_guests_license_is_read_live(monkeypatch):
    """NVML's licensable features on a vGPU guest give the license nvidia-smi -q prints (gpu-operator#220's guest
    was Unlicensed); on bare metal or passthrough nothing is asked."""
    def features(state):
        feat = types.SimpleNamespace(featureCode=pynvml.NVML_GRID_LICENSE_FEATURE_CODE_COMPUTE, featureState=state,
                                     featureEnabled=1)
        return types.SimpleNamespace(isGridLicenseSupported=1, licensableFeaturesCount=1, gridLicensableFeatures=[feat])

    fake_rtx5080(monkeypatch, nvmlDeviceGetCount=lambda: 2,
                 nvmlDeviceGetVirtualizationMode=lambda h: pynvml.NVML_GPU_VIRTUALIZATION_MODE_VGPU,
                 nvmlDeviceGetGridLicensableFeatures_v4=lambda h: features(0 if h == "handle1" else 1))
    f = parsers.run("nvml-json", run_nvml().text)
    assert f["gpu.vgpu_license"] == {"0": "Licensed", "1": "Unlicensed"} and f["gpu.vgpu_unlicensed"] == [1]
    fake_rtx5080(monkeypatch, nvmlDeviceGetGridLicensableFeatures_v4=_raise(pynvml.NVMLError_NotSupported))
    f = parsers.run("nvml-json", run_nvml().text)
    assert "gpu.vgpu_license" not in f and "gpu.vgpu_unlicensed" not in f
