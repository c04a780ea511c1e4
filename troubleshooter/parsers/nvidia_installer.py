"""The NVIDIA driver's kernel module being built and installed: the ``.run`` installer's console output and
``/var/log/nvidia-installer.log``, DKMS's output for the nvidia module (``dkms install``/``autoinstall``, a package
manager's post-install step, ``/var/lib/dkms/nvidia/<version>/build/make.log``) and ``dkms status``.

Real samples (mesosphere/konvoy-image-builder#1200, driver 470 on kernel 5.15.0-1070-aws; teejee2008/ukuu-plus#43;
NVIDIA/open-gpu-kernel-modules#526; canonical/microk8s-core-addons#44)::

    ERROR: An error occurred while performing the step: "Checking to see whether the nvidia kernel module was successfully built". See /var/log/nvidia-installer.log for details.
    -> The command `cd ./kernel; /usr/bin/make -k -j8 NV_KERNEL_MODULES="nvidia" ... SYSSRC="/lib/modules/5.15.0-1070-aws/build" ...` failed with the following output:
    ERROR: modpost: GPL-incompatible module nvidia.ko uses GPL-only symbol 'rcu_read_unlock_strict'

    unset ARCH; env NV_VERBOSE=1 'make' -j16 NV_EXCLUDE_BUILD_MODULES='' KERNEL_UNAME=5.4.12-050412-generic ... modules...(bad exit status: 2)
    Error! Bad return status for module build on kernel: 5.4.12-050412-generic (x86_64)
    Consult /var/lib/dkms/nvidia/435.21/build/make.log for more information.

    nvidia/390.157: added
    Kernel module compilation complete.

What it means: when the kernel module does not build (or builds and will not load), no NVIDIA driver runs on that
kernel: nvidia-smi "couldn't communicate with the NVIDIA driver", and every GPU job on the node fails. The usual
reasons are a kernel newer than the driver release supports (modpost refusing nvidia.ko because the kernel made a
symbol it uses GPL-only, or compile errors in the driver's sources), or no headers for the running kernel ("Unable
to find the kernel source tree"). A driver of the same branch that supports the kernel, or the kernel's headers,
is the fix. "Kernel module compilation complete." and the installer's "Installation ... is now complete." are
success; so is a ``dkms status`` line that says the nvidia module is ``installed``. Lines the installer wraps
(continuations indented under an ``ERROR:``) are read as one message.

>>> parse("Error! Bad return status for module build on kernel: 6.8.0-45-generic (x86_64)\\n"
...       "Consult /var/lib/dkms/nvidia/535.104.05/build/make.log for more information.\\n")["driver_install.kernel"]
'6.8.0-45-generic'
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, clip, parser, require_text

FACTS = [
    ("driver_install.failed", "bool", "", "the NVIDIA kernel module failed to build, install or load, and no later "
     "line says it then succeeded (an installer ERROR, a DKMS 'Bad return status' for the nvidia module, modpost "
     "or compile errors in the driver's sources); false when the output shows it built or DKMS has it installed"),
    ("driver_install.step", "string", "", "the step that failed, in the installer's words ('Checking to see whether "
     "the nvidia kernel module was successfully built'), or 'module build (DKMS)' / 'loading the kernel module'"),
    ("driver_install.reason", "string", "", "why, when the output says: gpl-only-symbol (the kernel made a symbol the "
     "driver uses GPL-only: a kernel newer than the driver supports) | kernel-source-missing (no headers for the "
     "kernel) | kernel-packages-missing (a driver container found no kernel-headers/devel package of the running "
     "kernel) | dtk-kernel-mismatch (OpenShift's Driver Toolkit built for another kernel than the node's) | compile-error (the driver's sources do not compile against this kernel) | load-failed | build-failed "
     "| install-failed"),
    ("driver_install.errors", "list", "", "the installer's ERROR and DKMS's Error! messages, as printed (wrapped lines "
     "joined)"),
    ("driver_install.gpl_symbols", "list", "", "the GPL-only kernel symbols modpost refused the nvidia modules for "
     "('rcu_read_unlock_strict', '__rcu_read_lock' ...)"),
    ("driver_install.driver_version", "string", "", "the driver version being built or installed (535.183.01)"),
    ("driver_install.kernel", "string", "", "the kernel release the module was built for (5.15.0-1070-aws)"),
    ("driver_install.dkms_status", "list", "", "the nvidia module's lines of `dkms status`, as printed "
     "('nvidia/535.183.01, 6.8.0-45-generic, x86_64: installed')"),
]

_STEP = re.compile(r'ERROR: An error occurred while performing the step: "([^"]+)"')
_INSTALLER_ERROR = re.compile(r"\bERROR: (.*\S)")
_DKMS_ERROR = re.compile(r"\bError! (.*\S)")
_DKMS_BUILD_FAILED = re.compile(r"Error! Bad return status for module build on kernel:\s*(\S+)")
_GPL = re.compile(r"GPL-incompatible module (nvidia[\w-]*)\.ko uses GPL-only symbol ['‘’`]([^'‘’`\s]+)['‘’`]")
_COMPILE_ERROR = re.compile(r"(?<![^:\s])(?>[^:\s]*?(?:nvidia|NVIDIA-Linux))[^:\s]*\.[ch]:\d+(?::\d+)?: (?:fatal )?error: ")
_MAKE_NV = re.compile(r"(?:NV_EXCLUDE_BUILD_MODULES|NV_KERNEL_MODULES)=.*\(bad exit status: \d+\)")
_DKMS_NV_FAILED = re.compile(r"(?:DKMS module '?nvidia[\w-]*-\d[\w.]*'? failed to build|Building DKMS module:? '?nvidia"
                             r"[\w.-]*'?.*FAILED|dkms autoinstall on \S+ failed for nvidia)", re.IGNORECASE)
_SUCCESS = re.compile(r"Kernel module compilation complete\.|Installation of the NVIDIA Accelerated Graphics Driver"
                      r".*is now complete\.")
# dkms status, new ('nvidia/535.104.05, 6.8.0-45-generic, x86_64: installed') and old ('nvidia, 535.104.05, ...'); the
# driver's module under its distro names (nvidia-current, nvidia-srv ...), not GPUDirect Storage's nvidia-fs
_DKMS_STATUS = re.compile(r"^\s*(nvidia(?!-fs\b)[\w-]*)(?:/|,\s*)(\d+\.\d+(?:\.\d+)?)(?:,\s*([^,\s]+))?(?:,\s*[^,:\s]+)?:\s*"
                          r"(added|built|installed|broken)\b")
_VERSIONS = [re.compile(p) for p in (
    r"NVIDIA-Linux-[\w]+-(\d+\.\d+(?:\.\d+)?)\b",
    r"/var/lib/dkms/nvidia[\w-]*/(\d+\.\d+(?:\.\d+)?)/",
    r"dkms (?:build|install) (?:-m )?nvidia[\w-]*(?: -v |/)(\d+\.\d+(?:\.\d+)?)\b",
    r"Installing NVIDIA driver version (\d+\.\d+(?:\.\d+)?)\b",
    r"installation of NVIDIA driver version (\d+\.\d+(?:\.\d+)?)\b",
    r"installer version: (\d+\.\d+(?:\.\d+)?)\b",
    r"Accelerated Graphics Driver for Linux-\S+ \(?(?:version: )?(\d+\.\d+(?:\.\d+)?)\b",
    r"DKMS (?:make\.log for |module '?)nvidia[\w-]*?-(\d+\.\d+(?:\.\d+)?)\b",
)]
_KERNELS = [re.compile(p, re.MULTILINE) for p in (
    r"Bad return status for module build on kernel:\s*(\S+)",
    r"dkms build -m \S+ -v \S+ -k\s+([^\s`']+)",
    r"KERNEL_UNAME=([^\s'\"]+)",
    r"SYSSRC=\"?/lib/modules/([^/\s\"]+)/build",
    r"Kernel source path: '/lib/modules/([^/\s']+)/build'",
    r"for Linux kernel version (\S+?)\.?\s*$",
    r"/usr/src/linux-headers-([^/\s']+)",
)]
_CONTINUATION = re.compile(r"^\s{5,}\S")  # the installer wraps its messages under 'ERROR: ', indented
_REASONS = ("gpl-only-symbol", "kernel-source-missing", "kernel-packages-missing", "dtk-kernel-mismatch", "compile-error",
            "load-failed", "build-failed", "install-failed")
# a driver container (GPU Operator, OpenShift) that cannot get the running kernel's headers to build against: dnf's
# "Unable to find a match: kernel-headers-5.14.0-570.112.1.el9_6.x86_64 kernel-devel-...", apt's "Unable to locate
# package linux-headers-...", the driver container's "Could not resolve Linux kernel version"; OpenShift's Driver
# Toolkit image built for another kernel than the node runs ("broken Driver Toolkit image detected", Node kernel /
# Kernel package)
_KERNEL_PKG = re.compile(r"Unable to find a match: (?:kernel-headers|kernel-devel)-(\S+?)(?:\.x86_64|\.aarch64)?(?:\s|$)|"
                         r"Unable to locate package linux-(?:headers|modules)-(\S+)|Could not resolve Linux kernel version")
_DTK = re.compile(r"broken Driver Toolkit (?:image )?detected", re.IGNORECASE)
_NODE_KERNEL = re.compile(r"^\s*(?:-\s*)?Node kernel:\s+(\S+)")
MAX_LINE = 4000
MAX_LINES = 400000
MAX_WRAP = 40


def _detect(text: str) -> float:
    head = text[:131072]
    if (_STEP.search(head) or _GPL.search(head) or "nvidia-installer log file" in head
            or re.search(r"Accelerated Graphics Driver for Linux", head) or _SUCCESS.search(head)
            or re.search(r"dkms build -m nvidia|/var/lib/dkms/nvidia|Unable to load the kernel module 'nvidia", head)
            or _MAKE_NV.search(head) or _DKMS_NV_FAILED.search(head) or _KERNEL_PKG.search(head) or _DTK.search(head)):
        return 0.9
    if any(_DKMS_STATUS.match(ln) for ln in head.split("\n")[:2000] if len(ln) < 400):
        return 0.75  # dkms status alone
    return 0.0


def _messages(lines: list[str]) -> list[str]:
    """Each ERROR / Error! message with the lines the installer wrapped under it joined on."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        i += 1
        m = _INSTALLER_ERROR.search(ln) or _DKMS_ERROR.search(ln)
        if not m:
            continue
        msg = m.group(0)
        if _INSTALLER_ERROR.search(ln) and not ln.lstrip().startswith("ERROR: modpost"):
            wrapped = 0
            while i < len(lines) and wrapped < MAX_WRAP and _CONTINUATION.match(lines[i]):
                msg += " " + lines[i].strip()
                i += 1
                wrapped += 1
        out.append(msg)
    return out


@parser(
    "nvidia-installer",
    detect=_detect,
    summary="the NVIDIA driver installer's and DKMS's output: whether the kernel module built, why not, for which "
            "kernel and driver",
    facts=FACTS,
    command="cat /var/log/nvidia-installer.log; sudo dkms status; sudo dkms autoinstall",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "the NVIDIA installer's or DKMS's output")
    names_nvidia = bool(re.search(r"nvidia", text, re.IGNORECASE))  # an ERROR line alone may be any tool's
    lines = [ln[:MAX_LINE] for ln in text.split("\n")[:MAX_LINES]]
    messages = _messages(lines)
    joined = "\n".join(lines + messages)  # values a wrapped message split over two lines ('-k\n 5.3.0-...')
    reasons: set[str] = set()
    step = ""
    gpl: list[str] = []
    status: list[str] = []
    last_failure = last_success = -1
    status_version = ""
    kernel_pkg = ""
    # (a module name: its [\w-] run from the first "nvidia" in it, once per run, however many it holds)
    nvidia_dkms = bool(re.search(r"/var/lib/dkms/nvidia|dkms (?:build|install) (?:-m )?nvidia|"
                                 r"(?<![\w-])(?>[\w-]*?nvidia)[\w-]*+\.ko|NV_EXCLUDE_BUILD_MODULES|NV_KERNEL_MODULES", text))
    for i, ln in enumerate(lines):
        s = _STEP.search(ln)
        if s:
            step = step or s.group(1)
            reasons.add("build-failed" if "built" in s.group(1) or "Building" in s.group(1) else "install-failed")
            last_failure = i
        elif re.search(r"\bERROR: Unable to load the kernel module", ln):
            reasons.add("load-failed")
            step = step or "loading the kernel module"
            last_failure = i
        elif re.search(r"\bERROR: Unable to find the kernel source tree", ln):
            reasons.add("kernel-source-missing")
            last_failure = i
        elif ("Unable to" in ln or "Could not resolve" in ln) and (kp := _KERNEL_PKG.search(ln)):
            reasons.add("kernel-packages-missing")
            step = step or "getting the running kernel's headers"
            kernel_pkg = kernel_pkg or kp.group(1) or kp.group(2) or ""
            last_failure = i
        elif "oolkit" in ln and _DTK.search(ln):
            reasons.add("dtk-kernel-mismatch")
            step = step or "the Driver Toolkit's kernel"
            last_failure = i
        elif "Node kernel:" in ln and (nk := _NODE_KERNEL.match(ln)):
            kernel_pkg = kernel_pkg or nk.group(1)
        elif re.search(r"\bERROR: modpost: .*\bnvidia[\w-]*\.ko\b", ln):
            reasons.add("build-failed")  # (a GPL-only symbol is told apart below)
            last_failure = i
        elif _INSTALLER_ERROR.search(ln) and "ERROR: modpost" not in ln and names_nvidia:
            reasons.add("install-failed")
            last_failure = i
        g = _GPL.search(ln)
        if g:
            reasons.add("gpl-only-symbol")
            if g.group(2) not in gpl and len(gpl) < 50:
                gpl.append(g.group(2))
            last_failure = i
        if _COMPILE_ERROR.search(ln):
            reasons.add("compile-error")
            last_failure = i
        if (_DKMS_BUILD_FAILED.search(ln) and nvidia_dkms) or _DKMS_NV_FAILED.search(ln) or _MAKE_NV.search(ln):
            reasons.add("build-failed")
            step = step or "module build (DKMS)"
            last_failure = i
        if _SUCCESS.search(ln):
            last_success = i
        d = _DKMS_STATUS.match(ln) if len(ln) < 400 else None
        if d:
            status_version = status_version or d.group(2)
            add_clipped(status, ln.strip(), 20)
            if d.group(4) == "installed":
                last_success = i
    version = next((m.group(1) for rx in _VERSIONS for m in [rx.search(joined)] if m), "")
    version = version or status_version  # the first `dkms status` line's
    kernel = next((m.group(1) for rx in _KERNELS for m in [rx.search(joined)] if m), "") or kernel_pkg
    if not (reasons or last_success >= 0 or status or version):
        raise ParseError("no NVIDIA installer or DKMS line (an installer 'ERROR: ...', 'Error! Bad return status for "
                         "module build', 'Kernel module compilation complete.', a `dkms status` line for nvidia)")
    facts: dict[str, Any] = {}
    if reasons or last_success >= 0:
        facts["driver_install.failed"] = last_failure > last_success
    if facts.get("driver_install.failed"):
        if step:
            facts["driver_install.step"] = step
        facts["driver_install.reason"] = next(r for r in _REASONS if r in reasons)
    errors: list[str] = []
    for msg in messages:
        if (msg.startswith("Error!") and not nvidia_dkms) or not names_nvidia:
            continue  # DKMS's errors for another module
        add_clipped(errors, msg, 20)
    if errors:
        facts["driver_install.errors"] = errors
    if gpl:
        facts["driver_install.gpl_symbols"] = gpl
    if version:
        facts["driver_install.driver_version"] = version
    if kernel:
        facts["driver_install.kernel"] = clip(kernel.rstrip("`'\"."), 120)
    if status:
        facts["driver_install.dkms_status"] = status
    return facts
