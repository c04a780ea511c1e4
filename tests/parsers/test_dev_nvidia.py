"""ls /dev/nvidia*, read from real listings with exact values."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


@pytest.mark.parametrize("name, facts", [
    ("docker-test-runtime-nvidia-cpu-image-glob-not-found.txt",
     {"gpu.dev_nodes": [], "gpu.dev_node_count": 0, "gpu.dev_control_nodes": []}),
    ("docker-test-runtime-nvidia-gpu-image-short-listing.txt",
     {"gpu.dev_nodes": [0], "gpu.dev_node_count": 1, "gpu.dev_control_nodes": ["nvidia-uvm", "nvidia-uvm-tools", "nvidiactl"]}),
    # the glob expanded where kubectl ran; in the pod every named node is missing
    ("k8s-pod-without-gpu-request-ls-la-cannot-access.txt",
     {"gpu.dev_nodes": [], "gpu.dev_node_count": 0, "gpu.dev_control_nodes": [], "gpu.dev_nodes_missing": [0]}),
    # `ls -l /dev | grep nvidia`: the names without their directory
    ("singularity1441-ls-dev-grep-nvidia-bare-names-no-uvm.txt",
     {"gpu.dev_nodes": [0, 1], "gpu.dev_node_count": 2, "gpu.dev_control_nodes": ["nvidiactl"]}),
    # the nvidia-caps directory's own listing (nvidia-cap1 ...) is not a node of /dev
    ("linux-box-ls-l-eight-gpus-and-nvidia-caps.txt",
     {"gpu.dev_nodes": list(range(8)), "gpu.dev_node_count": 8,
      "gpu.dev_control_nodes": ["nvidia-modeset", "nvidia-uvm", "nvidia-uvm-tools", "nvidiactl"]}),
])
def test_listings(name: str, facts: dict) -> None:
    text = load(f"dev-nvidia/{name}")
    assert parsers.detect(text) == "dev-nvidia"
    assert parsers.run("dev-nvidia", text) == facts


def test_a_container_given_one_gpu_by_its_host_index() -> None:
    # the 8-GPU listing with all GPU nodes but nvidia2 gone, as `ls -l /dev/nvidia{0..7}` prints it in a container
    # given the host's GPU 2 alone (NVIDIA/pyxis#47's shape)
    real = load("dev-nvidia/linux-box-ls-l-eight-gpus-and-nvidia-caps.txt").split("\n")
    lines = [ln for ln in real if not any(ln.endswith(f"/dev/nvidia{i}") for i in (0, 1, 3, 4, 5, 6, 7))]
    lines += [f"/usr/bin/ls: cannot access '/dev/nvidia{i}': No such file or directory" for i in (0, 1, 3, 4, 5, 6, 7)]
    f = parsers.run("dev-nvidia", "\n".join(lines))
    assert (f["gpu.dev_nodes"], f["gpu.dev_nodes_missing"]) == ([2], [0, 1, 3, 4, 5, 6, 7])


@pytest.mark.parametrize("text", [
    "", "hello\n", "ls: cannot access '/tmp/x': No such file or directory\n",
    "I0101 nvc_mount.c:345] mounting /dev/nvidia0 at /var/lib/rootfs/dev/nvidia0\n",  # libnvidia-container's log
    "crw-rw-rw- 1 root root 1, 3 Dec  1 20:10 /dev/null\n",
])
def test_other_text_is_refused(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run("dev-nvidia", text)
    assert parsers.get("dev-nvidia").detect(text) < parsers.DETECT_MIN
