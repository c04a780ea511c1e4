"""HAMi-core's log, read from real pastes with exact values."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_a_crash_of_the_interposer_inside_nccls_communicator_setup() -> None:
    text = load("hami-core/hamicore169-libvgpu-segfault-in-nccl-cumemcreate.txt")
    assert "hami-core" in [k for _, k in parsers.scores(text)[:2]]
    f = parsers.run("hami-core", text)
    assert f["hami.present"] is True and f["hami.segfault"] is True and f["hami.crash_in_nccl"] is True
    assert f["hami.errors"] == ["Illegal device id: 850725928"]
    assert f["hami.crash_frames"][:4] == [
        "/libvgpu/src/multiprocess/multiprocess_memory_limit.c:833 in get_current_device_memory_limit",
        "/libvgpu/src/allocator/allocator.c:44 in oom_check", "/libvgpu/src/cuda/memory.c:582 in cuMemCreate",
        "misc/cudawrap.cc:92 in ncclCuMemHostEnable()"]
    assert len(f["hami.crash_frames"]) == 18


def test_its_normal_start_up_lines_in_a_training_log() -> None:
    text = load("hami-core/hami-user-guide-training-log-warn-msg-initialized.txt")
    assert parsers.detect(text) == "hami-core"
    assert parsers.run("hami-core", text) == {"hami.present": True, "hami.errors": [], "hami.segfault": False}


@pytest.mark.parametrize("text", ["", "hello\nworld\n", 'File "x.py", line 3, in f\n', "[HAMI-core \n"])
def test_other_text_is_refused(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run("hami-core", text)
    assert parsers.get("hami-core").detect(text) < parsers.DETECT_MIN
