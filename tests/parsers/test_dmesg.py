import os

import pytest
from hypothesis import given, settings, strategies as st

from troubleshooter.model import facts as factreg
from troubleshooter import parsers, sources
from troubleshooter.model.evidence import Evidence, Status
from troubleshooter.parsers import ParseError
from troubleshooter.probe.runner import classify
from troubleshooter.probe.targets import LocalTarget
from tests.corpus import files, load

KIND = "dmesg"


def parse(text):
    return parsers.run(KIND, text)


def test_amd_vi_faults_quoted_with_suppressed_callbacks():
    f = parse(load("dmesg/amd-vi-io-page-fault-nvidia-81-callbacks-suppressed-llamacpp.txt"))
    assert f["dmesg.iommu_faults"] == 8
    assert f["dmesg.iommu_fault_devices"] == ["0000:81:00.0"]
    assert f["dmesg.suppressed_callbacks"] == 6
    assert f["dmesg.iommu_enabled"] is True
    assert f["dmesg.xid_codes"] == [] and f["dmesg.fallen_off_bus"] is False
    assert f["dmesg.lines"] == 9


def test_amd_vi_fault_storm_journal():
    f = parse(load("dmesg/amd-vi-io-page-fault-nvidia-p2p-cuda-samples-journal.txt"))
    assert f["dmesg.iommu_faults"] == 9
    assert f["dmesg.iommu_fault_devices"] == ["0000:07:00.0"]
    assert f["dmesg.suppressed_callbacks"] == 0


def test_boot_excerpt_command_line_and_dmar():
    f = parse(load("dmesg/dmesg-kernel-cmdline-spectre-off-nopti-intel_iommu-on-dmar-enabled-rocm.txt"))
    assert f["dmesg.kernel_cmdline"].startswith("BOOT_IMAGE=/boot/vmlinuz-4.16.15-amd root=UUID=")
    assert f["dmesg.kernel_cmdline"].endswith("intel_iommu=on iommu=pt toram vt.handoff=1")
    assert f["dmesg.iommu_enabled"] is True
    assert f["dmesg.iommu_faults"] == 0 and f["dmesg.nvrm_lines"] == 0


def test_fallen_off_bus_continuation_lines():
    f = parse(load("dmesg/gpu-fallen-off-bus-multiline-no-xid-nvsentinel.txt"))
    assert f["dmesg.fallen_off_bus"] is True
    assert f["dmesg.fallen_off_bus_devices"] == ["0000:b3:00"]
    assert f["dmesg.xid_codes"] == [] and f["dmesg.xid_count"] == 0
    assert f["dmesg.lines"] == 3  # the two indented continuations join the first message
    assert f["dmesg.nvrm_lines"] == 5
    assert f["dmesg.nvidia_driver_version"] == "570.158.01"


def test_xid13_xid109_ctime_diff_quoted():
    f = parse(load("dmesg/nvrm-xid13-xid109-ctx-switch-timeout-dmesg-ctime-gpud-doc.txt"))
    assert f["dmesg.xid_codes"] == [13, 109]
    assert f["dmesg.xid_count"] == 4
    assert [e["code"] for e in f["dmesg.xid_events"]] == [13, 13, 13, 109]
    assert {e["bus"] for e in f["dmesg.xid_events"]} == {"0000:cb:00"}
    assert f["dmesg.xid_events"][3]["text"] == ("pid=1797828, name=pt_main_thread, Ch 00000008, "
                                                "errorString CTX SWITCH TIMEOUT, Info 0x58005")
    assert f["dmesg.fallen_off_bus"] is False
    assert f["dmesg.nvrm_lines"] == 4


def test_gsp_rpc_failures_journal_grep():
    f = parse(load("dmesg/rtx5090-gsp-rpcSendMessage-failed-assertions-journal-grep.txt"))
    assert f["dmesg.gsp_errors"] == 4  # 2x rpcSendMessage failed, 2x GspRmFree failed
    assert f["dmesg.nvrm_assertions"] == 3
    assert f["dmesg.nvrm_lines"] == 7
    assert f["dmesg.xid_codes"] == []


def test_xid79_fallen_off_bus_no_timestamps():
    f = parse(load("dmesg/rtx5090-xid79-fallen-off-bus-gsp-rpc-failed-open-kmod-595.txt"))
    assert f["dmesg.xid_events"] == [{"code": 79, "bus": "0000:06:00", "text": "GPU has fallen off the bus."}]
    assert f["dmesg.fallen_off_bus"] is True
    assert f["dmesg.fallen_off_bus_devices"] == ["0000:06:00"]
    assert f["dmesg.gsp_errors"] == 2  # kgspRcAndNotifyAllChannels ... critical error 79; rpcSendMessage failed
    assert f["dmesg.nvrm_lines"] == 8


def test_grace_cmdqv_companion_then_fallback():
    f = parse(load("dmesg/grace-smmuv3-cmdqv-companion-found-vcmdq-alloc-failed-fallback-lkml.txt"))
    assert f["dmesg.smmu_lines"] == 7
    assert f["dmesg.cmdqv_lines"] == 2
    assert f["dmesg.cmdqv_companion"] == "NVDA200C:00"
    assert f["dmesg.cmdqv_fallback"] is True
    assert f["dmesg.cmdqv_probed"] is False
    assert f["dmesg.iommu_enabled"] is True  # 'ias 48-bit, oas 48-bit'


def test_cmdqv_companion_without_fallback_is_probed():
    f = parse("[    2.100000] arm-smmu-v3 arm-smmu-v3.0.auto: found companion CMDQV device: NVDA200C:00\n"
              "[    2.100100] arm-smmu-v3 arm-smmu-v3.0.auto: ias 48-bit, oas 48-bit (features 0x001e1fbf)\n"
              "[    2.100200] arm-smmu-v3 arm-smmu-v3.0.auto: allocated 524288 entries for cmdq\n")
    assert f["dmesg.cmdqv_probed"] is True and "dmesg.cmdqv_fallback" not in f


def test_no_cmdqv_line_leaves_it_unknown():
    f = parse(load("dmesg/dmesg-kernel-cmdline-spectre-off-nopti-intel_iommu-on-dmar-enabled-rocm.txt"))
    assert "dmesg.cmdqv_probed" not in f and f["dmesg.cmdqv_lines"] == 0


def test_xid_events_capped():
    text = "".join(f"[ {i}.000000] NVRM: Xid (PCI:0000:01:00): 31, pid={i}, name=x, MMU Fault\n" for i in range(250))
    f = parse(text)
    assert f["dmesg.xid_count"] == 250 and len(f["dmesg.xid_events"]) == 200
    assert f["dmesg.xid_events"][-1]["text"].startswith("pid=249")


@pytest.mark.parametrize("text", ["", "\n \n", "hello world\nthis is not a kernel log\n", "node0 node1\nnuma_hit 1 2\n"])
def test_empty_or_not_dmesg(text):
    with pytest.raises(ParseError):
        parse(text)


@pytest.mark.parametrize("path", files("dmesg"), ids=lambda p: p.name)
def test_detected_as_dmesg(path):
    assert parsers.detect(load(f"dmesg/{path.name}")) == KIND


def test_declared_facts():
    p = parsers.get(KIND)
    for path in files("dmesg"):
        for name in parse(load(f"dmesg/{path.name}")):
            assert name in p.facts, name
            assert factreg.spec(name) is not None


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(), st.binary().map(lambda b: b.decode("utf-8", errors="replace")),
                 st.lists(st.sampled_from(["[    1.000000] NVRM: Xid (PCI:0000:01:00): 79, x", "+> [Fri Aug 30 11:11:22 2024] x",
                                           "                NVRM: cont", "NVRM: Xid (PCI:0000:01:00): 99999999999999999999",
                                           "> [ 2.0] 12 callbacks suppressed", "Kernel command line:", "arm-smmu-v3: x",
                                           "found companion CMDQV device:", ""])).map("\n".join)))
def test_only_parse_errors(text):
    try:
        parse(text)
    except ParseError:
        pass


def test_permission_denied_is_classified():
    ev = Evidence("dmesg", Status.OK, rc=1, argv=["dmesg"],
                  stderr=b"dmesg: read kernel buffer failed: Operation not permitted\n")
    assert classify(ev).status is Status.PERMISSION_DENIED
    assert ev.reason == "dmesg: read kernel buffer failed: Operation not permitted"


def test_real_source_here():
    ev = LocalTarget().run(sources.get("dmesg"), sources.Params(pid=os.getpid()))
    if os.geteuid() == 0:
        assert ev.status is Status.OK, ev.reason  # root on the development and CI machines
        f = parse(ev.text)
        assert f["dmesg.lines"] > 0 and "dmesg.kernel_version" in f
    else:
        assert ev.status in (Status.OK, Status.PERMISSION_DENIED), ev.reason


def test_the_driver_says_the_fabric_state_is_out_of_sync():
    f = parsers.run("dmesg", load("dmesg/hgx-nvrm-fabric-state-out-of-sync-journal.txt"))
    assert f["dmesg.fabric_out_of_sync"] is True
    assert "dmesg.fabric_manager_absent" not in f


def test_nvswitch_fatal_sxid_in_a_talos_log():
    """Talos' node-prefixed log; the SXid's error-log line says Severity 1 (NVSWITCH_ERROR_SEVERITY_FATAL)."""
    f = parse(load("dmesg/talos-hgx-a100-nvswitch-sxid-24007-severity1-ogkm1118.txt"))
    assert f["dmesg.sxid_codes"] == [24007]
    assert f["dmesg.sxid_fatal_codes"] == [24007]
    assert f["dmesg.sxid_events"] == [{"code": 24007, "switch": 1, "bus": "0000:aa:00.0", "fatal": True, "link": 12,
                                       "unit": "NPORT source track",
                                       "text": "Severity 1 Engine instance 12 Sub-engine instance 00"}]
    assert f["dmesg.nvrm_lines"] == 2 and f["dmesg.xid_codes"] == []
    assert f["dmesg.lines"] == 4


def test_nvswitch_non_fatal_sxid_report_and_its_log_entry_are_one_event():
    f = parse(load("dmesg/hgx-nvswitch-sxid-22013-nonfatal-minion-link60.txt"))
    assert f["dmesg.sxid_codes"] == [22013]
    assert f["dmesg.sxid_fatal_codes"] == []
    assert f["dmesg.sxid_events"] == [{"code": 22013, "switch": 3, "bus": "0000:08:00.0", "fatal": False, "link": 60,
                                       "unit": "MINION (link training)",
                                       "text": "Non-fatal, Link 60 Minion Link DLREQ interrupt"}]


def test_nvswitch_sxid_data_line_alone_gives_the_code_not_its_severity():
    f = parse(load("dmesg/nvswitch-sxid-12028-data-line-only-dmesg-iso-gpud.txt"))
    assert f["dmesg.sxid_codes"] == [12028]
    assert f["dmesg.sxid_fatal_codes"] == [] and f["dmesg.sxid_events"] == []


def test_no_sxid_line_no_sxid():
    f = parse(load("dmesg/hgx-nvrm-fabric-state-out-of-sync-journal.txt"))
    assert f["dmesg.sxid_codes"] == f["dmesg.sxid_fatal_codes"] == f["dmesg.sxid_events"] == []


def test_blackwell_nvlink_xids_say_fatal_or_nonfatal_and_follow_ons_name_their_cause() -> None:
    # gpud#1174's GB200 lines: Xid 149 NETIR Fatal; Xid 145 RLW_RXPIPE Nonfatal (once after the process's pid/name)
    f = parsers.run("dmesg", load("dmesg/gpud1174-gb200-nvlink-xid145-nonfatal-xid149-fatal.txt"))
    assert f["dmesg.xid_codes"] == [145, 149] and f["dmesg.xid_count"] == 3
    assert f["dmesg.xid_nonfatal_codes"] == [145]
    assert f["dmesg.xid_events"][2]["text"].startswith("pid=876767, name=ray::WorkerDict, RLW_RXPIPE Nonfatal")
    # open-gpu-kernel-modules#1150: only the Xid 45 tear-downs were pasted, each naming the NVLink Xid that caused it
    g = parsers.run("dmesg", load("dmesg/ogkm1150-xid45-caused-by-previous-xid145-149.txt"))
    assert g["dmesg.xid_codes"] == [45, 145, 149] and g["dmesg.xid_count"] == 8
    assert [e["code"] for e in g["dmesg.xid_events"]] == [45] * 8
    assert "dmesg.xid_nonfatal_codes" not in g


def test_a_nonfatal_nvlink_xid_that_a_follow_on_names_as_its_cause_is_not_counted_corrected() -> None:
    lines = load("dmesg/gpud1174-gb200-nvlink-xid145-nonfatal-xid149-fatal.txt").splitlines()[1]
    follow = "NVRM: Xid (PCI:0018:01:00): 45, pid=876767, name=python3, Ch 00000001 caused by previous Xid 145"
    assert parsers.run("dmesg", lines + "\n")["dmesg.xid_nonfatal_codes"] == [145]
    assert "dmesg.xid_nonfatal_codes" not in parsers.run("dmesg", lines + "\n" + follow + "\n")


def test_the_proprietary_module_refusing_a_gpu_that_needs_the_open_one() -> None:
    # amazon-eks-ami#2769: three NVRM lines quoted alone (g7, RTX PRO 4500 Blackwell Server Edition)
    f = parsers.run("dmesg", load("dmesg/eksami2769-g7-blackwell-proprietary-kmod-requires-open.txt"))
    assert f["dmesg.kmod_flavor_refused"] == [{"gpu": "0000:57:00.0", "pci_id": "10de:2c3a", "needs": "open"}]
    assert f["dmesg.kmod_flavor_needed"] == ["open"]
    # dmesg with times: the reason on an indented continuation line, the same GPU refused at every probe
    g = parsers.run("dmesg", load("dmesg/rtx50-laptop-proprietary-580-requires-open-dmesg-grep.txt"))
    assert g["dmesg.kmod_flavor_refused"] == [{"gpu": "0000:02:00.0", "pci_id": "10de:2c58", "needs": "open"}]
    assert g["dmesg.nvidia_module_flavor"] == "proprietary" and g["dmesg.nvidia_driver_version"] == "580.105.08"


def test_the_open_module_refusing_a_gpu_without_a_gsp() -> None:
    f = parsers.run("dmesg", load("dmesg/ogkm696-pascal-open-kmod-no-gsp.txt"))
    assert f["dmesg.kmod_flavor_refused"] == [{"gpu": "0000:02:00.0", "pci_id": "10de:1b82", "needs": "proprietary"}]
    # the journal's "kernel:" prefix, the continuation lines indented without a time
    g = parsers.run("dmesg", load("dmesg/negativo17-158-gt1030-open-kmod-560-journal.txt"))
    assert g["dmesg.kmod_flavor_refused"] == [{"gpu": "0000:09:00.0", "pci_id": "10de:1d01", "needs": "proprietary"}]
    assert g["dmesg.kmod_flavor_needed"] == ["proprietary"]


def test_the_open_modules_banner_with_no_refusal() -> None:
    f = parsers.run("dmesg", load("dmesg/gpu-fallen-off-bus-multiline-no-xid-nvsentinel.txt"))
    assert f["dmesg.nvidia_module_flavor"] == "open"
    assert "dmesg.kmod_flavor_refused" not in f and "dmesg.kmod_flavor_needed" not in f


def test_dmesg_h_relative_timestamps_and_a_fatal_aer_error_on_the_gpus_link():
    f = parsers.run("dmesg", load("dmesg/returnn1500-aer-fatal-cmplto-reltime.txt"))
    assert f["dmesg.lines"] == 12
    assert (f["dmesg.aer_fatal"], f["dmesg.aer_nonfatal"], f["dmesg.aer_corrected"]) == (2, 0, 0)
    assert f["dmesg.aer_devices"] == ["0000:03:00.0", "0000:03:00.1", "0000:00:03.0"]
    assert f["dmesg.aer_gpu_devices"] == ["0000:03:00.0"] and f["dmesg.aer_recovery_failed"] is True
    assert f["dmesg.fallen_off_bus"] is False and f["dmesg.xid_codes"] == []


def test_an_old_kernels_aer_words_and_the_xid_79_that_follows():
    f = parsers.run("dmesg", load("dmesg/gpuburn1-aer-surprise-down-no-aer-driver-xid79.txt"))
    assert (f["dmesg.aer_fatal"], f["dmesg.aer_corrected"]) == (2, 2)
    assert f["dmesg.aer_gpu_devices"] == ["0000:02:00.0"] and f["dmesg.aer_recovery_failed"] is True
    assert f["dmesg.xid_codes"] == [79]


def test_a_gpus_bar_the_firmware_left_unassigned():
    f = parsers.run("dmesg", load("dmesg/wucvgl-8gpu-4-shown-bar1-0m-pci-realloc.txt"))
    assert f["dmesg.gpu_bar_invalid"] == ["BAR1 of 0000:56:00.0"]  # the second line indented under the first
    assert "dmesg.rm_init_failed" not in f and f["dmesg.xid_codes"] == []


def test_no_gsp_firmware_image_then_rminitadapter_fails():
    f = parsers.run("dmesg", load("dmesg/gpuop-relnotes-vgpu-open-kmod-no-gsp-firmware-image.txt"))
    assert f["dmesg.gsp_firmware_missing"] == ["gsp"] and f["dmesg.rm_init_failed"] == ["0000:ae:00.0"]
    assert f["dmesg.nvidia_module_flavor"] == "open" and f["dmesg.nvidia_driver_version"] == "550.90.05"


def test_the_drivers_legacy_gpu_notice_even_cut_after_its_first_line():
    f = parsers.run("dmesg", load("dmesg/charmedk8s646-kern-log-tesla-k80-legacy-notice-cut.txt"))
    assert f["dmesg.gpu_legacy_unsupported"] == ["Tesla K80"]


def test_the_kernel_modules_api_mismatch_in_a_journal():
    f = parsers.run("dmesg", load("dmesg/nvdocker182-journal-nvrm-api-mismatch-367-44-vs-367-35.txt"))
    assert f["dmesg.api_mismatch"] == "client 367.44, kernel module 367.35"


def test_the_early_open_module_refusing_a_non_data_center_gpu():
    f = parsers.run("dmesg", load("dmesg/ogkm230-open-nvidia-ko-only-data-center-gpus-rminitadapter.txt"))
    assert f["dmesg.kmod_flavor_needed"] == ["proprietary"] and f["dmesg.rm_init_failed"] == ["0000:04:00.0"]


def test_vt_d_fault_lines_that_name_the_device_without_its_domain():
    f = parsers.run("dmesg", load("dmesg/iommu-note-dmar-no-pasid-request-device-short-bdf-three-devices.txt"))
    assert f["dmesg.iommu_faults"] == 8
    assert f["dmesg.iommu_fault_devices"] == ["0000:3c:00.0", "0000:bc:00.0", "0000:dc:00.0"]


def test_xid_lines_whose_bus_the_poster_anonymised_are_still_xids():
    f = parse(load("dmesg/sirzzang-rtx5090-xid13-43-bus-anonymised-xx.txt"))
    assert f["dmesg.xid_count"] == 3
    assert f["dmesg.xid_codes"] == [13, 43]
    assert [e["bus"] for e in f["dmesg.xid_events"]] == ["0000:XX:00"] * 3
    assert f["dmesg.xid_events"][0]["text"] == "Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address"


def test_an_xid_quoted_without_its_bus_is_still_an_xid():
    f = parse(load("dmesg/skypilot10468-xid78-guest-driver-incompatible-quoted.txt"))
    assert f["dmesg.xid_codes"] == [78]
    assert f["dmesg.xid_events"] == [{"code": 78, "bus": "", "text": "Guest driver is incompatible with host driver"}]
    # a sentence about an Xid is not one
    with pytest.raises(ParseError):
        parse("Xid 79 means the GPU has fallen off the bus\n")


def test_a_gpu_or_rdma_modules_message_without_a_timestamp_is_a_kernel_log():
    # gdrdrv prints "gdrdrv:" before its messages (no space), as the NVIDIA and mlx5 modules print their own prefixes
    text = load("dmesg/gdrcopy30-gdrdrv-p2p-get-pages-failed-no-timestamp.txt")
    assert parsers.detect(text) == "dmesg"
    f = parsers.run("dmesg", text)
    assert (f["dmesg.lines"], f["dmesg.xid_codes"], f["dmesg.nvrm_lines"]) == (1, [], 0)


@pytest.mark.parametrize("line", [
    "nvidia-nvlink: Nvlink Core is being initialized, major device number 234",
    "nvidia 0000:3b:00.0: enabling device (0000 -> 0003)",
    "mlx5_core 0000:61:00.0: mlx5_cmd_check:795:(pid 53945): ALLOC_UAR(0x802) op_mod(0x0) failed",
])
def test_the_module_prefixes_that_mark_a_kernel_line(line):
    assert parsers.get("dmesg").detect(line + "\n") >= 0.8
    assert not parsers.get("dmesg").detect("gdrdrv is the kernel module of GDRCopy\n")
