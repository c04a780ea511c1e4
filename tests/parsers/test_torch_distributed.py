"""torch-distributed parser: NCCL errors raised into Python and ProcessGroupNCCL watchdog timeouts, on real
captures behind torchrun, Ray and nested launcher prefixes."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def parse(rel):
    return parsers.run("torch-distributed", load(rel))


def test_torchrun_rank_prefixed_distbackenderror_with_last_error_on_the_next_line():
    f = parse("torch-distributed/torchrun-rank-prefix-distbackenderror-ibv-create-cq-enomem.txt")
    assert f["torch.errors"] == [
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3780,"
        " unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9"]
    assert f["torch.nccl_error_kinds"] == ["ncclSystemError"]
    assert f["nccl.errors"][1] == ("ncclSystemError: System call (e.g. socket, malloc) or external library call failed "
                                   "or device error.")
    assert f["nccl.warnings"] == ["Call to ibv_create_cq failed with error Cannot allocate memory"]
    assert f["nccl.version"] == "2.28.9"
    assert "torch.watchdog_timeouts" not in f


def test_ray_and_doubled_torchrun_prefixes_remote_error():
    f = parse("torch-distributed/ray-torchrun-nested-prefixes-ncclremoteerror-connection-refused.txt")
    assert f["torch.nccl_error_kinds"] == ["ncclRemoteError"]
    assert f["nccl.warnings"] == ["socketPollConnect: connect returned Connection refused, exceeded error retry count (35)"]
    assert f["nccl.version"] == "2.26.2"
    assert "nccl.no_socket_interface" not in f


def test_watchdog_timeout_of_four_ranks_names_the_collective_and_no_nccl_fault():
    text = load("torch-distributed/pytorch141069-ddp-watchdog-timeout-allreduce-seq19-4-ranks.txt")
    assert parsers.detect(text) == "torch-distributed"
    f = parsers.run("torch-distributed", text)
    assert f == {"torch.errors": [], "torch.watchdog_timeouts": 1, "torch.timeout_ops": ["ALLREDUCE"],
                 "torch.timeout_ms": 1800000, "torch.timeout_seqs": [19], "torch.timed_out_ranks": [1, 2, 3],
                 "torch.last_completed_work": {"1": 18, "2": 18, "3": 18}}


def test_a_traceback_without_any_nccl_or_c10d_error_is_not_this_kind():
    with pytest.raises(ParseError):
        parsers.run("torch-distributed", "Traceback (most recent call last):\n  File \"t.py\", line 1\n"
                    "torch.distributed is not available; ValueError: bad input\n")


def test_last_error_on_the_next_line_that_starts_with_the_word_error_is_nccls_text():
    """'Error while creating shared memory segment' is NCCL's last WARN, not the next exception (torchtitan#853)."""
    f = parse("torch-distributed/torchtitan853-indented-last-error-shm-segment-next-line.txt")
    assert f["nccl.warnings"] == ["Error while creating shared memory segment /dev/shm/nccl-1YsMbG (size 7340384)"]
    assert f["torch.nccl_error_kinds"] == ["ncclSystemError"]
    assert f["nccl.version"] == "2.21.5"


def test_an_exception_right_after_last_error_is_not_taken_as_its_text():
    f = parsers.run("torch-distributed", "ncclSystemError: System call failed.\nLast error:\n"
                    "RuntimeError: something else\n")
    assert "nccl.warnings" not in f


def test_a_collective_mismatch_between_ranks_is_read_as_the_applications_error():
    f = parse("torch-distributed/msswift9443-detected-mismatch-between-collectives.txt")
    assert len(f["torch.errors"]) == 1
    assert f["torch.errors"][0].startswith("RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is "
                                           "running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE")
    assert "nccl.errors" not in f and "torch.watchdog_timeouts" not in f


def test_the_frames_of_a_watchdog_timeout_without_its_message_line():
    text = load("torch-distributed/particleflow390-watchdog-frames-only.txt")
    assert parsers.detect(text) == "torch-distributed"
    f = parsers.run("torch-distributed", text)
    assert f["torch.watchdog_timeouts"] == 1
    assert f["torch.errors"] == []


def test_the_rendezvous_store_port_in_use_is_read_and_is_not_ncclS():
    f = parse("torch-distributed/megatronlm343-tcpstore-address-already-in-use-frames.txt")
    assert f["torch.errors"] == ["RuntimeError: Address already in use"]
    assert f["torch.store_port_in_use"] is True
    assert "nccl.errors" not in f


def test_ray_prefixed_lines_hard_wrapped_inside_their_parentheses():
    f = parsers.run("torch-distributed", load(
        "torch-distributed/openrlhf265-ray-wrapped-c10d-connect-timeout-docker-bridge-watchdog.txt"))
    assert f["torch.connect_timeouts"] == ["172.17.0.2:44737"]
    # 'WorkNCCL(SeqNum=385' / '6, OpType=ALLREDUCE, ...': the wrap split the number, which reads whole again
    assert (f["torch.watchdog_timeouts"], f["torch.timeout_ops"], f["torch.timeout_seqs"]) == (1, ["ALLREDUCE"], [3856])


def test_a_store_connect_timeout_on_loopback():
    text = load("torch-distributed/controlnet382-tcpstore-connect-timeout-loopback.txt")
    assert parsers.detect(text) == "torch-distributed"
    assert parsers.run("torch-distributed", text)["torch.connect_timeouts"] == ["127.0.0.1:48391"]


@pytest.mark.parametrize("name,hosts", [
    ("colossalai2841-gai-ipv6-name-unresolved-repeated.txt", ["i-7840df31:37340"]),  # six times: once
    ("verl2550-ray-prefixed-gai-ipv6-literal.txt", ["[2605:340:cd51:4900:73e8:12cb:cfe2:1540]:59699"]),
    ("nanochat42-macos-gai-8-nodename.txt", ["Os-MacBook-Air.local:59319"]),
    ("chatglm1372-windows-path-host-with-space.txt", ["Win202203021144.DHCP HOST:55890"]),
])
def test_rendezvous_host_c10d_could_not_resolve(name, hosts) -> None:
    text = load("torch-distributed/" + name)
    assert parsers.detect(text) == "torch-distributed"
    f = parsers.run("torch-distributed", text)
    assert (f["torch.unresolved_hosts"], f["torch.errors"]) == (hosts, [])


def test_an_unresolved_rendezvous_host_names_no_cause() -> None:
    # repeated while peers come up (kubernetes-sigs/jobset#93: a false alarm), or a name set wrong by the user: the
    # fact is evidence, not a cluster cause
    from tests.test_causes_scope import _found, _suspected
    spec = "torch-distributed/colossalai2841-gai-ipv6-name-unresolved-repeated.txt"
    assert _found([spec]) == [] and _suspected([spec]) == []


@pytest.mark.parametrize("name,addrs,in_use", [
    ("tuneavideo90-server-socket-no-listen-errno98-one-line.txt", ["[::]:29500", "0.0.0.0:29500"], True),
    ("ywblog-distnetworkerror-no-listen-eaddrinuse-port-lines.txt", ["any"], True),  # the port on its own line
    ("windows-notes-no-listen-system-error-10013.txt", ["[Christians-Desktop]:50376"], None),  # access, not in use
])
def test_the_rendezvous_store_could_not_listen(name, addrs, in_use) -> None:
    text = load("torch-distributed/" + name)
    assert parsers.detect(text) == "torch-distributed"
    f = parsers.run("torch-distributed", text)
    assert f["torch.store_listen_refused"] == addrs
    assert f.get("torch.store_port_in_use") is in_use
