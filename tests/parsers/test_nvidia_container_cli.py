"""The NVIDIA container hook's errors (nvidia-container-cli), read from real pastes with exact values."""

from __future__ import annotations

import textwrap

import pytest

from tests.corpus import load
from troubleshooter import parsers

KIND = "nvidia-container-cli"
PRE = "nvidia-container-cli: "


def _one(error: str, kind: str, **extra: str) -> dict:
    facts = {"container_cli.error": error, "container_cli.error_kind": kind, "container_cli.errors": [error],
             "container_cli.error_kinds": [kind]}
    facts.update({f"container_cli.{k}": v for k, v in extra.items()})
    return facts


def _enroot(facts: dict) -> dict:
    """The same reading, from enroot's log: its NVIDIA hook (98-nvidia.sh) reported failing."""
    return {**facts, "container_cli.enroot_hooks_failed": ["98-nvidia.sh"]}


CASES = {
    "requirement-cuda-petric2-27-runc-shim-task-auto-detected-legacy-cuda-12.8.txt": _one(
        PRE + "requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer version, "
        "or use an earlier cuda container", "requirement-cuda", required_cuda="12.8"),
    # hard-wrapped inside "condi|tion", the old "cuda >= 9.0" spelling, the message ended by an escaped \n
    "requirement-cuda-nvdocker543-prestart-hook-1-hard-wrapped-mid-word-cuda-9.0.txt": _one(
        PRE + "requirement error: unsatisfied condition: cuda >= 9.0", "requirement-cuda", required_cuda="9.0"),
    "requirement-cuda-vitisai103-prestart-hook-0-escaped-quotes-cuda-10.0.txt": _one(
        PRE + "requirement error: unsatisfied condition: cuda>=10.0", "requirement-cuda", required_cuda="10.0"),
    # the exec command's --require=cuda>=10.0 is the image's requirement: its cuda>= alternative failed before the
    # brand = tesla one the error names
    "requirement-other-nvdocker921-brand-tesla-exec-command-require.txt": _one(
        PRE + "requirement error: unsatisfied condition: brand = tesla", "requirement-other", required_cuda="10.0",
        requirement_alternatives=["cuda>=10.0", "brand=tesla,driver>=384,driver<385"]),
    # printed twice by compose, wrapped at spaces: one error
    "cgroup-devices-dalle105-compose-wrapped-at-spaces-twice.txt": _one(
        PRE + "container error: cgroup subsystem devices not found", "cgroup-devices-not-found"),
    "cgroup-devices-nvdocker1486-running-hook-1-then-runtime-nvidia-command.txt": _one(
        PRE + "container error: cgroup subsystem devices not found", "cgroup-devices-not-found"),
    "driver-not-loaded-nvct260-backticked-in-prose-failed-to-create-shim.txt": _one(
        PRE + "initialization error: nvml error: driver not loaded", "driver-not-loaded"),
    # the Docker SDK's 500 error closes the message with '")'
    "driver-not-loaded-kubeflow3098-docker-sdk-500-python-traceback.txt": _one(
        PRE + "initialization error: nvml error: driver not loaded", "driver-not-loaded"),
    "nvml-library-missing-nvct154-docker-run-in-backticks-auto-detected-legacy.txt": _one(
        PRE + "initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such "
        "file or directory", "nvml-library-missing"),
    "driver-library-mismatch-labdao-plex18-shim-task-erro-line.txt": _one(
        PRE + "initialization error: nvml error: driver/library version mismatch", "driver-library-mismatch"),
    "driver-library-mismatch-k8sdp1431-containerd-task-with-nvidia-smi.txt": _one(
        PRE + "initialization error: nvml error: driver/library version mismatch", "driver-library-mismatch"),
    # re-wrapped by the person after "initialization error:"
    "driver-library-mismatch-dalle104-compose-rewrapped-for-readability.txt": _one(
        PRE + "initialization error: nvml error: driver/library version mismatch", "driver-library-mismatch"),
    "unknown-device-nvct632-compose-device-2-twice.txt": _one(
        PRE + "device error: 2: unknown device", "unknown-device", device="2"),
    "unknown-device-nvct108-k3s-journal-volume-mounts-path.txt": _one(
        PRE + "device error: /var/run/nvidia-container-devices: unknown device", "unknown-device",
        device="/var/run/nvidia-container-devices"),
    "mount-error-nvct176-wsl-libnvidia-ml-file-exists.txt": _one(
        PRE + "mount error: file creation failed: /var/lib/docker/overlay2/ce57966999d99e98af2113a1f5c99f40792737c489"
        "03d5ba9f6ed5365aee8275/merged/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: file exists", "mount-error"),
    # hard-wrapped inside "m|ount error"
    "mount-error-nvdocker825-hard-wrapped-mid-word-nvidia-smi-file-exists.txt": _one(
        PRE + "mount error: file creation failed: /var/lib/docker/overlay2/bd4f3570d4eb99d9df1117bd3751a00c8c0eb63429e"
        "65eba2a196c6c543cc52f/merged/usr/bin/nvidia-smi: file exists", "mount-error"),
    "mount-error-enroot111-start-firmware-operation-not-permitted.txt": _enroot(_one(
        PRE + "mount error: mount operation failed: /tmp/enroot/pccl+containertest+0.1/usr/lib/firmware/nvidia/"
        "470.57.02: operation not permitted", "mount-error")),
    # a broken library inside the image is not a missing host library
    "other-enroot212-libnvidia-ml-file-too-short.txt": _enroot(_one(
        PRE + "initialization error: load library failed: /home/username/.local/share/enroot/enroot_name/usr/bin/../"
        "lib64/libnvidia-ml.so.1: file too short", "other")),
    "other-nvct173-kubelet-event-containerd-task-cli-real-driver-error.txt": _one(
        "nvidia-container-cli.real: initialization error: driver error: failed to process request", "other"),
    "no-gpu-runtime-bytetrack302-could-not-select-then-docker-run-command.txt": _one(
        'could not select device driver "" with capabilities: [[gpu]]', "no-gpu-runtime"),
    "no-gpu-runtime-nvdocker501-unknown-runtime-specified-nvidia.txt": _one(
        "Unknown runtime specified nvidia", "no-gpu-runtime"),
    # the runtime configured, its hook program absent; a wrapper's shell not finding nvidia-container-cli
    "no-gpu-runtime-nvdocker958-exec-nvidia-container-runtime-hook-not-found.txt": _one(
        'exec: "nvidia-container-runtime-hook": executable file not found in $PATH', "no-gpu-runtime"),
    "no-gpu-runtime-charliecloud939-ch-fromhost-nvidia-container-cli-not-found.txt": _one(
        "ch-fromhost: 204: ch-fromhost: nvidia-container-cli: not found", "no-gpu-runtime"),
}

# pyxis/enroot logs gathered for the Slurm kinds carry the hook's message too
SLURM = {
    "slurm/pyxis-arm64-libnvidia-container-1.17.7-cgroup-devices-allow-permission-denied.txt": _enroot(_one(
        PRE + "mount error: failed to add device rules: open /sys/fs/cgroup/devices/slurm/uid_28788/job_85/step_0/"
        "task_0/devices.allow: permission denied", "mount-error")),
    # the paste cut "ldconfig.|real" inside the path, and the hook's line before "1": enroot's hook that failed
    "slurm/pyxis-slinky-k8s-ldcache-ldconfig-real-98-nvidia-hook-wrapped-lines.txt": _enroot(
        _one(PRE + "ldcache error: process /usr/sbin/ldconfig.real failed with error code: 1", "ldconfig-failed")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_real_paste_read_exactly(name: str) -> None:
    text = load(f"nvidia-container-cli/{name}")
    assert parsers.run(KIND, text) == CASES[name]
    # detected as this kind, beside another tool's when the paste holds its output or its docker run line too
    top = parsers.scores(text)
    assert KIND in [k for s, k in top if top[0][0] - s < parsers.DETECT_MARGIN]


@pytest.mark.parametrize("rel", sorted(SLURM))
def test_the_hook_message_inside_pyxis_logs(rel: str) -> None:
    assert parsers.run(KIND, load(rel)) == SLURM[rel]


def test_crlf_line_ends_read_the_same() -> None:
    for name in ("driver-library-mismatch-dalle104-compose-rewrapped-for-readability.txt",
                 "requirement-cuda-nvdocker543-prestart-hook-1-hard-wrapped-mid-word-cuda-9.0.txt"):
        text = load(f"nvidia-container-cli/{name}")
        assert parsers.run(KIND, text.replace("\n", "\r\n")) == CASES[name]


# pastes whose message sits on one physical line: re-wrapped below as a ticket system or a terminal would
ONE_LINE = sorted(n for n in CASES if not any(w in n for w in ("dalle104", "nvdocker543", "nvdocker825")))


def _line(name: str) -> str:
    text = load(f"nvidia-container-cli/{name}")
    return next(ln for ln in text.splitlines()
                if any(w in ln for w in ("nvidia-container-cli:", "cli.real:", "device driver", "Unknown runtime",
                                         "executable file not found")))


def _same_reading(got: dict, want: dict) -> bool:
    keys = ("container_cli.error_kind", "container_cli.required_cuda", "container_cli.device")
    return all(got.get(k) == want.get(k) for k in keys)


@pytest.mark.parametrize("width", [40, 57, 72, 90])
def test_a_ticket_system_rewrapping_the_line_at_blanks_never_changes_what_it_says(width: int) -> None:
    for name in ONE_LINE:
        wrapped = textwrap.fill(_line(name), width, break_long_words=True, break_on_hyphens=False)
        assert _same_reading(parsers.run(KIND, wrapped), CASES[name]), (name, wrapped)


@pytest.mark.parametrize("width", [40, 47, 61, 80, 136, 212])
@pytest.mark.parametrize("strip", [False, True], ids=["as-cut", "line-ends-trimmed"])
def test_a_terminal_cutting_the_line_at_a_column_never_changes_what_it_says(width: int, strip: bool) -> None:
    """Cut every `width` characters, inside words, paths and 'nvidia-container-cli' itself (nvidia-docker#543 and
    #825 are real pastes cut so, at 136 and 212); a paste tool may also trim the blanks the cut left at line ends."""
    for name in ONE_LINE:
        line = _line(name)
        parts = [line[i:i + width] for i in range(0, len(line), width)]
        cut = "\n".join(p.rstrip() if strip else p for p in parts)
        assert _same_reading(parsers.run(KIND, cut), CASES[name]), (name, cut)


def test_a_cut_too_short_to_read_is_never_read_as_another_kind() -> None:
    """At any width, a message cut where it cannot be joined again is refused or 'other', never a kind it is not."""
    for name in ONE_LINE:
        line = _line(name)
        for width in range(12, 40):
            cut = "\n".join(line[i:i + width] for i in range(0, len(line), width))
            try:
                got = parsers.run(KIND, cut)
            except parsers.ParseError:
                continue
            assert got["container_cli.error_kind"] in (CASES[name]["container_cli.error_kind"], "other"), (name, cut)


def test_several_errors_in_one_paste_the_first_is_the_error_every_one_is_listed() -> None:
    first = load("nvidia-container-cli/requirement-cuda-vitisai103-prestart-hook-0-escaped-quotes-cuda-10.0.txt")
    then = load("nvidia-container-cli/cgroup-devices-nvdocker1486-running-hook-1-then-runtime-nvidia-command.txt")
    f = parsers.run(KIND, first + "\n" + then)
    assert f["container_cli.error"] == PRE + "requirement error: unsatisfied condition: cuda>=10.0"
    assert f["container_cli.error_kind"] == "requirement-cuda" and f["container_cli.required_cuda"] == "10.0"
    assert f["container_cli.errors"] == [PRE + "requirement error: unsatisfied condition: cuda>=10.0",
                                         PRE + "container error: cgroup subsystem devices not found"]
    assert f["container_cli.error_kinds"] == ["requirement-cuda", "cgroup-devices-not-found"]


@pytest.mark.parametrize("text", [
    "",
    "hello\nworld\n",
    # docker errors that do not come from the NVIDIA hook
    'docker: Error response from daemon: Conflict. The container name "/trainer" is already in use by container '
    '"5e1f". You have to remove (or rename) that container to be able to reuse that name.\n'
    "See 'docker run --help'.\n",
    "docker: Error response from daemon: pull access denied for foo, repository does not exist or may require "
    "'docker login': denied: requested access to the resource is denied.\n",
    # the shell, not the hook; a README naming the error without its message; the hook's exec command alone
    "bash: nvidia-container-cli: command not found\n",
    "# Error: nvidia-container-cli: initialization error\n# Solution: Restart Docker daemon\nsudo systemctl restart docker\n",
    "stderr: exec command: [/usr/bin/nvidia-container-cli --load-kmods configure --ldconfig=@/sbin/ldconfig.real "
    "--device=all --compute --utility --require=cuda>=9.0 --pid=4781 /var/lib/docker/overlay2/7c70/merged]\n",
    # a CDI hook that failed without saying why (ublue-os/bluefin#3454): nothing to classify
    'Error: OCI runtime error: crun: {"msg":"error executing hook `/usr/bin/nvidia-cdi-hook` (exit code: 1)",'
    '"level":"error","time":"2025-10-22T10:04:55.559600Z"}\n',
])
def test_other_text_is_refused(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run(KIND, text)
    assert parsers.get(KIND).detect(text) < parsers.DETECT_MIN


def test_unrelated_real_logs_are_refused() -> None:
    # libnvidia-container's debug log without the final message, a pyxis log whose hook line was cut off, nvidia-smi's
    # own NVML messages, docker run lines
    for rel in ("slurm/enroot-nvidia-debug-log-ldcache-mount-dev-not-permitted.txt",
                "slurm/pyxis-label-prefixed-10-shadow-segfault-nvidia-container-cli-ldcache.txt",
                "nvidia-smi-status/nvml-unknown-error-after-daemon-reload-nvidia-docker1671.txt",
                "nvidia-smi-status/driver-library-mismatch-after-install-notes.txt",
                "docker-run/oneflow-dlperf-multinode-ib-privileged-shm16g-memlock.txt"):
        text = load(rel)
        with pytest.raises(parsers.ParseError, match="not an NVIDIA container hook error"):
            parsers.run(KIND, text)
        assert parsers.get(KIND).detect(text) < parsers.DETECT_MIN


def test_apptainers_warning_that_nvccli_with_contain_binds_no_gpu() -> None:
    text = load("nvidia-container-cli/visible-devices-unset-apptainerdocs-nvccli-contain.txt")
    assert parsers.detect(text) == "nvidia-container-cli"
    assert parsers.run("nvidia-container-cli", text) == {"container_cli.visible_devices_unset": True}


def test_enroots_hook_warning_a_driver_module_is_not_loaded() -> None:
    f = parsers.run("nvidia-container-cli", load("nvidia-container-cli/other-enroot105-warn-nvidia-uvm-not-loaded-driver-error.txt"))
    assert f["container_cli.kmods_not_loaded"] == ["nvidia_uvm"]
    assert f["container_cli.error"] == "nvidia-container-cli: initialization error: driver error: failed to process request"


@pytest.mark.parametrize("rel", ["nvidia-container-cli/eksami2062-containerd-imex-channel-value-all-legacy.txt",
                                 "nvidia-container-cli/pytorchtestinfra5852-docker-imex-channel-value-all.txt"])
def test_the_hook_refusing_the_imex_channel_value_of_a_legacy_image(rel) -> None:
    f = parsers.run("nvidia-container-cli", load(rel))
    assert f["container_cli.error_kinds"] == ["imex-channels-refused"]
    assert f["container_cli.error"] == "nvidia-container-cli: error parsing IMEX info: unsupported IMEX channel value: all"


def test_the_nvidia_runtimes_own_nvml_refusal_in_an_oci_runtime_error_wrapped_by_kubectl():
    # toolkit 1.14+'s CDI auto modifier calls NVML before any hook: containerd's error chain, wrapped by kubectl
    text = load("nvidia-container-cli/homelab-node04-cdi-auto-nvml-driver-not-loaded-dkms-added.txt")
    facts = parsers.run("nvidia-container-cli", text.split("\n$ nvidia-smi")[0])
    assert facts["container_cli.error_kinds"] == ["driver-not-loaded"]
    assert facts["container_cli.error"].startswith("OCI runtime create failed: could not apply")
    assert facts["container_cli.error"].endswith("failed to initialize NVML: Driver Not Loaded")  # the chain's end kept


def test_nvidia_docker_1_refusing_an_image_newer_than_the_driver() -> None:
    wiki = parsers.run(KIND, load("nvidia-container-cli/v1-nvdockerwiki-unsupported-cuda-driver-7.0-image-7.5.txt"))
    assert wiki == {"container_cli.error": "unsupported CUDA version: driver 7.0 < image 7.5",
                    "container_cli.error_kind": "requirement-cuda", "container_cli.required_cuda": "7.5",
                    "container_cli.errors": ["unsupported CUDA version: driver 7.0 < image 7.5"],
                    "container_cli.error_kinds": ["requirement-cuda"]}
    ali = parsers.run(KIND, load("nvidia-container-cli/v1-alihpc-m40-unsupported-cuda-driver-7.5-image-8.0.txt"))
    assert ali["container_cli.required_cuda"] == "8.0"
    # 'driver 0.0' is no libcuda found, not an old driver (a Japanese setup note in the search index, id 44541484761,
    # quotes the message so, without nvidia-docker's prefix)
    none = parsers.run(KIND, "Error: unsupported CUDA version: driver 0.0 < image 8.0.61\n")
    assert none["container_cli.error_kind"] == "other" and "container_cli.required_cuda" not in none


def test_docker_finding_no_nvidia_smi_in_the_container() -> None:
    f = parsers.run(KIND, load("nvidia-container-cli/smi-not-found-dockersnap184-runtime-nvidia-ubuntu.txt"))
    assert f["container_cli.error_kinds"] == ["nvidia-smi-not-in-container"]
    assert f["container_cli.error"] == 'exec: "nvidia-smi": executable file not found in $PATH'


def test_crun_finding_no_nvidia_smi_in_the_container() -> None:
    # crun (podman's and CRI-O's runtime) says it in its own words
    f = parsers.run(KIND, load("nvidia-container-cli/smi-not-found-nvcr190-podman-crun-gpus-all-ignored.txt"))
    assert f["container_cli.error_kinds"] == ["nvidia-smi-not-in-container"]
    assert f["container_cli.error"] == "crun: executable file `nvidia-smi` not found in $PATH"
    # another program crun cannot find is not this
    with pytest.raises(parsers.ParseError):
        parsers.run(KIND, "Error: crun: executable file `python3` not found in $PATH: No such file or directory: "
                          "OCI runtime attempted to invoke a command that was not found\n")
