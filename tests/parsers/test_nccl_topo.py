import os
import shutil

import pytest
from hypothesis import given, settings, strategies as st

from troubleshooter.model import facts
from troubleshooter import parsers, sources
from troubleshooter.parsers import ParseError
from troubleshooter.sources import Params
from troubleshooter.probe.targets import ExecTarget, LocalTarget
from tests.corpus import files, load

AWS = "nccl-topo/aws-p5-48xl-h100-efa-topo.xml.txt"
NDV4 = "nccl-topo/azure-ndv4-a100-topo.xml.txt"
NDV5 = "nccl-topo/azure-ndv5-h100-topo.xml.txt"
PARTIAL = "nccl-topo/h200-hgx-baremetal-vs-vm-topo-dump-partial.txt"
REAL = os.environ.get("TS_REQUIRE_REAL") == "1"


def parse(text):
    return parsers.run("nccl-topo", text)


def test_aws_p5_gpus_and_efa():
    f = parse(load(AWS))
    assert f["nccl_topo.version"] == 1
    assert f["nccl_topo.cpus"] == [{"numaid": 0, "affinity": "00000000,00000000,0000ffff,ffffffff", "arch": "x86_64",
                                    "vendor": "AuthenticAMD", "familyid": 25, "model": 17}]
    assert f["nccl_topo.numa_ids"] == [0]
    assert f["nccl_topo.gpu_count"] == 8
    assert f["nccl_topo.gpus"][0] == {"busid": "0000:4f:00.0", "dev": 0, "sm": 90, "rank": 0, "gdr": 1, "numaid": 0}
    assert [g["rank"] for g in f["nccl_topo.gpus"]] == list(range(8))
    assert f["nccl_topo.net_count"] == 32
    assert f["nccl_topo.nets"][0] == {"name": "rdmap79s0", "busid": "0000:50:00.0", "dev": 0, "speed_mbps": 100000,
                                      "port": 1, "gdr": 1, "numaid": 0}
    assert f["nccl_topo.nets"][-1]["name"] == "rdmap201s0"
    assert f["nccl_topo.nic_speeds_gbps"] == [100]
    assert f["nccl_topo.pci_switches"] == 8
    assert f["nccl_topo.nvlinks"] == 0


def test_azure_ndv4_class_only_devices():
    f = parse(load(NDV4))
    assert f["nccl_topo.numa_ids"] == [0, 1, 2, 3]
    assert [c["affinity"] for c in f["nccl_topo.cpus"]][3] == "ffffff00,00000000,00000000"
    assert f["nccl_topo.gpu_count"] == 8 and f["nccl_topo.net_count"] == 8
    assert f["nccl_topo.gpus"][0] == {"busid": "0003:00:00.0", "dev": None, "sm": None, "rank": None, "gdr": None, "numaid": 0}
    assert [g["numaid"] for g in f["nccl_topo.gpus"]] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert [n["busid"] for n in f["nccl_topo.nets"]][:2] == ["0103:00:00.0", "0104:00:00.0"]
    assert "nccl_topo.nic_speeds_gbps" not in f  # the file gives no speed
    assert f["nccl_topo.pci_switches"] == 4


def test_azure_ndv5():
    f = parse(load(NDV5))
    assert f["nccl_topo.numa_ids"] == [0, 1]
    assert {(c["vendor"], c["familyid"], c["model"]) for c in f["nccl_topo.cpus"]} == {("GenuineIntel", 6, 143)}
    assert f["nccl_topo.gpu_count"] == 8 and f["nccl_topo.net_count"] == 8
    assert [g["busid"] for g in f["nccl_topo.gpus"]][-1] == "000c:00:00.0"
    assert f["nccl_topo.pci_switches"] == 8


def test_partial_dump_is_a_clear_error():
    # author-truncated dump: first document cut inside <nic>, a second (VM) document pasted after it;
    # NCCL refuses such a file, so we do too, naming the line
    with pytest.raises(ParseError) as e:
        parse(load(PARTIAL))
    assert e.value.line == 67
    assert "truncated" in e.value.message and "second <system> document starts at line 55" in e.value.message


def test_vm_dump_numa_minus_one_and_nvlink():
    text = load(PARTIAL).split("\n")
    vm = "\n".join(text[54:]) + "\n  </cpu>\n</system>\n"  # close the VM document by hand
    vm = vm.replace("    </pci>\n  </cpu>", "    </pci>\n  </cpu>")
    f = parse(vm.replace("      </nic>\n    </pci>\n  </cpu>", "      </nic>\n    </pci>\n  </cpu>"))
    assert f["nccl_topo.numa_ids"] == [-1]
    assert f["nccl_topo.nvlinks"] == 1
    assert f["nccl_topo.nic_speeds_gbps"] == [400]


BOMB = """<?xml version="1.0"?>
<!DOCTYPE system [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>
<system version="1"><cpu numaid="0">&c;</cpu></system>"""
XXE = """<?xml version="1.0"?>
<!DOCTYPE system [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<system version="1"><cpu numaid="0" vendor="&x;"/></system>"""


def test_billion_laughs_refused():
    with pytest.raises(ParseError, match="entity"):
        parse(BOMB)


def test_external_entity_refused():
    with pytest.raises(ParseError, match="external entity .*file:///etc/passwd"):
        parse(XXE)


@pytest.mark.parametrize("text", ["", "  \n", "<html><body/></html>", "<system version='1'></system>",
                                  "<system version='1'><cpu numaid='0'>"])
def test_empty_or_not_topology(text):
    with pytest.raises(ParseError):
        parse(text)


def test_detect():
    for p in files("nccl-topo"):
        assert parsers.detect(load(f"nccl-topo/{p.name}")) == "nccl-topo"


def test_declared_facts():
    declared = parsers.get("nccl-topo").facts
    for path in (AWS, NDV4, NDV5):
        for name in parse(load(path)):
            assert name in declared and facts.is_known_name(name)


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_random_text_only_parse_error(text):
    for kind, t in (("nccl-topo", text), ("nccl-topo", "<system version='1'>" + text),
                    ("topo-file-probe", text), ("topo-file-probe", "#@ nccl-topo-file 1\n" + text)):
        try:
            parsers.get(kind).func(t)
        except ParseError:
            pass


# --- the topo-file probe ----------------------------------------------------------------------------

def probe(target):
    ev = target.run(sources.get("nccl-topo-file"), Params())
    assert ev.ok, ev.describe()
    assert parsers.detect(ev.text) == "topo-file-probe"
    return parsers.run("topo-file-probe", ev.text)


def test_probe_local_with_env(tmp_path, monkeypatch, etc_nccl_lock):
    topo = tmp_path / "topo.xml"
    topo.write_text(load(AWS))
    monkeypatch.setenv("NCCL_TOPO_FILE", str(topo))
    f = probe(LocalTarget())
    assert f["nccl.topo_file.env"] == str(topo)
    assert f["nccl.topo_file.from_env"] is True and f["nccl.topo_file.source"] == "env"
    assert f["nccl.topo_file.path"] == str(topo)
    assert f["nccl.topo_file.visible"] is True and f["nccl.topo_file.readable"] is True and f["nccl.topo_file.used"] is True
    assert f["nccl.topo_file.bytes"] == topo.stat().st_size
    import hashlib
    assert f["nccl.topo_file.sha256"] == hashlib.sha256(topo.read_bytes()).hexdigest()
    assert f["nccl.topo_file.parse_ok"] is True
    assert (f["nccl.topo_file.gpu_count"], f["nccl.topo_file.net_count"]) == (8, 32)
    assert f["nccl.etc_topo.visible"] is os.path.exists("/etc/nccl/topo.xml")


def test_probe_local_broken_file_and_conf_fallback(tmp_path, monkeypatch):
    topo = tmp_path / "bad topo.xml"  # a space in the path
    topo.write_text(load(PARTIAL))
    conf = tmp_path / "nccl.conf"
    conf.write_text(f"NCCL_TOPO_FILE={topo}\n")
    monkeypatch.delenv("NCCL_TOPO_FILE", raising=False)
    monkeypatch.setenv("NCCL_CONF_FILE", str(conf))
    f = probe(LocalTarget())
    assert f["nccl.topo_file.from_env"] is False and f["nccl.topo_file.source"] == "conf"
    assert f["nccl.topo_file.conf_file"] == str(conf)
    assert f["nccl.topo_file.path"] == str(topo) and f["nccl.topo_file.visible"] is True
    assert f["nccl.topo_file.parse_ok"] is False and "truncated" in f["nccl.topo_file.parse_error"]
    assert "nccl.topo_file.gpu_count" not in f


def _bwrap_or_skip():
    if shutil.which("bwrap") is None:
        if REAL:
            pytest.fail("bwrap is not installed and TS_REQUIRE_REAL=1 (apt-get install -y bubblewrap)")
        pytest.skip("bubblewrap (bwrap) is not installed: the container-boundary test needs it")


def _bwrap(*extra):
    prefix = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if os.path.isdir("/etc/nccl"):
        prefix += ["--tmpfs", "/etc/nccl"]  # hide the host's /etc/nccl/topo.xml
    return ExecTarget(prefix + ["--unshare-pid", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", *extra])


@pytest.mark.bwrap
def test_probe_in_container_without_file_or_variable(tmp_path, monkeypatch, etc_nccl_lock):
    """Case 4: the host sets NCCL_TOPO_FILE; the container gets neither the variable nor the file."""
    _bwrap_or_skip()
    topo = tmp_path / "topo.xml"
    topo.write_text(load(NDV5))
    monkeypatch.setenv("NCCL_TOPO_FILE", str(topo))
    host = probe(LocalTarget())
    assert host["nccl.topo_file.from_env"] is True and host["nccl.topo_file.visible"] is True
    inside = probe(_bwrap("--tmpfs", str(tmp_path)))
    assert inside["nccl.topo_file.from_env"] is False
    assert inside["nccl.topo_file.source"] == "default"
    assert inside["nccl.topo_file.path"] == "/var/run/nvidia-topologyd/virtualTopology.xml"
    assert inside["nccl.topo_file.visible"] is False and inside["nccl.topo_file.used"] is False
    assert inside["nccl.etc_topo.visible"] is False
    assert "nccl.topo_file.env" not in inside


@pytest.mark.bwrap
def test_probe_in_fixed_container(tmp_path, etc_nccl_lock):
    """The fix: bind-mount the file and pass the variable."""
    _bwrap_or_skip()
    topo = tmp_path / "topo.xml"
    topo.write_text(load(NDV5))
    f = probe(_bwrap("--ro-bind", str(topo), str(topo), "--setenv", "NCCL_TOPO_FILE", str(topo)))
    assert f["nccl.topo_file.from_env"] is True and f["nccl.topo_file.visible"] is True
    assert f["nccl.topo_file.parse_ok"] is True and f["nccl.topo_file.gpu_count"] == 8


def test_probe_parser_etc_and_sha():
    sha = "a" * 64
    text = (f"#@ nccl-topo-file 1\n#@ env NCCL_TOPO_FILE unset\n"
            f"#@ file role=nccl source=default present=0 readable=0 bytes=- sha256=- path=/var/run/nvidia-topologyd/virtualTopology.xml\n"
            f"#@ file role=etc source=fixed present=1 readable=1 bytes=10 sha256={sha} path=/etc/nccl/topo.xml\n")
    f = parsers.run("topo-file-probe", text)
    assert f["nccl.etc_topo.visible"] is True and f["nccl.etc_topo.sha256"] == sha
    assert f["nccl.topo_file.visible"] is False
    assert "nccl.topo_file.same_as_etc" not in f


@pytest.mark.parametrize("text", ["", "#@ nccl-topo-file 1\n", "#@ nccl-topo-file 1\n#@ env NCCL_TOPO_FILE unset\n",
                                  "#@ nccl-topo-file 1\n#@ env NCCL_TOPO_FILE=/x\n#@ file role=nccl source=env present=1 readable=1 bytes=3 sha256=- path=/x\n<sy",
                                  "NCCL_TOPO_FILE=/x\n"])
def test_probe_parser_rejects(text):
    with pytest.raises(ParseError):
        parsers.run("topo-file-probe", text)


def test_probe_declared_facts(tmp_path, monkeypatch):
    topo = tmp_path / "topo.xml"
    topo.write_text(load(AWS))
    monkeypatch.setenv("NCCL_TOPO_FILE", str(topo))
    declared = parsers.get("topo-file-probe").facts
    for name in probe(LocalTarget()):
        assert name in declared and facts.is_known_name(name)
