"""SELinux denials: the kernel's AVC records (``ausearch -m avc``, ``/var/log/audit/audit.log``, the journal's
``audit[PID]: AVC`` lines) and setroubleshoot's alerts (the one-line "SELinux is preventing ..." and ``sealert``'s
detail with its Source/Target Context and Target Objects).

Real samples (NVIDIA/nvidia-docker#814, the nvidia-docker wrapper refused the docker binary; fedora-selinux/
selinux-policy#1695, a rootless podman container refused /dev/nvidia0; tests/data/selinux)::

    Aug 30 16:12:35 viola audit[25758]: AVC avc:  denied  { entrypoint } for  pid=25758 comm="nvidia-docker" path="/usr/bin/docker" dev="sdc3" ino=12832289 scontext=unconfined_u:system_r:xserver_t:s0-s0:c0.c1023 tcontext=system_u:object_r:container_runtime_exec_t:s0 tclass=file permissive=0
    Source Context                system_u:system_r:container_t:s0:c380,c597
    Target Context                system_u:object_r:xserver_misc_device_t:s0
    Target Objects                /dev/nvidia0 [ chr_file ]

What it means here: on an enforcing host (RHEL, Fedora, Rocky), the policy can refuse a step of starting a GPU
container while the driver and the NVIDIA Container Toolkit are right: the nvidia-docker wrapper executing docker
(the NVIDIA driver's packages label /usr/bin/nvidia* as X server programs), or a container's process (container_t)
opening the NVIDIA device nodes (xserver_misc_device_t), which the container_use_devices boolean allows. A denial
with permissive=1 was logged, not enforced.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("selinux.denials", "list", "", "SELinux denials, one line each: 'COMM {permission} on TARGET (class), source type -> "
     "target type' (AVC records, setroubleshoot alerts), deduplicated, at most 20"),
    ("selinux.gpu_container_denials", "list", "", "the denials that touch GPU device nodes (/dev/nvidia*, /dev/dri, "
     "xserver_misc_device_t, dri_device_t), a container runtime's binary (container_runtime_exec_t, docker, podman, "
     "runc, nvidia-container-*) or a container's process (container_t, spc_t)"),
    ("selinux.enforcing", "bool", "", "the denials were enforced (permissive=0, or sealert's 'Enforcing Mode  Enforcing'); "
     "false when every one was only logged (permissive=1, Permissive)"),
]

MAX_LINE = 8192
# multiline: an AVC record anywhere in a paste, not only on its last line (detection searches the whole text)
_AVC = re.compile(r"avc:\s+denied\s+\{\s*(?P<perm>[^}]{1,200}?)\s*\}\s+for\s+(?P<rest>.*)$", re.MULTILINE)
_FIELD = re.compile(r'\b(comm|path|name|scontext|tcontext|tclass|permissive)=("[^"]*"|\S+)')
_PREVENTING = re.compile(r"SELinux is preventing (?P<src>\S+) from (?P<perm>[\w ,]{1,80}?) access on the "
                         r"(?P<tclass>[\w ]{1,30}?) (?P<target>\S+?)\.?(?:\s+For complete SELinux messages.*)?$")
_SEALERT = re.compile(r"^\s*(Source Context|Target Context|Target Objects|Source|Enforcing Mode)\s{2,}(\S(?:.*\S)?)\s*$")
_GPU_OR_CONTAINER = re.compile(r"/dev/(?:nvidia|dri)|\bnvidia|xserver_misc_device_t|dri_device_t|container_runtime_exec_t|"
                               r"\bcontainer_t\b|\bspc_t\b|\b(?:docker|dockerd|podman|runc|crun|containerd|conmon)\b")


def _type(context: str) -> str:
    parts = context.split(":")
    return parts[2] if len(parts) >= 3 else context


def enforced_from_avc(text: str) -> bool:
    """The paste carries the AVC records themselves (sealert's "Raw Audit Messages"): those are read, not the summary."""
    return bool(_AVC.search(text))


def _detect(text: str) -> float:
    head = text[:262144]
    if _AVC.search(head) or re.search(r"SELinux is preventing \S+ from ", head):
        return 0.95
    if re.search(r"^[^\S\n]*Source Context\s{2,}\S+:\S+", head, re.MULTILINE) and "Target Context" in head:
        return 0.9
    return 0.0


@parser(
    "selinux",
    detect=_detect,
    summary="SELinux denials: AVC records (ausearch -m avc, audit.log) and setroubleshoot/sealert alerts",
    facts=FACTS,
    command="sudo ausearch -m avc -ts recent",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "SELinux AVC denials or setroubleshoot alerts")
    denials: list[str] = []
    gpu: list[str] = []
    enforced: list[bool] = []
    alert: dict[str, str] = {}

    def add(comm: str, perm: str, target: str, tclass: str, scontext: str, tcontext: str) -> None:
        src, tgt = _type(scontext), _type(tcontext)
        types = f", {src} -> {tgt}" if src and tgt else ""
        line = f"{comm} {{{perm}}} on {target or '?'} ({tclass or '?'}){types}"
        add_clipped(denials, line, 20)
        if _GPU_OR_CONTAINER.search(" ".join((comm, target, src, tgt))):
            add_clipped(gpu, line, 20)

    for raw in text.split("\n"):
        ln = raw[:MAX_LINE].rstrip()
        if "denied" in ln and (a := _AVC.search(ln)):
            f = {k: v.strip('"') for k, v in _FIELD.findall(a.group("rest"))}
            add(f.get("comm", "?"), a.group("perm").strip(), f.get("path") or f.get("name", ""), f.get("tclass", ""),
                f.get("scontext", ""), f.get("tcontext", ""))
            if f.get("permissive") in ("0", "1"):
                enforced.append(f["permissive"] == "0")
            continue
        if "SELinux is preventing" in ln and (p := _PREVENTING.search(ln)):
            add(p.group("src").rsplit("/", 1)[-1], p.group("perm").strip(), p.group("target"), p.group("tclass").strip(), "", "")
            continue
        s = _SEALERT.match(ln)
        if s:
            alert[s.group(1)] = s.group(2)
            if s.group(1) == "Enforcing Mode":
                enforced.append(s.group(2).lower() == "enforcing")
    if "Source Context" in alert and "Target Context" in alert and not enforced_from_avc(text):
        obj = alert.get("Target Objects", "")
        m = re.match(r"(\S+)\s*\[\s*(\w+)\s*\]", obj)
        add(alert.get("Source", "?"), "?", m.group(1) if m else obj, m.group(2) if m else "",
            alert["Source Context"], alert["Target Context"])
    if not denials:
        raise ParseError("no SELinux denial ('avc:  denied { ... }', 'SELinux is preventing ...', sealert's "
                         "Source/Target Context)")
    facts: dict[str, Any] = {"selinux.denials": denials, "selinux.gpu_container_denials": gpu}
    if enforced:
        facts["selinux.enforcing"] = any(enforced)
    return facts
