"""The three examples of issue 15, in the form the issue describes: each reaches its right answer from the
evidence a person would paste (the inputs are written here in each tool's exact format, since the issue
defines them; tests/realworld holds the cases taken verbatim from public threads)."""

from __future__ import annotations

from pathlib import Path

from troubleshooter.diagnosis.pasted import EvidenceFacts, infer_symptom
from troubleshooter.service.diagnose import diagnose

DATA = Path(__file__).parent / "data"

HOST_ENV = """user@gpu-node-17:~$ env | sort
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
HOME=/home/user
NCCL_DEBUG=WARN
NCCL_IB_HCA=mlx5
NCCL_TOPO_FILE=/etc/nccl/topo.xml
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
"""
CONTAINER_ENV = """root@3f2a9c1b7d4e:/workspace# env | sort
CUDA_VERSION=12.4.1
HOME=/root
NCCL_VERSION=2.21.5
NVIDIA_VISIBLE_DEVICES=all
PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
"""
CMDLINE = """$ cat /proc/cmdline
BOOT_IMAGE=/vmlinuz-5.15.0-105-generic root=UUID=0b1f2c3d ro intel_idle.max_cstate=1 processor.max_cstate=1 quiet
"""
TURBOSTAT = """$ sudo turbostat --quiet --interval 5 --num_iterations 1
Core\tCPU\tAvg_MHz\tBusy%\tBzy_MHz\tTSC_MHz\tIPC\tIRQ\tPOLL\tC1\tPOLL%\tC1%\tCPU%c1\tCPU%c6\tCoreTmp\tPkgTmp\tPkgWatt
-\t-\t152\t4.95\t3072\t2600\t1.21\t41234\t212\t40122\t0.01\t95.04\t95.05\t0.00\t48\t52\t251.32
0\t0\t3010\t98.01\t3071\t2600\t1.52\t3021\t0\t12\t0.00\t1.99\t1.99\t0.00\t55\t52\t126.20
0\t56\t38\t1.24\t3069\t2600\t0.40\t221\t2\t388\t0.00\t98.76\t98.76
"""
NUMASTAT = """user@gpu-node-03:~$ sudo numastat -p 4391

Per-node process memory usage (in MBs) for PID 4391 (python)
                           Node 0          Node 1           Total
                  --------------- --------------- ---------------
Huge                         0.00            0.00            0.00
Heap                         0.02         1210.44         1210.46
Stack                        0.00            0.18            0.18
Private                      0.61        48731.90        48732.51
----------------  --------------- --------------- ---------------
Total                        0.63        49942.52        49943.15
"""


def _run(tmp_path: Path, files: dict[str, str], symptom: str | None = None):
    specs = []
    for spec, text in files.items():
        side, _, name = spec.rpartition(":")
        (tmp_path / name).write_text(text)
        specs.append(f"{side}:{tmp_path / name}" if side else str(tmp_path / name))
    facts = EvidenceFacts.from_specs(specs)
    walk, doc = diagnose(symptom or infer_symptom(facts), facts, answers={}, profile_id=None,
                         target_desc={"kind": "evidence", "label": "test"})
    return walk, doc


def test_case4_from_two_env_listings_and_the_hosts_topology_file(tmp_path):
    topo = (DATA / "nccl-topo" / "azure-ndv5-h100-topo.xml.txt").read_text()
    walk, doc = _run(tmp_path, {"host:env-host.txt": HOST_ENV, "container:env-container.txt": CONTAINER_ENV,
                                "host:topo.xml": topo})
    assert [c.cause for c in walk.conclusions] == ["topo-not-in-container"]
    fixes = " ".join(f["command"] for f in walk.conclusions[0].fixes)
    assert "--container-mounts=/etc/nccl/topo.xml:/etc/nccl/topo.xml:ro" in fixes


def test_case4_from_the_two_env_listings_alone(tmp_path):
    walk, _ = _run(tmp_path, {"host:env-host.txt": HOST_ENV, "container:env-container.txt": CONTAINER_ENV})
    assert [c.cause for c in walk.conclusions] == ["topo-not-in-container"]


def test_cstates_from_cmdline_and_turbostat_without_turbo_ratio_or_virt(tmp_path):
    walk, doc = _run(tmp_path, {"cmdline.txt": CMDLINE, "turbostat.txt": TURBOSTAT})
    assert "cstates-limited" in [c.cause for c in walk.conclusions]
    assert doc["headline"].startswith("1 root cause found")


def test_numastat_alone_cannot_say_local_without_the_cpu_binding(tmp_path):
    walk, doc = _run(tmp_path, {"numastat.txt": NUMASTAT}, symptom="bimodal-step-time")
    hyp = next(h for h in walk.hypotheses if h.id == "numa-remote")
    assert hyp.state == "untested"
    step = next(s for s in walk.steps if s.title.startswith("How much of the training process's memory"))
    assert "cannot tell whether they are remote without the CPU binding" in step.because
    assert "taskset -cp" in step.because and "numactl --show" in step.because
    assert "untested" in doc["headline"] and "nothing wrong" not in doc["headline"]


def test_numastat_with_the_binding_says_remote(tmp_path):
    binding = "pid 4391's current affinity list: 0-15\n"
    numactl = ("available: 2 nodes (0-1)\nnode 0 cpus: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\nnode 0 size: 257000 MB\n"
               "node 0 free: 100000 MB\nnode 1 cpus: 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31\n"
               "node 1 size: 257000 MB\nnode 1 free: 100000 MB\nnode distances:\nnode   0   1\n  0:  10  21\n  1:  21  10\n")
    walk, _ = _run(tmp_path, {"numastat.txt": NUMASTAT, "taskset.txt": binding, "numactl.txt": numactl},
                   symptom="bimodal-step-time")
    assert "numa-remote" in [c.cause for c in walk.conclusions]  # its threads run on node 0, its pages on node 1
