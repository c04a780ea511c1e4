"""nccl-channels parser: NCCL channel lines quoted without their log prefix (real quote from NVIDIA/nccl#897)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_one_node_sends_with_gdrdma_the_other_receives_without():
    text = load("nccl-channels/nccl897-send-gdrdma-receive-without.txt")
    assert parsers.detect(text) == "nccl-channels"
    assert parsers.run("nccl-channels", text) == {
        "nccl.channel_transports": {"NET/IB": 1, "NET/IB/GDRDMA": 1},
        "nccl.nets": ["IB"],
        "nccl.ib_channels_gdr": 1,
        "nccl.ib_channels_no_gdr": 1,
        "nccl.ib_recv_channels_no_gdr": 1,
    }


def test_a_whole_nccl_log_is_left_to_nccl_debug():
    line = "h:1:2 [0] NCCL INFO Channel 00/0 : 9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA\n"
    assert parsers.detect(line) == "nccl-debug"
    f = parsers.run("nccl-debug", line + line.replace("[send] via NET/IB/0/GDRDMA", "[receive] via NET/IB/1"))
    assert (f["nccl.ib_channels_gdr"], f["nccl.ib_channels_no_gdr"], f["nccl.ib_recv_channels_no_gdr"]) == (1, 1, 1)


def test_intra_node_transports_and_no_channel_line():
    f = parsers.run("nccl-channels", "0[1a000] -> 1[1b000] via P2P/IPC\n1[1b000] -> 0[1a000] via SHM/direct/direct\n")
    assert f == {"nccl.channel_transports": {"P2P/IPC": 1, "SHM/direct/direct": 1}}
    with pytest.raises(ParseError):
        parsers.run("nccl-channels", "no channels here\n")
