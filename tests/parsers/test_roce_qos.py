"""mlnx_qos and the forced RDMA traffic class (tests/data/roce-qos: real outputs from public repositories and a vendor
page), and where they put RoCE's traffic against PFC (troubleshooter.model.roce_qos)."""

import pytest

from tests.corpus import DATA, load
from troubleshooter import parsers
from troubleshooter.diagnosis.pasted import EvidenceFacts
from troubleshooter.model import combine
from troubleshooter.model.facts import Fact, FactSet
from troubleshooter.parsers import ParseError

D = "roce-qos/"
NETARBITER = D + "netarbiter-setup-lossless-dscp-pfc3-set-x.txt"
REMAPPED = D + "magnate3-qos-readme-dscp-remapped-pfc3-prio6-wrap.txt"


@pytest.mark.parametrize("name, iface, trust, pfc, dcbx, mapped", [
    # a setup script under set -x shows eth4 twice (after --trust, after --pfc): its last state is kept
    ("netarbiter-setup-lossless-dscp-pfc3-set-x.txt", "eth4", "dscp", [3], "OS controlled", 64),
    ("magnate3-mlnx_qos-md-centos12-pcp-nopfc-empty-tclass.txt", "ens6", "pcp", [], "OS controlled", 0),
    ("magnate3-mlnx_qos-md-centos12-trust-dscp-nopfc-empty-tclass.txt", "ens6", "dscp", [], "OS controlled", 64),
    # two prompts of two hosts, ls output in between, then a user prompt with two spaces before the command
    ("magnate3-mlnx_qos-md-client-pcp-nopfc-mixed-prompts.txt", "ens14f0", "pcp", [], "OS controlled", 0),
    ("magnate3-qos-readme-dscp-remapped-pfc3-prio6-wrap.txt", "ens14f0", "dscp", [3], "OS controlled", 64),
    ("magnate3-qos-readme-pcp-pfc3-buffers.txt", "ens14f0", "pcp", [3], "OS controlled", 0),
    # 'default priority:' with no value, rate limits in Gbps, rows without their trailing spaces
    ("magnate3-vlanqos-pcp-default-priority-ratelimits.txt", "enp175s0f0np0", "pcp", [], "OS controlled", 0),
    # a web page's copy: runs of spaces collapsed, every line indented, blank lines inserted
    ("mellanox-community-doc2792-webmangled-dscp-pfc0267-ets.txt", "eth2", "dscp", [0, 2, 6, 7], "OS controlled", 64),
    # a wrapper script that greps mlnx_qos: trust and the PFC rows only, no command line of mlnx_qos' own
    ("spiderpool-roce-qos-script-query-dscp-pfc5-tclass160.txt", "port 1", "dscp", [5], None, 0),
])
def test_mlnx_qos_outputs(name, iface, trust, pfc, dcbx, mapped):
    text = load(D + name)
    assert parsers.detect(text) == "roce-qos"
    f = parsers.run("roce-qos", text)
    (port,) = f["roce.qos_ports"]
    assert (port["iface"], port["trust"], port["pfc"], port["dcbx"]) == (iface, trust, pfc, dcbx)
    assert len(port.get("dscp_prio", {})) == mapped
    assert f["roce.pfc_priorities"] == pfc
    assert f["roce.ports_without_pfc"] == ([] if pfc else [iface])
    assert f["roce.trust"] == [trust]


def test_a_remapped_dscp_and_a_priority_whose_list_wraps():
    # DSCP 30 moved from priority 3 to 6: priority 3 lists seven values, priority 6's nine wrap onto a second line
    port = parsers.run("roce-qos", load(REMAPPED))["roce.qos_ports"][0]
    m = port["dscp_prio"]
    assert (m["26"], m["30"], m["31"], m["48"], m["55"], m["0"]) == (3, 6, 3, 6, 6, 0)
    assert sorted(int(d) for d, p in m.items() if p == 6) == [30, 48, 49, 50, 51, 52, 53, 54, 55]


def test_the_forced_traffic_class_and_the_device_it_is_for():
    f = parsers.run("roce-qos", load(D + "magnate3-mlnx_qos-md-centos12-set-tclass-106.txt"))
    assert f == {"roce.global_tclass": [{"device": "mlx5_2", "tclass": 106}]}  # the empty cat before the echo: nothing
    f = parsers.run("roce-qos", load(D + "spiderpool-roce-qos-script-query-dscp-pfc5-tclass160.txt"))
    assert f["roce.global_tclass"] == [{"device": "mlx5_0", "tclass": 160}]


def test_lines_run_together_are_refused_not_read():
    # a web page that joined the lines of a real output (netarbiter's, joined here the same way): PFC's row would run
    # into the tc lines. Refused with the line, not read into values
    text = " ".join(load(NETARBITER).split("\n"))
    with pytest.raises(ParseError) as e:
        parsers.run("roce-qos", text)
    assert "run together" in str(e.value) and e.value.line == 1


def test_a_dscp_out_of_range_is_an_error_with_its_line():
    text = load(REMAPPED).replace("prio:7 dscp:63,", "prio:7 dscp:93,")
    with pytest.raises(ParseError) as e:
        parsers.run("roce-qos", text)
    assert "DSCP 93" in str(e.value) and e.value.line is not None


def _with(path: str, **extra) -> FactSet:
    fs = FactSet()
    for name, value in parsers.run("roce-qos", load(path)).items():
        fs.add(Fact(name, value, "", "roce-qos", ""))
    for name, value in extra.items():
        fs.add(Fact(name.replace("__", "."), value, "", "hand-made", ""))
    combine.apply(fs)
    return fs


def test_a_traffic_class_on_a_priority_without_pfc():
    # the remapped port's mapping (real) against a class asked for by hand: 122 is DSCP 30, priority 6 there, and PFC
    # is on 3 only; 106 (DSCP 26) lands on 3
    fs = _with(REMAPPED, nccl__effective__NCCL_IB_TC="122")
    assert fs.get_value("roce.rdma_off_lossless") == [
        "tclass 122 (NCCL_IB_TC=122) is DSCP 30: priority 6 on ens14f0, where PFC is on priority 3 only"]
    fs = _with(REMAPPED, nccl__effective__NCCL_IB_TC="106")
    assert fs.get_value("roce.rdma_off_lossless") == []
    assert fs.get_value("roce.rdma_placement") == ["tclass 106 (NCCL_IB_TC=106) is DSCP 26: priority 3 on ens14f0, PFC on"]


def test_pcp_trust_or_no_mapping_is_not_judged():
    # under PCP trust the VLAN tag picks the priority; a grep'd output without the mapping cannot place the class
    assert "roce.rdma_placement" not in _with(D + "magnate3-qos-readme-pcp-pfc3-buffers.txt",
                                              nccl__effective__NCCL_IB_TC="106")
    assert "roce.rdma_placement" not in _with(D + "spiderpool-roce-qos-script-query-dscp-pfc5-tclass160.txt")


def _walk(paths: list[str]):
    from troubleshooter.service.diagnose import diagnose

    ef = EvidenceFacts.from_specs([str(DATA / p) for p in paths])
    walk, doc = diagnose("nccl-wrong-fabric", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
    return ef, walk, doc


def test_through_the_intake_the_driver_class_and_the_mapping_of_two_pastes():
    # two outputs of two machines (netarbiter's eth4, magnate3's forced class on mlx5_2): 106 lands on PFC priority 3,
    # shown in the ports step, and no cause
    ef, walk, _ = _walk([NETARBITER, D + "magnate3-mlnx_qos-md-centos12-set-tclass-106.txt"])
    assert ef.lookup("roce.rdma_placement") == [
        "tclass 106 (the driver's Global tclass on mlx5_2) is DSCP 26: priority 3 on eth4, PFC on"]
    assert ef.lookup("roce.rdma_off_lossless") == []
    assert walk.conclusions == []
    shown = {k for s in walk.steps if s.node == "ports" for k in s.facts}
    assert {"roce.rdma_placement", "roce.pfc_priorities", "roce.ports_without_pfc"} <= shown


def test_nccls_default_class_where_an_environment_listing_has_no_nccl_ib_tc_is_possible():
    # a real job's environment (no NCCL_IB_TC) beside netarbiter's port: class 0 lands on priority 0, PFC on 3 only.
    # A class the driver forces would override it, and none is shown: possible, with the command that decides
    ef, walk, doc = _walk([NETARBITER, "env/srun-env-slurm-step-job476-cn1-prompt-and-slurmstepd-stderr.txt"])
    assert ef.lookup("roce.default_tc_off_lossless") == [
        "tclass 0 (NCCL's default: NCCL_IB_TC is not set) is DSCP 0: priority 0 on eth4, where PFC is on priority 3 only"]
    assert walk.conclusions == []
    first = walk.hypotheses[0]
    assert (first.id, first.state) == ("roce-traffic-class-not-lossless", "suspected")
    assert first.settle.startswith("cat /sys/class/infiniband/*/tc/1/traffic_class")


def test_no_pfc_at_all_and_unacknowledged_packets_find_the_cause():
    # a port with PFC on no priority (magnate3) beside NCCL on RoCE HCAs only (an 8-NIC RoCE node's log) and NCCL's
    # completion status 12 (nccl#1405's log): three real outputs of different machines, the signature's halves
    nopfc = D + "magnate3-mlnx_qos-md-centos12-trust-dscp-nopfc-empty-tclass.txt"
    ef, walk, _ = _walk([nopfc, "nccl-debug/roce-8nic-stale-aws-ofi-plugin-verbs-rxm-fallback-to-ib-nccl2.27.5.txt",
                         "nccl-debug/nccl1405-ib-plugin-completion-from-peer-status-12-vendor-err-129.txt"])
    assert ef.lookup("roce.ports_without_pfc") == ["ens6"]
    assert len(ef.lookup("rdma.retry_exceeded")) == 3
    assert "roce-traffic-class-not-lossless" in [c.cause for c in walk.conclusions]
    # the same timeouts where NCCL also lists an InfiniBand HCA (an Azure node's log): they may have been on that one
    _, walk, _ = _walk([nopfc, "nccl-debug/azure-2node-ib-not-colocated-completion-error-12.txt"])
    assert "roce-traffic-class-not-lossless" not in [c.cause for c in walk.conclusions]
    # the port alone: lossy RoCE can be a design, so only possible
    _, walk, _ = _walk([D + "magnate3-mlnx_qos-md-centos12-trust-dscp-nopfc-empty-tclass.txt"])
    assert walk.conclusions == []
    assert [h.state for h in walk.hypotheses if h.id == "roce-traffic-class-not-lossless"] == ["suspected"]


def test_retry_timeouts_on_a_roce_only_job_point_at_the_qos_to_read():
    # NCCL's RoCE-only HCA list (an 8-NIC RoCE node's log) beside 'Got completion from peer ... status=12' (nccl#1405's
    # log): two real outputs. The QoS is not shown: possible, with the traffic class and mlnx_qos as what decides
    _, walk, _ = _walk(["nccl-debug/roce-8nic-stale-aws-ofi-plugin-verbs-rxm-fallback-to-ib-nccl2.27.5.txt",
                        "nccl-debug/nccl1405-ib-plugin-completion-from-peer-status-12-vendor-err-129.txt"])
    hyp = {h.id: h for h in walk.hypotheses}
    assert hyp["roce-traffic-class-not-lossless"].state == "suspected"
    # the same timeouts where NCCL also lists an InfiniBand HCA (an Azure node): the packets may have been on that one
    _, walk, _ = _walk(["nccl-debug/azure-2node-ib-not-colocated-completion-error-12.txt"])
    assert "roce-traffic-class-not-lossless" not in [h.id for h in walk.hypotheses if h.state == "suspected"]


def test_retry_timeouts_of_ucx_over_ports_that_are_all_roce_point_at_the_qos_to_read():
    # UCX's fatal "Transport retry count exceeded" and the jazz hosts' link layer (ibv_devinfo -d mlx5_1 | grep
    # link_layer: Ethernet, through pdsh and dshbak): both from openucx/ucx#2346. Not NCCL, the same question
    _, walk, _ = _walk(["ucx/ucx2346-ompi-timestamp-tag-output-ucx13-fatal-qp-retry-exceeded.txt",
                        "pdsh/ucx2346-dshbak-c-jazz-24-hosts-ofed-info-link-layer.txt"])
    hyp = {h.id: h for h in walk.hypotheses}
    assert hyp["roce-traffic-class-not-lossless"].state == "suspected"
    assert "link layer Ethernet" in hyp["roce-traffic-class-not-lossless"].evidence
    # the same timeouts where the link layer is not known: nothing says the packets were on RoCE
    _, walk, _ = _walk(["ucx/ucx2346-ompi-timestamp-tag-output-ucx13-fatal-qp-retry-exceeded.txt"])
    assert "roce-traffic-class-not-lossless" not in [h.id for h in walk.hypotheses if h.state == "suspected"]


def test_nccls_completion_error_12_alone_points_at_the_gid_index_to_read():
    # NCCL's "Got completion from peer ... with status=12" (nccl#1405's log, a Kubernetes RoCE network): the peer never
    # acknowledged, and nothing shows the ports or the GID table. The GID index is the first thing to read (its
    # maintainers' answer on nccl#426), possible, with show_gids as what decides it
    _, walk, _ = _walk(["nccl-debug/nccl1405-ib-plugin-completion-from-peer-status-12-vendor-err-129.txt"])
    hyp = {h.id: h for h in walk.hypotheses}
    assert hyp["roce-gid-index"].state == "suspected"
    assert hyp["roce-gid-index"].settle.startswith("show_gids")
    assert "roce-gid-index" not in [c.cause for c in walk.conclusions]
    # where NCCL lists an InfiniBand HCA beside the RoCE one (an Azure node): no GID index to choose on that one
    _, walk, _ = _walk(["nccl-debug/azure-2node-ib-not-colocated-completion-error-12.txt"])
    assert "roce-gid-index" not in [h.id for h in walk.hypotheses if h.state == "suspected"]
    # UCX's retry timeouts over RoCE ports: UCX picks its GID with its own variables, not NCCL_IB_GID_INDEX
    _, walk, _ = _walk(["ucx/ucx2346-ompi-timestamp-tag-output-ucx13-fatal-qp-retry-exceeded.txt",
                        "pdsh/ucx2346-dshbak-c-jazz-24-hosts-ofed-info-link-layer.txt"])
    assert "roce-gid-index" not in [h.id for h in walk.hypotheses if h.state == "suspected"]
