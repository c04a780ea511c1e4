"""Lines a terminal, a mail client or a ticket system wrapped at a fixed width (issue 15: "lines re-wrapped by a
ticket system"): joined again where that reads more, and a capture nobody wrapped reads as it did.

The outputs are real (tests/data); the wrapping is the test's: a terminal's cut at exactly 80 columns, in the middle of
words, and a mail client's at the last space before 76 columns (as ``fold -s -w 76`` and mail clients do)."""

from __future__ import annotations

from pathlib import Path

import pytest

from troubleshooter.diagnosis import unpaste, unwrap
from troubleshooter.diagnosis.pasted import EvidenceFacts, PastedError

from .corpus import load


def terminal(text: str, width: int = 80) -> str:
    return "\n".join("\n".join(ln[i:i + width] for i in range(0, max(len(ln), 1), width)) for ln in text.split("\n"))


def mail(text: str, width: int = 76) -> str:
    out = []
    for ln in text.split("\n"):
        while len(ln) > width:
            cut = ln.rfind(" ", 0, width + 1)
            if cut <= 0:
                cut = width
            out.append(ln[:cut])
            ln = ln[cut:].lstrip(" ") if cut < width or ln[cut:cut + 1] == " " else ln[cut:]
        out.append(ln)
    return "\n".join(out)


# long lines of the commonest kinds a person pastes from a narrow terminal or a mail: kernel logs, NCCL's log,
# PyTorch's distributed errors, Open MPI's and srun's messages
WRAPPED = [
    "dmesg/gpud1174-gb200-nvlink-xid145-nonfatal-xid149-fatal.txt",
    "dmesg/nvrm-xid13-xid109-ctx-switch-timeout-dmesg-ctime-gpud-doc.txt",
    "dmesg/sirzzang-rtx5090-xid13-43-bus-anonymised-xx.txt",
    "dmesg/ucx6264-mlx5-cmd-out-err-create-mkey-limits-exceeded.txt",
    "nccl-debug/azure-2node-ib-not-colocated-completion-error-12.txt",
    "nccl-debug/nccl1000-ipoib-oob-bootstrap-failure-chunk.txt",
    "nccl-debug/nccl1405-ib-plugin-completion-from-peer-status-12-vendor-err-129.txt",
    # NCCL's parser joins a WARN's next line itself, with a space: cut at 80 it read "Perm ission denied", and the
    # cause dev-shm-not-writable went unseen (its pieces joined as they were cut, read as published)
    "nccl-debug/nccl328-shm-open-permission-denied-dev-shm.txt",
    "torch-distributed/pytorch141069-ddp-watchdog-timeout-allreduce-seq19-4-ranks.txt",
    "torch-distributed/controlnet382-tcpstore-connect-timeout-loopback.txt",
    "openmpi/ompi9858-efa-btl-tcp-unexpected-process-identifier-many.txt",
    "slurm-client/deepops1179-srun-pyxis-nccl-tests-invalid-job-credential.txt",
]

# captures nobody wrapped whose lines look wrapped to the joining (a last line before a rule, a list of CPUs, a
# fragment's key lines): the joined reading loses or changes facts, so the capture reads as it is
UNWRAPPED = [
    "numa/gh200-numactl-hardware-9nodes-gpu-mem-node1-distance-80-255.txt",
    "nvidia-smi-q-fragments/rtx3090-i2-q-reset-required-yes-not-ready-key-lines.txt",
    "ethtool/i40e-unsupported-sfp-link-down-with-module.txt",
]
# tables (columns apart by blanks): a row a terminal cut is not joined, its columns would shift (an 80-column
# nvidia-smi topo -m joined so read a NIC's distances from the wrong columns)
TABLES = [
    "nvidia-smi/shinecluster54-rtx3070-idle-p0-persistence-off.txt",
    "pdsh/ansible-kalaxy-free-m-6-raspi-nodes.txt",
    "show-gids/cx6-mlx5_0-6-gids-v1-v2-ipv4-index5-spectrumscale.txt",
    "nvidia-smi-topo/dgx1-v100-hybrid-cube-mesh-old-format-mlx5-cols.txt",
]


def _facts(tmp_path: Path, text: str) -> dict | None:
    p = tmp_path / "paste.txt"
    p.write_text(text)
    try:
        fs = EvidenceFacts.from_specs([str(p)]).factsets["target"]
    except PastedError:  # nothing in it read
        return None
    return fs.as_dict()


@pytest.mark.parametrize("rel", WRAPPED)
@pytest.mark.parametrize("wrap", [terminal, mail], ids=["terminal at 80", "mail at 76"])
def test_a_wrapped_capture_reads_like_the_clean_one(tmp_path: Path, rel: str, wrap, monkeypatch) -> None:
    clean = load(rel)
    want = _facts(tmp_path, clean)
    assert _facts(tmp_path, wrap(clean)) == want
    monkeypatch.setattr(unwrap, "unwrapped", lambda text: [])  # without the joining, the wrap loses facts (or all)
    assert _facts(tmp_path, wrap(clean)) != want


@pytest.mark.parametrize("rel", UNWRAPPED)
def test_a_capture_nobody_wrapped_reads_as_it_is(tmp_path: Path, rel: str, monkeypatch) -> None:
    clean = load(rel)
    assert unwrap.unwrapped(unpaste.clean(clean))  # the joining is tried ...
    got = _facts(tmp_path, clean)
    monkeypatch.setattr(unwrap, "unwrapped", lambda text: [])
    assert got == _facts(tmp_path, clean)  # ... and not taken


@pytest.mark.parametrize("rel", TABLES)
def test_a_tables_rows_are_not_joined(rel: str) -> None:
    clean = load(rel)
    assert unwrap.unwrapped(unpaste.clean(clean)) == []
    assert unwrap.unwrapped(unpaste.clean(terminal(clean))) == []


def test_captures_published_wrapped_read_whole(tmp_path: Path) -> None:
    # pyxis's enroot log as a Slurm node logged it, cut by a terminal: "ldconfig.|real", "return code| 1"
    got = _facts(tmp_path, load("slurm/pyxis-slinky-k8s-ldcache-ldconfig-real-98-nvidia-hook-wrapped-lines.txt"))
    assert got["pyxis.errors"] == [
        "container start failed with error code: 1",
        "nvidia-container-cli: ldcache error: process /usr/sbin/ldconfig.real failed with error code: 1",
        "[ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1", "couldn't start container"]
    # PyTorch's collective mismatch, cut at 156 columns in the middle of "TensorShape=[41, ..." (jotr4 issue 4)
    case = Path(__file__).parent / "realworld/cases/m-jotr4-ood-collate-fn-allgather-shape-mismatch"
    got = _facts(tmp_path, (case / "collective-mismatch.txt").read_text())
    assert [e.split("TensorShape=")[1][:21] for e in got["torch.errors"]] == ["[41, 256, 8, 8, 8], T",
                                                                              "[40, 256, 8, 8, 8], T"]


def test_how_lines_are_joined() -> None:
    log = ("[  939.318674] mlx4_en: Mellanox ConnectX HCA Ethernet driver v2.2-1 (Feb 2014)\n"
           "[  939.318810] mlx4_en 0000:0d:00.0: LSO not supported, please upgrade to later FW version to enable LSO\n"
           "[  939.325643] <mlx4_ib> mlx4_ib_add: mlx4_ib: Mellanox ConnectX InfiniBand driver v2.2-1 (Feb 2014)\n")
    # a terminal's cut in mid-word ("driv|er") is joined as it is, its cut at a space with the space; a mail client's
    # cut at a space with one
    assert unwrap.unwrapped(unpaste.clean(terminal(log)))[0].text == log
    assert [u.text for u in unwrap.unwrapped(unpaste.clean(mail(log)))] == [log]
    assert all(u.sure for u in unwrap.unwrapped(unpaste.clean(mail(log))))  # 76 columns: a mail client's width
    # a log saved from the job (more lines than a paste holds) is not tried: reading it twice doubled a long log's time
    assert unwrap.unwrapped(unpaste.clean(terminal(log * 4000))) == []
    # a table of one width, a log whose lines are all short, a text with one long line: nothing to join
    table = load("nvidia-smi/gh200-480gb-nvidia-smi-570.txt")
    assert unwrap.unwrapped(unpaste.clean(table)) == []
    assert unwrap.unwrapped("a b c\n" * 10) == []
    assert unwrap.unwrapped("short\n" + "x" * 200 + "\nshort\n") == []
