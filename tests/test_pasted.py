"""diagnose --evidence: diagnosing from outputs someone pasted (issue 8)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from troubleshooter.diagnosis import engine as eng
from troubleshooter.diagnosis import profiles
from troubleshooter.probe.bundle import Bundle
from troubleshooter.diagnosis.pasted import EvidenceFacts, PastedError, infer_symptom
from troubleshooter.service.practice import load_cases
from troubleshooter.probe.targets import BundleTarget
from troubleshooter.diagnosis.workbench import LiveFacts

ROOT = Path(__file__).resolve().parent.parent
PRACTICE = ROOT / "decision_trees" / "practice"
DATA = ROOT / "tests" / "data"


def walk(facts, symptom, answers=None, profile="generic"):
    e = eng.Engine(profile=profiles.get(profile).thresholds)
    return eng.auto_walk(e, symptom, facts, answers=answers or {})


@pytest.mark.parametrize("case", load_cases(), ids=lambda c: c["id"])
def test_practice_outputs_folder_reaches_the_same_causes_as_its_bundle(case):
    pasted = walk(EvidenceFacts.from_specs([str(PRACTICE / case["id"] / "outputs")]), case["symptom"],
                  case.get("answers"), case.get("profile") or "generic")
    bundled = walk(LiveFacts.for_target(BundleTarget(Bundle.open(PRACTICE / case["bundle"]))), case["symptom"],
                   case.get("answers"), case.get("profile") or "generic")
    assert sorted(c.cause for c in pasted.conclusions) == sorted(c.cause for c in bundled.conclusions)
    assert sorted(c.cause for c in pasted.conclusions) == sorted(case["expect"])


def test_real_perf_profile_dominated_by_the_smmu_queue():
    facts = EvidenceFacts.from_specs([
        str(DATA / "perf" / "arm64-64cpu-perf-top-smmu-8.99pct-queued-spin-lock.txt"),
        str(DATA / "lscpu" / "lscpu-gh200-lambda-vm-neoverse-v2-9-numa-empty.txt"),
    ])
    w = walk(facts, "moe-only-slowdown", {"dense": "yes"})
    assert [c.cause for c in w.conclusions] == ["smmu-cmdq-contention"]
    assert w.conclusions[0].evidence["perf.smmu_cmdq_pct"] == "8.99%"


def test_real_nccl_log_whose_topology_file_failed_to_parse():
    facts = EvidenceFacts.from_specs([str(DATA / "nccl-debug" / "nccl2.18.3-topo-file-xml-parse-warn-internal-error.txt")])
    w = walk(facts, "nccl-wrong-fabric")
    assert "topo-file-broken" in [c.cause for c in w.conclusions]


def test_real_vm_topology_with_the_nic_on_the_far_side():
    facts = EvidenceFacts.from_specs([
        str(DATA / "nvidia-smi-topo" / "h100x8-kvm-vm-single-mlx5-nic-sys-empty-affinity-vllm-collect-env.txt"),
        str(DATA / "lscpu" / "lscpu-spr-8462yplus-mi300x-host-even-odd-numa-interleave.txt"),
    ])
    w = walk(facts, "nccl-wrong-fabric")
    assert [c.cause for c in w.conclusions] == ["gpu-nic-far"]


def test_a_healthy_set_of_real_outputs_reaches_nothing():
    facts = EvidenceFacts.from_specs([
        str(DATA / "ibstat" / "ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt"),
        str(DATA / "nvidia-smi-topo" / "tencent-h20-vm-8gpu-8nic-gpu-numa-id.txt"),
        str(DATA / "numa" / "leonardo-dcgp-spr-snc4-2s-8nodes-numactl-lscpu-e.txt"),
    ])
    w = walk(facts, "below-reference")
    assert w.conclusions == []
    # and it says what would settle the rest
    missing = facts.missing_for(w)
    assert any("turbostat" in m["command"] for m in missing)


def test_sides_by_prefix_and_symptom_inferred(tmp_path):
    host_env = tmp_path / "env-host.txt"
    host_env.write_text("NCCL_TOPO_FILE=/etc/nccl/topo.xml\nPATH=/usr/bin\nNCCL_DEBUG=INFO\n")
    ctr_env = tmp_path / "env-ctr.txt"
    ctr_env.write_text("PATH=/usr/bin\nNCCL_DEBUG=INFO\nHOME=/root\n")
    facts = EvidenceFacts.from_specs([f"host:{host_env}", f"container:{ctr_env}"])
    assert facts.lookup("env.var.NCCL_TOPO_FILE", "host") == "/etc/nccl/topo.xml"
    assert infer_symptom(facts) == "host-ok-container-slow"


def test_undetectable_file_is_reported_not_guessed(tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("the job was slow on tuesday\nplease look\n")
    good = DATA / "ibstat" / "ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt"
    facts = EvidenceFacts.from_specs([str(junk), str(good)])
    lines = "\n".join(facts.report_lines())
    assert "notes.txt: NOT USED" in lines and "cannot tell" in lines
    assert next(f for f in facts.files if f.path == junk).kind is None
    with pytest.raises(PastedError):
        EvidenceFacts.from_specs([str(junk)])


def test_kind_override_and_several_files_of_one_kind(tmp_path):
    a = DATA / "nccl-tests" / "dgx-spark-gb10-all_gather-fec-none-slow-v2.18.3.txt"
    b = DATA / "nccl-tests" / "h200-baremetal-vs-kvm-vm-passthrough-collapse.txt"
    facts = EvidenceFacts.from_specs([f"nccl-tests={a}", str(b)])
    kinds = [(f.path.name, f.kind, f.how) for f in facts.files]
    # a prompt alone (cd ~/nccl-tests) is not an unreadable output; the `sudo ethtool --show-fec` between the runs is
    # ethtool's, which the kind the file was named cannot read: said so, with how to have it read
    errors = [f for f in facts.files if f.error]
    assert [(f.where, f.kind) for f in errors] == [("line 42: `sudo ethtool --show-fec enp1s0f0np0`", "nccl-tests")]
    assert errors[0].error.endswith("(its command is ethtool's: give the file without a kind to read it)")
    # the variables each mpirun passes with -x are the environment of its run, and its line where it places the
    # ranks, whatever kind the file was named
    assert [k for n, k, _ in kinds if n == a.name] == ["env", "mpirun", "nccl-tests", "nccl-tests", "env", "mpirun"]
    assert [k for n, k, _ in kinds if n == b.name] == ["env", "mpirun", "nccl-tests", "env", "mpirun", "env", "mpirun"]
    assert {f.how for f in facts.files if f.path == a and f.kind == "nccl-tests"} == {"named"}
    # each paste holds several runs, each after its own mpirun line: read together as one output (the first
    # block's place kept), so no run's numbers are dropped
    nccl = {f.path.name: f for f in facts.files if f.kind == "nccl-tests" and not f.error}
    assert nccl[a.name].facts["nccl_tests.run_count"] == 2  # via the switch 21.4, the direct cable 2.8
    assert nccl[b.name].facts["nccl_tests.run_count"] == 3  # bare metal 475.8, the VM 27.5, the VM again 52.8
    assert (nccl[b.name].how, nccl[b.name].where.split(":")[0]) == ("command", "line 2")
    assert len(facts.kinds_by_side["target"]["nccl-tests"]) == 2


def test_cli_json_has_conclusions_hypotheses_and_missing_evidence():
    out = subprocess.run(
        [sys.executable, "-m", "troubleshooter", "diagnose", "--evidence", str(PRACTICE / "case2" / "outputs"),
         "--symptom", "bimodal-step-time", "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr  # root causes found
    doc = json.loads(out.stdout)
    assert sorted(c["cause"] for c in doc["conclusions"]) == ["cores-shared-housekeeping", "cstates-limited", "numa-remote"]
    assert {h["state"] for h in doc["hypotheses"]} >= {"ruled-in"}
    assert isinstance(doc["missing_evidence"], list)
    assert "read these outputs" in out.stderr


def test_logs_of_one_side_from_several_files_are_read_together():
    """Two nodes' NCCL logs attached as two files: the facts of both count (the hosts), not only the last file's."""
    d = DATA / "nccl-debug"
    logs = [d / "aws-p4d-eks-4pods-same-node-efa-libfabric-nccl2.27.3.txt", d / "azure-2node-ib-not-colocated-completion-error-12.txt"]
    single = [EvidenceFacts.from_specs([str(p)]).factset("target").get("nccl.hosts") for p in logs]
    both = EvidenceFacts.from_specs([str(p) for p in logs]).factset("target").get("nccl.hosts")
    assert set(both.value) == set(single[0].value) | set(single[1].value)
    assert "read together" in both.source


def test_nccl_tests_run_with_nccl_debug_gives_the_facts_of_both():
    # the command names nccl-tests; the NCCL INFO lines interleaved in its output are NCCL's log
    f = DATA / "nccl-debug" / "a100-sxm4-docker-no-ib-socket-fallback-p2p-direct-2gpu.txt"
    facts = EvidenceFacts.from_specs([str(f)])
    assert {(x.kind, x.how) for x in facts.files} >= {("nccl-tests", "command"), ("nccl-debug", "interleaved")}
    assert facts.lookup("nccl.socket_fallback") is True
    assert facts.lookup("nccl_tests.busbw_at_max_size_gbps") is not None


def test_every_run_of_a_transcript_keeps_the_collective_its_command_names():
    # nccl-tests#256: a bare-metal run at one prompt, the VM runs at another; the blocks are read as one output,
    # and the later prompts' command lines (which name all_reduce_perf) were dropped, so the VM runs had none
    f = DATA / "nccl-tests" / "h200-baremetal-vs-kvm-vm-passthrough-collapse.txt"
    runs = EvidenceFacts.from_specs([f"host:{f}"]).lookup("nccl_tests.runs")
    assert [(r.get("collective"), r["max_busbw_gbps"]) for r in runs] == [
        ("all_reduce", 488.81), ("all_reduce", 57.78), ("all_reduce", 107.63)]


def test_a_file_nothing_could_read_does_not_make_a_second_machine(tmp_path):
    """Two host outputs and one unreadable paste marked with another side: the host is still the machine diagnosed."""
    from troubleshooter.diagnosis.pasted import EvidenceFacts

    junk = tmp_path / "vendor-log.txt"
    junk.write_text("GetGPGPUPwr: End of table reached (Entry 92). Didn't find a power table match for device\n")
    ef = EvidenceFacts.from_specs(["host:" + str(DATA / "nvidia-smi-q-fragments/q-d-performance-driver495-one-gpu-idle-active.txt"),
                                   "bmc:" + str(junk)])
    read = [f for f in ef.files if f.kind and not f.error]
    assert read and all(f.side == "target" for f in read)
    assert ef.has_side("target") and not ef.has_side("host")


def test_a_docker_run_transcript_gives_the_hook_error_and_the_run_line(tmp_path):
    # nvidia-container-toolkit#260's command and error, pasted as a terminal transcript: the docker run line is read
    # by its kind, the error under it by the hook's (its command names nvidia-smi, whose output is not there)
    real = (Path(__file__).parent / "data" / "nvidia-container-cli" /
            "driver-not-loaded-nvct260-backticked-in-prose-failed-to-create-shim.txt").read_text()
    error = next(ln for ln in real.splitlines() if ln.startswith("`docker: Error")).strip("`")
    paste = tmp_path / "transcript.txt"
    paste.write_text(f"user@gpu1:~$ sudo docker run --rm --gpus all nvidia/cuda:11.0-base nvidia-smi\n{error}\n")
    facts = EvidenceFacts.from_specs([str(paste)])
    kinds = {f.kind for f in facts.files if not f.error}
    assert kinds == {"docker-run", "nvidia-container-cli"}
    assert facts.lookup("container_cli.error_kinds") == ["driver-not-loaded"]
    assert facts.lookup("docker.gpus") == "all"


def test_the_hook_error_inside_another_tools_output_is_read_too(tmp_path):
    # NVIDIA/k8s-device-plugin#1431's paste under an `nvidia-smi` prompt: the command's table is not there, detection
    # gives the block to nvidia-smi's mismatch message, and the hook's error in it is read beside (interleaved)
    real = (Path(__file__).parent / "data" / "nvidia-container-cli" /
            "driver-library-mismatch-k8sdp1431-containerd-task-with-nvidia-smi.txt").read_text()
    paste = tmp_path / "node.txt"
    paste.write_text("root@node:~# nvidia-smi\n" + real.split("\n\n", 1)[1])
    facts = EvidenceFacts.from_specs([str(paste)])
    assert {f.kind for f in facts.files if not f.error} == {"nvidia-smi-status", "nvidia-container-cli"}
    assert facts.lookup("container_cli.error_kinds") == ["driver-library-mismatch"]
    assert facts.lookup("gpu.smi_error_kind") == "driver-library-mismatch"


def test_one_named_node_beside_the_jobs_outputs_is_its_host_or_its_machine_and_two_nodes_stay_apart():
    conf = DATA / "slurm-conf" / "slurm-gcp-startup-cgroup-conf-constraindevices-commented-out.txt"
    env = DATA / "env" / "srun-env-grep-slurm-job476-cn1.txt"
    contained = EvidenceFacts.from_specs([f"nodeGPU01:{conf}", f"container:{env}"])
    assert {f.side for f in contained.files} == {"host", "target"}
    assert "node nodeGPU01's outputs, read as the job's host" in next(f.how for f in contained.files if f.side == "host")
    bare = EvidenceFacts.from_specs([f"node08:{conf}", str(env)])
    assert {f.side for f in bare.files} == {"target"}  # no container: the node is the job's own machine
    two = EvidenceFacts.from_specs([f"node-a:{conf}", f"node-b:{conf}", str(env)])
    assert {f.side for f in two.files} == {"node-a", "node-b", "target"}


def test_a_paste_both_fallback_kinds_claim_is_read_by_both(tmp_path):
    # a harmless warning and the program's own exception, the lines of two real captures in one paste
    benign = (DATA / "benign-messages" / "nvctdocs-groups-cannot-find-name-for-gid.txt").read_text()
    exc = (DATA / "python-traceback" / "alcfdocs-deepspeed-assertion-host-prefixed-alone.txt").read_text()
    paste = tmp_path / "both.txt"
    paste.write_text("".join(ln + "\n" for ln in (benign + exc).split("\n") if ln and not ln.startswith("#%")))
    ev = EvidenceFacts.from_specs([str(paste)])
    assert sorted(f.kind for f in ev.files) == ["benign-messages", "python-traceback"]


def test_privileged_alone_does_not_say_the_node_is_meant_to_use_rdma():
    """ByteTrack#302's docker run has --privileged and no /dev/infiniband: every device the host has, which says
    nothing of RDMA; a line naming /dev/infiniband (OneFlow's DLPerf multi-node run) does."""
    from troubleshooter.model.facts import Unknown

    from .corpus import DATA
    priv = EvidenceFacts.from_specs([str(DATA / "nvidia-container-cli/no-gpu-runtime-bytetrack302-could-not-select-then-docker-run-command.txt")])
    assert priv.lookup("docker.privileged") is True
    assert isinstance(priv.lookup("rdma.expected"), Unknown)
    named = EvidenceFacts.from_specs([str(DATA / "docker-run/oneflow-dlperf-multinode-ib-privileged-shm16g-memlock.txt")])
    assert named.lookup("docker.rdma_devices_named") is True
    assert named.lookup("rdma.expected") is True
