"""The NVIDIA Container Toolkit's version banners, read from real captures (tests/data/container-toolkit-version)."""

from __future__ import annotations

import pytest

from tests.corpus import files, load
from troubleshooter import parsers
from troubleshooter.diagnosis.intake import tool_of
from troubleshooter.parsers import ParseError

KIND = "container-toolkit-version"
D = "container-toolkit-version/"


def parse(text: str) -> dict:
    return parsers.run(KIND, text)


def test_every_program_of_one_release() -> None:
    # a USTC mirror guide: nvidia-ctk, nvidia-container-cli, nvidia-container-runtime (which also prints the runc it
    # wraps: 1.1.12 is runc's, not the toolkit's) and nvidia-container-toolkit, all 1.14.6
    f = parse(load(D + "ustc-guide-1.14.6-ctk-cli-runtime-hook-rhel.txt"))
    assert f["container_toolkit.versions"] == {
        "nvidia-ctk": "1.14.6", "nvidia-container-runtime": "1.14.6", "nvidia-container-runtime-hook": "1.14.6",
        "nvidia-container-cli": "1.14.6", "libnvidia-container": "1.14.6"}
    assert (f["container_toolkit.version"], f["container_toolkit.versions_differ"]) == ("1.14.6", False)
    assert f["container_toolkit.installed"] is True


def test_libnvidia_container_banner_among_other_versions() -> None:
    # docker's and nvidia-smi's versions beside it are not the toolkit's
    f = parse(load(D + "chatbot-readme-docker-nvidia-smi-version-cli-1.17.3.txt"))
    assert f["container_toolkit.versions"] == {"nvidia-container-cli": "1.17.3", "libnvidia-container": "1.17.3"}
    assert f["container_toolkit.version"] == "1.17.3"


def test_a_banner_cut_before_its_version_gives_nothing() -> None:
    # nvidia-container-runtime#190: the hook's 1.13.5, then 'NVIDIA Container Runtime' cut by the excerpt
    f = parse(load(D + "nvct190-hook-1.13.5-runtime-banner-cut.txt"))
    assert f["container_toolkit.versions"] == {"nvidia-container-runtime-hook": "1.13.5"}


def test_the_cdi_hook_of_1_17() -> None:
    f = parse(load(D + "podman24502-cdi-hook-1.17.0-command-line-no-prompt.txt"))
    assert f["container_toolkit.versions"] == {"nvidia-cdi-hook": "1.17.0"}
    assert f["container_toolkit.version"] == "1.17.0"


def test_programs_of_two_releases_side_by_side() -> None:
    text = ("NVIDIA Container Toolkit CLI version 1.17.8\ncommit: f202b80a9b9d0db00d9b1d73c0128c8962c55f4d\n"
            "NVIDIA Container Runtime Hook version 1.16.2\ncommit: a5a5833c14a15fd9c86bcece85d5ec6621b65652\n")
    f = parse(text)
    assert (f["container_toolkit.version"], f["container_toolkit.versions_differ"]) == ("1.17.8", True)


@pytest.mark.parametrize("text", [
    "",
    "NVIDIA Container Runtime\n",  # cut before its version
    "min-cli-version: 1.4.0\n",  # another tool's words
    "cli-version: 1.17.3\n",  # without libnvidia-container's second line it is not its banner
    "Docker version 27.4.1, build b9d17ea\n",
])
def test_no_banner_is_a_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        parse(text)


@pytest.mark.parametrize("path", files("container-toolkit-version"), ids=lambda p: p.name)
def test_detected(path) -> None:
    assert parsers.detect(load(f"container-toolkit-version/{path.name}")) in (KIND, "docker-info")


def test_a_transcript_routes_each_version_command() -> None:
    for cmd in ("nvidia-ctk --version", "sudo nvidia-container-toolkit --version", "nvidia-container-cli --version",
                "nvidia-container-runtime --version", "nvidia-cdi-hook --version",
                "nvidia-container-runtime-hook --version"):
        assert tool_of(cmd) == KIND, cmd
    assert tool_of("nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml") is None


def test_a_transcript_with_docker_info_reads_both() -> None:
    from troubleshooter.diagnosis.pasted import EvidenceFacts
    from tests.corpus import DATA
    ef = EvidenceFacts.from_specs([str(DATA / "transcripts/ctrsploit-toolkit-1.10.0-hook-version-docker-info.txt")])
    fs = ef.factsets["target"]
    assert fs["container_toolkit.versions"].value == {"nvidia-container-runtime-hook": "1.10.0"}
    assert (fs["docker.nvidia_runtime"].value, fs["docker.cgroup_version"].value) == (True, "2")


def test_os_release_in_the_same_transcript_is_not_an_environment() -> None:
    # ctrsploit's block ends with cat /etc/os-release: KEY=VALUE lines, and no process's environment
    from troubleshooter.diagnosis.pasted import EvidenceFacts
    from tests.corpus import DATA
    ef = EvidenceFacts.from_specs([str(DATA / "transcripts/ctrsploit-toolkit-1.10.0-hook-version-docker-info.txt")])
    assert "env" not in {f.kind for f in ef.files}
    assert "env.var.PRETTY_NAME" not in ef.factsets["target"]
