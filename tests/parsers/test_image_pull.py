"""image-pull: the registry's refusals as docker, podman/buildah, BuildKit and containerd word them (real captures)."""

import pytest

from tests.corpus import DATA, load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


@pytest.mark.parametrize("name,refs", [
    ("nvdocker1735-docker-run-removed-tag-manifest-unknown.txt", ["nvidia/cuda:11.0-base-ubuntu20.04"]),
    ("kaixhin39-nvidia-docker-run-old-daemon-manifest-not-found.txt", ["kaixhin/cuda-torch:latest"]),  # 2018 wording
    ("nvdocker1768-podman-build-reading-manifest-unknown.txt", ["docker.io/nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04"]),
    ("k8sdocs648-kubelet-events-failed-to-resolve-reference-not-found.txt", ["docker.io/nvidia/cuda:latest"]),
    ("sdx23-5-buildkit-failed-to-solve-not-found.txt", ["docker.io/nvidia/cuda:11.7.0-cudnn8-runtime-ubuntu18.04"]),
])
def test_the_reference_the_registry_does_not_have(name, refs) -> None:
    text = load("image-pull/" + name)
    assert parsers.detect(text) == "image-pull" if "sdx23" in name or "1768" in name else \
        "image-pull" in [k for _, k in parsers.scores(text)[:2]]
    assert parsers.run("image-pull", text) == {"image.pull_failed": True, "image.not_found": refs}


def test_access_denied_and_unrelated_text() -> None:
    # moby's words for a repository it will not serve, as the nvidia-docker threads quote them
    f = parsers.run("image-pull", "Error response from daemon: pull access denied for nvidia/cudagl, repository does "
                                  "not exist or may require 'docker login': denied: requested access to the resource "
                                  "is denied\n")
    assert f == {"image.pull_failed": True, "image.access_denied": ["nvidia/cudagl"]}
    with pytest.raises(ParseError):
        parsers.run("image-pull", "Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n")


def test_a_missing_image_is_read_and_names_no_cause_on_the_node() -> None:
    from troubleshooter.diagnosis.pasted import EvidenceFacts
    from troubleshooter.service.diagnose import diagnose

    for name in ("nvdocker1735-docker-run-removed-tag-manifest-unknown.txt",
                 "k8sdocs648-kubelet-events-failed-to-resolve-reference-not-found.txt"):
        ef = EvidenceFacts.from_specs([str(DATA / "image-pull" / name)])
        assert ef.factsets["target"].get_value("image.pull_failed") is True
        walk, _ = diagnose("below-reference", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
        assert walk.conclusions == [], name
