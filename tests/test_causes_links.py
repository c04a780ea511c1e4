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


def test_mlxlink_and_ethtool_say_a_port_is_possibly_down_or_slow_never_found() -> None:
    for rel in ("mlxlink/cx5-ib-sdr-cable-speed-not-enabled.txt", "mlxlink/cx7-200g-card-at-100g-dac-aerial-doc.txt",
                "ethtool/i40e-unsupported-sfp-link-down-with-module.txt"):
        assert _found([rel]) == [], rel
        assert _suspected([rel]) == ["fabric-port-down"], rel
    # errors counted since the driver loaded: a possible failing link, with two readings as the command that decides
    assert _found(["ethtool/S-cx6dx-100g-lr4-crc-symbol-errors.txt"]) == []
    assert _suspected(["ethtool/S-cx6dx-100g-lr4-crc-symbol-errors.txt"]) == ["fabric-link-errors"]


def test_healthy_links_in_mlxlinks_words_suggest_nothing() -> None:
    for rel in ("mlxlink/csegpu1-cx7-show-mo-ib-ndr-4x-healthy-module-info.txt",
                "mlxlink/brev-a100-eight-cx6-hdr-2x-ber-monitor-refused-counters-grep.txt",
                "mlxlink/json-cx7-400g-dr4-mft4341.txt", "mlxlink/gce-b200-nvlink-xdr.txt",
                "mlxlink/rdmanotes-grep-speed-ethernet-100g-ext-lists.txt", "ethtool/hblen-netdev-gaudi-eth0-100g-quoted-in-reply.txt"):
        assert _found([rel]) == [] and _suspected([rel]) == [], rel


def test_a_fabric_registration_that_completed_with_an_error_is_not_a_fabric_manager_that_never_ran() -> None:
    rel = "nvidia-smi-q-fragments/azhpcimages506-fabric-completed-insufficient-resources-cliqueid-0.txt"
    facts = parsers.run("nvidia-smi-q", corpus.load(rel))
    assert facts["gpu.fabric_failed"] == ["GPU 0: Insufficient Resources"] and facts["gpu.fabric_incomplete"] == []
    assert _found([rel]) == [("nvlink-fabric-registration-failed", "confirmed")]


def test_a_fabric_manager_unit_systemd_cannot_find_is_possible_until_the_gpus_say_they_wait_for_it() -> None:
    rel = "systemctl-status/gpuoperator286-hgx-a100-unit-nvidia-fabricmanager-not-found.txt"
    assert _found([rel]) == [] and _suspected([rel]) == ["fabric-manager-not-running"]
    # beside CUDA's 802 (system not yet initialized) from the same host: the package is missing and the GPUs wait
    both = [rel, "cuda-errors/ollama9031-h200-cudart-init-failure-802-cpu-fallback.txt"]
    assert ("fabric-manager-not-running", "confirmed") in _found(both)
