"""fi_info (Libfabric), read from real outputs with exact values: the short and verbose listings, fi_getinfo -61."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus import files, load
from troubleshooter import parsers
from troubleshooter.diagnosis import intake
from troubleshooter.diagnosis.pasted import EvidenceFacts

P4D = "fi-info/p4d-efa-rdm-4-domains-111.20.txt"
EKS = "fi-info/eks-pod-efa-device-plugin-efa-direct-201.0.txt"
RXD = "fi-info/libfabric5689-efa-2.0-rdm-dgrm-and-rxd.txt"
VERBOSE = "fi-info/efa-200.0-verbose-rdm-and-dgrm.txt"
BARE = "fi-info/awsofi1020-p5-container-without-dev-infiniband-61.txt"
OLD = "fi-info/p4d-guide-getinfo-61-without-strerror.txt"
LOGGED = "fi-info/libfabric12708-efa-enodata-k8s-device-cgroup.txt"
SHM = "fi-info/sglang-oneccl-image-shm-provider-61.txt"


def parse(text: str) -> dict:
    return parsers.run("fi-info", text)


def test_the_efa_rdm_check_on_a_p4d_four_devices() -> None:
    f = parse(load(P4D))
    assert f["libfabric.providers"] == ["efa"]
    assert f["libfabric.domains"] == ["rdmap16s27-rdm", "rdmap32s27-rdm", "rdmap144s27-rdm", "rdmap160s27-rdm"]
    assert f["libfabric.fabrics"][0] == "EFA-fe80::10d8:baff:fec9:6c1" and len(f["libfabric.fabrics"]) == 4
    assert f["libfabric.entries"][3] == {"provider": "efa", "fabric": "EFA-fe80::1059:7cff:fe95:ed6d",
                                         "domain": "rdmap160s27-rdm", "version": "111.20", "type": "FI_EP_RDM",
                                         "protocol": "FI_PROTO_EFA"}
    assert (f["libfabric.efa_rdm"], f["libfabric.no_provider"]) == (True, False)
    assert "libfabric.getinfo_code" not in f and "libfabric.query_provider" not in f


def test_efa_direct_and_efa_fabrics_in_a_pod_given_an_efa_device() -> None:
    f = parse(load(EKS))
    assert (f["libfabric.providers"], f["libfabric.fabrics"]) == (["efa"], ["efa-direct", "efa"])
    assert f["libfabric.domains"] == ["rdmap47s0-rdm", "rdmap47s0-dgrm"]
    assert [(e["fabric"], e["type"]) for e in f["libfabric.entries"]] == [
        ("efa-direct", "FI_EP_RDM"), ("efa", "FI_EP_RDM"), ("efa", "FI_EP_DGRAM")]
    assert f["libfabric.efa_rdm"] is True


def test_a_utility_provider_layered_over_efa_is_its_own_provider() -> None:
    f = parse(load(RXD))
    assert f["libfabric.providers"] == ["efa", "efa;ofi_rxd"]
    assert f["libfabric.domains"] == ["efa_0-rdm", "efa_0-dgrm"]
    assert f["libfabric.entries"][2]["protocol"] == "FI_PROTO_RXD"
    assert f["libfabric.efa_rdm"] is True  # from the efa provider's own RDM endpoint, not ofi_rxd's


def test_the_verbose_form_gives_the_same_fields_from_its_nested_attributes() -> None:
    f = parse(load(VERBOSE))
    assert f["libfabric.entries"] == [
        {"provider": "efa", "fabric": "efa", "domain": "rdmap70s0-rdm", "version": "200.0", "type": "FI_EP_RDM",
         "protocol": "FI_PROTO_EFA"},
        {"provider": "efa", "fabric": "efa", "domain": "rdmap70s0-dgrm", "version": "200.0", "type": "FI_EP_DGRAM",
         "protocol": "FI_PROTO_EFA"}]  # not the nic's device name, not the domain's 0x0 handle
    assert (f["libfabric.efa_rdm"], f["libfabric.no_provider"]) == (True, False)


@pytest.mark.parametrize("rel,query", [(BARE, "efa"), (OLD, None), (LOGGED, None), (SHM, "shm")])
def test_no_provider_in_each_way_fi_info_prints_it(rel: str, query: str | None) -> None:
    f = parse(load(rel))
    assert (f["libfabric.no_provider"], f["libfabric.getinfo_code"]) == (True, -61)
    assert f.get("libfabric.query_provider") == query
    assert "libfabric.providers" not in f and "libfabric.efa_rdm" not in f


def test_the_efa_providers_release_follows_libfabrics() -> None:
    assert parse(load("fi-info/awsofi584-efa-provider-118.20.txt"))["libfabric.efa_provider_release"] == 118


def test_the_efa_providers_warnings_say_which_device_it_could_not_open() -> None:
    f = parse(load(LOGGED))
    assert (f["libfabric.device_open_errnos"], f["libfabric.efa_device_errors"]) == ([2], [-2])
    # a working listing logs none
    assert "libfabric.device_open_errnos" not in parse(load(P4D))


def test_libfabrics_own_log_lines_are_not_the_listing() -> None:
    # 'fi_getinfo: provider efa output empty list' is one provider's log line, not fi_info's answer
    log = "".join(ln + "\n" for ln in load(LOGGED).split("\n") if ln.startswith("libfabric:"))
    with pytest.raises(parsers.ParseError):
        parse(log)


def test_fi_info_l_lists_the_providers_built_in_not_those_usable() -> None:
    # fi_info -l prints '<provider>:' and its version (util/info.c print_providers); the layout from its source
    f = parse("efa:\n    version: 120.10\nshm:\n    version: 120.10\ntcp:\n    version: 120.10\n")
    assert f == {"libfabric.registered_providers": ["efa", "shm", "tcp"]}


@pytest.mark.parametrize("path", [p for p in files("fi-info") if "awsofi1020" not in p.name], ids=lambda p: p.name)
def test_detected(path: Path) -> None:
    assert parsers.detect(load(f"fi-info/{path.name}")) == "fi-info"


@pytest.mark.parametrize("text", ["", "-61\n", "provider: someone\n", "version: 2.0\ntype: FI_EP_RDM\n",
                                  "NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available\n"])
def test_other_text_is_not_detected(text: str) -> None:
    assert parsers.get("fi-info").detect(text) < parsers.DETECT_MIN


@pytest.mark.parametrize("text", ["", "provider: someone\n", "version: 2.0\ntype: FI_EP_RDM\n",
                                  "NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available\n"])
def test_other_text_is_refused(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parse(text)


def test_a_transcripts_fi_info_block_is_routed_by_its_command_with_its_query(tmp_path: Path) -> None:
    assert intake.tool_of("kubectl exec efa-a -- /opt/amazon/efa/bin/fi_info -p efa -t FI_EP_RDM") == "fi-info"
    p = tmp_path / "fi-info.txt"
    p.write_text(load(BARE))  # "$ fi_info -p efa" then "-61": the bare number is fi_info's only when the command says
    ef = EvidenceFacts.from_specs([f"container:{p}"])
    assert [(f.kind, f.how) for f in ef.files] == [("fi-info", "command")]
    assert (ef.lookup("libfabric.no_provider"), ef.lookup("libfabric.query_provider")) == (True, "efa")
