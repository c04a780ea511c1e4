"""loader: ld.so's 'error while loading shared libraries' and Python's 'cannot open shared object file', real outputs."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_ucx_info_without_gdrcopy_on_the_path():
    f = parsers.run("loader", load("loader/ucx3198-ucx-info-libgdrapi-not-found.txt"))
    assert f == {"loader.missing_libs": ["libgdrapi.so.1"], "loader.programs": ["ucx_info"],
                 "loader.gpu_stack_missing": ["libgdrapi.so.1"]}


def test_a_program_in_a_transcript_without_nccl_on_the_path():
    f = parsers.run("loader", load("loader/caffe-nccl-so1-not-on-loader-path.txt"))
    assert (f["loader.missing_libs"], f["loader.programs"]) == (["libnccl.so.1"], ["caffe.bin"])
    assert f["loader.gpu_stack_missing"] == ["libnccl.so.1"]


def test_the_drivers_own_libraries_are_not_the_stacks():
    f = parsers.run("loader", "python: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory\n")
    assert f["loader.gpu_stack_missing"] == []
    with pytest.raises(parsers.ParseError):
        parsers.run("loader", "all fine here\n")


def test_tensorflows_own_loader_not_finding_cupti():
    f = parsers.run("loader", load("loader/jaxdocs-tf-dso-loader-libcupti-not-found.txt"))
    assert f == {"loader.missing_libs": ["libcupti.so.10.1"], "loader.programs": [],
                 "loader.gpu_stack_missing": ["libcupti.so.10.1"]}


@pytest.mark.parametrize("rel, libs", [
    ("loader/alcf-polaris-prgenv-gnu-ld-libcudart-needed-by-gtl-not-found.txt", ["libcudart.so.11.0"]),
    ("loader/sniper129-ld-warning-libcudart-8-needed-by-opencv-not-found.txt", ["libcudart.so.8.0"]),
    ("loader/pytorch13175-ld-cannot-find-lcudart-lnvrtc.txt", ["libcudart.so", "libnvrtc.so"]),
    ("loader/torchlinearassignment2-conda-ld-cannot-find-lcudart.txt", ["libcudart.so"]),
])
def test_the_linker_not_finding_the_cuda_runtime_at_build_time(rel, libs):
    text = load(rel)
    assert parsers.detect(text) == "loader"
    f = parsers.run("loader", text)
    assert f == {"loader.missing_libs": libs, "loader.programs": [], "loader.gpu_stack_missing": libs,
                 "loader.link_time_missing": libs}


def test_a_linker_line_about_another_library_is_no_gpu_stack_one():
    f = parsers.run("loader", "/usr/bin/ld: cannot find -lz: No such file or directory\n")
    assert f["loader.link_time_missing"] == ["libz.so"] and f["loader.gpu_stack_missing"] == []
