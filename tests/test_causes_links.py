"""The adapter and its links as their own tools report them (issue 15): the mlx5 firmware's refused commands in the
kernel log, a ConnectX out of doorbell (UAR) pages, mlxlink's and ethtool's view of a port's speed, link and
errors. Real captures from tests/data; each says where it came from."""

from __future__ import annotations

from tests.test_causes_scope import _found, _suspected
from tests import corpus
from troubleshooter import parsers

UAR_DMESG = "dmesg/ucx6049-mlx5-cmd-check-alloc-uar-limits-exceeded.txt"
UAR_UCX = "ucx/ucx6049-ibv-open-device-mlx5-0-cannot-allocate-memory-256-ranks.txt"
MKEY_DMESG = "dmesg/ucx6264-mlx5-cmd-out-err-create-mkey-limits-exceeded.txt"


def test_the_kernel_log_names_the_firmware_command_the_adapter_refused() -> None:
    assert parsers.run("dmesg", corpus.load(UAR_DMESG))["dmesg.hca_cmd_failures"] == ["ALLOC_UAR: limits exceeded"]
    got = parsers.run("dmesg", corpus.load(MKEY_DMESG))
    assert got["dmesg.hca_cmd_failures"] == ["CREATE_MKEY: limits exceeded"]  # three lines, one command
    assert got["dmesg.suppressed_callbacks"] == 353031


def test_an_adapter_out_of_uar_pages_is_not_the_locked_memory_limit() -> None:
    # UCX could not open the device (ENOMEM) and the firmware refused ALLOC_UAR: the BAR is full (PF_LOG_BAR_SIZE)
    assert _found([UAR_UCX, UAR_DMESG]) == [("hca-uar-space-exhausted", "confirmed")]
    assert _found([UAR_DMESG]) == [("hca-uar-space-exhausted", "confirmed")]
    # UCX's line alone: opening a device asks no locked memory; the BAR is possible, with dmesg as the command
    assert _found([UAR_UCX]) == []
    assert _suspected([UAR_UCX]) == ["hca-uar-space-exhausted"]
    # the memory-key table full (CREATE_MKEY) is another limit: not this cause
    assert "hca-uar-space-exhausted" not in [c for c, _ in _found([MKEY_DMESG])] + _suspected([MKEY_DMESG])


def test_slurms_unsupported_gres_refusal_is_a_select_plugin_without_gpu_accounting() -> None:
    # ESLURM_UNSUPPORTED_GRES: slurmctld refuses --gpus/--gpus-per-task/--mem-per-gpu unless SelectType is cons_tres
    rel = "slurm-client/deepops485-srun-gpus-requested-gres-option-unsupported-select-cons-res.txt"
    assert _found([rel]) == [("slurm-select-plugin-lacks-gpu-options", "confirmed")]
    # a step refused for an invalid GRES (a count the node lacks) is another refusal, left possible as it was
    other = "slurm-client/lumidocs-overlap-step-invalid-gres-wrapped.txt"
    assert _found([other]) == []
    assert _suspected([other]) == ["slurm-step-gpu-request-exceeds-node"]
