"""Ports whose lanes trained below their NIC model's speed (model/hca.py, combine._ib_rated), and the fabric
cause it feeds, on real captures: the model from one tool, the lane speed from another, as people paste them."""

from pathlib import Path

from tests.corpus import DATA
from troubleshooter.diagnosis.pasted import EvidenceFacts
from troubleshooter.model import hca

IBSTAT_CX6 = DATA / "ibstat/ibstat-mixed-cx6-mt4123-hdr200-down-rate10-plus-cx4lx-mt4117.txt"
IBSTAT_CX7 = DATA / "ibstat/ibstat-h20-node-cx7-mt4129-ib-rate400-fw28.43.txt"
IBSTATUS_EDR = DATA / "ibstatus/ibstatus-4x-cx-ib-edr-100-active-tab-indented-ucx-doc.txt"
LSPCI_CX6DX = DATA / "lspci/cx6dx-grep-net-3fs283.txt"


def facts(*paths: Path):
    return EvidenceFacts.from_specs([str(p) for p in paths]).factset("target")


def value(fs, name):
    f = fs.get(name)
    return None if f is None else f.value


def test_models_and_their_lane_speed():
    assert hca.model_of_part("MT4123") == "ConnectX-6" and hca.lane_speed_of("ConnectX-6") == "HDR"
    assert hca.model_of_part(4119) == "ConnectX-5" and hca.lane_speed_of("ConnectX-5") == "EDR"
    assert hca.model_of_part("MT4125") is None  # ConnectX-6 Dx: Ethernet only, speed not judged
    assert hca.lane_speed_of("ConnectX-8") == "NDR"  # runs NDR on Quantum-2 fabrics by design


def test_lanes_from_ibstatus_and_no_model_gives_the_edr_fact_only():
    fs = facts(IBSTATUS_EDR)
    assert value(fs, "ib.port_lanes")["mlx5_0:1"] == {"width": 4, "lane_speed": "EDR", "lane_gbps": 25.0}
    assert value(fs, "ib.ib_ports_edr_or_slower")[:2] == ["mlx5_0:1 at 4X EDR", "mlx5_1:1 at 4X EDR"]
    assert value(fs, "ib.hca_models") is None and value(fs, "ib.ports_below_rated") is None


def test_connectx6_model_from_ibstat_with_edr_lanes_from_ibstatus():
    # ibstat first, ibstatus second: ibstatus's listing of the same ports must not drop ibstat's CA type
    fs = facts(IBSTAT_CX6, IBSTATUS_EDR)
    assert value(fs, "ib.ca_types")["mlx5_0"] == "MT4123"
    assert value(fs, "ib.hca_models")["mlx5_0"] == "ConnectX-6"
    assert "mlx5_0:1 at 4X EDR; ConnectX-6 runs HDR" in value(fs, "ib.ports_below_rated")


def test_connectx7_at_ndr_is_at_its_speed():
    fs = facts(IBSTAT_CX7)
    assert set(value(fs, "ib.hca_models").values()) == {"ConnectX-7"}
    # ibstat's "Rate: 400" has no lane speed: nothing judged, nothing claimed
    assert value(fs, "ib.ports_below_rated") is None


def test_ethernet_only_model_from_lspci_is_not_judged():
    fs = facts(LSPCI_CX6DX, IBSTATUS_EDR)
    assert value(fs, "pci.nic_models") == ["ConnectX-6 Dx"]
    assert value(fs, "ib.hca_models") is None


def test_fabric_cause_from_edr_lanes_without_a_model(tmp_path):
    from troubleshooter.service.diagnose import diagnose

    ef = EvidenceFacts.from_specs([str(IBSTATUS_EDR)])
    walk, doc = diagnose("below-reference", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
    assert "fabric-port-down" in [c.cause for c in walk.conclusions]
    ef = EvidenceFacts.from_specs([str(IBSTAT_CX7)])
    walk, doc = diagnose("below-reference", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
    assert "fabric-port-down" not in [c.cause for c in walk.conclusions]
    # ibstat alone cannot say whether a port trained down: the port hypothesis stays open, not "ruled out"
    assert doc["hypothesis_states"].get("port-down") != "ruled-out"
