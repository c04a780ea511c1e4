import os

import pytest
from hypothesis import given, settings, strategies as st

from troubleshooter.model import facts
from troubleshooter import parsers
from troubleshooter.parsers import ParseError
from tests.corpus import files, load


def parse(text):
    return parsers.run("env", text)


def test_srun_env_with_prompt_and_slurmstepd_stderr():
    f = parse(load("env/srun-env-slurm-step-job476-cn1-prompt-and-slurmstepd-stderr.txt"))
    assert f["env.format"] == "env"
    assert f["env.count"] == 82
    assert f["env.var.TMPDIR"] == "/tmp"  # the fused slurmstepd stderr lines are not part of the value
    assert f["env.var.LESSOPEN"] == "| /usr/bin/lesspipe %s"
    assert f["env.var.SLURM_CPU_BIND"] == "quiet,mask_cpu:0x0000000001"
    assert f["env.var.LS_COLORS"].startswith("rs=0:di=01;34:") and f["env.var.LS_COLORS"].endswith("*.xspf=00;36:")
    assert f["env.nccl"] == {} and f["env.cuda"] == {}
    assert f["env.slurm"]["SLURM_JOB_PARTITION"] == "normal"
    assert len(f["env.slurm"]) == 54
    assert f["slurm.in_job"] is True and f["slurm.in_step"] is True
    assert (f["slurm.job_id"], f["slurm.step_id"], f["slurm.node"], f["slurm.nodelist"]) == ("476", "0", "cn1", "cn1")
    assert (f["slurm.num_nodes"], f["slurm.localid"], f["slurm.procid"], f["slurm.ntasks"]) == (1, 0, 0, 1)
    assert "slurm.gpus" not in f  # no GPUs in this job
    assert "nccl.topo_file.env" not in f
    assert f["env.container_markers"] == [] and f["env.secret_names"] == []


def test_proc_environ_nul_separated_container():
    raw = load("env/proc-self-environ-bwrap-container-nccl-slurm-nul.txt")
    assert "\x00" in raw
    f = parse(raw)
    assert f["env.format"] == "environ"
    assert f["env.count"] == 25
    assert f["nccl.topo_file.env"] == "/etc/nccl/topo.xml"
    assert f["nccl.ib_qps_per_connection"] == 4
    assert f["nccl.ib_hca"] == "=mlx5_0:1,mlx5_1:1"
    assert f["nccl.debug"] == "INFO"
    assert f["env.var.PS1"] == "\\u@\\h\n$ "  # a multi-line value survives
    assert f["env.ucx"] == {"UCX_TLS": "rc,cuda_copy"}
    assert f["env.nvshmem"] == {"NVSHMEM_BOOTSTRAP": "PMI"}
    assert f["env.cuda"] == {"CUDA_DEVICE_MAX_CONNECTIONS": "1", "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",
                             "NVIDIA_VISIBLE_DEVICES": "all"}
    assert f["env.container_markers"] == ["ENROOT_ROOTFS", "PYXIS_VERSION"]
    assert f["env.secret_names"] == ["HF_TOKEN"]
    assert f["env.var.HF_TOKEN"] == "hf_notarealtoken"  # kept: redaction happens at export
    assert f["slurm.gpus"] == "0,1,2,3,4,5,6,7"
    assert (f["slurm.node"], f["slurm.nodelist"], f["slurm.num_nodes"], f["slurm.procid"], f["slurm.localid"],
            f["slurm.ntasks"]) == ("gpu017", "gpu[017-018]", 2, 11, 3, 16)


def test_bash_export_p():
    f = parse(load("env/bash-export-p-declare-x-quoted-multiline.txt"))
    assert f["env.format"] == "export"
    assert f["env.names"] == ["MSG", "MULTI", "NCCL_SOCKET_IFNAME", "NCCL_TOPO_FILE", "PATH", "PWD", "SHLVL", "SLURM_JOB_ID"]
    assert "env.var.OLDPWD" not in f  # declare -x OLDPWD: exported, no value
    assert f["env.var.MSG"] == 'say "hi" $HOME'
    assert f["env.var.MULTI"] == "line one\nline two"
    assert f["nccl.topo_file.env"] == "/opt/microsoft/ndv5-topo.xml"
    assert f["slurm.in_job"] is True and f["slurm.in_step"] is False


def test_multiline_forms():
    f = parse("A=1\nBASH_FUNC_mod%%=() {  eval $(x)\n}\nexport B='it'\\''s'\nexport C=\"two\nlines\"\nD=4\n")
    assert f["env.var.BASH_FUNC_mod%%"] == "() {  eval $(x)\n}"
    assert f["env.var.B"] == "it's"
    assert f["env.var.C"] == "two\nlines"
    assert f["env.var.D"] == "4"


def test_no_slurm_no_nccl():
    f = parse("PATH=/usr/bin\nHOME=/root\nNCCL_IB_QPS_PER_CONNECTION=four\n")
    assert f["slurm.in_job"] is False and f["slurm.in_step"] is False
    assert "slurm.job_id" not in f
    assert "nccl.ib_qps_per_connection" not in f  # not an integer: unknown, not a default
    assert f["env.nccl"] == {"NCCL_IB_QPS_PER_CONNECTION": "four"}


@pytest.mark.parametrize("text", ["", "  \n", "\x00\x00", "hello world\nno assignments here\n"])
def test_empty_or_not_env(text):
    with pytest.raises(ParseError):
        parse(text)


@pytest.mark.parametrize("path", [p.name for p in files("env") if "grep-slurm" not in p.name])
def test_detect(path):
    assert parsers.detect(load(f"env/{path}")) == "env"


def test_declared_facts():
    declared = parsers.get("env").facts
    for p in files("env"):
        for name in parse(load(f"env/{p.name}")):
            assert facts.is_known_name(name), name
            assert name in declared or name.startswith("env.var."), name


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_random_text_only_parse_error(text):
    try:
        parsers.get("env").func(text)
    except ParseError:
        pass


def test_env_sources_for_real(monkeypatch):
    from troubleshooter import sources
    from troubleshooter.sources import Params
    from troubleshooter.probe.targets import LocalTarget

    monkeypatch.setenv("NCCL_IB_QPS_PER_CONNECTION", "4")
    assert sources.get("env-self").env == ()  # nothing injected: the context as it is
    ev = LocalTarget().run(sources.get("env-self"), Params())
    assert ev.ok, ev.describe()
    f = parsers.run("env", ev.text)
    assert f["env.format"] == "environ" and f["nccl.ib_qps_per_connection"] == 4
    assert "env.var.LC_ALL" not in f or os.environ.get("LC_ALL") == f["env.var.LC_ALL"]
    ev = LocalTarget().run(sources.get("env-proc"), Params(pid=os.getpid()))
    assert ev.ok and parsers.run("env", ev.text)["env.count"] > 0
    skipped = LocalTarget().run(sources.get("env-proc"), Params())
    assert skipped.status.value == "skipped"


def test_scontrol_sources_need_their_ids():
    from troubleshooter import sources
    from troubleshooter.sources import Params

    src = sources.get("scontrol-job")
    assert src.missing_params(Params()) == ["job"]
    assert src.render_argv(Params(extra={"job": "476"})) == ["scontrol", "-d", "show", "job", "476"]
    assert sources.get("scontrol-node").missing_params(Params(extra={"node": "cn1"})) == []
