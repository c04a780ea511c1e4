"""Parallel-shell pastes (pdsh, clush, dshbak) cut per node, on real captures (tests/data/pdsh, each with its
source), and nothing else taken for one: no other capture in tests/data, the evaluation or the corpus is cut."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus import strip_header
from troubleshooter.diagnosis import hostsplit, intake
from troubleshooter.diagnosis.pasted import EvidenceFacts

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PDSH = HERE / "data" / "pdsh"
UCX = PDSH / "ucx2346-dshbak-c-jazz-24-hosts-ofed-info-link-layer.txt"


def _parts(path: Path) -> list[hostsplit.Part]:
    return hostsplit.parts(intake.clean(strip_header(path.read_text())))


def test_dshbak_groups_each_under_the_command_of_its_own_pdsh_line() -> None:
    got = [p for p in _parts(UCX) if p.node]
    assert [(p.node, p.command) for p in got] == [
        ("jazz[04,08,11-32]", "ofed_info -s"),
        ("jazz[04,08,11-32]", "ibv_devinfo -d mlx5_1 | grep link_layer"),  # dshbak gathered, the grep filtered
        ("jazz[04,08,11-32]", "ibv_devinfo -d mlx5_1 | grep vendor_part_id"),
    ]
    assert got[0].lines[0] == "MLNX_OFED_LINUX-4.2-1.2.0.0:"
    assert got[1].lines[0].split() == ["link_layer:", "Ethernet"]


def test_the_group_is_read_as_one_machine_with_its_ofed_release_and_roce_port(tmp_path: Path) -> None:
    facts = EvidenceFacts.from_specs([str(UCX)])
    read = [f for f in facts.files if f.kind and not f.error]
    assert [(f.kind, f.where) for f in read] == [
        ("packages", "line 6: `ofed_info -s`"),
        ("ibv-devinfo", "line 13: `ibv_devinfo -d mlx5_1 | grep link_layer`"),
        ("ibv-devinfo", "line 20: `ibv_devinfo -d mlx5_1 | grep vendor_part_id`"),
    ]
    assert facts.lookup("ib.link_layers") == ["Ethernet"] and facts.lookup("ib.vendor_part_ids") == [4119]
    assert {f.side for f in read} == {"target"}  # one host list: the machine diagnosed


@pytest.mark.parametrize("line, remote", [
    ("#pdsh -w jazz[04,08,11-32] ofed_info -s | dshbak -c", "ofed_info -s"),
    ("[root@login1 ~]# pdsh -w gpu[01-16] -f 32 'nvidia-smi -q -d PERFORMANCE' | dshbak -c",
     "nvidia-smi -q -d PERFORMANCE"),
    ("$ sudo clush -b -w node[1-4] -- cat /proc/cmdline", "cat /proc/cmdline"),
    ("user@head:~$ clush -w @gpu -x node3 ibstat", "ibstat"),
    ("$ ansible all -i inventory -a \"uname -a\"", "uname -a"),  # the command module, Ansible's default
    ("vagrant@mgmt:~/tools$ ansible all -m shell -a \"uname -a\"", "uname -a"),
    ("$ ansible gpu --module-name=shell --args='nvidia-smi -L'", "nvidia-smi -L"),
    ("$ ansible -m ping servers", None),  # a module's JSON result, not a command's output
    ("$ pdsh-wrapper --help", None),
    ("$ ls pdsh.log", None),
    ("pdsh -w a[1-2] 'nvidia-smi -q | grep -i uuid' | sort | dshbak -c", "nvidia-smi -q | grep -i uuid | sort"),
])
def test_the_remote_command_is_read_past_the_parallel_shells_options(line: str, remote: str | None) -> None:
    assert hostsplit.remote_command(line) == remote


def _captures() -> list[Path]:
    roots = [HERE / "data", HERE / "realworld" / "cases", ROOT.parent / "shared" / "corpus"]
    return sorted(p for r in roots if r.is_dir() for p in r.rglob("*")
                  if p.is_file() and p.suffix not in (".py", ".json", ".yaml", ".md") and "pdsh" not in p.parts)


def test_no_other_capture_is_taken_for_a_parallel_shells_paste() -> None:
    files = _captures()
    assert len(files) > 1500
    cut = []
    for p in files:
        text = strip_header(p.read_bytes().decode("utf-8", "replace"))
        if hostsplit.parts(intake.clean(text)):
            cut.append(str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p))
    # the one evaluation file that is a dshbak paste (the same text as the fixture above)
    assert cut == ["tests/realworld/cases/bc-ucx2346-roce-not-lossless-retry-exceeded/setup-ofed-linklayer.txt"]


@pytest.mark.parametrize("text", [
    # an interface listing: "eth0: flags=..." lines are interfaces, not nodes
    "eth0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1500\n        inet 10.0.0.5\n"
    "ib0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 2044\n        inet 192.168.0.5\n",
    # key: value lines of one tool
    "Driver Version: 535.104.05\nCUDA Version: 12.2\nDriver Version: 535.104.05\nCUDA Version: 12.2\n",
    # one name only, without the pdsh line: not enough to call it a node's (a kernel log without timestamps is
    # one driver's name on every line: "arm-smmu-v3: option mask 0x10", tests/data/dmesg's Grace CMDQV capture)
    "gpu07: GPU 0: NVIDIA H100 80GB HBM3\ngpu07: GPU 1: NVIDIA H100 80GB HBM3\ngpu07: GPU 2: NVIDIA H100 80GB HBM3\n",
])
def test_lines_that_only_look_prefixed_are_not_cut(text: str) -> None:
    assert hostsplit.parts(text) == []


def _nodes(name: str) -> list[tuple[str | None, str | None, int, str]]:
    return [(p.node, p.command, p.numbers[0], p.lines[0]) for p in _parts(PDSH / name) if p.node]


def test_pdsh_prefixed_two_runs_each_with_its_command() -> None:
    assert _nodes("asokolsky-pdsh-uname-uptime-2-proxmox-hosts-kernel-differs.txt") == [
        ("duo", "uname -a", 2, "Linux duo 5.13.19-3-pve #1 SMP PVE 5.13.19-7 (Thu, 20 Jan 2022 16:37:56 +0100) "
                               "x86_64 GNU/Linux"),
        ("fuji", "uname -a", 3, "Linux fuji 5.13.19-4-pve #1 SMP PVE 5.13.19-9 (Mon, 07 Feb 2022 11:01:14 +0100) "
                                "x86_64 GNU/Linux"),
        ("duo", "uptime", 6, " 12:12:16 up 30 days, 14:48,  0 users,  load average: 0.15, 0.15, 0.10"),
        ("fuji", "uptime", 7, " 12:12:16 up 39 days, 23:03,  0 users,  load average: 0.01, 0.07, 0.08"),
    ]


def test_pdsh_prefixed_hosts_in_the_order_they_answered_with_their_stderr() -> None:
    got = [p for p in _parts(PDSH / "awspc2416-pdsh-hostname-3-nodes-ssh-checker-stderr-interleaved.txt") if p.node]
    assert [p.node for p in got] == ["ip-10-0-248-39", "ip-10-0-254-161", "ip-10-0-208-156"]
    assert [len(p.lines) for p in got] == [3, 3, 3]
    assert [p.lines[-1] for p in got] == ["ip-10-0-248-39", "ip-10-0-254-161", "ip-10-0-208-156"]


def test_clush_b_groups_with_and_without_their_count() -> None:
    # the first group's output is one line between two rules, which is not a header
    assert _nodes("dantezhao-clush-b-ls-4-hadoop-nodes-z1-differs.txt") == [
        ("z[2-4]", "ls /mnt/zhao/package/", 5, "jdk-7u79-linux-x64.tar.gz"),
        ("z1", "ls /mnt/zhao/package/", 9, "clustershell-1.6.tar.gz"),
    ]


def test_dshbak_after_pdshs_own_exit_code_line() -> None:
    parts = _parts(PDSH / "ocitutorials-dshbak-c-ls-4-nodes-one-fails-pdsh-exit-code-line.txt")
    # the pdsh line itself is not part of any node's output, nor of the lines around them
    assert parts[0].node is None and parts[0].lines == ["pdsh@bastion: inst-odzeg-x9-ol8: ssh exited with exit code 2"]
    assert [(p.node, p.command, p.lines[0]) for p in parts if p.node] == [
        ("inst-cnspy-x9-ol8,inst-dw5fd-x9-ol8,inst-slz8n-x9-ol8", "ls /tmp/hosts 2>&1", "/tmp/hosts"),
        ("inst-odzeg-x9-ol8", "ls /tmp/hosts 2>&1", "ls: cannot access '/tmp/hosts': No such file or directory"),
    ]


def test_a_coalesced_dshbak_group_is_one_machine_read_by_its_command() -> None:
    path = PDSH / "ocitutorials-gpu4-dshbak-c-rdma-link-show-2-a100-nodes-coalesced.txt"
    assert _nodes(path.name)[0][:2] == ("inst-xxxxx-gpu4-ol89,inst-yyyyy-gpu4-ol89", "rdma link show | grep rdma")
    facts = EvidenceFacts.from_specs([str(path)])
    read = [f for f in facts.files if f.kind and not f.error]
    assert [f.kind for f in read] == ["rdma-link"]
    assert facts.lookup("ib.active_ports") == 16
    assert facts.lookup("ib.down_ports") == []


def test_dshbak_blocks_per_host_are_two_nodes() -> None:
    path = PDSH / "ocitutorials-gpu4-dshbak-ip-a-rdma-2-a100-nodes-per-host-blocks.txt"
    assert [(n, c, at) for n, c, at, _ in _nodes(path.name)] == [
        ("inst-xxxxx-gpu4-ol89", "ip a | grep -e eth0 -e rdma | grep inet", 5),
        ("inst-yyyyy-gpu4-ol89", "ip a | grep -e eth0 -e rdma | grep inet", 25),
    ]


def test_ansible_ad_hoc_runs_per_host() -> None:
    # a slide deck's run (Ansible before 2.8: SUCCESS), its command continued over three lines
    assert [(n, c, at) for n, c, at, _ in _nodes("ansible-simply-ansible-uname-a-3-hosts-kernel-differs.txt")] == [
        ("services", "uname -a", 5), ("mariadb", "uname -a", 8), ("pdns", "uname -a", 11)]
    # six Raspberry Pis answering in their own order, each with its free -m table
    got = _nodes("ansible-kalaxy-free-m-6-raspi-nodes.txt")
    assert [n for n, *_ in got] == ["node6", "node1", "node2", "node5", "node3", "node4"]
    assert {c for _, c, *_ in got} == {"free -m"}
    # inventory names with an underscore, a failed host's output kept as its own; the command line was pasted
    # without its first letter ("nsible ..."), so no command is known for the hosts
    got = _nodes("ansible-doubinin-hostname-ifconfig-2-hosts-one-failed-rc127.txt")
    assert [(n, c, at, first) for n, c, at, first in got] == [
        ("work_01", None, 3, "sa-centos-5"),
        ("work_02", None, 22, "sa-ubuntu-6/bin/sh: 1: ifconfig: not foundnon-zero return code")]


def test_ansible_uname_across_hosts_gives_each_kernel() -> None:
    facts = EvidenceFacts.from_specs([str(PDSH / "ansible-evseichik-uname-a-3-hosts-3-kernels.txt")])
    assert {n: facts.lookup("host.kernel_release", n) for n in ("178.124.206.48", "centos", "ubuntu")} == {
        "178.124.206.48": "3.10.0-862.el7.x86_64", "centos": "3.10.0-957.1.3.el7.x86_64", "ubuntu": "4.15.0-43-generic"}


def test_a_node_named_like_a_side_of_the_job_stays_a_node() -> None:
    # made up: an inventory host called "container" must not become the job's container side
    text = ("container | CHANGED | rc=0 >>\nLinux a 5.4.0-88-generic #99-Ubuntu SMP Thu Sep 23 17:29:00 UTC 2021 x86_64 "
            "GNU/Linux\nweb1 | CHANGED | rc=0 >>\nLinux b 5.4.0-88-generic #99-Ubuntu SMP Thu Sep 23 17:29:00 UTC 2021 "
            "x86_64 GNU/Linux\n")
    assert [(b.side, b.line) for b in hostsplit.split(text)] == [("node-container", 2), ("web1", 4)]


def test_a_parallel_shell_run_through_sudo_starts_its_run() -> None:
    # the real clush -b capture above with "sudo " put before clush by hand: the line that names the command
    # every node ran is found past sudo, as remote_command reads it
    text = strip_header((PDSH / "dantezhao-clush-b-ls-4-hadoop-nodes-z1-differs.txt").read_text())
    text = text.replace("$ clush -b", "$ sudo clush -b", 1)
    got = [(p.node, p.command) for p in hostsplit.parts(intake.clean(text)) if p.node]
    assert got == [("z[2-4]", "ls /mnt/zhao/package/"), ("z1", "ls /mnt/zhao/package/")]


def test_kubectl_logs_of_several_pods_with_prefix_are_each_pods_node(tmp_path: Path) -> None:
    # `kubectl logs -l job-name=train --prefix --timestamps`: two workers' lines interleaved, each after its pod and
    # the time; here two real ibstat captures (tests/data/ibstat, one with a port down) given as the two pods' logs
    down = strip_header((HERE / "data/ibstat/ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt").read_text())
    up = strip_header((HERE / "data/ibstat/ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt").read_text())
    a = [f"[pod/train-worker-0/pytorch] 2026-12-04T10:00:00.{i:09d}Z {ln}" for i, ln in enumerate(down.splitlines())]
    b = [f"[pod/train-worker-1/pytorch] 2026-12-04T10:00:00.{i:09d}Z {ln}" for i, ln in enumerate(up.splitlines())]
    mixed = [x for pair in zip(a, b) for x in pair] + a[len(b):] + b[len(a):]
    path = tmp_path / "kubectl-logs.txt"
    path.write_text("$ kubectl logs -l job-name=train --prefix --timestamps\n" + "\n".join(mixed) + "\n")
    facts = EvidenceFacts.from_specs([str(path)])
    assert {f.side for f in facts.files if f.kind} == {"train-worker-0", "train-worker-1"}
    alone = EvidenceFacts.from_specs([f"train-worker-0:{_write(tmp_path / 'a.txt', down)}",
                                      f"train-worker-1:{_write(tmp_path / 'b.txt', up)}"])
    for side in ("train-worker-0", "train-worker-1"):
        assert facts.factset(side).as_dict() == alone.factset(side).as_dict()
    assert facts.lookup("ib.down_ports", "train-worker-0") == ["mlx5_1:1"]


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def _mixed(*outputs: tuple[str, str]) -> list[str]:
    """Labelled outputs' lines as they arrive mixed: one line of each in turn."""
    tagged = [[f"{label}: {ln}" for ln in text.splitlines()] for label, text in outputs]
    out = []
    for i in range(max(len(t) for t in tagged)):
        out += [t[i] for t in tagged if i < len(t)]
    return out


def test_srun_l_output_of_two_nodes_mixed_line_by_line_is_each_tasks_own(tmp_path: Path) -> None:
    # `srun -N2 -l ibstat`: the two nodes' ibstat lines arrive mixed; without their labels they would be one ibstat
    # made of two (read as 7 facts of nonsense before). Two real captures (tests/data/ibstat) as the two tasks'
    down = strip_header((HERE / "data/ibstat/ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt").read_text())
    up = strip_header((HERE / "data/ibstat/ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt").read_text())
    path = tmp_path / "srun.txt"
    path.write_text("user@login1:~$ srun -N2 -l ibstat\n" + "\n".join(_mixed(("0", down), ("1", up))) + "\n")
    facts = EvidenceFacts.from_specs([str(path)])
    read = [f for f in facts.files if f.kind == "ibstat"]
    assert sorted(f.side for f in read) == ["task0", "task1"]
    alone = EvidenceFacts.from_specs([f"task0:{_write(tmp_path / 'a.txt', down)}", f"task1:{_write(tmp_path / 'b.txt', up)}"])
    for side in ("task0", "task1"):
        got = facts.factset(side).as_dict()
        assert {k: got.get(k) for k in alone.factset(side).as_dict() if k.startswith("ib.")} == \
            {k: v for k, v in alone.factset(side).as_dict().items() if k.startswith("ib.")}
    assert facts.lookup("ib.down_ports", "task0") == ["mlx5_1:1"]


def test_a_jobs_log_with_mixed_task_labels_stays_one_log() -> None:
    # a real 256-node Megatron-DeepSpeed log (LUMI), srun -l labels on every line and ranks' lines mixed: each line
    # stands alone, no srun line names a per-node tool, so it is read whole as before (the last rank's iterations)
    text = strip_header((HERE / "data/steps/lumi-llm-scaling-megatron-deepspeed-iterations-seconds.txt").read_text())
    assert intake.clean(text) != text and hostsplit.parts(intake.clean(text)) == []
    blocks = hostsplit.split(intake.clean(text))
    assert all(b.side is None for b in blocks) and "2047:" not in blocks[0].text
    # and a training launch under srun -l is one job too, whatever its lines
    launch = "$ srun -N2 -l python train.py\n" + "\n".join(_mixed(("0", "a 1\nb 2\nc 3"), ("1", "a 1\nb 2\nc 3")))
    assert hostsplit.parts(intake.clean(launch)) == []


def test_mpirun_tag_output_of_a_per_node_tool_with_ranks_mixed_is_each_ranks_own(tmp_path: Path) -> None:
    # `mpirun -np 2 -H a,b --tag-output ibstat`: Open MPI tags each line "[1,RANK]<stdout>:"; the ranks' lines mixed
    down = strip_header((HERE / "data/ibstat/ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt").read_text())
    up = strip_header((HERE / "data/ibstat/ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt").read_text())
    lines = [ln.replace("0: ", "[1,0]<stdout>:", 1) if ln.startswith("0: ") else ln.replace("1: ", "[1,1]<stdout>:", 1)
             for ln in _mixed(("0", down), ("1", up))]
    path = tmp_path / "mpirun.txt"
    path.write_text("$ mpirun -np 2 -H gpu07,gpu08 --tag-output ibstat\n" + "\n".join(lines) + "\n")
    facts = EvidenceFacts.from_specs([str(path)])
    assert sorted(f.side for f in facts.files if f.kind == "ibstat") == ["rank0", "rank1"]
    assert facts.lookup("ib.down_ports", "rank0") == ["mlx5_1:1"] and facts.lookup("ib.down_ports", "rank1") == []
