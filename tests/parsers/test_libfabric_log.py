"""libfabric-log parser: libfabric's native log lines and the cxi provider's VNI refusals, on real captures (exact values)."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_no_authorization_key_for_the_process():
    text = load("libfabric-log/lci110-deltaai-cxip-gen-auth-key-failed-38.txt")
    assert parsers.detect(text) == "libfabric-log"
    assert parsers.run("libfabric-log", text) == {"libfabric.cxi_auth_key_failed": -38}


def test_a_completion_refused_for_its_vni():
    text = load("libfabric-log/prrte2004-vni-not-found-completion.txt")
    assert parsers.detect(text) == "libfabric-log"
    assert parsers.run("libfabric-log", text) == {"libfabric.cxi_vni_not_found": 1}


def test_an_efa_registration_refused_for_its_address_with_the_pid_and_time_elided():
    text = load("libfabric-log/nixl1609-gb200-efa-dmabuf-mr-reg-bad-address.txt")
    assert parsers.detect(text) == "libfabric-log"
    facts = parsers.run("libfabric-log", text)
    assert facts["libfabric.mr_reg_refused"] == ["Bad address"]
    assert facts["libfabric.providers"] == ["core", "efa"]
    assert facts["libfabric.warnings"] == [
        "efa/mr: Unable to register MR of 1048576 bytes: Bad address, flags 0, ibv pd: 0x375ad3f0, total mr reg size "
        "52232192, mr reg count 2", "efa/mr: Unable to register MR: Bad address"]


def test_efa_registrations_and_its_rx_pool_refused_for_memory_by_two_ranks():
    facts = parsers.run("libfabric-log", load("libfabric-log/awsofinccl141-efa-mr-and-rx-pool-cannot-allocate-memory.txt"))
    assert facts["libfabric.mr_reg_refused"] == ["Cannot allocate memory"]
    assert facts["libfabric.providers"] == ["efa"]
    assert len(facts["libfabric.warnings"]) == 4  # the two ranks' lines deduplicated (two functions print the MR line); the bare EQ line is no log line
    assert facts["libfabric.warnings"][1] == ("efa/cq: cannot allocate memory for EFA's RX packet pool. error: Cannot "
                                              "allocate memory")


def test_the_native_lines_beside_fi_info_output():
    facts = parsers.run("libfabric-log", load("fi-info/libfabric12708-efa-enodata-k8s-device-cgroup.txt"))
    assert facts["libfabric.warnings"] == ["efa/ep_data: ibv_open_device failed! errno: 2",
                                           "efa/fabric: efa_device_construct_gid failed for device_idx 0, err=-2",
                                           "core/core: fi_getinfo: provider efa output empty list"]
    assert "libfabric.mr_reg_refused" not in facts


def test_other_libfabric_text_is_refused():
    with pytest.raises(parsers.ParseError):
        parsers.run("libfabric-log", "err : Function not implemented\n")
