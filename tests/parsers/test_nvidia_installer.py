"""The NVIDIA driver installer's and DKMS's output, read from real pastes with exact values."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers

KIND = "nvidia-installer"


def test_the_run_installer_refused_for_a_gpl_only_symbol_on_a_newer_kernel() -> None:
    text = load("nvidia-installer/konvoy1200-run-installer-470-modpost-gpl-only-rcu-read-unlock-strict.txt")
    assert parsers.detect(text) == KIND
    assert parsers.run(KIND, text) == {
        "driver_install.failed": True,
        "driver_install.step": "Checking to see whether the nvidia kernel module was successfully built",
        "driver_install.reason": "gpl-only-symbol",
        "driver_install.errors": [
            'ERROR: An error occurred while performing the step: "Checking to see whether the nvidia kernel module was '
            'successfully built". See /var/log/nvidia-installer.log for details.',
            "ERROR: modpost: GPL-incompatible module nvidia.ko uses GPL-only symbol 'rcu_read_unlock_strict'"],
        "driver_install.gpl_symbols": ["rcu_read_unlock_strict"],
        "driver_install.driver_version": "470.199.02",
        "driver_install.kernel": "5.15.0-1070-aws",
    }


def test_dkms_make_log_with_two_gpl_only_symbols() -> None:
    f = parsers.run(KIND, load("nvidia-installer/xanmod411-dkms-make-log-nvidia-545-gpl-only-rcu-read-lock.txt"))
    assert f["driver_install.failed"] is True and f["driver_install.reason"] == "gpl-only-symbol"
    assert f["driver_install.gpl_symbols"] == ["__rcu_read_lock", "__rcu_read_unlock"]
    assert (f["driver_install.driver_version"], f["driver_install.kernel"]) == ("545.29.06", "6.6.15-x64v3-xanmod1")
    assert "driver_install.step" not in f  # make.log does not name an installer step


def test_dkms_bad_return_status_for_the_nvidia_module() -> None:
    text = load("nvidia-installer/ukuu43-dkms-nvidia-435-bad-return-status-kernel-5.4.12.txt")
    assert parsers.detect(text) == KIND
    assert parsers.run(KIND, text) == {
        "driver_install.failed": True, "driver_install.step": "module build (DKMS)",
        "driver_install.reason": "build-failed",
        "driver_install.errors": ["Error! Bad return status for module build on kernel: 5.4.12-050412-generic (x86_64)"],
        "driver_install.driver_version": "435.21", "driver_install.kernel": "5.4.12-050412-generic"}


def test_dkms_status_then_dkms_install_in_an_issue_templates_prose() -> None:
    f = parsers.run(KIND, load("nvidia-installer/ogkm526-dkms-status-added-then-install-nvidia-390-kernel-6.4.1-zen.txt"))
    assert f["driver_install.dkms_status"] == ["nvidia/390.157: added"]  # the other modules' lines are not the driver's
    assert f["driver_install.failed"] is True and f["driver_install.step"] == "module build (DKMS)"
    assert (f["driver_install.driver_version"], f["driver_install.kernel"]) == ("390.157", "6.4.1-zen1-1-zen")


def test_the_installers_wrapped_errors_are_one_message_each() -> None:
    f = parsers.run(KIND, load("nvidia-installer/vgpuproxmox1-run-installer-building-kernel-modules-failed-wrapped.txt"))
    assert f["driver_install.step"] == "Building kernel modules"  # the first step that failed
    assert f["driver_install.errors"][1] == (
        'ERROR: An error occurred while performing the step: "Checking to see whether the nvidia kernel module was '
        'successfully built". See /var/log/nvidia-installer.log for details.')
    assert len(f["driver_install.errors"]) == 3
    assert "driver_install.driver_version" not in f and "driver_install.kernel" not in f


def test_the_installer_running_dkms_with_its_output_wrapped_under_the_error() -> None:
    f = parsers.run(KIND, load("nvidia-installer/proxmox8-run-installer-dkms-build-nvidia-455-kernel-6.8-pve.txt"))
    assert (f["driver_install.driver_version"], f["driver_install.kernel"]) == ("455.38", "6.8.12-1-pve")
    assert f["driver_install.failed"] is True and f["driver_install.reason"] == "build-failed"
    assert f["driver_install.errors"][0].startswith(
        "ERROR: Failed to run `/usr/sbin/dkms build -m nvidia -v 455.38 -k 6.8.12-1-pve`: Sign command: ")


def test_a_module_that_compiled_is_no_failure() -> None:
    text = load("nvidia-installer/microk8s44-driver-container-kernel-module-compilation-complete.txt")
    assert parsers.detect(text) == KIND
    assert parsers.run(KIND, text) == {"driver_install.failed": False}


def test_dkms_status_with_the_module_installed_and_a_kernel_without_headers() -> None:
    f = parsers.run(KIND, "nvidia/535.183.01, 6.8.0-45-generic, x86_64: installed\n")
    assert f == {"driver_install.failed": False, "driver_install.driver_version": "535.183.01",
                 "driver_install.dkms_status": ["nvidia/535.183.01, 6.8.0-45-generic, x86_64: installed"]}
    f = parsers.run(KIND, "ERROR: Unable to find the kernel source tree for the currently running kernel.  Please make "
                          "sure you have installed the kernel source files for your kernel\n"
                          "-> Kernel source path: '/lib/modules/6.8.0-45-generic/build'\n"
                          "Installing NVIDIA driver version 550.127.05.\n")
    assert (f["driver_install.reason"], f["driver_install.kernel"]) == ("kernel-source-missing", "6.8.0-45-generic")


@pytest.mark.parametrize("text", [
    "hello\nworld\n", "ERROR: something else went wrong\n",
    # DKMS failing for another module says nothing of NVIDIA's
    "Error! Bad return status for module build on kernel: 5.6.2-xanmod1-1-xanmod (x86_64)\n"
    "Consult /var/lib/dkms/bbswitch/0.8/build/make.log for more information.\n",
    "vboxhost/7.0.8_OSE, 6.4.1-zen1-1-zen, x86_64: installed\n"])
def test_other_text_is_refused(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run(KIND, text)
    assert parsers.get(KIND).detect(text) < parsers.DETECT_MIN


def test_a_driver_container_without_the_running_kernels_headers():
    f = parsers.run("nvidia-installer", load("nvidia-installer/ibmrok-driver-pod-no-kernel-headers-eus.txt"))
    assert f["driver_install.failed"] is True and f["driver_install.reason"] == "kernel-packages-missing"
    assert f["driver_install.kernel"] == "5.14.0-570.112.1.el9_6"


def test_openshifts_driver_toolkit_built_for_another_kernel():
    f = parsers.run("nvidia-installer", load("nvidia-installer/ocp-dtk-ctr-broken-toolkit-node-kernel-vs-package.txt"))
    assert f["driver_install.failed"] is True and f["driver_install.reason"] == "dtk-kernel-mismatch"
    assert f["driver_install.kernel"] == "4.18.0-305.25.1.el8_4.x86_64"  # the node's
