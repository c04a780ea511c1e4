"""The one NVML wrapper: every in-process GPU query goes through here.

Modelled on nvitop's ``libnvml``: NVML is initialised lazily, once, under a lock; a query the device or
driver does not support returns the :data:`NOT_SUPPORTED` sentinel instead of raising; and the ways NVML can
be unusable in a context are distinct, explained states (:class:`NvmlUnavailable` with ``state``):

- ``library-not-found``: ``libnvidia-ml.so.1`` is not on the loader path (no driver on this host, or a
  container started without the NVIDIA runtime);
- ``driver-not-loaded``: the library is there but the kernel module is not running;
- ``no-permission``: ``/dev/nvidia*`` is not accessible to this user;
- ``version-mismatch``: user-space library and kernel module are from different driver versions
  (a driver upgrade without a reboot);
- ``no-device``: NVML works but sees no GPU (``CUDA_VISIBLE_DEVICES``/cgroup hides them, or none present);
- ``error``: anything else NVML said, with its message.

:func:`snapshot` returns the versioned JSON document the ``nvml`` source emits (parser kind ``nvml-json``).
Each per-GPU query notes the equivalent ``nvidia-smi --query-gpu=`` field, so a user can reproduce a value
by hand.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable

SCHEMA = 1


class _NotSupported:
    """Sentinel: the device or driver does not support this query (``N/A`` in nvidia-smi)."""

    _instance: "_NotSupported | None" = None

    def __new__(cls) -> "_NotSupported":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NOT_SUPPORTED"


NOT_SUPPORTED = _NotSupported()


class NvmlUnavailable(Exception):
    """NVML cannot be used in this context; ``state`` says which way, ``reason`` says it for a user."""

    def __init__(self, state: str, reason: str) -> None:
        super().__init__(reason)
        self.state = state
        self.reason = reason


# Reasons for the states (the first words name the NVML error so a user can search for it).
REASONS = {
    "library-not-found": "NVML shared library not found: no NVIDIA driver in this context "
    "(libnvidia-ml.so.1 is not on the loader path; in a container, start it with the NVIDIA runtime)",
    "driver-not-loaded": "NVIDIA driver not loaded: libnvidia-ml is present but the nvidia kernel module "
    "is not running (check lsmod | grep nvidia and dmesg)",
    "no-permission": "NVML insufficient permissions: this user cannot open /dev/nvidia* (run as root, "
    "or add the user to the group that owns the device files)",
    "version-mismatch": "NVML/driver version mismatch: the user-space library does not match the loaded "
    "kernel module (a driver upgrade without a reboot)",
    "no-device": "NVML found no GPU: none present, or hidden from this context (CUDA_VISIBLE_DEVICES, "
    "cgroup device rules)",
}

_lock = threading.Lock()
_initialised = False


def _pynvml():
    try:
        import pynvml  # nvidia-ml-py
    except ImportError as exc:  # pragma: no cover - a dependency of the project
        raise NvmlUnavailable("library-not-found", f"python package nvidia-ml-py is not installed ({exc})")
    return pynvml


NVML_SONAME = "libnvidia-ml.so.1"
#: where glibc's loader looks after LD_LIBRARY_PATH and /etc/ld.so.cache (its trusted directories), and the
#: multiarch and local ones, so that the look-up below can only say "maybe" more often than dlopen finds it
_LOADER_DIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64", "/usr/local/lib", "/lib/x86_64-linux-gnu",
                "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu")


def _library_maybe_present() -> bool:
    """False only when the loader cannot find ``libnvidia-ml.so.1``: not named in /etc/ld.so.cache, not a file in
    LD_LIBRARY_PATH's directories nor the loader's default ones nor this Python's lib directory, and no
    LD_PRELOAD. A plain file test, without importing ctypes (~10 ms of `check --json`'s start-up)."""
    import os

    if os.environ.get("LD_PRELOAD"):
        return True
    try:
        with open("/etc/ld.so.cache", "rb") as f:
            if NVML_SONAME.encode() in f.read(64 << 20):
                return True
    except OSError:
        pass
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":")]
    dirs += [*_LOADER_DIRS, os.path.join(sys.base_prefix, "lib"), os.path.join(sys.prefix, "lib")]
    return any(os.path.exists(os.path.join(d or ".", NVML_SONAME)) for d in dirs)


def _library_missing() -> bool:
    """No NVML library for the loader, asked the way pynvml asks (dlopen of libnvidia-ml.so.1) without importing
    pynvml (~25 ms) on a machine with no driver. Once pynvml is imported (or replaced by a test), it answers.
    A file look-up first (:func:`_library_maybe_present`): only where it may be there is it dlopen'ed."""
    if "pynvml" in sys.modules or not sys.platform.startswith("linux"):
        return False
    if not _library_maybe_present():
        return True
    import ctypes

    try:
        ctypes.CDLL(NVML_SONAME)
    except OSError:
        return True
    return False


def _classify(exc: BaseException) -> NvmlUnavailable:
    pynvml = _pynvml()
    table = (
        ("NVMLError_LibraryNotFound", "library-not-found"),
        ("NVMLError_DriverNotLoaded", "driver-not-loaded"),
        ("NVMLError_NoPermission", "no-permission"),
        ("NVMLError_LibRmVersionMismatch", "version-mismatch"),
    )
    for cls_name, state in table:
        cls = getattr(pynvml, cls_name, None)
        if cls is not None and isinstance(exc, cls):
            return NvmlUnavailable(state, REASONS[state])
    return NvmlUnavailable("error", f"NVML error: {exc}")


def init() -> None:
    """Initialise NVML once (thread-safe). Raises :class:`NvmlUnavailable` with the explained state.

    A failure is not cached: the next call tries again (a driver may load in between).
    """
    global _initialised
    with _lock:
        if _initialised:
            return
        if _library_missing():
            raise NvmlUnavailable("library-not-found", REASONS["library-not-found"])
        pynvml = _pynvml()
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as exc:
            raise _classify(exc) from None
        except OSError as exc:  # the loader itself failed in a way pynvml did not wrap
            raise NvmlUnavailable("library-not-found", f"{REASONS['library-not-found']} ({exc})") from None
        _initialised = True


def shutdown() -> None:
    """Release NVML (and forget the initialisation, so the next :func:`init` starts over)."""
    global _initialised
    with _lock:
        if not _initialised:
            return
        _initialised = False
        try:
            _pynvml().nvmlShutdown()
        except Exception:  # noqa: BLE001 - shutting down must never fail the caller
            pass


def _text(value: Any) -> Any:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value


class Queries:
    """Runs NVML queries, turning per-query failures into :data:`NOT_SUPPORTED` and an ``errors`` entry.

    Only the state errors (library, driver, permission on init) stop a snapshot; a query that one GPU does
    not support is information, not a failure.
    """

    def __init__(self) -> None:
        self.errors: dict[str, str] = {}

    def get(self, name: str, func: Callable[..., Any], *args: Any) -> Any:
        pynvml = _pynvml()
        try:
            return _text(func(*args))
        except (pynvml.NVMLError_NotSupported, pynvml.NVMLError_FunctionNotFound):
            self.errors[name] = "not supported"
            return NOT_SUPPORTED
        except pynvml.NVMLError as exc:
            self.errors[name] = str(exc)
            return NOT_SUPPORTED


def _json(value: Any) -> Any:
    """NOT_SUPPORTED becomes null in the document (the ``errors`` map says why)."""
    return None if value is NOT_SUPPORTED else value


def _mw_to_w(value: Any) -> Any:
    return round(value / 1000.0, 2) if isinstance(value, (int, float)) else value


def _cuda_version(value: Any) -> Any:
    if isinstance(value, int) and value > 0:
        return f"{value // 1000}.{(value % 1000) // 10}"
    return value


def decode_event_reasons(mask: int) -> list[str]:
    """Names of the bits set in a clocks event (throttle) reasons mask, in bit order."""
    pynvml = _pynvml()
    names = []
    for const, name in EVENT_REASON_BITS:
        bit = getattr(pynvml, const, None)
        if bit and mask & bit:
            names.append(name)
            mask &= ~bit
    if mask:
        names.append(f"unknown_0x{mask:x}")
    return names


# pynvml constant -> our reason name (the same names the nvidia-smi -q parser uses).
EVENT_REASON_BITS = (
    ("nvmlClocksEventReasonGpuIdle", "gpu_idle"),
    ("nvmlClocksEventReasonApplicationsClocksSetting", "applications_clocks_setting"),
    ("nvmlClocksEventReasonSwPowerCap", "sw_power_cap"),
    ("nvmlClocksEventReasonHwSlowdown", "hw_slowdown"),
    ("nvmlClocksEventReasonSyncBoost", "sync_boost"),
    ("nvmlClocksEventReasonSwThermalSlowdown", "sw_thermal_slowdown"),
    ("nvmlClocksEventReasonHwThermalSlowdown", "hw_thermal_slowdown"),
    ("nvmlClocksEventReasonHwPowerBrakeSlowdown", "hw_power_brake_slowdown"),
    ("nvmlClocksEventReasonDisplayClockSetting", "display_clock_setting"),
    ("nvmlClocksThrottleReasonBoardLimit", "board_limit"),
    ("nvmlClocksThrottleReasonReliability", "reliability"),
)


def _event_reasons(q: Queries, name: str, handle: Any) -> Any:
    pynvml = _pynvml()
    # clocks_event_reasons.active (driver >= 535; before: clocks_throttle_reasons.active)
    func = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
    mask = q.get(name, func, handle) if func is not None else NOT_SUPPORTED
    if mask is NOT_SUPPORTED:
        old = q.get(name, pynvml.nvmlDeviceGetCurrentClocksThrottleReasons, handle)
        if old is not NOT_SUPPORTED:
            q.errors.pop(name, None)
            mask = old
    return decode_event_reasons(mask) if isinstance(mask, int) else mask


def _nvlinks(q: Queries, name: str, handle: Any) -> Any:
    """[{link, active}] for every link the GPU has; None when it has no NVLink (``nvidia-smi nvlink -s``)."""
    pynvml = _pynvml()
    links = []
    for link in range(getattr(pynvml, "NVML_NVLINK_MAX_LINKS", 18)):
        try:
            state = pynvml.nvmlDeviceGetNvLinkState(handle, link)
        except (pynvml.NVMLError_NotSupported, pynvml.NVMLError_InvalidArgument, pynvml.NVMLError_FunctionNotFound):
            break  # past the last link (or no NVLink at all)
        except pynvml.NVMLError as exc:
            q.errors[f"{name}[{link}]"] = str(exc)
            continue
        links.append({"link": link, "active": bool(state)})
    if not links:  # "not supported" only when no link query failed otherwise (the parser reads it as "no NVLink")
        if not any(k.startswith(f"{name}[") for k in q.errors):
            q.errors[name] = "not supported"
        return None
    return links


def _processes(q: Queries, name: str, handle: Any) -> Any:
    """Compute (C) and graphics (G) processes, as in ``nvidia-smi -q`` (``--query-compute-apps=pid,used_memory``)."""
    pynvml = _pynvml()
    by_pid: dict[int, dict[str, Any]] = {}
    supported = False
    for kind, func in (("C", pynvml.nvmlDeviceGetComputeRunningProcesses),
                       ("G", pynvml.nvmlDeviceGetGraphicsRunningProcesses)):
        procs = q.get(f"{name}.{kind}", func, handle)
        if procs is NOT_SUPPORTED:
            continue
        supported = True
        for p in procs or []:
            used = getattr(p, "usedGpuMemory", None)
            entry = by_pid.setdefault(int(p.pid), {"pid": int(p.pid), "used_mb": None, "type": kind})
            if entry["type"] != kind:
                entry["type"] = "C+G"
            if isinstance(used, int):
                entry["used_mb"] = used // (1024 * 1024)
    if not supported:
        return None
    for kind in ("C", "G"):
        q.errors.pop(f"{name}.{kind}", None)
    return sorted(by_pid.values(), key=lambda e: e["pid"])


def _vgpu_license(q: Queries, g: str, handle: Any) -> str | None:
    """A vGPU guest's license as nvidia-smi -q's "License Status" words it ("Licensed" / "Unlicensed"); None on a
    GPU that is not a vGPU guest's, or where the driver does not say."""
    pynvml = _pynvml()
    mode = q.get(f"{g}.virtualization_mode", pynvml.nvmlDeviceGetVirtualizationMode, handle)
    if mode != pynvml.NVML_GPU_VIRTUALIZATION_MODE_VGPU:
        return None
    feats = q.get(f"{g}.vgpu_license", pynvml.nvmlDeviceGetGridLicensableFeatures_v4, handle)
    if feats is NOT_SUPPORTED or not getattr(feats, "isGridLicenseSupported", 0):
        return None
    n = min(int(getattr(feats, "licensableFeaturesCount", 0)), pynvml.NVML_GRID_LICENSE_FEATURE_MAX_COUNT)
    states = [f.featureState for f in feats.gridLicensableFeatures[:n] if f.featureEnabled]  # 1 licensed, 0 not
    return None if not states else "Licensed" if any(st == 1 for st in states) else "Unlicensed"


def _gpu(q: Queries, index: int) -> dict[str, Any]:
    pynvml = _pynvml()
    g = f"gpu{index}"
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)  # index
    pci = q.get(f"{g}.bus_id", pynvml.nvmlDeviceGetPciInfo, handle)  # pci.bus_id
    bus_id = _text(getattr(pci, "busId", None)) if pci is not NOT_SUPPORTED else None
    remapped = q.get(f"{g}.remapped_rows", pynvml.nvmlDeviceGetRemappedRows, handle)
    # --query-remapped-rows=remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure
    if isinstance(remapped, (tuple, list)) and len(remapped) == 4:
        remapped = {"correctable": int(remapped[0]), "uncorrectable": int(remapped[1]),
                    "pending": bool(remapped[2]), "failure": bool(remapped[3])}
    else:
        remapped = None
    retired: Any = 0
    for cause in (pynvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,  # retired_pages.single_bit_ecc.count
                  pynvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR):  # retired_pages.double_bit.count
        pages = q.get(f"{g}.retired_pages", pynvml.nvmlDeviceGetRetiredPages, handle, cause)
        retired = retired + len(pages) if isinstance(pages, list) and isinstance(retired, int) else None
    persistence = q.get(f"{g}.persistence_mode", pynvml.nvmlDeviceGetPersistenceMode, handle)  # persistence_mode
    pstate = q.get(f"{g}.perf_state", pynvml.nvmlDeviceGetPerformanceState, handle)  # pstate
    ecc = pynvml.NVML_VOLATILE_ECC
    return {
        "index": index,
        "name": _json(q.get(f"{g}.name", pynvml.nvmlDeviceGetName, handle)),  # name
        "uuid": _json(q.get(f"{g}.uuid", pynvml.nvmlDeviceGetUUID, handle)),  # uuid
        "bus_id": bus_id,
        "perf_state": f"P{pstate}" if isinstance(pstate, int) and 0 <= pstate < 32 else None,
        # clocks.sm / clocks.max.sm
        "sm_clock_mhz": _json(q.get(f"{g}.sm_clock", pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_SM)),
        "sm_clock_max_mhz": _json(q.get(f"{g}.sm_clock_max", pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_SM)),
        # clocks.mem / clocks.max.mem
        "mem_clock_mhz": _json(q.get(f"{g}.mem_clock", pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_MEM)),
        "mem_clock_max_mhz": _json(q.get(f"{g}.mem_clock_max", pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_MEM)),
        # power.draw (averaged over 1 s on Ampere-but-GA100 and newer, instantaneous before) / enforced.power.limit
        "power_w": _json(_mw_to_w(q.get(f"{g}.power", pynvml.nvmlDeviceGetPowerUsage, handle))),
        "power_limit_w": _json(_mw_to_w(q.get(f"{g}.power_limit", pynvml.nvmlDeviceGetEnforcedPowerLimit, handle))),
        "power_default_limit_w": _json(_mw_to_w(q.get(f"{g}.power_default_limit",
                                                      pynvml.nvmlDeviceGetPowerManagementDefaultLimit, handle))),
        # temperature.gpu
        "temp_c": _json(q.get(f"{g}.temp", pynvml.nvmlDeviceGetTemperature, handle, pynvml.NVML_TEMPERATURE_GPU)),
        "clocks_event_reasons": _json(_event_reasons(q, f"{g}.clocks_event_reasons", handle)),
        # ecc.errors.uncorrected.volatile.total / ecc.errors.corrected.volatile.total
        "ecc_uncorrected_volatile": _json(q.get(f"{g}.ecc_uncorrected", pynvml.nvmlDeviceGetTotalEccErrors, handle,
                                                pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, ecc)),
        "ecc_corrected_volatile": _json(q.get(f"{g}.ecc_corrected", pynvml.nvmlDeviceGetTotalEccErrors, handle,
                                              pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, ecc)),
        "remapped_rows": remapped,
        "retired_pages": retired,
        "nvlink": _nvlinks(q, f"{g}.nvlink", handle),
        # pcie.link.gen.current / pcie.link.gen.max / pcie.link.width.current / pcie.link.width.max
        "pcie_gen": _json(q.get(f"{g}.pcie_gen", pynvml.nvmlDeviceGetCurrPcieLinkGeneration, handle)),
        "pcie_gen_max": _json(q.get(f"{g}.pcie_gen_max", pynvml.nvmlDeviceGetMaxPcieLinkGeneration, handle)),
        "pcie_width": _json(q.get(f"{g}.pcie_width", pynvml.nvmlDeviceGetCurrPcieLinkWidth, handle)),
        "pcie_width_max": _json(q.get(f"{g}.pcie_width_max", pynvml.nvmlDeviceGetMaxPcieLinkWidth, handle)),
        "persistence_mode": (persistence == pynvml.NVML_FEATURE_ENABLED) if isinstance(persistence, int) else None,
        "processes": _processes(q, f"{g}.processes", handle),
        "vgpu_license": _vgpu_license(q, g, handle),
    }


def snapshot() -> dict[str, Any]:
    """The versioned document of everything we read from NVML. Raises :class:`NvmlUnavailable`."""
    init()
    pynvml = _pynvml()
    q = Queries()
    try:
        count = pynvml.nvmlDeviceGetCount()
    except pynvml.NVMLError as exc:
        raise _classify(exc) from None
    if count == 0:
        raise NvmlUnavailable("no-device", REASONS["no-device"])
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "driver_version": _json(q.get("driver_version", pynvml.nvmlSystemGetDriverVersion)),  # driver_version
        "cuda_version": _json(_cuda_version(q.get("cuda_version", pynvml.nvmlSystemGetCudaDriverVersion))),
        "nvml_version": _json(q.get("nvml_version", pynvml.nvmlSystemGetNVMLVersion)),
        "gpus": [],
    }
    for index in range(count):
        try:
            doc["gpus"].append(_gpu(q, index))
        except pynvml.NVMLError as exc:  # the handle itself (a GPU fallen off the bus: GPU is lost)
            q.errors[f"gpu{index}"] = str(exc)
    doc["errors"] = q.errors
    return doc
