"""python-traceback parser: the exception a script died with, on a real capture (exact values)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_cuda_oom_traceback_pasted_after_prose_on_the_same_line():
    text = load("python-traceback/act-train-rtx4070-cuda-oom-after-prose.txt")
    assert parsers.detect(text) == "python-traceback"
    f = parsers.run("python-traceback", text)
    assert f["py.tracebacks"] == 1 and f["py.exception_types"] == ["torch.OutOfMemoryError"]
    assert f["py.exceptions"][0].startswith("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 324.00 MiB. "
                                            "GPU 0 has a total capacity of 7.63 GiB")
    assert f["py.last_frames"] == ["/home/arx/.local/lib/python3.10/site-packages/torch/nn/functional.py:5525 in "
                                   "multi_head_attention_forward"]


def test_rank_prefixed_tracebacks_of_the_same_error():
    f = parsers.run("python-traceback", "[rank0]: Traceback (most recent call last):\n"
                                        "[rank0]:   File \"/workspace/train.py\", line 88, in <module>\n"
                                        "[rank0]:     model = build_model(cfg)\n[rank0]: KeyError: 'num_layers'\n"
                                        "[rank1]: Traceback (most recent call last):\n"
                                        "[rank1]:   File \"/workspace/train.py\", line 88, in <module>\n[rank1]: KeyError: 'num_layers'\n")
    assert f == {"py.tracebacks": 2, "py.exceptions": ["KeyError: 'num_layers'"], "py.exception_types": ["KeyError"],
                 "py.last_frames": ["/workspace/train.py:88 in <module>"]}


def test_no_traceback_and_no_exception_line_is_not_a_traceback():
    with pytest.raises(ParseError):
        parsers.run("python-traceback", "  File \"train.py\", line 88, in <module>\nkeyerror: num_layers\n")


def test_dataloader_bus_error_names_shared_memory_even_in_interleaved_truncated_tracebacks():
    text = load("python-traceback/megatron878-dataloader-bus-error-shm-truncated.txt")
    assert parsers.detect(text) == "python-traceback"
    f = parsers.run("python-traceback", text)
    assert f["py.shm_errors"] == [
        "Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm)."]
    assert f["py.tracebacks"] == 3
    assert f["py.exceptions"] == []  # every traceback is cut before its exception line


def test_the_main_process_report_of_a_worker_killed_by_bus_error_without_a_traceback():
    line = ("RuntimeError: DataLoader worker (pid 4172) is killed by signal: Bus error. It is possible that dataloader's "
            "workers are out of shared memory. Please try to raise your shared memory limit.")
    f = parsers.run("python-traceback", line + "\n")
    assert f["py.shm_errors"] == [line[len("RuntimeError: "):]]
    assert f["py.tracebacks"] == 0


def test_pytorchs_out_of_memory_error_pasted_alone():
    text = load("python-traceback/iopenv-cuda-oom-line-alone.txt")
    assert parsers.detect(text) == "python-traceback"
    f = parsers.run("python-traceback", text)
    assert f["py.tracebacks"] == 0 and f["py.exception_types"] == ["RuntimeError"]
    assert f["py.exceptions"][0].startswith("RuntimeError: CUDA out of memory Tried to allocate 200.00 MiB (GPU 0;")


def test_an_import_refused_for_an_undefined_nccl_symbol_wrapped_after_its_colon():
    f = parsers.run("python-traceback", load("python-traceback/awsomeai-openvla-libtorch-cuda-undefined-nccl-symbol-wrapped.txt"))
    assert f["py.exceptions"] == ["ImportError: /usr/local/lib/python<py>/dist-packages/torch/lib/libtorch_cuda.so: "
                                  "undefined symbol: ncclDevCommDestroy"]
    assert f["py.undefined_symbols"] == ["ncclDevCommDestroy"]


@pytest.mark.parametrize("rel", [
    "python-traceback/triton6195-python-backend-shm-region-no-space.txt",
    "python-traceback/modelanalyzer749-triton-shm-region-no-space-in-backticks.txt",
    "python-traceback/triton5681-shm-pool-grow-failed-no-space.txt",
])
def test_tritons_python_backend_without_shared_memory(rel):
    text = load(rel)
    assert parsers.detect(text) == "python-traceback"
    f = parsers.run("python-traceback", text)
    assert len(f["py.shm_region_errors"]) == 1 and "triton_python_backend_shm_region_" in f["py.shm_region_errors"][0]
    assert f["py.shm_region_errors"][0].startswith(("Unable to initialize shared memory key", "Failed to increase"))


def test_an_exception_pasted_without_its_traceback_behind_a_host_prefix():
    text = load("python-traceback/alcfdocs-deepspeed-assertion-host-prefixed-alone.txt")
    assert parsers.detect(text) == "python-traceback"
    f = parsers.run("python-traceback", text)
    assert f["py.tracebacks"] == 0
    assert f["py.exceptions"] == ["AssertionError: Micro batch size per gpu: 0 has to be greater than 0"]
    assert f["py.exception_types"] == ["AssertionError"]


def test_an_exception_alone_whose_message_is_indented_below_it():
    f = parsers.run("python-traceback", load("python-traceback/vllmdocs-runtimeerror-bootstrapping-message-indented.txt"))
    assert f["py.exception_types"] == ["RuntimeError"]
    assert f["py.exceptions"][0].startswith("RuntimeError: An attempt has been made to start a new process before the "
                                            "current process has finished its bootstrapping phase.")


def test_a_bare_exception_is_a_fallback_that_yields_to_any_tools_kind():
    # a CUDA error in the line is read by the cuda kinds; a UCX log with an exception line in it is UCX's
    assert parsers.detect("RuntimeError: CUDA error: an illegal memory access was encountered\n") == "cuda-errors"
    assert parsers.detect(load("ucx/trtllm18373-nixl-agent-ucx-tls-tcp-cuda-support-not-found.txt")) == "ucx"
    assert parsers.fallback([(0.45, "python-traceback")]) == "python-traceback"
    assert parsers.fallback([(0.6, "ucx"), (0.45, "python-traceback")]) is None
