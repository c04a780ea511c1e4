"""Slurm's daemon logs on GPUs and GRES, read from real pastes with exact values."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers

DUPLICATE = "slurm-log/magiccastle27-slurmd-fatal-gres-conf-duplicate-records.txt"
COUNT = "slurm-log/magiccastle361-slurmctld-gres-count-changed-inval.txt"
NOT_BUILT = "slurm-log/oke-gb200-slurmd-nvml-not-built-count-zero.txt"
DETECTED = "slurm-log/oke-gb200-slurmd-nvml-detected-healthy.txt"
MIG_IGNORED = "slurm-log/deepops1214-slurmd-log-mig-autodetected-gpus-ignored.txt"
CONFIG_ONLY = "slurm-log/slinky57-slurmd-rsmi-config-only-gpu-discarded.txt"
NO_DEVICE = "slurm-log/bibigrid705-slurmd-journal-cant-stat-dev-nvidia0.txt"
CGROUP = "unknown/slurm-gpu-ubuntu7-slurmd-cgroup-v2-plugin-not-found.txt"


def test_slurmd_refusing_gres_conf_in_the_journal() -> None:
    assert parsers.run("slurm-log", load(DUPLICATE)) == {
        "slurm.log.gres_messages": ["gres.conf duplicate records for gpu"],
        "slurm.log.gres_conf_error": "gres.conf duplicate records for gpu"}


def test_slurmctld_draining_a_node_whose_gpu_count_fell() -> None:
    f = parsers.run("slurm-log", load(COUNT))
    assert f["slurm.log.gpu_count_reported"] == 3 and f["slurm.log.gpu_count_configured"] == 4
    assert f["slurm.log.gpu_count_changed"] == ["nodegpu1: 4 -> 3"]
    assert f["slurm.log.gres_invalid_nodes"] == ["nodegpu1"]
    # the journal's "slurmctld[80708]: slurmctld: error: " is cut from the message
    assert f["slurm.log.gres_messages"][1] == ("Setting node nodegpu1 state to INVAL with reason:gres/gpu count reported "
                                               "lower than configured (3 < 4)")
    assert "slurm.log.gres_conf_error" not in f and "slurm.log.nvml_not_built" not in f


def test_slurm_built_without_nvml_and_the_drain_reason_it_causes() -> None:
    f = parsers.run("slurm-log", load(NOT_BUILT))
    assert f["slurm.log.nvml_not_built"] is True
    assert (f["slurm.log.gpu_count_reported"], f["slurm.log.gpu_count_configured"]) == (0, 4)
    assert "slurm.log.nvml_lib_not_found" not in f


def test_the_nvml_plugin_detecting_the_gpus() -> None:
    assert parsers.run("slurm-log", load(DETECTED)) == {
        "slurm.log.gres_messages": ["gpu/nvml: _get_system_gpu_list_nvml: 4 GPU system device(s) detected"],
        "slurm.log.gpus_detected": 4}


def test_slurmd_ignoring_autodetected_mig_devices_with_markdown_bold() -> None:
    f = parsers.run("slurm-log", load(MIG_IGNORED))
    assert f["slurm.log.gres_mismatch"] == ["The following autodetected GPUs are being ignored"]
    assert f["slurm.log.gres_messages"][1] == ("gres/gpu: _merge_system_gres_conf: WARNING: The following autodetected "
                                               "GPUs are being ignored:")
    assert len(f["slurm.log.gres_messages"]) == 4


def test_a_config_only_gpu_discarded_beside_autodetected_amd_gpus() -> None:
    f = parsers.run("slurm-log", load(CONFIG_ONLY))
    assert f["slurm.log.gres_mismatch"] == ["Discarding the following config-only GPU due to lack of File specification",
                                            "The following autodetected GPUs are being ignored"]
    assert f["slurm.log.gpus_detected"] == 8


def test_a_device_file_gres_conf_names_and_the_node_lacks() -> None:
    f = parsers.run("slurm-log", load(NO_DEVICE))
    assert f["slurm.log.gres_files_missing"] == ["/dev/nvidia0"]
    assert f["slurm.log.gres_messages"] == ["Waiting for gres.conf file /dev/nvidia0",
                                            "can't stat gres.conf file /dev/nvidia0: No such file or directory"]


def test_slurmd_minus_G_and_a_foreground_slurmd_prefix() -> None:
    text = ("slurmd-gpu16: Gres Name=gpu Type=a100 Count=1 Index=0 ID=7696487 File=/dev/nvidia0 Cores=0-31 CoreCnt=64 "
            "Links=(null) Flags=HAS_FILE,HAS_TYPE,ENV_NVML\n"
            "slurmd-gpu16: Gres Name=gpu Type=a100 Count=1 Index=1 ID=7696487 File=/dev/nvidia1 Cores=0-31 CoreCnt=64 "
            "Links=(null) Flags=HAS_FILE,HAS_TYPE,ENV_NVML\n")
    assert parsers.run("slurm-log", text)["slurm.log.gres_gpu_count"] == 2


def test_detected_as_slurm_log() -> None:
    for rel in (DUPLICATE, COUNT, NOT_BUILT, DETECTED, MIG_IGNORED, CONFIG_ONLY, NO_DEVICE):
        assert parsers.detect(load(rel)) == "slurm-log", rel


@pytest.mark.parametrize("text", ["", "hello\nworld\n", "gres.conf\n", "[2023-10-16T10:42:01.139] error: cannot "
                                  "find cgroup plugin for cgroup/v2\n", "GPU 0: NVIDIA A100 (UUID: GPU-1)\n"])
def test_other_text_is_refused(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run("slurm-log", text)
    assert parsers.get("slurm-log").detect(text) < parsers.DETECT_MIN


def test_a_missing_plugin_that_is_not_a_gpu_one_is_not_read() -> None:
    # slurmd without its cgroup/v2 plugin: a Slurm fault, but nothing about GPUs
    with pytest.raises(parsers.ParseError):
        parsers.run("slurm-log", load(CGROUP))


SOCKETS = "slurm-log/slurmdocs-gres-autodetected-core-affinity-not-socket-aligned.txt"
SOCKETS_REASON = "slurm-log/unige3938-scontrol-reason-gres-core-specification-not-socket-aligned.txt"


def test_gpu_cores_that_are_not_whole_sockets() -> None:
    f = parsers.run("slurm-log", load(SOCKETS))
    assert f["slurm.log.gres_cores_not_socket_aligned"] == ["0-7 (socket 0 is cores 0-1)"]
    assert parsers.detect(load(SOCKETS)) == "slurm-log"
    # the same refusal as the drain reason scontrol shows, in a user's backticks
    f = parsers.run("slurm-log", load(SOCKETS_REASON))
    assert f["slurm.log.gres_cores_not_socket_aligned"] == ["12-15 (socket 0 is cores 0-16)"]
    assert parsers.detect(load(SOCKETS_REASON)) == "slurm-log"


@pytest.mark.parametrize("rel, steps", [
    ("slurm-log/hafs101-slurmstepd-oom-kill-step-srun-task-out-of-memory.txt", ["3495064.0"]),
    ("slurm-log/tusas149-slurmstepd-oom-kill-event-newer-wording.txt", ["440575.0"]),
])
def test_a_step_its_memory_cgroup_killed(rel, steps):
    text = load(rel)
    assert parsers.detect(text) == "slurm-log"
    f = parsers.run("slurm-log", text)
    assert f["slurm.log.oom_killed_steps"] == steps and "slurm.log.gres_mismatch" not in f
