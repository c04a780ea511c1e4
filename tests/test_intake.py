"""Paste-proof intake (issue 15): the same real output, damaged the ways pasting damages it, gives the same
facts as the clean output, and a transcript of several commands gives each command's facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from troubleshooter import parsers
from troubleshooter.diagnosis import intake
from troubleshooter.diagnosis.pasted import EvidenceFacts
from troubleshooter.model.facts import Unknown

from .corpus import DATA, load

REAL = [
    "ibstat/ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt",
    "ibstat/ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt",
    "numa/vm-2node-uneven-cpus-free-191mb-numactl-numastat-c.txt",
    "nvidia-smi/gh200-480gb-nvidia-smi-570.txt",
    "nccl-tests/dgx-spark-gb10-all_gather-fec-none-slow-v2.18.3.txt",
    "dmesg/rtx5090-xid79-fallen-off-bus-gsp-rpc-failed-open-kmod-595.txt",
    "turbostat/epyc7313-milan-2s-acpi_idle-c1-c2-only-preamble.txt",
    # one record on one line: its closing fence (a blank line after cleaning) hid it from detection
    "selinux/nvdocker814-avc-nvidia-docker-entrypoint-docker-xserver-t.txt",
]

DAMAGE = {
    "markdown fence": lambda t: "```text\n" + t + "```\n",
    "CRLF line ends": lambda t: t.replace("\n", "\r\n"),
    "colour escapes": lambda t: "\n".join(f"\x1b[0;32m{ln}\x1b[0m" if ln.strip() else ln for ln in t.split("\n")),
    # colour codes whose ESC a copy lost: gone (an issue's rendered log) or shown as U+FFFD (GitHub's rendering)
    "colour codes without their ESC": lambda t: "\n".join(f"[36m{ln}[0m" if ln.strip() else ln for ln in t.split("\n")),
    "colour codes with ESC as U+FFFD": lambda t: "\n".join(f"\ufffd[0;32m{ln}\ufffd[0m" if ln.strip() else ln
                                                        for ln in t.split("\n")),
    "mail quote": lambda t: "\n".join("> " + ln for ln in t.split("\n")),
    "Open MPI rank prefix": lambda t: "\n".join("[1,0]<stdout>:" + ln for ln in t.split("\n")),
    "srun -l prefix": lambda t: "\n".join("0: " + ln for ln in t.split("\n")),
    "Markdown indented code block": lambda t: "\n".join("    " + ln if ln else ln for ln in t.split("\n")),
    "blanks at line ends": lambda t: "\n".join(ln + " \t " if ln.strip() else ln for ln in t.split("\n")),
    # the time a log collector writes before every line: docker logs -t / kubectl logs --timestamps (RFC 3339 with
    # nanoseconds), a node's CRI log file under /var/log/pods (its stream and tag after it), an export's UTC offset
    "docker logs -t time": lambda t: "\n".join("2026-12-04T10:00:00.123456789Z " + ln for ln in t.split("\n")),
    # a reply quoting a comment that held the output in a fence ("> ```"); wrappers nested in any order
    "quoted reply with its fence": lambda t: "\n".join("> " + ln for ln in ("```\n" + t + "```\n").split("\n")),
    "srun -l around mpirun's tag": lambda t: "\n".join("0: [1,0]<stdout>:" + ln for ln in t.split("\n")),
    "compose, then the time": lambda t: "\n".join("trainer-1  | 2026-12-04T10:00:00.5Z " + ln for ln in t.split("\n")),
    # the name a log viewer writes before every line: docker compose's service, kubectl logs --prefix's pod
    "docker compose service": lambda t: "\n".join("trainer-1  | " + ln for ln in t.split("\n")),
    "kubectl --prefix, one pod": lambda t: "\n".join("[pod/trainer-worker-0/pytorch] " + ln for ln in t.split("\n")),
    "CRI log file prefix": lambda t: "\n".join("2026-12-04T10:00:00.1234567+08:00 stdout F " + ln
                                                for ln in t.split("\n")),
}

# outputs whose reading failed (or took the sentence in) when a person's sentences came before and after them
SENTENCES = [
    "k8s-pod/kai-scheduler-job-8-gpus-rdma-shared-device-no-dshm.txt",
    "kmod/gpud39-lsmod-peermem-ib-core-nvidia.txt",
    "nccl-topo/azure-ndv5-h100-topo.xml.txt",
    "nvidia-smi-csv/timestamped-2gpu-samples-units-in-values.txt",
    "nvidia-smi-q-fragments/q-grep-A8-clocks-throttle-reasons-fragment-idle-active.txt",
    "packages/nccl1267-pip-freeze-grep-nccl-problem-node.txt",
    "sysctl/this-sandbox-sysctl-kernel-numa-balancing-0.txt",
    "env/bash-export-p-declare-x-quoted-multiline.txt",
    "env/srun-env-grep-slurm-job476-cn1.txt",
    # detection looked at the last line only: /proc/cmdline's line, an AVC record
    "cmdline/proc-cmdline-epyc9374f-1numa-amd_iommu-on-iommu-pt-mitigations-off-isolcpus.txt",
    "cmdline/proc-cmdline-xeon6354-2numa-intel_iommu-pt-typo-duplicate-isolcpus.txt",
    "selinux/nvdocker814-avc-nvidia-docker-entrypoint-docker-xserver-t.txt",
]


def _facts(tmp_path: Path, text: str, name: str = "paste.txt") -> dict:
    p = tmp_path / name
    p.write_bytes(text.encode())
    ef = EvidenceFacts.from_specs([str(p)])
    return ef.factsets["target"].as_dict()


@pytest.mark.parametrize("rel", REAL)
@pytest.mark.parametrize("how", list(DAMAGE))
def test_damaged_paste_reads_like_the_clean_one(tmp_path: Path, rel: str, how: str) -> None:
    clean = load(rel)
    want = parsers.run(parsers.detect(clean), clean)
    got = _facts(tmp_path, DAMAGE[how](clean))
    assert {k: got.get(k) for k in want} == want


@pytest.mark.parametrize("rel", SENTENCES)
def test_the_sentences_a_person_wrote_around_an_output_are_not_read_as_it(tmp_path: Path, rel: str) -> None:
    clean = load(rel)
    want = parsers.run(parsers.detect(clean), clean)
    pasted = "Here is the output of the command on the failing node:\n\n" + clean + "\nThanks in advance for any help!\n"
    got = _facts(tmp_path, pasted)
    assert {k: got.get(k) for k in want} == want


def test_a_tools_own_sentence_like_first_line_stays_when_the_output_reads() -> None:
    assert intake._is_sentence("Here is the output of the command on the failing node:")
    assert intake._is_sentence("Thanks in advance for any help!")
    for line in ("Infiniband device 'mlx5_0' port 1 status:", "NUMA node0 CPU(s):     0-27",
                 "kernel.numa_balancing = 0", "No devices were found"):
        assert not intake._is_sentence(line)
    # Python's own first line reads as a sentence: it goes only where nothing could read the output with it
    assert intake._is_sentence("Traceback (most recent call last):")
    assert intake.trim_prose("Thanks for all the help!\nGPU 0\n") == "\nGPU 0\n"  # blanked: line numbers stay


def test_a_transcript_gives_each_commands_facts(tmp_path: Path) -> None:
    ibstat = load("ibstat/ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt")
    numactl = load("numa/gh200-numactl-hardware-9nodes-gpu-mem-node1-distance-80-255.txt")
    text = ("user@gpu-node-17:~$ sudo ibstat\n" + ibstat + "user@gpu-node-17:~$ numactl --hardware\n" + numactl
            + "user@gpu-node-17:~$ exit\n")
    p = tmp_path / "session.txt"
    p.write_text(text)
    ef = EvidenceFacts.from_specs([str(p)])
    assert [(f.kind, f.how) for f in ef.files] == [("ibstat", "command"), ("numactl", "command")]
    lines = text.split("\n")
    for f in ef.files:  # each block's line number is the paste's own: the line after its command's prompt
        n = int(f.where.split(":")[0].removeprefix("line "))
        assert lines[n - 2].rstrip().endswith(f.where.split("`")[1])
    fs = ef.factsets["target"].as_dict()
    assert fs["ib.active_ports"] == parsers.run("ibstat", ibstat)["ib.active_ports"]
    assert fs["numa.node_count"] == parsers.run("numactl", numactl)["numa.node_count"]


def test_a_command_run_inside_a_container_is_the_jobs_side(tmp_path: Path) -> None:
    text = ("user@host:~$ env | grep NCCL\nNCCL_TOPO_FILE=/etc/nccl/topo.xml\nNCCL_DEBUG=INFO\n"
            "user@host:~$ docker exec trainer env | grep NCCL\nNCCL_DEBUG=INFO\n")
    p = tmp_path / "both.txt"
    p.write_text(text)
    ef = EvidenceFacts.from_specs([f"host:{p}"])
    assert [(f.side, f.kind) for f in ef.files] == [("host", "env"), ("target", "env")]
    assert ef.lookup("env.var.NCCL_TOPO_FILE", "host") == "/etc/nccl/topo.xml"
    assert "NCCL_TOPO_FILE" not in str(ef.lookup("env.names", "target"))


def test_an_unreadable_block_is_reported_and_the_rest_used(tmp_path: Path) -> None:
    ibstat = load("ibstat/ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt")
    p = tmp_path / "mixed.txt"
    p.write_text("$ sudo ibstat\n" + ibstat + "$ nvidia-smi topo -m\nthis is not what nvidia-smi prints\n")
    ef = EvidenceFacts.from_specs([str(p)])
    states = [(f.kind, bool(f.error)) for f in ef.files]
    assert states == [("ibstat", False), ("nvidia-smi-topo", True)]
    assert any("NOT USED" in line for line in ef.report_lines())


@pytest.mark.parametrize("command,kind", [
    ("sudo numastat -p 4391", "numastat"), ("srun --jobid 42 --overlap nvidia-smi -q -d PERFORMANCE", "nvidia-smi-q"),
    ("kubectl exec -it trainer-0 -- nvidia-smi topo -m", "nvidia-smi-topo"), ("cat /proc/cmdline", "cmdline"),
    ("mpirun -np 16 -x NCCL_DEBUG=INFO ./build/all_reduce_perf -b 8 -e 8G", "nccl-tests"),
    ("dmesg -T | grep -i xid", "dmesg"), ("journalctl -k -b -1", "dmesg"), ("env | sort", "env"),
    ("env NCCL_DEBUG=INFO python train.py", None), ("# nThread 1 nGpus 1 minBytes 8", None),
    ("Collective test starting: all_gather_perf", None),
    ("ulimit -a", "limits"), ("docker exec trainer bash -c 'ulimit -a'", "limits"), ("cat /proc/4391/limits", "limits"),
    ("ucx_info -d", "ucx"), ("kubectl exec -it w-0 -- sh -c 'nvidia-smi topo -m'", "nvidia-smi-topo"),
    ("python -c 'import torch'", None), ("./deviceQuery", "cuda-samples"),
    ("ip addr", "ip-addr"), ("ip -br addr show", "ip-addr"), ("/sbin/ifconfig -a", "ip-addr"), ("ip route", None),
    ("kubectl get pod trainer-0 -o yaml", "k8s-pod"), ("kubectl get pods", None), ("rdma link show", "rdma-link"), ("talosctl dmesg", "dmesg"), ("dcgmi diag -r 3", "dcgm-diag"), ("nvidia-smi --query-gpu=index,clocks.sm --format=csv", "nvidia-smi-csv"), ("mlxconfig -d /dev/mst/mt4123_pciconf0 q", "mlxconfig"), ("lspci -vv -s 01:00.0", "lspci"),
    ("zcat /proc/config.gz | grep CONFIG_ARM_SMMU_V3_SVA=", "kernel-config"),
    ("kubectl logs nvidia-device-plugin-daemonset-j76n5 -n kube-system", "k8s-device-plugin"),
    ("kubectl -n kube-system logs ds/nvidia-device-plugin-daemonset", "k8s-device-plugin"), ("kubectl logs trainer-0", None),
    ("sudo sh NVIDIA-Linux-x86_64-470.199.02.run --silent", "nvidia-installer"),
    ("./NVIDIA-Linux-x86_64-535.183.01.run --dkms", "nvidia-installer"), ("sudo dkms status", "nvidia-installer"),
    ("cat /var/log/nvidia-installer.log", "nvidia-installer"),
    ("cat /etc/slurm/cgroup.conf", "slurm-conf"), ("sudo cat /etc/slurm-llnl/gres.conf", "slurm-conf"),
    ("grep -i constrain /etc/slurm/cgroup.conf", "slurm-conf"),
    ("srun --ntasks=2 --gpus-per-task=1 --container-image=img nvidia-smi -L", "nvidia-smi-status"),
    ("srun --container-name=c --gres=gpu:1 ls -l /dev/nvidia{0..7}", "dev-nvidia"), ("ls -la /tmp", None),
])
def test_commands_are_routed_past_their_wrappers(command: str, kind: str | None) -> None:
    assert intake.tool_of(command) == kind


def test_a_launch_line_with_variables_gives_their_environment_and_the_tools_output(tmp_path: Path) -> None:
    """`VAR=value ... all_reduce_perf ...` pasted without a prompt: the variables are the command's environment
    (read as one env value, NCCL_DEBUG's value was the whole line), its output goes to the tool's parser."""
    out = load("nccl-tests/dgx-spark-gb10-all_gather-fec-none-slow-v2.18.3.txt")
    line = "NCCL_DEBUG=WARN NCCL_IB_HCA='^=mlx5_8,^=mlx5_14' srun --mpi=pmix ./build/all_gather_perf -b 8 -e 1G\n"
    p = tmp_path / "run.txt"
    p.write_text(line + out)
    ef = EvidenceFacts.from_specs([str(p)])
    kinds = [f.kind for f in ef.files]
    # the variables, srun's options; the capture's own transcript follows (its `cd` prompt ends the srun line's
    # output, its mpirun line's output is the test's)
    assert kinds[:2] == ["env", "srun"]
    assert kinds.index("nccl-tests") == kinds.index("mpirun") + 1
    assert ef.lookup("env.var.NCCL_DEBUG") == "WARN"
    assert ef.lookup("env.var.NCCL_IB_HCA") == "^=mlx5_8,^=mlx5_14"
    # and the value's own mistake is a cause: '^=' inside the list is read as part of a device name
    from troubleshooter.service.diagnose import diagnose

    walk, _ = diagnose("nccl-wrong-fabric", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
    assert "ib-hca-mismatch" in [c.cause for c in walk.conclusions]
    assert intake.leading_assignments("NCCL_DEBUG=INFO ./all_reduce_perf -b 8") == (
        ["NCCL_DEBUG=INFO"], "./all_reduce_perf -b 8")
    assert intake.leading_assignments("PATH=/usr/bin") == ([], "PATH=/usr/bin")  # an env line, not a command


def test_a_config_grep_that_printed_nothing_says_the_option_is_not_set(tmp_path):
    """NixOS PR #527847's 'Before:' transcript shape: the grep for CONFIG_ARM_SMMU_V3_SVA= prints nothing and the
    next prompt asks for its exit status; the option is then known unset."""
    p = tmp_path / "before.txt"
    p.write_text("$ zcat /proc/config.gz | grep CONFIG_ARM_SMMU_V3_SVA=\n\n$ echo $?\n1\n")
    assert EvidenceFacts.from_specs([str(p)]).lookup("kernel.config.CONFIG_ARM_SMMU_V3_SVA") == "n"

def test_a_launch_command_continued_with_backslashes_is_one_command():
    blocks = intake.split("$  mpirun   \\\n      -np 16  \\\n      -x NCCL_DEBUG=INFO \\\n      ../build/all_reduce_perf  \\\n"
                          "      -b 16 -e 4G -f 4 -g 1 \n\n# nThread 1 nGpus 1 minBytes 16\n")
    assert [(b.kind, b.text.strip()) for b in blocks] == [
        ("env", "NCCL_DEBUG=INFO"), ("mpirun", "mpirun -np 16 -x NCCL_DEBUG=INFO ../build/all_reduce_perf -b 16 -e 4G -f 4 -g 1"),
        ("nccl-tests", "# nThread 1 nGpus 1 minBytes 16")]
    assert blocks[2].command.split() == ["mpirun", "-np", "16", "-x", "NCCL_DEBUG=INFO", "../build/all_reduce_perf",
                                         "-b", "16", "-e", "4G", "-f", "4", "-g", "1"]


def test_torchrun_and_ray_prefixes_are_undone_once_per_line() -> None:
    from tests.corpus import load

    text = intake.clean(load("torch-distributed/ray-torchrun-nested-prefixes-ncclremoteerror-connection-refused.txt"))
    assert "Last error:\nsocketPollConnect: connect returned Connection refused" in text
    assert "[rank4]" not in text and "(worker1" not in text
    assert text.startswith("vae-bc5a469e-2296-2:27720:27757 [1] NCCL INFO socketPollConnect")
    # a value that merely looks like a prefix on one line of many is kept
    assert intake.clean("[rank0]: a\nb\nc\nd\n") == "[rank0]: a\nb\nc\nd\n"


def test_mpirun_x_variables_are_the_runs_environment_but_not_all_of_it(tmp_path: Path) -> None:
    p = tmp_path / "run.txt"
    p.write_text("root@vm:~# mpirun -np 8 -x NCCL_TOPO_FILE=/azure-nhc/topofiles/ndv5-topo.xml -x LD_LIBRARY_PATH "
                 "/opt/nccl-tests/build/all_reduce_perf -b 16G -e 16G\n# nThread 1 nGpus 1 minBytes 17179869184\n"
                 "#  Rank  0 Group  0 Pid  1 on vm device  0 [0x00] NVIDIA H200\n")
    ef = EvidenceFacts.from_specs([str(p)])
    assert ef.lookup("env.var.NCCL_TOPO_FILE") == "/azure-nhc/topofiles/ndv5-topo.xml"
    assert isinstance(ef.lookup("env.names"), Unknown)  # a launch line is not the whole environment
    assert isinstance(ef.lookup("env.var.LD_LIBRARY_PATH"), Unknown)  # -x NAME forwards a value the line does not show


def test_a_grep_for_a_kernel_option_that_printed_nothing_says_it_is_not_enabled(tmp_path: Path) -> None:
    p = tmp_path / "before.txt"  # as posted in a NixOS thread: grep found nothing, echo $? said 1
    p.write_text("```\n$ zcat /proc/config.gz | grep CONFIG_ARM_SMMU_V3_SVA=\n\n$ echo $?\n1\n```\n")
    ef = EvidenceFacts.from_specs([str(p)])
    assert ef.lookup("kernel.config.CONFIG_ARM_SMMU_V3_SVA") == "n"
    p.write_text("$ grep -E 'CONFIG_ARM_SMMU_V3(_SVA)?=' /boot/config-6.8\n\n")  # not an exact name: nothing inferred
    with pytest.raises(Exception):
        EvidenceFacts.from_specs([str(p)])


def test_a_command_the_shell_could_not_run_is_said_so(tmp_path: Path) -> None:
    p = tmp_path / "t.txt"
    p.write_text("root@vm:~# mpirun -np 8 /opt/nccl-tests/build/all_reduce_perf -b 16G\nbash: mpirun: command not found\n"
                 "root@vm:~# cat /proc/cmdline\nBOOT_IMAGE=/vmlinuz ro quiet\n")
    ef = EvidenceFacts.from_specs([str(p)])
    assert [f.error for f in ef.files if f.error] == ["the command did not run: bash: mpirun: command not found"]
    assert ef.lookup("cmdline.raw") is not None or any(f.kind == "cmdline" and not f.error for f in ef.files)


def test_a_collection_scripts_section_banners_start_blocks():
    from troubleshooter.diagnosis import intake

    text = "=== DRIVER ===\n580.1\n=== FABRIC MANAGER SERVICE ===\n× nvidia-fabricmanager.service - x\n" \
           "     Active: failed (Result: signal)\n# Avg bus bandwidth    : 33.3\n"
    blocks = intake.split(text)
    assert [b.text for b in blocks] == ["580.1\n", "× nvidia-fabricmanager.service - x\n     Active: failed (Result: "
                                        "signal)\n# Avg bus bandwidth    : 33.3\n"]


def test_the_html_an_issue_template_wraps_a_log_in_is_not_output():
    from troubleshooter.diagnosis import intake

    text = "<details>\n<summary>nvidia-smi -q output</summary>\n\n<pre>\nGPU 0\n</pre>\n</details>\nvalue <b>x</b>\n"
    # blank lines where the tags were (line numbers stay the paste's); a tag inside a line of output stays
    assert intake.clean(text) == "\n\n\n\nGPU 0\n\n\nvalue <b>x</b>\n"


def test_bash_default_prompt_and_nvidia_smis_own_banner():
    """'sh-4.2$ nvidia-smi -q -d CLOCK' is a prompt; '====NVSMI LOG====' is the command's output, not a section."""
    from troubleshooter.diagnosis.pasted import EvidenceFacts

    rel = "nvidia-smi-q-fragments/eksami1985-sh-prompt-q-d-clock-h200-idle.txt"
    assert intake.is_prompt("sh-4.2$ nvidia-smi -q -d CLOCK") and intake.is_prompt("bash-5.1# ibstat")
    blocks = [b for b in intake.split(intake.clean(load(rel))) if b.text.strip()]
    assert [(b.command, b.kind) for b in blocks] == [("nvidia-smi -q -d CLOCK", "nvidia-smi-q")]
    assert "==============NVSMI LOG==============" in blocks[0].text
    ef = EvidenceFacts.from_specs([str(Path(__file__).parent / "data" / rel)])
    assert ef.lookup("gpu.count") == 8 and ef.lookup("gpu.driver_version") == "550.90.07"


def test_a_bare_bash_default_prompt_ends_the_block_before_it():
    """A transcript ending at bash's default prompt with nothing typed ('sh-4.2$ ') does not hand that line to the
    output before it, as a bare 'user@host:~$' does not."""
    rel = "nvidia-smi-q-fragments/eksami1985-sh-prompt-q-d-clock-h200-idle.txt"
    for bare in ("sh-4.2$ ", "sh-4.2$", "bash-5.1# "):
        assert intake._BARE_PROMPT.match(bare)
        blocks = [b for b in intake.split(intake.clean(load(rel)) + bare + "\n") if b.text.strip()]
        assert [(b.command, b.kind) for b in blocks] == [("nvidia-smi -q -d CLOCK", "nvidia-smi-q")]
        assert bare.strip() not in blocks[0].text
    assert not intake._BARE_PROMPT.match("sh-4.2$ nvidia-smi") and not intake._BARE_PROMPT.match("fish-3$")


def test_the_device_plugins_log_after_its_kubectl_logs_prompt() -> None:
    """A paste that starts with the `kubectl logs` line is read as the plugin's log by its command, not by guess."""
    rel = "k8s-device-plugin/k8sdp303-kubectl-logs-failed-to-initialize-nvml-could-not-load.txt"
    ef = EvidenceFacts.from_specs([str(DATA / rel)])
    assert [(f.kind, f.how) for f in ef.files] == [("k8s-device-plugin", "command")]
    assert ef.lookup("k8s_device_plugin.nvml_missing") is True


def test_oh_my_zshs_default_prompt():
    """zsh's '➜  ~ cat FILE' (two spaces, the directory, then the command) is a prompt; '➜  ~' alone ends the block
    before it; an arrow in a tool's own output ('➜  Local:   http://...') is not a command."""
    assert intake.is_prompt("➜  ~ cat /etc/slurm/cgroup.conf") and intake.is_prompt("➜ ~ cat script")
    assert intake.is_prompt("➜  repo git:(main) ✗ nvidia-smi -L")
    blocks = intake.split("➜  ~ cat /etc/slurm/cgroup.conf\nConstrainCores=yes\n➜  ~\n  ➜  Local:   http://localhost:5173/\n")
    assert [(b.command, b.kind, b.text) for b in blocks] == [
        ("cat /etc/slurm/cgroup.conf", "slurm-conf", "ConstrainCores=yes\n"),
        (None, None, "  ➜  Local:   http://localhost:5173/\n")]


def test_a_singularity_shell_prompt_puts_its_commands_in_the_container() -> None:
    blocks = intake.split("Singularity> ./build/all_reduce_perf -g 4\n# nThread 1 nGpus 4\n")
    assert [(b.command, b.kind, b.side) for b in blocks] == [("./build/all_reduce_perf -g 4", "nccl-tests", "container")]


@pytest.mark.parametrize("line,command", [
    ("user@gpu01:~$ nvidia-smi -L", "nvidia-smi -L"), ("[root@gpu3 ~]# ibstat", "ibstat"),
    ("(venv) alice@box:/x$ env", "env"), ("sh-4.2$ lsmod", "lsmod"), ("bash-5.1# dmesg", "dmesg"),
    ("zsh-5.8% ls", "ls"), ("➜  ~ nvidia-smi topo -m", "nvidia-smi topo -m"), ("➜  repo git:(main) ✗ env", "env"),
    ("Singularity> ./build/all_reduce_perf -g 4", "./build/all_reduce_perf -g 4"), ("Apptainer> env", "env")])
def test_one_prompt_pattern_for_every_transcript_reader(line: str, command: str) -> None:
    """intake, slurm-conf and nvidia-smi-status cut transcripts with the same prompts (parsers/_prompt.py); only
    what stands alone differs: a lone '#' is a prompt in a transcript and a comment in a conf file."""
    from troubleshooter.parsers._prompt import prompt

    m = prompt("$#%", "command").match(line)
    assert m is not None and m.group("cmd") == command
    assert prompt("$", "space").match(line) and prompt("$", "command").match(line)
    assert prompt("", "nothing").match(line[: -len(command)].rstrip())


def test_a_lone_hash_is_a_prompt_only_where_asked() -> None:
    from troubleshooter.parsers._prompt import prompt

    assert prompt("$#%", "command").match("# ibstat")
    assert not prompt("$", "space").match("# ConstrainDevices=yes")
    assert prompt("$", "space").match("$ cat /etc/slurm/cgroup.conf")
    assert not prompt("$#%", "nothing").match("$")  # a lone character with nothing after it is no prompt


def test_a_training_launch_line_gives_the_environment_it_set_and_its_log_is_still_read() -> None:
    # NCCL_DEBUG=INFO python -u -m torch.distributed.run ... (no prompt), then the run's NCCL log
    ev = EvidenceFacts.from_specs([str(DATA / "nccl-debug" / "azure-2node-ib-not-colocated-completion-error-12.txt")])
    assert [f.kind for f in ev.files] == ["env", "nccl-debug"]
    assert ev.lookup("nccl.debug") == "INFO"
    assert ev.lookup("nccl.hcas") == ["ibP111p0s0:1", "rdmaP1111p0s2:1"]


def test_a_list_of_commands_gives_the_variables_of_the_training_launch_in_it() -> None:
    got = intake.training_launch("rm -r /tmp/test-clm; CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 python -m "
                                 "torch.distributed.launch --nproc_per_node 2 run_clm.py")
    assert got == (["CUDA_VISIBLE_DEVICES=0,1", "NCCL_P2P_DISABLE=1"],
                   "python -m torch.distributed.launch --nproc_per_node 2 run_clm.py")
    assert intake.training_launch("CC=gcc python setup.py build") is None  # not the stack's variables


def test_a_prompt_with_a_command_no_kind_reads_ends_the_output_before_it():
    """NVIDIA/nccl#554's transcript: `rpm -qa | grep nccl`, then `rpm -e` of each package. The rpm -e prompts are
    commands of their own (their output is ldconfig's warnings), not more lines of rpm -qa's listing."""
    blocks = intake.split(intake.clean(load("transcripts/nccl554-rpm-qa-nccl-cuda113-then-rpm-e.txt")))
    assert [(b.command, b.kind) for b in blocks] == [
        ("rpm -qa | grep nccl", "packages"),
        ("rpm -e libnccl-devel-2.9.9-1+cuda11.3.x86_64", None),
        ("rpm -e libnccl-2.9.9-1+cuda11.3.x86_64", None)]
    assert blocks[0].text == ("libnccl-2.9.9-1+cuda11.3.x86_64\nlibnccl-static-2.9.9-1+cuda11.3.x86_64\n"
                              "libnccl-devel-2.9.9-1+cuda11.3.x86_64\n")
    # an output line that only looks like a root prompt ('# nThread ...', '# CONFIG_X is not set') splits nothing
    assert len(intake.split("# nThread 1 nGpus 8 minBytes 8\n# Using devices\n")) == 1


def test_a_note_a_person_wrote_after_a_line_is_not_part_of_its_value():
    """sirzzang's EKS post: "... set by environment to 1.  # ← <a note in Korean>". The note was read into
    NCCL_IB_DISABLE's value and into the network's name."""
    ef = EvidenceFacts.from_specs([str(DATA / "nccl-debug/sirzzang-eks-baseline-socket-fallback-arrow-notes.txt")])
    assert ef.lookup("nccl.effective.NCCL_IB_DISABLE") == "1"
    assert ef.lookup("nccl.nets") == ["Socket"]
    # a diagram's two-way arrow and a comparison inside output are not notes
    assert intake.clean("GPU0  <->  GPU1\n") == "GPU0  <->  GPU1\n"
    assert intake.clean("x  # ← note\n") == "x\n"


def test_output_right_after_a_backslash_is_not_more_of_the_command():
    """pyxis#78: the srun line ends in a backslash and the paste goes on with the program's output ('INFO: host=hpl
    ...'): the rest of the command was not pasted, and that line was being read as srun's arguments."""
    blocks = intake.split(intake.clean(load("slurm/pyxis78-srun-no-mpi-plugin-hpl-mpi-init-null-communicator.txt")))
    cmds = {b.command for b in blocks if b.command}
    assert "srun -N 1 --ntasks-per-node=1 --cpu-bind=none" in cmds
    out = next(b for b in blocks if not b.of_command and b.command and b.command.startswith("srun"))
    assert out.text.startswith("INFO: host=hpl rank=0 lrank=0 cores=32")
    # a real continuation still joins
    joined = intake.split("$ srun -N 2 \\\n  --mpi=pmix ./all_reduce_perf -b 8\n# nThread 1 nGpus 1 minBytes 8\n")
    assert joined[-1].command == "srun -N 2 --mpi=pmix ./all_reduce_perf -b 8"


def test_a_tools_commented_output_line_is_not_a_root_prompt():
    """NVIDIA/nccl#1272 posted nccl-tests' '# Avg bus bandwidth : 24.2382' alone: a root shell's lone '#' before
    'Avg' is output, not a command, so the file is read (it was 'only command lines')."""
    ef = EvidenceFacts.from_specs([str(DATA / "nccl-tests/nccl1272-avg-bus-bandwidth-line-alone.txt")])
    assert ef.lookup("nccl_tests.avg_busbw_gbps") == 24.2382
    assert not intake.is_prompt("# Avg bus bandwidth    : 24.2382")
    assert not intake.is_prompt("# Using devices")
    assert intake.is_prompt("# ibstat") and intake.is_prompt("# cd /tmp") and intake.is_prompt("# ./all_reduce_perf -b 8")
    assert intake.is_prompt("root@gpu1:~# Anything typed")  # a prompt with its user@host is one whatever follows


def test_a_command_given_without_a_prompt_names_the_output_under_it() -> None:
    # ACK's FAQ: 'docker info | grep -i cgroup' then 'Cgroup Driver: cgroupfs', no prompt; read only because nothing
    # read the paste as it stands
    from tests.corpus import DATA
    from troubleshooter.diagnosis.pasted import EvidenceFacts
    ef = EvidenceFacts.from_specs([str(DATA / "transcripts/ackdocs-docker-info-grep-cgroup-no-prompt.txt")])
    assert [f.kind for f in ef.files] == ["docker-info"]
    assert ef.factsets["target"]["docker.cgroup_driver"].value == "cgroupfs"


def test_bare_command_lines_cut_a_block_only_where_a_tool_is_named() -> None:
    from troubleshooter.diagnosis import intake
    b = intake.Block("ibv_devinfo\nFailed to get IB devices list: Function not implemented\nibstatus\n"
                     "Fatal error:  No devices\nCgroup Driver: cgroupfs\n", 1)
    parts = intake.split_bare_commands(b)
    assert [(p.command, p.kind, p.line) for p in parts] == [("ibv_devinfo", "ibv-devinfo", 2), ("ibstatus", "ibstatus", 4)]
    assert intake.split_bare_commands(intake.Block("Cgroup Driver: cgroupfs\nNCCL_DEBUG=INFO\n", 1)) == []


def test_open_mpis_timestamp_before_its_rank_tag_goes_with_it():
    # orte/mca/iof/base: --timestamp-output puts ctime() before the tag ("%s[%s,%s]<%s>:"), or before "<stdout>:"
    # alone without --tag-output
    tagged = "Mon Feb 26 12:09:14 2018[1,0]<stderr>:MPI_Wtime granularity.\nMon Feb 26 12:09:38 2018[1,564]<stderr>:x y\n"
    assert intake.clean(tagged) == "MPI_Wtime granularity.\nx y\n"
    stamped = "Tue Mar  5 09:01:02 2019<stdout>:NCCL version 2.4.2\nTue Mar  5 09:01:02 2019<stdout>:b\n"
    assert intake.clean(stamped) == "NCCL version 2.4.2\nb\n"


def test_a_syslogs_own_time_stays_for_the_parsers_that_read_it() -> None:
    # rsyslog's RFC 3339 time before "host prog[pid]:" (a real NHC capture) and journalctl -o short-iso's are the
    # log's own; only a collector's time before another tool's lines goes
    nhc = load("nhc/lbnl-nhc161-syslog-and-console-script-timed-out.txt")
    syslog = [ln for ln in nhc.splitlines() if ln.startswith("2025-")]
    assert len(syslog) >= 2 and intake.clean("\n".join(syslog)).splitlines() == syslog
    journal = ["2026-12-04T10:00:00+0000 gpu07 kernel: NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.",
               "2026-12-04T10:00:01+0000 gpu07 kernel: NVRM: GPU 0000:18:00.0: GPU has fallen off the bus."]
    assert intake.clean("\n".join(journal)).splitlines() == journal
    # lines whose first words only look like "host prog:" (lscpu's "Vendor ID:  ...") are no syslog
    lscpu = ["2026-12-04T10:00:00.5Z Vendor ID:  AuthenticAMD", "2026-12-04T10:00:00.5Z Model name:  AMD EPYC 7313",
             "2026-12-04T10:00:00.5Z CPU(s):  64"]
    assert intake.clean("\n".join(lscpu)).splitlines() == ["Vendor ID:  AuthenticAMD", "Model name:  AMD EPYC 7313",
                                                            "CPU(s):  64"]
    # nor nvlink's "Link 0: ", a sentence's "Configured with: ", pdsh's "node: prog: " (each a real capture's line)
    for line in ("Link 0: 26.562 GB/s", "Configured with: --disable-logging --disable-debug",
                 "x3202c0s31b0n0: AssertionError: Micro batch size per gpu: 0 has to be greater than 0"):
        assert intake.clean(f"2026-12-04T10:00:00.1Z {line}\n2026-12-04T10:00:00.2Z {line}\n") == f"{line}\n{line}\n"


def test_a_table_whose_first_column_looks_like_a_service_name_is_no_compose_log() -> None:
    table = "gpu0 | 80 GB | ok\ngpu1 | 80 GB | ok\ngpu2 | 80 GB | degraded\n"  # a first column that differs per row
    assert intake.clean(table) == table


def test_a_ray_workers_prefix_inside_colour_codes_that_lost_their_esc() -> None:
    # as vLLM issues show Ray's worker lines (vllm-project/vllm#2734): "[36m(RayWorkerVllm pid=4773) [0m" before each
    lines = ["[36m(RayWorkerVllm pid=4773) [0m gpu1:4773:4773 [1] NCCL INFO cudaDriverVersion 12010",
             "[36m(RayWorkerVllm pid=4773) [0m gpu1:4773:4773 [1] NCCL INFO Bootstrap : Using eth0:10.4.22.79<0>"]
    assert [ln.strip() for ln in intake.clean("\n".join(lines)).splitlines()] == [
        "gpu1:4773:4773 [1] NCCL INFO cudaDriverVersion 12010", "gpu1:4773:4773 [1] NCCL INFO Bootstrap : Using eth0:10.4.22.79<0>"]
    # systemd's status column on a serial console keeps its brackets; a lone "[5m" with no reset is text
    assert intake.clean("[[0;32m  OK  [0m] Started X.\n[[0;1;31mFAILED[0m] Failed Y.\n") == "[  OK  ] Started X.\n[FAILED] Failed Y.\n"
    assert intake.clean("took [5m] to start\n") == "took [5m] to start\n"


@pytest.mark.parametrize("rel", ["dcgm-diag/a10g-4gpu-r3-targeted-power-fail-gpu1.txt",
                                 "ibstat/ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt"])
@pytest.mark.parametrize("stamp", ["Dec  4 03:15:02", "2026-12-04T03:15:02.118904+00:00"])
def test_a_tools_output_a_service_logged_to_syslog_is_read(tmp_path: Path, rel: str, stamp: str) -> None:
    # `journalctl -u gpu-health` of a timer that runs the tool (the real capture, each line under the journal's
    # time, host and program, as journalctl and rsyslog print them): read as the tool's output
    clean = load(rel)
    want = parsers.run(parsers.detect(clean), clean)
    logged = "\n".join(f"{stamp} gpu07 gpu-health[48211]: {ln}" for ln in clean.split("\n"))
    got = _facts(tmp_path, logged)
    assert {k: got.get(k) for k in want} == want


def test_a_daemons_own_syslog_keeps_its_prefix() -> None:
    # a real NHC syslog capture: its parser reads the program and time (intake leaves them; the retry without them
    # is only for what nothing read)
    nhc = load("nhc/lbnl-nhc161-syslog-and-console-script-timed-out.txt")
    syslog = "\n".join(ln for ln in nhc.splitlines() if ln.startswith("2025-"))
    assert intake.clean(syslog) == syslog
    assert parsers.detect(syslog) == "nhc"
