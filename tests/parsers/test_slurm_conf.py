"""Slurm's cgroup.conf and gres.conf, read from real files and transcripts with exact values."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.diagnosis.pasted import EvidenceFacts

GCP = "slurm-conf/slurm-gcp-startup-cgroup-conf-constraindevices-commented-out.txt"
EHB_CGROUP = "slurm-conf/ehb54-slurm-gpu-cgroup-conf-constraindevices-yes.txt"
EHB_GRES = "slurm-conf/ehb54-slurm-gpu-gres-conf-tesla-nvidia0-2.txt"
NOTES = "slurm-conf/cluster-notes-root-cat-cgroup-conf-constraindevices-yes.txt"
DEEPOPS_GRES = "slurm-conf/deepops1195-gres-conf-eight-gpus-cpus-affinity.txt"
VAGRANT = "slurm-conf/deepops1102-vagrant-cat-gres-conf-two-gpus.txt"


def test_constraindevices_commented_out_is_not_set() -> None:
    f = parsers.run("slurm-conf", load(GCP))
    assert f == {"slurm.cgroup.settings": {"CgroupAutomount": "no", "ConstrainCores": "yes", "ConstrainRamSpace": "yes",
                                           "ConstrainSwapSpace": "yes", "TaskAffinity": "no"},
                 "slurm.cgroup.constrain_devices": False, "slurm.cgroup.constrain_cores": True,
                 "slurm.cgroup.constrain_ram_space": True, "slurm.cgroup.constrain_swap_space": True}


def test_constraindevices_yes_and_the_constrain_settings_left_at_their_default() -> None:
    f = parsers.run("slurm-conf", load(EHB_CGROUP))
    assert f["slurm.cgroup.constrain_devices"] is True and f["slurm.cgroup.constrain_cores"] is True
    assert f["slurm.cgroup.constrain_ram_space"] is True
    assert f["slurm.cgroup.constrain_swap_space"] is False  # not in the file: Slurm's default, no
    assert f["slurm.cgroup.settings"]["CgroupReleaseAgentDir"] == "/etc/slurm/cgroup"
    assert "slurm.gres.gpus" not in f and "slurm.cgroup.plugin" not in f


def test_a_root_prompt_and_a_comment_inside_the_file() -> None:
    # "# cat /etc/slurm/cgroup.conf" is the root shell's prompt, "# see note below ..." the file's own comment
    f = parsers.run("slurm-conf", load(NOTES))
    assert f["slurm.cgroup.constrain_devices"] is True and f["slurm.cgroup.constrain_swap_space"] is False
    assert f["slurm.cgroup.settings"] == {"CgroupAutomount": "yes", "ConstrainCores": "yes", "ConstrainRAMSpace": "yes",
                                          "ConstrainSwapSpace": "no", "ConstrainDevices": "yes",
                                          "AllowedRamSpace": "94.40", "AllowedSwapSpace": "0.00",
                                          "MaxRAMPercent": "95.00"}


def test_gres_conf_gpu_lines() -> None:
    f = parsers.run("slurm-conf", load(DEEPOPS_GRES))
    assert f["slurm.gres.gpus"] is True and f["slurm.gres.gpu_count"] == 8
    assert f["slurm.gres.gpu_files"] == [f"/dev/nvidia{i}" for i in range(8)]
    assert f["slurm.gres.gpu_lines"][0] == "Name=gpu File=/dev/nvidia0 CPUs=48-63,176-191"
    assert not any(k.startswith("slurm.cgroup.") for k in f)
    # a commented-out AutoDetect line, a NodeName line with a device range
    g = parsers.run("slurm-conf", load(EHB_GRES))
    assert g == {"slurm.gres.gpus": True, "slurm.gres.gpu_lines": ["NodeName=localhost Name=gpu Type=tesla File=/dev/nvidia[0-2]"],
                 "slurm.gres.gpu_files": ["/dev/nvidia[0-2]"], "slurm.gres.gpu_count": 3, "slurm.gres.gpu_types": ["tesla"]}


def test_a_prompt_that_cats_gres_conf() -> None:
    f = parsers.run("slurm-conf", load(VAGRANT))
    assert f == {"slurm.gres.gpus": True, "slurm.gres.gpu_lines": ["Name=gpu File=/dev/nvidia0", "Name=gpu File=/dev/nvidia1"],
                 "slurm.gres.gpu_files": ["/dev/nvidia0", "/dev/nvidia1"], "slurm.gres.gpu_count": 2}


@pytest.mark.parametrize("rel", [GCP, EHB_CGROUP, EHB_GRES, DEEPOPS_GRES, NOTES, VAGRANT])
def test_detected_over_an_environment_listing(rel: str) -> None:
    assert parsers.detect(load(rel)) == "slurm-conf"


def test_both_files_in_one_transcript_with_zsh_prompts(tmp_path: Path) -> None:
    """cat cgroup.conf then cat gres.conf, after oh-my-zsh's default prompt: each file's lines are its own."""
    p = tmp_path / "paste.txt"
    p.write_text("➜  ~ cat /etc/slurm/cgroup.conf\n" + load(GCP) + "➜  ~ cat /etc/slurm/gres.conf\n" + load(DEEPOPS_GRES)
                 + "➜  ~ \n")
    ef = EvidenceFacts.from_specs([str(p)])
    assert [(f.kind, f.how) for f in ef.files] == [("slurm-conf", "command"), ("slurm-conf", "command")]
    assert ef.lookup("slurm.cgroup.constrain_devices") is False and ef.lookup("slurm.gres.gpu_count") == 8
    # read whole by the parser, the prompts say which file each line is
    f = parsers.run("slurm-conf", p.read_text())
    assert f["slurm.cgroup.constrain_devices"] is False and f["slurm.gres.gpu_count"] == 8
    assert "Name" not in f["slurm.cgroup.settings"]


@pytest.mark.parametrize("text, expected", [
    # case-insensitive names and values
    ("constraindevices=YES\n", True), ("ConstrainDevices = no\n", False),
    # a grep that looked for Constrain* and did not print ConstrainDevices: not set
    ("$ grep -i constrain /etc/slurm/cgroup.conf\nConstrainCores=yes\n", False),
    ("$ grep -i constraindevices /etc/slurm/cgroup.conf\n", False),
    # a grep for something else says nothing of ConstrainDevices
    ("$ grep Cores /etc/slurm/cgroup.conf\nConstrainCores=yes\n", None),
    ("$ head -3 /etc/slurm/cgroup.conf\nCgroupAutomount=yes\nConstrainCores=yes\n", None),
])
def test_constraindevices_only_from_what_the_output_shows(text: str, expected: bool | None) -> None:
    assert parsers.run("slurm-conf", text).get("slurm.cgroup.constrain_devices") is expected


@pytest.mark.parametrize("text", [
    "", "hello\nworld\n", "NCCL_DEBUG=INFO\nNCCL_IB_HCA=mlx5_0\n", "PATH=/usr/bin\nHOME=/root\n",
    "$ cat /etc/slurm/cgroup.conf\ncat: /etc/slurm/cgroup.conf: No such file or directory\n",
    "NodeName=gpu01 CPUs=64 Gres=gpu:8 State=UNKNOWN\n",  # slurm.conf's node line, not gres.conf
])
def test_other_text_is_refused(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run("slurm-conf", text)
    assert parsers.get("slurm-conf").detect(text) < parsers.DETECT_MIN


def test_gpu_lines_for_several_nodes_give_no_count_for_one() -> None:
    f = parsers.run("slurm-conf", "NodeName=a Name=gpu File=/dev/nvidia[0-7]\nNodeName=b Name=gpu File=/dev/nvidia[0-3]\n")
    assert f["slurm.gres.gpus"] is True and "slurm.gres.gpu_count" not in f


def test_autodetect_beside_bare_gpu_lines_is_a_duplicate_slurmd_refuses() -> None:
    # ComputeCanada/puppet-magic_castle#27: slurmd exits 'fatal: gres.conf duplicate records for gpu'
    f = parsers.run("slurm-conf", load("slurm-conf/magiccastle27-gres-conf-autodetect-plus-bare-name-gpu.txt"))
    assert f["slurm.gres.autodetect"] == "nvml" and f["slurm.gres.duplicate_records"] is True
    assert f["slurm.gres.gpus"] is True and "slurm.gres.gpu_count" not in f
    # GPU lines with File= (or with Type=) are records slurmd tells apart; one bare line is no duplicate
    for text in (load(DEEPOPS_GRES), "AutoDetect=nvml\nName=gpu Type=a100\nName=gpu Type=v100\n",
                 "AutoDetect=nvml\nName=gpu\n",
                 # bare lines for different nodes are not duplicates of each other
                 "NodeName=a Name=gpu Count=2\nNodeName=b Name=gpu Count=4\n"):
        assert "slurm.gres.duplicate_records" not in parsers.run("slurm-conf", text)
