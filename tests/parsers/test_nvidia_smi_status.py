"""nvidia-smi's failure messages and -L list (real transcripts), and what the diagnosis makes of them."""

import pytest

from tests.corpus import DATA, load
from troubleshooter import parsers
from troubleshooter.diagnosis.pasted import EvidenceFacts
from troubleshooter.parsers import ParseError
from troubleshooter.service.diagnose import diagnose


def test_nvml_unknown_error_and_the_host_list():
    f = parsers.run("nvidia-smi-status", load("nvidia-smi-status/list-host-ok-container-nvml-unknown-error-nvidia-ctk1227.txt"))
    assert f["gpu.smi_error"] == "Failed to initialize NVML: Unknown Error"
    assert f["gpu.smi_error_kind"] == "nvml-unknown-error"
    assert f["gpu.count"] == 4 and f["gpu.names"] == ["NVIDIA A10", "NVIDIA A10", "Tesla T4", "Tesla T4"]


@pytest.mark.parametrize("name, kind", [
    ("driver-library-mismatch-after-install-notes.txt", "driver-library-mismatch"),
    ("monitor-report-driver-library-mismatch-nvml-580.txt", "driver-library-mismatch"),
    ("no-driver-communication-rhel9-dkms-notes.txt", "no-driver"),
])
def test_error_kinds(name, kind):
    f = parsers.run("nvidia-smi-status", load(f"nvidia-smi-status/{name}"))
    assert f["gpu.smi_error_kind"] == kind and "gpu.count" not in f


@pytest.mark.parametrize("name, kind, unreachable", [
    ("gpu-lost-index-first-3080-beside-5070ti-csv-query.txt", "gpu-lost", ["24:00.0"]),
    ("device-handle-unknown-error-xxd3vin19.txt", "device-handle-error", ["0b:00.0"]),
    ("device-handle-unknown-error-glued-address-tesla-p4-syno22.txt", "device-handle-error", ["07:00.0"]),
])
def test_a_gpu_nvidia_smi_cannot_open(name, kind, unreachable):
    # three forms of the address: "GPU 0000:0B:00.0", "GPU0000:07:00.0" (older), "GPU0: 0000:24:00.0" (newer)
    f = parsers.run("nvidia-smi-status", load(f"nvidia-smi-status/{name}"))
    assert (f["gpu.smi_error_kind"], f["gpu.smi_unreachable"]) == (kind, unreachable)
    assert f["gpu.smi_error"].startswith("Unable to determine the device handle for GPU")


def test_not_a_status_message():
    with pytest.raises(ParseError):
        parsers.run("nvidia-smi-status", "hello\n")


@pytest.mark.parametrize("name, side, cause", [
    # the prompt's host is a docker container id: inside a container
    ("nvml-unknown-error-after-daemon-reload-nvidia-docker1671.txt", "target", "container-lost-gpu-access"),
    # "(container) $" and "(host) #" labels: each block on its side
    ("list-host-ok-container-nvml-unknown-error-nvidia-ctk1227.txt", "target", "container-lost-gpu-access"),
    ("driver-library-mismatch-after-install-notes.txt", "target", "driver-library-mismatch"),
])
def test_the_diagnosis_names_the_cause(name, side, cause):
    spec = str(DATA / "nvidia-smi-status" / name)
    ef = EvidenceFacts.from_specs([spec if side == "target" else f"{side}:{spec}"])
    walk, _ = diagnose("below-reference", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
    assert [c.cause for c in walk.conclusions] == [cause]


@pytest.mark.parametrize("spec", [
    "no-driver-communication-rhel9-dkms-notes.txt",  # a RHEL 9 VM whose DKMS build did not load
    "job:no-driver-communication-rhel9-dkms-notes.txt",  # the same words as 3dem/model-angelo#60's, in a Slurm job
    # on the host too: no module built for the running kernel, a GPU newer or older than the driver branch (set BB's
    # skypilot568 A10G under 450, skypilot1090 K80 under 510), nouveau holding the GPU; the fixes differ
    "host:no-driver-communication-rhel9-dkms-notes.txt",
])
def test_the_no_driver_message_from_nowhere_named_is_possible_not_decided(spec):
    # the same message on a host without its module and inside a job given no GPU: where it ran decides, and a
    # paste that does not say gets the cause as possible, first in the list, with the command that settles it
    side, _, name = spec.rpartition(":")
    path = str(DATA / "nvidia-smi-status" / name)
    ef = EvidenceFacts.from_specs([f"{side}:{path}" if side else path])
    walk, doc = diagnose("below-reference", ef, answers={}, profile_id=None, target_desc={"kind": "evidence"})
    assert walk.conclusions == []
    first = walk.hypotheses[0]
    assert (first.id, first.state) == ("gpu-driver-not-loaded", "suspected")
    assert "lsmod" in first.settle and "SLURM_JOB_GPUS" in first.settle
    assert doc["headline"].startswith("No root cause decided: the outputs point at 1 possible cause")
    assert doc["missing_evidence"][0]["command"] == first.settle


def test_labelled_host_block_goes_to_the_host_side():
    ef = EvidenceFacts.from_specs([str(DATA / "nvidia-smi-status" / "list-host-ok-container-nvml-unknown-error-nvidia-ctk1227.txt")])
    assert ef.factset("host").get("gpu.count").value == 4
    assert ef.factset("target").get("container.inside").value is True
    assert ef.factset("target").get("gpu.count") is None or ef.factset("target").get("gpu.count").value != 4


def test_the_library_and_module_versions_side_by_side_are_the_mismatch():
    f = parsers.run("nvidia-smi-status", load("nvidia-smi-status/aks5871-nvml-library-580-kernel-module-570.txt"))
    assert f == {"gpu.nvml_library_version": "580.159", "gpu.kernel_module_version": "570.211.01",
                 "gpu.smi_error": "NVML library 580.159, kernel module 570.211.01",
                 "gpu.smi_error_kind": "driver-library-mismatch"}
    # the message itself stays what nvidia-smi said; the version it adds is kept too
    g = parsers.run("nvidia-smi-status", load("nvidia-smi-status/monitor-report-driver-library-mismatch-nvml-580.txt"))
    assert g["gpu.smi_error"] == "Failed to initialize NVML: Driver/library version mismatch"
    assert g["gpu.nvml_library_version"] == "580.173" and "gpu.kernel_module_version" not in g


def test_a_file_named_nvidia_smi_holding_the_mismatch_lines_is_read_by_what_they_are(tmp_path):
    # the file name routes to the nvidia-smi table; that fails, so the text is read by detection
    f = tmp_path / "nvidia-smi.txt"
    f.write_text(load("nvidia-smi-status/aks5871-nvml-library-580-kernel-module-570.txt"))
    ef = EvidenceFacts.from_specs([str(f)])
    assert [(p.kind, p.error) for p in ef.files] == [("nvidia-smi-status", "")]
    assert ef.lookup("gpu.smi_error_kind") == "driver-library-mismatch"


@pytest.mark.parametrize("name, listed, without, count", [
    # srun's tasks' listings without a label: one per "GPU 0:" line, each task its own GPU
    ("deepops1102-srun-gpus-per-task-two-tasks-distinct-uuids.txt", 2, 0, 2),
    ("deepops1102-srun-gpu-bind-verbose-single-two-tasks.txt", 2, 0, 2),
    # four labelled tasks that share the one GPU the job asked for: one GPU, no task without
    ("deepops1102-procid-gres-gpu1-four-tasks-share-one-gpu.txt", 4, 0, 1),
    # --gpus-per-task=1: three of the four tasks saw no GPU
    ("deepops1102-procid-gpus-per-task-three-of-four-no-devices.txt", 4, 3, 1),
])
def test_several_tasks_listings(name, listed, without, count):
    f = parsers.run("nvidia-smi-status", load(f"nvidia-smi-status/{name}"))
    assert (f["gpu.tasks_listed"], f["gpu.tasks_without_devices"], f["gpu.count"]) == (listed, without, count)
    assert "gpu.smi_error_kind" not in f  # a task without a GPU is not nvidia-smi failing on the node
    assert parsers.detect(load(f"nvidia-smi-status/{name}")) == "nvidia-smi-status"


def test_the_srun_line_that_printed_the_listings():
    ef = EvidenceFacts.from_specs([str(DATA / "nvidia-smi-status" / "deepops1102-srun-gpus-per-task-two-tasks-distinct-uuids.txt")])
    assert [(f.kind, f.how) for f in ef.files] == [("srun", "command"), ("nvidia-smi-status", "command")]
    assert ef.lookup("gpu.listing_gpus_per_task") is True and ef.lookup("gpu.listing_in_container") is False
    # a single listing, and a line a task label could be mistaken in, are what they were
    one = parsers.run("nvidia-smi-status", "$ srun --container-image=img nvidia-smi -L\nGPU 0: A (UUID: GPU-1)\n")
    assert one == {"gpu.listing_gpus_per_task": False, "gpu.listing_in_container": True, "gpu.count": 1, "gpu.names": ["A"]}


@pytest.mark.parametrize("text", [
    "No devices found.\n",  # one listing alone: not tasks' listings
    "I0101 12:00:00 main.go:1] No devices found. Waiting indefinitely.\n",  # the device plugin's log
    "$ srun --gpus-per-task=1 hostname\nnode1\n",
])
def test_no_task_listings_in_other_text(text):
    with pytest.raises(ParseError):
        parsers.run("nvidia-smi-status", text)


def test_a_reset_or_mig_change_refused_while_a_client_holds_the_gpu():
    f = parsers.run("nvidia-smi-status", load("nvidia-smi-status/migparted181-mig-parted-apply.txt"))
    assert f == {"gpu.reset_blocked": ["00000000:01:00.0", "00000000:47:00.0", "00000000:81:00.0", "00000000:C2:00.0"]}
    f = parsers.run("nvidia-smi-status", load("nvidia-smi-status/gpuoperator118-mig-disable-and-gpu-reset.txt"))
    assert f["gpu.reset_blocked"] == ["00000000:C1:00.0"]


def test_nvmls_failure_under_a_singularity_command_without_nv():
    f = parsers.run("nvidia-smi-status", load("nvidia-smi-status/ncar-singularity-without-nv-mismatch-then-with-nv.txt"))
    assert f["gpu.smi_error_kind"] == "driver-library-mismatch"
    assert f["container.nvml_error_without_nv"] == "driver-library-mismatch"  # the run with --nv printed no error


def test_nvmls_function_not_found_and_the_go_bindings_mismatch_wording():
    from troubleshooter.diagnosis.pasted import EvidenceFacts

    for name, kind in (("nvdocker584-nvml-function-not-found-stale-links.txt", "nvml-function-not-found"),
                       ("nvdocker584-nvidia-docker-1-nvml-driver-library-mismatch.txt", "driver-library-mismatch")):
        f = EvidenceFacts.from_specs([str(DATA / "nvidia-smi-status" / name)])
        assert f.lookup("gpu.smi_error_kind") == kind, name


def test_no_nvidia_smi_where_it_ran():
    f = parsers.run("nvidia-smi-status", load("nvidia-smi-status/simqcd149-container-prompt-nvidia-smi-command-not-found.txt"))
    assert (f["gpu.smi_error_kind"], f["gpu.smi_error"]) == ("not-installed", "nvidia-smi: command not found")
    # dash's form; another program's 'not found' is not nvidia-smi's
    assert parsers.run("nvidia-smi-status", "sh: 1: nvidia-smi: not found\n")["gpu.smi_error_kind"] == "not-installed"
    with pytest.raises(ParseError):
        parsers.run("nvidia-smi-status", "bash: nvcc: command not found\n")


def test_a_listing_whose_uuid_the_poster_masked_in_its_groups():
    # "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx": the GPU is listed; the masked UUID identifies nothing
    text = load("nvidia-smi-status/sirzzang-eks-dcgm-exporter-list-uuid-masked-with-x.txt")
    assert parsers.detect(text) == "nvidia-smi-status"
    f = parsers.run("nvidia-smi-status", text)
    assert (f["gpu.count"], f["gpu.names"]) == (1, ["NVIDIA A10G"])
