import pytest
from hypothesis import given, settings, strategies as st

from troubleshooter.model import facts
from troubleshooter import parsers
from troubleshooter.parsers import ParseError
from tests.corpus import files, load

JOB = "slurm/scontrol-tgcc-irene-ccc-msub-slurm-general-memory-accounting-energy-summary.txt"
NODE = "slurm/scontrol-show-node-dgx-a800-sockets-256-cores-1-gres-socket-affinity-slurm21.08.txt"
GREP = "env/srun-env-grep-slurm-job476-cn1.txt"


def test_scontrol_job_embedded_in_epilogue():
    f = parsers.run("scontrol-job", load(JOB))
    assert f["slurm.job.id"] == "2120478"
    assert f["slurm.job.name"] == "MPI_PMV"
    assert f["slurm.job.state"] == "RUNNING"
    assert f["slurm.job.reason"] == "None"
    assert f["slurm.job.partition"] == "rome"
    assert f["slurm.job.nodelist"] == "inti6015"
    assert f["slurm.job.num_nodes"] == 1
    assert f["slurm.job.num_cpus"] == 16
    assert f["slurm.job.num_tasks"] == 16
    assert f["slurm.job.tres"] == {"cpu": 16, "mem": "30000M", "node": 1, "billing": 16}
    assert f["slurm.job.gres"] == ""  # JOB_GRES=(null)
    assert "slurm.job.gpus" not in f
    assert f["slurm.job.run_time_s"] == 23
    assert f["slurm.job.time_limit_s"] == 180
    assert (f["slurm.job.user"], f["slurm.job.uid"], f["slurm.job.account"]) == ("tabernera", 4224, "ocre@cpu")
    assert f["slurm.job.command"] == "/tmp/MPI_job16.sh_PvQDDi"
    assert f["slurm.job.work_dir"] == "/ccc/work/cont001/ocre/tabernera/MPI/MPI_PMV_1.1"
    assert f["slurm.job.batch_host"] == "inti6015"
    assert f["slurm.job.node_alloc"] == [{"nodes": "inti6015", "cpu_ids": "16-47", "mem": "30000", "gres": ""}]
    assert f["slurm.job.fields"]["Licenses"] == "fs_scratch,fs_work"
    assert f["slurm.job.fields"]["AllocNode:Sid"] == "inti6015:171559"
    assert f["slurm.job.records"] == 1  # the sacct tables after the blank line are not read


def test_scontrol_job_spaces_gpus_and_array():
    text = ("JobId=77 ArrayJobId=70 ArrayTaskId=7 JobName=train llm\n"
            "   JobState=PENDING Reason=Resources Dependency=(null)\n"
            "   RunTime=1-02:03:04 TimeLimit=UNLIMITED TimeMin=N/A\n"
            "   NodeList=(null)\n   NumNodes=4-4 NumCPUs=64\n"
            "   TRES=cpu=64,node=4,billing=64,gres/gpu=32\n   TresPerNode=gres:gpu:8\n"
            "   Command=/home/u/run.sh --lr=3e-4 --name My Run\n")
    f = parsers.run("scontrol-job", text)
    assert f["slurm.job.array"] == "70_7"
    assert f["slurm.job.run_time_s"] == 93784
    assert "slurm.job.time_limit_s" not in f and "slurm.job.nodelist" not in f and "slurm.job.num_nodes" not in f
    assert f["slurm.job.gpus"] == 32
    assert f["slurm.job.gres"] == "gres:gpu:8"
    assert f["slurm.job.command"] == "/home/u/run.sh --lr=3e-4 --name My Run"
    assert f["slurm.job.reason"] == "Resources"


def test_scontrol_node_misdescribed_topology():
    f = parsers.run("scontrol-node", load(NODE))
    assert f["slurm.node.name"] == "dgx001"
    assert f["slurm.node.state"] == "MIXED"
    assert f["slurm.node.gres"] == "gpu:A800:8(S:16-31,48-63,80-95,112-127,144-159,176-191,210-223,240-255)"
    assert (f["slurm.node.sockets"], f["slurm.node.cores_per_socket"], f["slurm.node.threads_per_core"]) == (256, 1, 1)
    assert (f["slurm.node.cpus"], f["slurm.node.cpus_alloc"]) == (256, 128)
    assert f["slurm.node.real_memory_mb"] == 2034931
    assert f["slurm.node.free_memory_mb"] == 1644035
    assert f["slurm.node.cpu_load"] == 9.12
    assert f["slurm.node.gpus"] == 8
    assert f["slurm.node.alloc_tres"] == {"cpu": 128, "gres/gpu": 8}
    assert f["slurm.node.os"] == "Linux 5.4.0-156-generic #173-Ubuntu SMP Tue Jul 11 07:25:22 UTC 2023"
    assert f["slurm.node.partitions"] == ["defq"]
    assert f["slurm.node.slurm_version"] == "21.08.8-2"
    assert "slurm.node.reason" not in f


def test_scontrol_node_lines_grepd_under_the_command_that_names_the_node():
    # the real record, through `scontrol show node dgx001 | grep -i tres` (the lines grep keeps, under its command)
    lines = [ln for ln in load(NODE).split("\n") if "tres" in ln.lower()]
    f = parsers.run("scontrol-node", "# scontrol show node dgx001 | grep -i tres\n" + "\n".join(lines) + "\n")
    assert (f["slurm.node.name"], f["slurm.node.gpus"]) == ("dgx001", 8)
    assert f["slurm.node.alloc_tres"] == {"cpu": 128, "gres/gpu": 8}
    # after the prompts a transcript has (the shared prompt builder's: here a bracketed user@host one)
    f = parsers.run("scontrol-node", "[admin@head ~]$ scontrol show node dgx001 | grep -i tres\n" + "\n".join(lines) + "\n")
    assert f["slurm.node.name"] == "dgx001"
    # without the command line, or with lines that are not the record's, they are nobody's record
    with pytest.raises(ParseError):
        parsers.run("scontrol-node", "\n".join(lines) + "\n")
    with pytest.raises(ParseError):
        parsers.run("scontrol-node", "$ scontrol show node dgx001 | grep -i tres\n" + "\n".join(lines) + "\nsomething else\n")
    # two nodes' lines (a node list): the same key twice, refused
    with pytest.raises(ParseError):
        parsers.run("scontrol-node", "$ scontrol show node dgx[001-002] | grep CfgTRES\n" + lines[0] + "\n" + lines[0] + "\n")
    with pytest.raises(ParseError):
        parsers.run("scontrol-node", "$ scontrol show node dgx001 | grep CfgTRES\n" + lines[0] + "\n" + lines[0] + "\n")


def test_scontrol_node_trailing_reason_with_spaces():
    f = parsers.run("scontrol-node", "NodeName=n1 CPUTot=8 State=DOWN+DRAIN\n   Reason=Kill task failed [root@2024-01-01T00:00:00]\n")
    assert f["slurm.node.reason"] == "Kill task failed [root@2024-01-01T00:00:00]"


def test_slurm_env_grep():
    f = parsers.run("slurm-env", load(GREP))
    assert (f["slurm.job_id"], f["slurm.step_id"], f["slurm.node"], f["slurm.nodelist"]) == ("476", "0", "cn1", "cn1")
    assert (f["slurm.num_nodes"], f["slurm.localid"], f["slurm.procid"], f["slurm.ntasks"]) == (1, 0, 0, 1)
    assert f["slurm.in_job"] is True and f["slurm.in_step"] is True
    assert len(f["env.slurm"]) == 54


def test_slurm_env_outside_a_job():
    f = parsers.run("slurm-env", "PATH=/usr/bin\nHOME=/root\n")
    assert f == {"slurm.in_job": False, "slurm.in_step": False, "env.slurm": {}}


@pytest.mark.parametrize("kind", ["scontrol-job", "scontrol-node", "slurm-env"])
@pytest.mark.parametrize("text", ["", " \n", "srun: error: task 0 launch failed\n"])
def test_empty_or_other(kind, text):
    with pytest.raises(ParseError):
        parsers.run(kind, text)


def test_detect():
    assert parsers.detect(load(JOB)) == "scontrol-job"
    assert parsers.detect(load(NODE)) == "scontrol-node"
    assert parsers.detect(load(GREP)) == "slurm-env"  # only SLURM_* lines: slurm-env, not env
    mine = {"scontrol-job", "scontrol-node", "slurm-env", "env", "container", "nccl-conf", "nccl-topo", "topo-file-probe"}
    for p in files("slurm"):  # the pyxis/enroot logs are not ours to take
        if not p.name.startswith("scontrol"):
            assert not any(k in mine and s >= 0.5 for s, k in parsers.scores(load(f"slurm/{p.name}"))), p.name


def test_declared_facts():
    for kind, path in (("scontrol-job", JOB), ("scontrol-node", NODE), ("slurm-env", GREP)):
        declared = parsers.get(kind).facts
        for name in parsers.run(kind, load(path)):
            assert name in declared and facts.is_known_name(name), name


@settings(max_examples=100, deadline=None)
@given(st.text())
def test_random_text_only_parse_error(text):
    for kind in ("scontrol-job", "scontrol-node", "slurm-env"):
        for t in (text, "JobId=1 " + text, "NodeName=x " + text):
            try:
                parsers.get(kind).func(t)
            except ParseError:
                pass
