"""Package listings (pip freeze, collect_env, dpkg -l) read from real pastes, exact values."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def _facts(name: str) -> dict:
    return parsers.run("packages", load(f"packages/{name}"))


def test_pip_freeze_grep_of_two_nodes_gives_each_ones_nccl_wheels() -> None:
    assert _facts("nccl1267-pip-freeze-grep-nccl-problem-node.txt")["packages.nccl"] == {
        "nvidia-nccl-cu11": "2.14.3", "nvidia-nccl-cu12": "2.20.5"}
    assert _facts("nccl1267-pip-freeze-grep-nccl-other-nodes.txt")["packages.nccl"] == {
        "nvidia-nccl-cu11": "2.14.3", "nvidia-nccl-cu12": "2.19.3"}


def test_collect_env_lines_and_versions_a_ticket_made_links_of() -> None:
    f = _facts("vllm4211-collect-env-relevant-libraries.txt")
    assert f["packages.torch_version"] == "2.2.1"
    assert f["packages.nccl"] == {"nvidia-nccl-cu12": "2.19.3", "vllm-nccl": "0.1", "vllm-nccl-cu11": "2.18.1.0.3.0",
                                  "vllm-nccl-cu12": "2.18.1.0.3.0"}
    g = _facts("vllm13200-collect-env-markdown-linked-versions.txt")
    assert g["packages.versions"]["nvidia-cublas-cu12"] == "12.4.5.8"  # "[12.4.5.8](http://12.4.5.8/)"
    assert g["packages.versions"]["nvidia-cudnn-cu12"] == "9.1.0.70"
    assert g["packages.versions"]["transformers-stream-generator"] == "0.0.5"
    assert g["packages.nccl"] == {"nvidia-nccl-cu12": "2.21.5"}
    assert g["packages.torch_version"] == "2.5.1+cu124"
    assert len(g["packages.versions"]) == 25  # the [conda] lines repeat [pip3] ones: the first kept


def test_dpkg_rows_name_the_system_nccl_not_lookalike_packages() -> None:
    f = _facts("llmc742-dpkg-l-grep-libnccl.txt")
    assert f["packages.nccl"] == {"libnccl2": "2.22.3-1+cuda12.2"}  # not libvncclient1, not the local repo package
    assert f["packages.versions"]["libvncclient1"] == "0.9.13+dfsg-3build2"


@pytest.mark.parametrize("text", ["", "hello world\nthis is prose\n", "NCCL_IB_HCA=mlx5_0\nNCCL_DEBUG=INFO\n"])
def test_what_is_not_a_listing_says_so(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run("packages", text)
    assert parsers.get("packages").detect(text) < parsers.DETECT_MIN


def test_ofed_info_s_names_the_rdma_stack() -> None:
    # the transcript's first block, as the intake routes it by its command line (ofed_info -s)
    text = load("transcripts/horovod288-ofed-info-s-then-ibv-devinfo-enosys-in-container.txt")
    block = text.split("\n", 1)[1].split("root@")[0]
    assert parsers.run("packages", block) == {"packages.ofed": "MLNX_OFED_LINUX-4.3-1.0.1.0"}
    assert parsers.detect(block) == "packages"


def test_rpm_qa_rows_split_as_rpm_names_them() -> None:
    text = load("transcripts/nccl554-rpm-qa-nccl-cuda113-then-rpm-e.txt")
    block = text.split("\n", 1)[1].split("\n\n")[0]
    assert parsers.detect(block) == "packages"
    assert parsers.run("packages", block)["packages.nccl"] == {
        "libnccl": "2.9.9-1+cuda11.3", "libnccl-static": "2.9.9-1+cuda11.3", "libnccl-devel": "2.9.9-1+cuda11.3"}
