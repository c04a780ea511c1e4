
import pytest
from hypothesis import given, settings, strategies as st

from troubleshooter.model import facts
from troubleshooter import parsers, sources
from troubleshooter.parsers import ParseError
from troubleshooter.sources import Params
from troubleshooter.probe.targets import LocalTarget

PROBE = """#@ nccl-conf 1
#@ checked present=1 readable=1 path=/home/u/.nccl.conf
#@ checked present=1 readable=1 path=/etc/nccl.conf
==> /home/u/.nccl.conf <==
NCCL_DEBUG=WARN
# a comment
NCCL_IB_HCA = mlx5_0

==> /etc/nccl.conf <==
NCCL_DEBUG=INFO
NCCL_TOPO_FILE=/opt/microsoft/ndv5-topo.xml
NCCL_SOCKET_IFNAME="eth0"
  # indented=not a comment for NCCL
garbage line
"""


def parse(text):
    return parsers.run("nccl-conf", text)


def test_probe_output_nccl_semantics():
    f = parse(PROBE)
    assert f["nccl_conf.present"] is True
    assert f["nccl_conf.files"] == ["/home/u/.nccl.conf", "/etc/nccl.conf"]
    assert f["nccl_conf.checked"] == ["/home/u/.nccl.conf", "/etc/nccl.conf"]
    assert f["nccl_conf.var.NCCL_DEBUG"] == "WARN"  # the user file is read first and NCCL never overrides
    assert f["nccl_conf.var.NCCL_TOPO_FILE"] == "/opt/microsoft/ndv5-topo.xml"
    assert f["nccl_conf.var.NCCL_SOCKET_IFNAME"] == '"eth0"'  # NCCL keeps quotes
    assert "nccl_conf.var.NCCL_IB_HCA" not in f  # the name is "NCCL_IB_HCA " (with the space)
    assert f["nccl_conf.vars"]["NCCL_IB_HCA "] == " mlx5_0"
    assert f["nccl_conf.names"] == ["  # indented", "NCCL_DEBUG", "NCCL_IB_HCA ", "NCCL_SOCKET_IFNAME", "NCCL_TOPO_FILE"]
    w = " | ".join(f["nccl_conf.warnings"])
    assert "spaces around '='" in w and "keeps the quotes" in w and "indented '#'" in w
    assert "no '='" in w and "NCCL keeps the first value 'WARN'" in w


def test_no_file_present_is_a_fact():
    f = parse("#@ nccl-conf 1\n#@ checked present=0 readable=0 path=/root/.nccl.conf\n"
              "#@ checked present=0 readable=0 path=/etc/nccl.conf\n")
    assert f["nccl_conf.present"] is False
    assert f["nccl_conf.names"] == [] and f["nccl_conf.files"] == []


def test_unreadable_file():
    f = parse("#@ nccl-conf 1\n#@ checked present=1 readable=0 path=/etc/nccl.conf\n")
    assert f["nccl_conf.present"] is True
    assert f["nccl_conf.unreadable"] == ["/etc/nccl.conf"]


def test_bare_file_content():
    f = parse("# Azure HPC image\nNCCL_IB_PCI_RELAXED_ORDERING=1\nNCCL_TOPO_FILE=/opt/microsoft/ndv4-topo.xml\n")
    assert f["nccl_conf.present"] is True
    assert f["nccl_conf.names"] == ["NCCL_IB_PCI_RELAXED_ORDERING", "NCCL_TOPO_FILE"]
    assert parsers.detect("# Azure HPC image\nNCCL_IB_PCI_RELAXED_ORDERING=1\n") == "nccl-conf"


@pytest.mark.parametrize("text", ["", "\n \n", "just words\n", "#@ nccl-conf 1\nstray text\n"])
def test_empty_or_garbled(text):
    with pytest.raises(ParseError):
        parse(text)


def test_detect():
    assert parsers.detect(PROBE) == "nccl-conf"


def test_declared_facts():
    declared = parsers.get("nccl-conf").facts
    for name in parse(PROBE):
        assert facts.is_known_name(name) and (name in declared or name.startswith("nccl_conf.var.")), name


def test_source_runs_for_real(tmp_path, monkeypatch):
    conf = tmp_path / "my.conf"
    conf.write_text("NCCL_IB_QPS_PER_CONNECTION=4\n")
    monkeypatch.setenv("NCCL_CONF_FILE", str(conf))
    ev = LocalTarget().run(sources.get("nccl-conf"), Params())
    assert ev.ok, ev.describe()
    f = parse(ev.text)
    assert f["nccl_conf.checked"][0] == str(conf)
    assert f["nccl_conf.var.NCCL_IB_QPS_PER_CONNECTION"] == "4"
    assert f["nccl_conf.files"][0] == str(conf)
    assert f["nccl_conf.present"] is True


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_random_text_only_parse_error(text):
    for t in (text, "#@ nccl-conf 1\n" + text, "==> /etc/nccl.conf <==\n" + text):
        try:
            parsers.get("nccl-conf").func(t)
        except ParseError:
            pass
