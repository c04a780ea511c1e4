"""Is this context a container, and which runtime made it: the ``container-markers`` probe.

The probe (a fixed ``sh`` script in :mod:`troubleshooter.sources.runtime`) prints ``key=value`` lines.
Real output on this project's development machine (a Firecracker VM, *not* a container, that has a stray
``/.dockerenv``)::

    #@ container-markers 1
    uid=0
    pid1_comm=process_api
    pid1_cgroup=/
    self_cgroup=/
    pid_ns=pid:[4026531836]
    mnt_ns=mnt:[4026531832]
    pid1_mnt_ns=mnt:[4026531832]
    dockerenv=1
    containerenv=0
    singularity_d=0
    etc_enroot=0
    run_systemd_container=-
    env_container=-
    env_markers=
    detect_virt=docker
    root_mount=/ ext4 /dev/vda

And inside ``bwrap --unshare-pid ...``: ``pid1_comm=bwrap``, ``pid_ns=pid:[4026532178]``.

How it decides. *Strong* evidence, any one of which means inside:

- the PID namespace is not the initial one. The kernel gives the initial PID namespace the fixed inode
  ``0xEFFFFFFC`` = 4026531836 (``PROC_PID_INIT_INO``); docker, podman, kubernetes and ``bwrap
  --unshare-pid`` all create a new one;
- ``/proc/1/cgroup`` or our own cgroup names a runtime (``/docker/``, ``/kubepods``, ``libpod``, ``/lxc/``,
  ``containerd``, ``crio``);
- ``/run/.containerenv`` (podman), ``/.singularity.d`` or ``SINGULARITY_CONTAINER``/``APPTAINER_CONTAINER``
  (apptainer), ``KUBERNETES_SERVICE_HOST`` (every pod has it), a ``container=`` variable or
  ``/run/systemd/container`` (nspawn, lxc, podman), a root file system under an ``enroot``/``pyxis``
  directory, ``systemd-detect-virt -c`` naming something other than docker.

*Weak* evidence, reported in ``container.ignored`` but never enough alone: ``/.dockerenv`` (exists on hosts
too: this project's CI machines have one), ``systemd-detect-virt -c`` saying ``docker`` (it trusts
``/.dockerenv``), ``ENROOT_*`` variables (users set them on the host to configure enroot), ``/etc/enroot``
(enroot is installed: a host marker), an overlay root, a mount namespace other than PID 1's (Slurm's
``job_container/tmpfs`` and systemd services have one too).

Runtime: bubblewrap when PID 1 is ``bwrap`` (bwrap stays as PID 1 of the namespace it creates with
``--unshare-pid``); else the runtime a strong marker names; docker when the PID namespace is new and
``/.dockerenv`` exists; ``unknown`` when inside for a reason that names none; ``none`` outside.
"""

from __future__ import annotations

import re

from troubleshooter.parsers.base import ParseError, parser, require_text

INIT_PID_NS = "pid:[4026531836]"  # PROC_PID_INIT_INO 0xEFFFFFFC

FACTS = [
    ("container.inside", "bool", "", "this context runs inside a container or sandbox (strong evidence only)"),
    ("container.runtime", "string", "", "docker, podman, containerd, cri-o, kubernetes, enroot, apptainer, bubblewrap, lxc, systemd-nspawn, unknown; none outside"),
    ("container.evidence", "list", "", "the reasons for the verdict"),
    ("container.ignored", "list", "", "markers seen that are not enough alone (e.g. /.dockerenv on a host)"),
    ("container.pid1", "string", "", "the command name of PID 1 in this PID namespace"),
    ("container.uid", "number", "", "the uid the probe ran as"),
    ("container.pid_ns", "string", "", "the PID namespace (pid:[inode])"),
    ("container.pid_ns_initial", "bool", "", "the PID namespace is the host's initial one"),
    ("container.mnt_ns", "string", "", "the mount namespace (mnt:[inode])"),
    ("container.detect_virt", "string", "", "systemd-detect-virt -c output; absent when the tool is missing"),
]

_CGROUP_RUNTIMES = [
    (re.compile(r"kubepods"), "kubernetes"),
    (re.compile(r"libpod"), "podman"),
    (re.compile(r"/docker[/-]|docker-[0-9a-f]{12}"), "docker"),
    (re.compile(r"crio-|/crio/"), "cri-o"),
    (re.compile(r"containerd"), "containerd"),
    (re.compile(r"/lxc[/.]|lxc\.payload"), "lxc"),
    (re.compile(r"machine\.slice/.*nspawn|systemd-nspawn"), "systemd-nspawn"),
]
_RUNTIME_NAMES = {"podman": "podman", "docker": "docker", "lxc": "lxc", "lxc-libvirt": "lxc", "systemd-nspawn": "systemd-nspawn",
                  "oci": "unknown", "rkt": "rkt", "wsl": "wsl", "proot": "proot", "pouch": "pouch", "openvz": "openvz"}
_KEYS = {"uid", "pid1_comm", "pid1_cgroup", "self_cgroup", "pid_ns", "mnt_ns", "pid1_mnt_ns", "dockerenv", "containerenv",
         "singularity_d", "etc_enroot", "run_systemd_container", "env_container", "env_markers", "detect_virt", "root_mount"}


_KV_LINE = re.compile(r"^(\w+)=(.*)$")  # compiled once: one per line

def _detect(text: str) -> float:
    if text.lstrip().startswith("#@ container-markers"):
        return 0.99
    keys = set(re.findall(r"^(\w+)=", text, re.M))
    return 0.8 if len(keys & _KEYS) >= 6 else 0.0


def _val(kv: dict[str, str], key: str) -> str:
    v = kv.get(key, "").strip()
    return "" if v == "-" else v


@parser(
    "container",
    detect=_detect,
    summary="container detection markers (the container-markers probe)",
    facts=FACTS,
    command="troubleshooter collect --source container-markers",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "the container-markers probe's output")
    kv: dict[str, str] = {}
    for line in text.split("\n"):
        m = _KV_LINE.match(line)
        if m and m.group(1) in _KEYS:
            kv[m.group(1)] = m.group(2)
    if len(kv) < 3 or not ({"pid_ns", "pid1_comm", "dockerenv"} & set(kv)):
        raise ParseError("not the container-markers probe's output (expected pid1_comm=, pid_ns=, dockerenv= lines)")
    strong: list[tuple[str, str]] = []  # (runtime or "", reason)
    weak: list[str] = []
    pid1 = _val(kv, "pid1_comm")
    pid_ns = _val(kv, "pid_ns")
    dockerenv = _val(kv, "dockerenv") == "1"
    markers = _val(kv, "env_markers").split()
    detect_virt = _val(kv, "detect_virt")

    new_pid_ns = bool(pid_ns) and pid_ns != INIT_PID_NS
    if new_pid_ns:
        strong.append(("", f"PID namespace {pid_ns} is not the host's initial one ({INIT_PID_NS})"))
    if pid1 == "bwrap":
        strong.insert(0, ("bubblewrap", "PID 1 is bwrap (bubblewrap with --unshare-pid)"))
    elif pid1 in ("conmon", "catatonit") :
        strong.append(("podman", f"PID 1 is {pid1}"))
    elif pid1 in ("pause",):
        strong.append(("kubernetes", "PID 1 is the kubernetes pause process"))
    elif pid1 in ("docker-init",):
        strong.append(("docker", "PID 1 is docker-init (docker run --init)"))
    for key in ("pid1_cgroup", "self_cgroup"):
        cg = _val(kv, key)
        for rx, runtime in _CGROUP_RUNTIMES:
            if rx.search(cg):
                who = "/proc/1/cgroup" if key == "pid1_cgroup" else "our cgroup"
                strong.append((runtime, f"{who} names {runtime}: {cg.split()[0][:80]}"))
                break
    if _val(kv, "containerenv") == "1":
        strong.append(("podman", "/run/.containerenv exists (podman)"))
    if "KUBERNETES_SERVICE_HOST" in markers:
        strong.append(("kubernetes", "KUBERNETES_SERVICE_HOST is set (every pod has it)"))
    if _val(kv, "singularity_d") == "1":
        strong.append(("apptainer", "/.singularity.d exists"))
    for name in markers:
        if name in ("SINGULARITY_CONTAINER", "APPTAINER_CONTAINER", "SINGULARITY_NAME", "APPTAINER_NAME"):
            strong.append(("apptainer", f"{name} is set"))
            break
    for key, what in (("env_container", "container= variable"), ("run_systemd_container", "/run/systemd/container")):
        v = _val(kv, key)
        if v:
            strong.append((_RUNTIME_NAMES.get(v, v if re.fullmatch(r"[\w.-]+", v) else "unknown"), f"{what} says {v}"))
    root = _val(kv, "root_mount").split()
    if root and re.search(r"enroot|pyxis", root[0]):
        strong.append(("enroot", f"the root file system is the enroot/pyxis directory {root[0]}"))
    if detect_virt and detect_virt != "none":
        if detect_virt == "docker":
            weak.append("systemd-detect-virt -c says docker (it trusts /.dockerenv)")
        else:
            strong.append((_RUNTIME_NAMES.get(detect_virt, detect_virt), f"systemd-detect-virt -c says {detect_virt}"))

    if dockerenv:
        weak.append("/.dockerenv exists (also found on hosts: not enough alone)")
    if any(n.startswith(("ENROOT_", "PYXIS_")) for n in markers):
        weak.append("ENROOT_*/PYXIS_* variables are set: " + " ".join(n for n in markers if n.startswith(("ENROOT_", "PYXIS_"))))
    if _val(kv, "etc_enroot") == "1":
        weak.append("/etc/enroot exists (enroot is installed here)")
    if len(root) > 1 and root[1] == "overlay":
        weak.append("the root file system is an overlay")
    mnt, pid1_mnt = _val(kv, "mnt_ns"), _val(kv, "pid1_mnt_ns")
    if mnt and pid1_mnt and mnt != pid1_mnt:
        weak.append(f"mount namespace {mnt} differs from PID 1's {pid1_mnt}")

    inside = bool(strong)
    if inside:
        named = [r for r, _ in strong if r]
        runtime = named[0] if named else ("docker" if dockerenv and new_pid_ns else "unknown")
        if runtime == "containerd" and "kubernetes" in named:
            runtime = "kubernetes"
        if not named and any(n.startswith("ENROOT_") for n in markers):
            runtime = "enroot"
    else:
        runtime = "none"
    f: dict[str, object] = {
        "container.inside": inside,
        "container.runtime": runtime,
        "container.evidence": [r for _, r in strong] or ["no container marker beyond weak ones" if weak else "no container marker"],
        "container.ignored": weak,
    }
    if pid1:
        f["container.pid1"] = pid1
    uid = _val(kv, "uid")
    if uid.isdigit():
        f["container.uid"] = int(uid)
    if pid_ns:
        f["container.pid_ns"] = pid_ns
        f["container.pid_ns_initial"] = not new_pid_ns
    if mnt:
        f["container.mnt_ns"] = mnt
    if detect_virt:
        f["container.detect_virt"] = detect_virt
    return f
