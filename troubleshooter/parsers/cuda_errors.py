"""CUDA runtime / driver error messages in any application or validator log (PyTorch, CUDA samples, gpu-burn,
JAX, a test framework's log), and NCCL's own error lines when the log has no ``NCCL INFO``/``WARN`` structure.

Real sample (CUDA samples' bandwidthTest on an NVSwitch node, from pytorch/pytorch issue #35710)::

    [CUDA Bandwidth Test] - Starting...
    Running on...

    cudaGetDeviceProperties returned 802
    -> system not yet initialized
    CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) "cudaSetDevice(currentDevice)"

What it means here: the error says why no GPU work runs at all, or why a job falls back to fewer GPUs.
``system not yet initialized`` (802, ``cudaErrorSystemNotReady``) on an NVSwitch system (HGX/DGX A100, H100,
H200, B200) means the fabric manager is not running (or not at the driver's version): CUDA refuses to start
until the NVLink fabric is set up. ``forward compatibility was attempted on non supported HW`` (804) is a CUDA
forward-compatibility package (a container's ``cuda-compat``) on a GPU or driver that does not support it;
``CUDA driver version is insufficient for CUDA runtime version`` (35) is a runtime newer than the driver;
``no CUDA-capable device is detected`` (100) is no device visible from this context. Names follow the CUDA
runtime API's ``cudaError_t`` (the driver API's ``CUDA_ERROR_*`` names are mapped to them); the number is
taken from the message (``code=802``, ``Error 804:``, ``returned 35``, ``(code 3, ...)``) or from the name.

>>> f = parse("RuntimeError: CUDA error: no CUDA-capable device is detected")
>>> f["cuda.error_codes"], f["cuda.error_numbers"], f["cuda.system_not_ready"]
(['cudaErrorNoDevice'], [100], False)
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, clip, parser, require_text
from troubleshooter.parsers._nccl_facts import VERSION

MAX_MESSAGES = 20
MAX_TEXT = 500

FACTS = [
    ("cuda.errors", "list", "", f"distinct CUDA error lines (at most {MAX_MESSAGES}, each clipped to {MAX_TEXT} characters)"),
    ("cuda.error_codes", "list", "", "sorted distinct cudaError_t names named or implied by the messages (cudaErrorSystemNotReady, cudaErrorNoDevice, ...)"),
    ("cuda.error_numbers", "list", "", "sorted distinct CUDA error numbers (802, 804, 35, 100, 3, ...) printed or implied by the names"),
    ("cuda.no_driver", "bool", "", "the process found no NVIDIA driver at all (PyTorch's 'Found no NVIDIA driver on your "
     "system': CUDA's insufficient-driver error with no driver version, i.e. no libcuda where it ran); absent when the "
     "text does not say"),
    ("cuda.system_not_ready", "bool", "", "'system not yet initialized' (802): on an NVSwitch system the fabric manager is not running"),
    ("cuda.nvls_failed", "bool", "", "NCCL's NVLink SHARP (NVLS) multicast set-up failed ('Failed to bind NVLink SHARP (NVLS) "
     "Multicast memory of size N: CUDA error 401 ...'); absent when the text does not say"),
    ("cuda.kernel_dso_mismatch", "dict", "", "TensorFlow's/XLA's CUDA diagnostics: the loaded kernel module's version and "
     "libcuda's differ ('kernel version 515.48.7 does not match DSO version 510.73.5 -- cannot find working devices'): "
     "{kernel, dso}"),
    ("cuda.arch_mismatch", "string", "", "a runtime's own report that the program carries no code for this GPU's "
     "architecture: Kokkos' 'running kernels compiled for compute capability X on device with compute capability Y', "
     "HIP's 'hipErrorNoBinaryForGpu: Unable to find code object for all current devices', PyTorch's 'NVIDIA GeForce RTX "
     "5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation'; the line as printed"),
    ("cuda.profiling_restricted", "bool", "", "the driver refused the GPU's performance counters to a user who is not "
     "an administrator ('CUPTI_ERROR_INSUFFICIENT_PRIVILEGES', Nsight's 'ERR_NVGPUCTRPERM'): profiling a slow job fails"),
    ("nccl.errors", "list", "", "error lines: completion errors, unhandled system/cuda errors, internal errors, remote errors"),
    ("nccl.version", "string", "", "NCCL version a framework's NCCL error names ('..., NCCL version 2.21.5')"),
]

# cudaError_t name -> (number, the runtime's message), per the CUDA runtime API documentation.
RUNTIME_ERRORS: dict[str, tuple[int, str]] = {
    "cudaErrorInvalidValue": (1, "invalid argument"),
    "cudaErrorMemoryAllocation": (2, "out of memory"),
    "cudaErrorInitializationError": (3, "initialization error"),
    "cudaErrorStubLibrary": (34, "CUDA driver is a stub library"),
    "cudaErrorInsufficientDriver": (35, "CUDA driver version is insufficient for CUDA runtime version"),
    "cudaErrorDevicesUnavailable": (46, "all CUDA-capable devices are busy or unavailable"),
    "cudaErrorNoDevice": (100, "no CUDA-capable device is detected"),
    "cudaErrorInvalidDevice": (101, "invalid device ordinal"),
    "cudaErrorNoKernelImageForDevice": (209, "no kernel image is available for execution on the device"),
    "cudaErrorECCUncorrectable": (214, "uncorrectable ECC error encountered"),
    "cudaErrorPeerAccessUnsupported": (217, "peer access is not supported between these two devices"),
    "cudaErrorNvlinkUncorrectable": (220, "uncorrectable NVLink error detected during the execution"),
    "cudaErrorOperatingSystem": (304, "OS call failed or operation not supported on this OS"),
    "cudaErrorIllegalState": (401, "the operation cannot be performed in the present state"),
    "cudaErrorIllegalAddress": (700, "an illegal memory access was encountered"),
    "cudaErrorLaunchTimeout": (702, "the launch timed out and was terminated"),
    "cudaErrorAssert": (710, "device-side assert triggered"),
    "cudaErrorTooManyPeers": (711, "peer mapping resources exhausted"),
    "cudaErrorLaunchFailure": (719, "unspecified launch failure"),
    "cudaErrorNotSupported": (801, "operation not supported"),
    "cudaErrorSystemNotReady": (802, "system not yet initialized"),
    "cudaErrorSystemDriverMismatch": (803, "system has unsupported display driver / cuda driver combination"),
    "cudaErrorCompatNotSupportedOnDevice": (804, "forward compatibility was attempted on non supported HW"),
    "cudaErrorUnknown": (999, "unknown error"),
}
_BY_NUMBER = {num: name for name, (num, _) in RUNTIME_ERRORS.items()}
# Driver API names (CUresult) -> the runtime name of the same condition.
DRIVER_NAMES = {
    "CUDA_ERROR_INVALID_VALUE": "cudaErrorInvalidValue",
    "CUDA_ERROR_OUT_OF_MEMORY": "cudaErrorMemoryAllocation",
    "CUDA_ERROR_NOT_INITIALIZED": "cudaErrorInitializationError",
    "CUDA_ERROR_STUB_LIBRARY": "cudaErrorStubLibrary",
    "CUDA_ERROR_NO_DEVICE": "cudaErrorNoDevice",
    "CUDA_ERROR_INVALID_DEVICE": "cudaErrorInvalidDevice",
    "CUDA_ERROR_DEVICE_UNAVAILABLE": "cudaErrorDevicesUnavailable",
    "CUDA_ERROR_NO_BINARY_FOR_GPU": "cudaErrorNoKernelImageForDevice",
    "CUDA_ERROR_ECC_UNCORRECTABLE": "cudaErrorECCUncorrectable",
    "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED": "cudaErrorPeerAccessUnsupported",
    "CUDA_ERROR_NVLINK_UNCORRECTABLE": "cudaErrorNvlinkUncorrectable",
    "CUDA_ERROR_OPERATING_SYSTEM": "cudaErrorOperatingSystem",
    "CUDA_ERROR_ILLEGAL_STATE": "cudaErrorIllegalState",
    "CUDA_ERROR_ILLEGAL_ADDRESS": "cudaErrorIllegalAddress",
    "CUDA_ERROR_LAUNCH_TIMEOUT": "cudaErrorLaunchTimeout",
    "CUDA_ERROR_ASSERT": "cudaErrorAssert",
    "CUDA_ERROR_TOO_MANY_PEERS": "cudaErrorTooManyPeers",
    "CUDA_ERROR_LAUNCH_FAILED": "cudaErrorLaunchFailure",
    "CUDA_ERROR_NOT_SUPPORTED": "cudaErrorNotSupported",
    "CUDA_ERROR_SYSTEM_NOT_READY": "cudaErrorSystemNotReady",
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": "cudaErrorSystemDriverMismatch",
    "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE": "cudaErrorCompatNotSupportedOnDevice",
    "CUDA_ERROR_UNKNOWN": "cudaErrorUnknown",
}
# Messages distinctive enough to name their error wherever they appear (the generic ones, "out of memory",
# "initialization error", "unknown error", "operation not supported", count only next to a CUDA marker).
_DISTINCT = [name for name, (_, msg) in RUNTIME_ERRORS.items()
             if name not in ("cudaErrorInvalidValue", "cudaErrorMemoryAllocation", "cudaErrorInitializationError",
                             "cudaErrorUnknown", "cudaErrorNotSupported")]
# the runtime's other wordings of a message (cudaGetErrorString since CUDA 11: "CUDA-capable device(s) is/are busy or
# unavailable" for 46, as the CUDA samples print it)
_OTHER_WORDINGS = {"cudaErrorDevicesUnavailable": ("cuda-capable device(s) is/are busy or unavailable",)}
_MESSAGE_LOW = {name: (RUNTIME_ERRORS[name][1].lower(),) + _OTHER_WORDINGS.get(name, ()) for name in RUNTIME_ERRORS}
# Every error line holds one of these (lower case): lines without any are skipped before the expressions run.
_KEYS = ("cuda", "cuinit", "nccl", "error", "not yet initialized", "forward compatibility", "os call failed",
         "illegal memory access", "launch failure", "device-side assert", "launch timed out", "invalid device",
         "peer access", "peer mapping", "busy or unavailable", "stub library", "no kernel image", "display driver", "no nvidia driver",
         "assertion", "cupti_error_insufficient", "gpuctrperm", "performance counters", "dso version",
         "compute capability", "code object")
# a kernel's own assertion, which CUDA then reports as a device-side assert (cudaErrorAssert): PyTorch's ATen kernels
# print "../aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [316,0,0], thread: [62,0,0]
# Assertion `srcIndex < srcSelectDimSize` failed." (an index out of range in the application's data, not the GPU)
_KERNEL_ASSERT = re.compile(r"\.cuh?:\d+: [^:\n]{1,200}: block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion .{1,300} failed\.")
# PyTorch's words for cudaErrorInsufficientDriver when the driver version is 0 (no libcuda): no driver at all, not an
# old one (c10/cuda/CUDAFunctions.cpp), so it names no error code
_NO_DRIVER = re.compile(r"Found no NVIDIA driver on your system")
# the driver refusing the GPU's performance counters to a user that is not an administrator (CUPTI, Nsight): the
# nvidia module's RmProfilingAdminOnly / NVreg_RestrictProfilingToAdminUsers, on by default since driver 418.43
_PROFILING = re.compile(r"CUPTI_ERROR_INSUFFICIENT_PRIVILEGES|ERR_NVGPUCTRPERM|does not have permission to access "
                        r"NVIDIA GPU Performance Counters")

_RUNTIME_NAME = re.compile(r"\b(cudaError[A-Z][A-Za-z0-9]+)")
_DRIVER_NAME = re.compile(r"\b(?:CUDA_)?(ERROR_[A-Z][A-Z_]+)\b")
_CUDA_MARKER = re.compile(r"CUDA (?:error|failure|Error)|cuda runtime error|\bcudaError[A-Z]|\bCUDA_ERROR_|"
                          r"\bcu[A-Z]\w* (?:returned|failed)|\bcuda[A-Z]\w* (?:returned|failed)|"
                          r"CUDA initialization|Unexpected error from cudaGetDeviceCount|Couldn't init CUDA|"
                          r"failed to initialize CUDA|"
                          # Ollama's discovery (discover/gpu_info_cudart.c, gpu_info_nvcuda.c): 'cudart init failure:
                          # 802', 'cuda driver library init failure: 999', 'cudaSetDevice err: 802', 'cuInit err: 3'
                          r"\bcud(?:art|a driver library) init failure: \d|\bcu(?:da)?[A-Z]\w* err: \d", re.IGNORECASE)
_NUMBERS = [
    re.compile(r"\bcode=(\d+)\b"),
    re.compile(r"\bError (\d+):"),
    re.compile(r"\breturned (\d+)\b"),
    re.compile(r"cuda runtime error \((\d+)\)", re.IGNORECASE),
    re.compile(r"CUDA failure (\d+)\b", re.IGNORECASE),
    re.compile(r"CUDA error:? (\d+)\b", re.IGNORECASE),
    re.compile(r"\(code (\d+),"),
    re.compile(r"\binit failure: (\d+)\b"),
    re.compile(r"\bcu(?:da)?[A-Z]\w* err: (\d+)\b"),
]
_NCCL_ERROR = re.compile(r"NCCL error(?: in)?:|\bncclUnhandledCudaError\b|\bncclSystemError\b|\bncclInternalError\b|"
                         r"\bncclRemoteError\b|\bncclInvalidUsage\b|unhandled (?:cuda|system) error|"
                         r"while creating shared memory segment|failed to extend /dev/shm|"
                         # Horovod's own words around ncclGetErrorString: "ncclAllReduce failed: invalid data type"
                         r"\bnccl(?:AllReduce|AllGather|Broadcast|ReduceScatter|Reduce|CommInitRank|CommInitAll|GroupEnd|"
                         r"Send|Recv|GetUniqueId) failed: ", re.IGNORECASE)
_NCCL_NUMBER = re.compile(r"NCCL Error \d+:", re.IGNORECASE)
# TensorFlow's stream_executor cuda_diagnostics (and XLA's, under JAX): libcuda of one driver release, kernel module of
# another ("E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:296] kernel version 352.63.0 does not match DSO
# version 361.93.2 -- cannot find working devices in this configuration")
# Kokkos checks the architecture its kernels were built for against the device's (Kokkos_Cuda_Instance.cpp); HIP's
# runtime finds no code object bundled for the device's target (ISA and xnack/sramecc features); PyTorch compares the
# device's capability with its build's list when CUDA starts (torch/cuda/__init__.py, a UserWarning: "NVIDIA GeForce
# RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.")
_ARCH = re.compile(r"Kokkos::Cuda::initialize ERROR: running kernels compiled for compute capability \S+.{0,40}? on device "
                   r"with compute capability \S+|hipErrorNoBinaryForGpu: Unable to find code object for all current devices|"
                   r"[^:\s][^:]{0,80}? with CUDA capability sm_\d+\w? is not compatible with the current PyTorch installation")


def _arch(line: str) -> re.Match | None:
    """_ARCH's match, tried only on a line holding one of its literals: its last form tries up to 80 characters from
    every position (a 1 MB line of digits cost ~0.7 CPU-s)."""
    return _ARCH.search(line) if "capability" in line or "hipErrorNoBinaryForGpu" in line else None


_DSO_MISMATCH = re.compile(r"kernel version (\d+(?:\.\d+)+) does not match DSO version (\d+(?:\.\d+)+)")
_NCCL_STRUCTURE = re.compile(r"NCCL (?:INFO|WARN)\b")


def _line_kind(line: str) -> str | None:
    """'cuda' for a CUDA error line, 'nccl' for an NCCL error line, else None."""
    low = line.lower()
    if not any(k in low for k in _KEYS):
        return None
    if _NCCL_ERROR.search(line):
        return "nccl"
    if _KERNEL_ASSERT.search(line) or _PROFILING.search(line) or _DSO_MISMATCH.search(line) or _arch(line):
        return "cuda"
    if _RUNTIME_NAME.search(line) or "CUDA_ERROR_" in line:
        return "cuda"
    if any(msg in low for name in _DISTINCT for msg in _MESSAGE_LOW[name]):
        return "cuda"
    if _CUDA_MARKER.search(line) or _NO_DRIVER.search(line):
        return "cuda"
    return None


def _detect(text: str) -> float:
    head = text[:262144]
    found = any(_line_kind(line) for line in head.split("\n", 5000)[:5000])
    if not found:
        return 0.0
    if _NCCL_STRUCTURE.search(head):
        return 0.3  # an NCCL_DEBUG log: the nccl-debug parser reads its WARN lines
    return 0.6


# NCCL's own words when NVLS multicast cannot be set up (transport/nvls.cc, 2.2x)
_NVLS = re.compile(r"Failed to (?:bind|create|map|allocate) NVLink SHARP|NVLS\) Multicast", re.IGNORECASE)


def _clip(s: str) -> str:
    return clip(s, MAX_TEXT)


def _codes(line: str) -> tuple[set[str], set[int]]:
    names: set[str] = set()
    numbers: set[int] = set()
    for m in _RUNTIME_NAME.finditer(line):
        if m.group(1) in RUNTIME_ERRORS:
            names.add(m.group(1))
    for m in _DRIVER_NAME.finditer(line):
        name = DRIVER_NAMES.get("CUDA_" + m.group(1))
        if name:
            names.add(name)
    generic_ok = bool(_CUDA_MARKER.search(line))
    low = line.lower()
    for name, msgs in _MESSAGE_LOW.items():
        if (name in _DISTINCT or generic_ok) and any(msg in low for msg in msgs):
            names.add(name)
    if _KERNEL_ASSERT.search(line):
        names.add("cudaErrorAssert")
    if "cudaErrorOperatingSystem" in names:
        names.discard("cudaErrorNotSupported")  # "OS call failed or operation not supported on this OS"
    for rx in _NUMBERS:
        for m in rx.finditer(line):
            n = int(m.group(1))
            if n in _BY_NUMBER:
                numbers.add(n)
    for name in names:
        numbers.add(RUNTIME_ERRORS[name][0])
    for n in numbers:
        names.add(_BY_NUMBER[n])
    return names, numbers


# NCCL's CUDACHECK / CUCHECK warnings: "Cuda failure 'msg'" (older), "Cuda failure 35 'msg'", "Cuda failure
# 'msg' (35)"; also "CUDA error N 'msg'" in NVLS set-up failures. The message is cudaGetErrorString's (or
# cuGetErrorString's, which reads the same for these errors).
_NCCL_CUDA = re.compile(r"Cuda failure|CUDA error \d+|cudaError[A-Z]|CUDA_ERROR_", re.IGNORECASE)


def codes_in_nccl_lines(lines: list[str]) -> dict[str, list]:
    """The CUDA errors NCCL's own WARN and error lines name (the nccl-debug kind reads them through this, so an
    NCCL log counts for every cause that reads ``cuda.error_codes`` as a framework's traceback does)."""
    names: set[str] = set()
    numbers: set[int] = set()
    for line in lines:
        if _NCCL_CUDA.search(line):
            n, c = _codes(_NCCL_NUMBER.sub("", line))
            names |= n
            numbers |= c
    return {"cuda.error_codes": sorted(names), "cuda.error_numbers": sorted(numbers)} if names else {}


@parser(
    "cuda-errors",
    detect=_detect,
    summary="CUDA runtime/driver error messages in any log (system not yet initialized, driver insufficient, no device, ...)",
    facts=FACTS,
    command="the failing program's output (e.g. python -c 'import torch; torch.cuda.init()' or CUDA samples' deviceQuery)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a log with CUDA error messages")
    cuda_lines: list[str] = []
    nccl_lines: list[str] = []
    names: set[str] = set()
    numbers: set[int] = set()
    last_error = False
    for raw in text.split("\n"):
        # NCCL (2.12+) puts the failing call on the line after "Last error:" (shared memory, a socket, ...)
        kind = _line_kind(raw) or ("nccl" if last_error and raw.strip() else None)
        last_error = raw.strip().lower().endswith("last error:") or (last_error and not raw.strip())
        if kind is None:
            continue
        msg = _clip(raw.strip().removeprefix("->").strip())
        # only on error lines: _line_kind filtered the rest; "NCCL Error 2:" is NCCL's number (ncclSystemError),
        # not CUDA's error 2 (out of memory)
        n, c = _codes(_NCCL_NUMBER.sub("", raw) if kind == "nccl" else raw)
        names |= n
        numbers |= c
        target = nccl_lines if kind == "nccl" else cuda_lines
        if msg and msg not in target and len(target) < MAX_MESSAGES:
            target.append(msg)
    if not cuda_lines and not nccl_lines:
        raise ParseError("no CUDA error message (cudaError..., CUDA_ERROR_..., 'CUDA error', 'system not yet initialized', ...) found")
    facts: dict[str, Any] = {
        "cuda.errors": cuda_lines,
        "cuda.error_codes": sorted(names),
        "cuda.error_numbers": sorted(numbers),
        "cuda.system_not_ready": "cudaErrorSystemNotReady" in names,
    }
    if _NVLS.search(text):
        facts["cuda.nvls_failed"] = True
    if any(_NO_DRIVER.search(line) for line in cuda_lines):
        facts["cuda.no_driver"] = True
    if any(_PROFILING.search(line) for line in cuda_lines):
        facts["cuda.profiling_restricted"] = True
    arch = next((m for m in map(_arch, cuda_lines) if m), None)
    if arch:
        facts["cuda.arch_mismatch"] = arch.group(0)
    dso = next((m for m in map(_DSO_MISMATCH.search, cuda_lines) if m), None)
    if dso:
        facts["cuda.kernel_dso_mismatch"] = {"kernel": dso.group(1), "dso": dso.group(2)}
    if nccl_lines:
        facts["nccl.errors"] = nccl_lines
        for line in nccl_lines:  # PyTorch's "NCCL error in: ..., NCCL version 2.21.5"
            v = VERSION.search(line)
            if v:
                facts["nccl.version"] = v.group(1)
                break
    return facts
