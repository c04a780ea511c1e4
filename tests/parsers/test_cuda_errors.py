"""cuda-errors parser: CUDA error messages, their cudaError_t names and numbers, fabric-manager-not-running."""

import pytest

from tests.corpus import files, load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def parse(text):
    return parsers.run("cuda-errors", text)


def test_pytorch_and_bandwidthtest_802_system_not_ready():
    f = parse(load("cuda-errors/pytorch-802-and-bandwidthtest-cudaErrorSystemNotReady.txt"))
    assert f["cuda.errors"] == [
        "RuntimeError: cuda runtime error (802) : system not yet initialized at "
        "/opt/conda/conda-bld/pytorch_1579022034529/work/aten/src/THC/THCGeneral.cpp:50",
        "cudaGetDeviceProperties returned 802",
        "system not yet initialized",
        'CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) "cudaSetDevice(currentDevice)"',
    ]
    assert f["cuda.error_codes"] == ["cudaErrorSystemNotReady"]
    assert f["cuda.error_numbers"] == [802]
    assert f["cuda.system_not_ready"] is True
    assert "nccl.errors" not in f


def test_peer_mapping_resources_exhausted_711():
    """NVIDIA/nccl#241: a peer-access test on a 10-GPU node whose X server held the peer mappings."""
    f = parse(load("cuda-errors/nccl241-enable-peer-access-peer-mapping-resources-exhausted.txt"))
    assert f["cuda.errors"] == ["CUDA failure test.cu:20 'peer mapping resources exhausted'"]
    assert f["cuda.error_codes"] == ["cudaErrorTooManyPeers"]
    assert f["cuda.error_numbers"] == [711]


def test_pytorch_found_no_nvidia_driver_is_no_driver_not_an_old_one():
    """NVIDIA/enroot#205: PyTorch's words when CUDA finds no driver version at all; no error code (an old driver,
    cudaErrorInsufficientDriver, is another cause)."""
    f = parse(load("cuda-errors/enroot205-torch-found-no-nvidia-driver-in-container.txt"))
    assert f["cuda.no_driver"] is True
    assert f["cuda.error_codes"] == [] and f["cuda.error_numbers"] == []
    assert "cuda.no_driver" not in parse(load("cuda-errors/nccl241-enable-peer-access-peer-mapping-resources-exhausted.txt"))


def test_gpu_burn_h100_not_ready_and_os_call_failed():
    f = parse(load("cuda-errors/gpu-burn-h100-hbm3-system-not-yet-initialized-os-call-failed.txt"))
    assert f["cuda.errors"] == ["what(): Error (gpu_burn-drv.cpp:298): system not yet initialized",
                                "what(): Error (gpu_burn-drv.cpp:298): OS call failed or operation not supported on this OS"]
    assert f["cuda.error_codes"] == ["cudaErrorOperatingSystem", "cudaErrorSystemNotReady"]
    assert f["cuda.error_numbers"] == [304, 802]
    assert f["cuda.system_not_ready"] is True


def test_torch_userwarning_in_a_timestamped_test_log():
    f = parse(load("cuda-errors/lisa-azure-nd96asr-v4-torch-userwarning-error-802-in-test-log.txt"))
    assert len(f["cuda.errors"]) == 1
    assert f["cuda.errors"][0].endswith("Error 802: system not yet initialized (Triggered internally at "
                                        "../c10/cuda/CUDAFunctions.cpp:112.)")
    assert f["cuda.error_codes"] == ["cudaErrorSystemNotReady"]
    assert f["cuda.system_not_ready"] is True


def test_804_forward_compatibility():
    f = parse(load("cuda-errors/torchpod-gtx1650-userwarning-error-804-forward-compatibility.txt"))
    assert f["cuda.error_codes"] == ["cudaErrorCompatNotSupportedOnDevice"]
    assert f["cuda.error_numbers"] == [804]
    assert f["cuda.system_not_ready"] is False
    assert f["cuda.errors"][0].startswith("/opt/conda/lib/python3.8/site-packages/torch/cuda/__init__.py:52: UserWarning")


def test_35_driver_insufficient_cutorch_and_devicequery():
    f = parse(load("cuda-errors/devicequery-returned-35-driver-insufficient-result-fail.txt"))
    assert f["cuda.errors"][1:] == ["cudaGetDeviceCount returned 35",
                                    "CUDA driver version is insufficient for CUDA runtime version"]
    assert f["cuda.error_codes"] == ["cudaErrorInsufficientDriver"]
    assert f["cuda.error_numbers"] == [35]


def test_100_no_device():
    f = parse(load("cuda-errors/cuda-samples-matrixmul-code-100-cudaErrorNoDevice.txt"))
    assert f["cuda.errors"] == ['CUDA error at ../../Common/helper_cuda.h:791 code=100(cudaErrorNoDevice) '
                                '"cudaGetDeviceCount(&device_count)"']
    assert f["cuda.error_codes"] == ["cudaErrorNoDevice"]
    assert f["cuda.error_numbers"] == [100]


def test_driver_api_name_maps_to_runtime_name():
    f = parse(load("cuda-errors/julia-cuda-initialization-error-code-3-not-initialized.txt"))
    # the stack trace's "cudaError_enum" is a type name, not an error line
    assert f["cuda.errors"] == ["ERROR: CUDA error: initialization error (code 3, ERROR_NOT_INITIALIZED)"]
    assert f["cuda.error_codes"] == ["cudaErrorInitializationError"]
    assert f["cuda.error_numbers"] == [3]


def test_nccl_error_lines_without_nccl_debug_structure():
    text = ("Traceback (most recent call last):\n"
            "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, "
            "unhandled cuda error, NCCL version 2.14.3\n"
            "ncclUnhandledCudaError: Call to CUDA function failed.\n")
    f = parse(text)
    assert f["nccl.errors"] == [
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled cuda error, "
        "NCCL version 2.14.3",
        "ncclUnhandledCudaError: Call to CUDA function failed.",
    ]
    assert f["cuda.errors"] == []
    assert parsers.detect(text) == "cuda-errors"


def test_detection_is_modest_and_yields_to_nccl_debug():
    line = "host:1:1 [0] NCCL INFO cudaDriverVersion 12020\nhost:1:1 [0] NCCL WARN Cuda failure 'system not yet initialized'\n"
    assert parsers.get("cuda-errors").detect(line) == 0.3
    assert parsers.get("cuda-errors").detect("CUDA error: no CUDA-capable device is detected") == 0.6
    assert parsers.detect(line) == "nccl-debug"


@pytest.mark.parametrize("text", ["", "Error: file not found\n", "everything is fine\nnvidia-smi ok\n"])
def test_empty_or_no_cuda_error(text):
    with pytest.raises(ParseError):
        parse(text)


@pytest.mark.parametrize("path", files("cuda-errors"), ids=lambda p: p.name)
def test_detected(path):
    assert parsers.detect(load(f"cuda-errors/{path.name}")) == "cuda-errors"


def test_real_nccl_error_lines_rank_prefixed_with_last_cuda_failure():
    f = parse(load("cuda-errors/torch-nccl-error-unhandled-cuda-error-cuda-failure-1-invalid-argument-rank-prefixed.txt"))
    assert f["nccl.errors"] == [
        "[rank7]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
        "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5",
        "[rank7]: ncclUnhandledCudaError: Call to CUDA function failed.",
    ]
    assert f["cuda.errors"] == ["[rank7]: Cuda failure 1 'invalid argument'"]
    assert f["cuda.error_codes"] == ["cudaErrorInvalidValue"]  # "invalid argument" counts next to "Cuda failure"
    assert f["cuda.error_numbers"] == [1]
    assert f["cuda.system_not_ready"] is False


def test_nccl_error_number_is_not_a_cuda_error_number():
    f = parsers.run("cuda-errors", load("cuda-errors/nccl-error-2-unhandled-system-error-dataparallel-rtx5090-notes.txt"))
    assert f["nccl.errors"] == ["RuntimeError: NCCL Error 2: unhandled system error"]
    assert f["cuda.error_codes"] == [] and f["cuda.error_numbers"] == []


def test_the_shared_memory_line_under_an_nccl_traceback_is_an_nccl_error():
    f = parsers.run("cuda-errors", load("torch-distributed/nccl-shm-segment-no-space-left-traceback-sglang9227-readme.txt"))
    assert f["nccl.errors"][2] == ("Error while creating shared memory segment /dev/shm/nccl-cjY8K5 (size 10617216), "
                                   "error: No space left on device (28)")
    assert len(f["nccl.errors"]) == 3


def test_nccls_nvls_multicast_bind_failure_with_cuda_401():
    f = parsers.run("cuda-errors", load("cuda-errors/ciinfra541-nccl-nvls-bind-multicast-cuda-401-present-state.txt"))
    assert f["cuda.errors"] == ["CUDA error 401 'the operation cannot be performed in the present state'."]
    assert f["cuda.error_codes"] == ["cudaErrorIllegalState"]
    assert f["cuda.error_numbers"] == [401]
    assert f["cuda.nvls_failed"] is True
    assert f["cuda.system_not_ready"] is False


def test_a_kernels_own_assertion_is_a_device_side_assert():
    f = parsers.run("cuda-errors", load("cuda-errors/litllama306-aten-index-assert-vocab-size.txt"))
    assert f["cuda.error_codes"] == ["cudaErrorAssert"] and f["cuda.error_numbers"] == [710]
    assert f["cuda.errors"][0].startswith("../aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex:")


def test_error_46_in_the_runtimes_newer_wording():
    # cudaGetErrorString since CUDA 11: "CUDA-capable device(s) is/are busy or unavailable" (the CUDA samples print it)
    f = parse(load("srun/cscs-gh200-vectoradd-srun-n5-over-4-exclusive-gpus.txt"))
    assert f["cuda.error_codes"] == ["cudaErrorDevicesUnavailable"] and f["cuda.error_numbers"] == [46]
    assert f["cuda.errors"] == ["Failed to allocate device vector A (error code CUDA-capable device(s) is/are busy "
                                "or unavailable)!"]


def test_error_209_no_kernel_image_for_the_device():
    f = parse(load("cuda-errors/deepspeed-docs-no-kernel-image-for-device.txt"))
    assert f["cuda.error_codes"] == ["cudaErrorNoKernelImageForDevice"] and f["cuda.error_numbers"] == [209]


def test_cupti_refused_the_performance_counters():
    f = parse(load("cuda-errors/jaxdocs-cupti-insufficient-privileges.txt"))
    assert f["cuda.profiling_restricted"] is True and f["cuda.error_codes"] == []
    assert len(f["cuda.errors"]) == 1 and f["cuda.errors"][0].endswith("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES")


def test_tensorflows_kernel_and_dso_versions_that_differ():
    f = parsers.run("cuda-errors", load("cuda-errors/tf4768-cuda-diagnostics-kernel-352-dso-361.txt"))
    assert f["cuda.kernel_dso_mismatch"] == {"kernel": "352.63.0", "dso": "361.93.2"}
    assert f["cuda.error_codes"] == ["cudaErrorInvalidValue"]
    one = load("cuda-errors/jax11477-xla-kernel-515-dso-510-one-line.txt")
    assert parsers.detect(one) == "cuda-errors"
    assert parsers.run("cuda-errors", one)["cuda.kernel_dso_mismatch"] == {"kernel": "515.48.7", "dso": "510.73.5"}
    # the diagnostics' other lines (versions that agree) are no mismatch
    with pytest.raises(ParseError):
        parsers.run("cuda-errors", "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:189] kernel reported version is: 352.63.0\n")


def test_a_runtime_saying_the_program_has_no_code_for_the_gpu():
    kokkos = parsers.run("cuda-errors", load("cuda-errors/kokkos1944-cuda-initialize-compiled-for-cc-0-0-device-5-0.txt"))
    assert kokkos["cuda.arch_mismatch"] == ("Kokkos::Cuda::initialize ERROR: running kernels compiled for compute "
                                            "capability 0.0 (< 5.0) on device with compute capability 5.0")
    hip = load("cuda-errors/easydiffusion1477-hip-no-binary-for-gpu-rtx3050-laptop.txt")
    assert parsers.detect(hip) == "cuda-errors"
    assert parsers.run("cuda-errors", hip)["cuda.arch_mismatch"] == (
        "hipErrorNoBinaryForGpu: Unable to find code object for all current devices")
    # PyTorch's own warning, in a journal: the GPU's name and capability, not the journal's prefix
    torch = parsers.run("cuda-errors", load("cuda-errors/sdwebuinix9-journal-torch-sm120-not-compatible-no-kernel-image.txt"))
    assert torch["cuda.arch_mismatch"] == ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with "
                                           "the current PyTorch installation")
    assert torch["cuda.error_numbers"] == [209]


def test_ollamas_discovery_log_gives_the_cuda_error_number():
    # Ollama's own wordings (discover/gpu_info_*.c): 'cuda driver library init failure: N', 'cudart init failure: N',
    # 'cudaSetDevice err: N'; a logfmt line is a program's log, not an environment listing
    from troubleshooter import parsers as p

    for rel, number in (("cuda-errors/ollama-ragdemo-logfmt-cuda-driver-library-init-failure-999.txt", 999),
                        ("cuda-errors/ollama-jpnotes-one-logfmt-line-init-failure-999.txt", 999),
                        ("cuda-errors/ollama9031-h200-cudart-init-failure-802-cpu-fallback.txt", 802)):
        text = load(rel)
        assert p.detect(text) == "cuda-errors", rel
        facts = p.run("cuda-errors", text)
        assert facts["cuda.error_numbers"] == [number], rel
        assert facts["cuda.system_not_ready"] is (number == 802)
        assert p.get("env").detect(text) < p.DETECT_MIN


@pytest.mark.parametrize("rel, errors", [
    ("cuda-errors/horovoddocs-ncclallreduce-failed-invalid-data-type.txt",
     ["UnknownError (see above for traceback): ncclAllReduce failed: invalid data type"]),
    ("cuda-errors/horovod907-tf2-rank-prefixed-ncclallreduce-invalid-data-type.txt",
     ["(0) Unknown: ncclAllReduce failed: invalid data type", "(1) Unknown: ncclAllReduce failed: invalid data type"]),
])
def test_horovods_nccl_call_failed_lines_are_nccl_errors(rel, errors):
    from troubleshooter.diagnosis import intake
    text = intake.clean(load(rel))  # the rank prefixes go, as the intake takes them off
    assert parsers.detect(text) == "cuda-errors"
    assert parse(text)["nccl.errors"] == errors
