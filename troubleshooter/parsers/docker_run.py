"""A container's launch line: ``docker run`` (also ``nvidia-docker run``, ``podman run``), what it gives the job.

Real sample (OneFlow's DLPerf benchmark container for multi-node training over InfiniBand; tests/data/docker-run)::

    docker run --rm -it \\
      --privileged \\
      --shm-size=16g \\
      --ulimit memlock=-1 \\
      --net=host \\
      --cap-add=IPC_LOCK \\
      --device=/dev/infiniband \\
      -v /path/to/OneFlow-Benchmark:/OneFlow-Benchmark \\
      ...
      oneflow:WDL bash \\
      -c "mkdir -p /run/sshd && /usr/sbin/sshd -p 12395 && bash"

The line may be continued with backslashes, sit inside ``bash -c "..."``, ``ssh host "..."`` or after ``mpirun
... `` / ``srun ...``; with several ``docker run`` lines the last one is read. Options are read up to the image
name; the command run in the container is not.

What it means for NCCL: ``/dev/shm`` is 64 MB unless ``--shm-size`` or ``--ipc=host`` says otherwise (NCCL's SHM
transport needs far more with several GPUs); RDMA needs the ``/dev/infiniband`` devices (``--device`` or
``--privileged``) and an unlimited locked-memory limit (``--ulimit memlock=-1``); without ``--network=host`` the
container gets a bridge interface or, with ``--network=none``, none at all. ``-e NAME=VALUE`` variables are the
container's environment (given as ``env.var.*``; the environment is not known in full from this line).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text, shell_words

FACTS = [
    ("docker.runs", "number", "count", "docker/podman run lines in the text (the facts describe the last one)"),
    ("docker.image", "string", "", "the image the last run line starts"),
    ("docker.shm_size_mb", "number", "MB", "--shm-size of the last run line in MB; absent when not given (Docker's default is 64 MB)"),
    ("docker.ipc", "string", "", "--ipc mode (host, private, shareable, container:NAME); absent when not given"),
    ("docker.network", "string", "", "--network / --net mode (host, none, bridge, a network name); absent when not given (bridge)"),
    ("docker.privileged", "bool", "", "--privileged was given"),
    ("docker.memlock", "string", "", "--ulimit memlock value as given (-1, -1:-1, 8388608:8388608); absent when not given"),
    ("docker.memlock_unlimited", "bool", "", "--ulimit memlock makes the soft limit unlimited (-1); false when given with a number or not given"),
    ("docker.rdma_devices", "bool", "", "the container gets /dev/infiniband (a --device or -v of it, or --privileged)"),
    ("docker.rdma_devices_named", "bool", "", "/dev/infiniband is named on the line (a --device or -v of it): the job means "
     "to use RDMA, which --privileged alone (every device the host has, RDMA or none) does not say"),
    ("docker.gpus", "string", "", "--gpus value, or 'runtime=nvidia' for --runtime=nvidia / nvidia-docker"),
    ("docker.nvidia_runtime_used", "bool", "", "one of the runs read (not only the last) went through the nvidia runtime (--runtime=nvidia, nvidia-docker)"),
    ("docker.cap_add", "list", "", "--cap-add capabilities (IPC_LOCK lets the container lock memory past its limit)"),
    ("docker.shm_limited", "bool", "", "neither --ipc=host nor a --shm-size of 1 GB or more: /dev/shm stays small (64 MB by default)"),
    ("env.var.*", "string", "", "the value of one environment variable, as set (secrets included; redacted in output)"),
]

_RUN = re.compile(r"\b(?:nvidia-docker|docker|podman)\s+(?:container\s+)?run\b")
# docker run options that take a value (the others are flags)
_VALUED = {"-e", "--env", "-v", "--volume", "--mount", "--name", "-w", "--workdir", "--shm-size", "--ipc", "--network",
           "--net", "--ulimit", "--device", "--gpus", "--runtime", "--cap-add", "--cap-drop", "--security-opt", "-p",
           "--publish", "--group-add", "--entrypoint", "-u", "--user", "-m", "--memory", "--cpus", "--cpuset-cpus",
           "--cpuset-mems", "--env-file", "--uts", "--pid", "-h", "--hostname", "-l", "--label", "--add-host",
           "--tmpfs", "--dns", "--restart", "--platform", "--pull", "--log-driver", "--log-opt", "--sysctl",
           "--cgroupns", "--memory-swap", "--device-cgroup-rule", "--volumes-from", "--link", "--expose",
           "--health-cmd", "--stop-signal", "--userns", "--cgroup-parent", "--oom-score-adj", "--pids-limit",
           "--mac-address", "--ip", "--label-file", "--annotation", "--cidfile", "--storage-opt", "--isolation",
           "--network-alias", "--kernel-memory", "--memory-reservation", "--cpu-shares", "-c", "--detach-keys",
           "--attach", "-a", "--stop-timeout", "--hooks-dir", "--systemd", "--userns-remap"}
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)[bB]?$")


def _mb(value: str) -> float | None:
    m = _SIZE.match(value.strip())
    if not m:
        return None
    n = float(m.group(1))
    unit = m.group(2).lower()
    factor = {"": 1 / (1024 * 1024), "k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}[unit]
    mb = n * factor
    return int(mb) if mb == int(mb) else round(mb, 3)


def _joined(text: str) -> list[str]:
    """Lines with backslash continuations joined."""
    out: list[str] = []
    buf = ""
    for ln in text.split("\n"):
        s = ln.rstrip()
        if s.endswith("\\"):
            buf += s[:-1] + " "
            continue
        out.append(buf + s)
        buf = ""
    if buf:
        out.append(buf)
    return out


def _detect(text: str) -> float:
    head = text[:262144]
    if not _RUN.search(head):
        return 0.0
    for ln in _joined(head):
        m = _RUN.search(ln)
        if m and re.search(r"\s--?\w", ln[m.end():]) or (m and re.search(r"\s\S+[:/]\S*", ln[m.end():])):
            return 0.8
    return 0.0


def _words(rest: str) -> list[str]:
    """The words of the run line; when it sits inside quotes (bash -c "docker run ...", ssh host "..."), the
    unbalanced closing quote and what follows it are dropped."""
    for _ in range(8):
        try:
            return shell_words(rest)
        except ValueError:
            cut = max(rest.rfind('"'), rest.rfind("'"))
            if cut <= 0:
                break
            rest = rest[:cut]
    return rest.split()


@parser(
    "docker-run",
    detect=_detect,
    summary="a container's launch line (docker / nvidia-docker / podman run): shm, IPC, network, RDMA devices, memlock, env",
    facts=FACTS,
    command="docker inspect --format '{{json .HostConfig}}' CONTAINER   (or paste the docker run line)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a docker run command line")
    runs = []
    for ln in _joined(text):
        for m in _RUN.finditer(ln):
            runs.append(ln[m.end():])
    if not runs:
        raise ParseError("no `docker run` / `podman run` command line found")
    words = _words(runs[-1])
    opts: list[tuple[str, str | None]] = []
    image = None
    i = 0
    while i < len(words):
        w = words[i]
        if not w.startswith("-") or w == "-":
            image = w
            break
        if w.startswith("--") and "=" in w:
            k, v = w.split("=", 1)
            opts.append((k, v))
        elif w in _VALUED and i + 1 < len(words):
            opts.append((w, words[i + 1]))
            i += 1
        elif len(w) > 2 and w[1] != "-" and w[:2] in _VALUED and not w[1:].isalpha():
            opts.append((w[:2], w[2:]))  # -eNAME=VALUE, -v/a:/b
        else:
            opts.append((w, None))
        i += 1
    facts: dict[str, Any] = {"docker.runs": len(runs)}
    if image:
        facts["docker.image"] = image
    privileged = False
    rdma = False
    caps: list[str] = []
    shm_mb = None
    for k, v in opts:
        if k == "--privileged":
            privileged = v is None or v.lower() != "false"
        elif k == "--shm-size" and v is not None:
            shm_mb = _mb(v)
            if shm_mb is not None:
                facts["docker.shm_size_mb"] = shm_mb
        elif k == "--ipc" and v:
            facts["docker.ipc"] = v
        elif k in ("--network", "--net") and v:
            facts["docker.network"] = v
        elif k == "--ulimit" and v and v.startswith("memlock="):
            val = v.split("=", 1)[1]
            facts["docker.memlock"] = val
            facts["docker.memlock_unlimited"] = val.split(":")[0] in ("-1", "unlimited")
        elif k == "--device" and v and "/dev/infiniband" in v:
            rdma = True
        elif k in ("-v", "--volume", "--mount") and v and "/dev/infiniband" in v:
            rdma = True
        elif k == "--gpus" and v:
            facts["docker.gpus"] = v
        elif k == "--runtime" and v == "nvidia":
            facts.setdefault("docker.gpus", "runtime=nvidia")
        elif k == "--cap-add" and v:
            caps.append(v.upper().removeprefix("CAP_"))
        elif k in ("-e", "--env") and v and "=" in v:
            name, val = v.split("=", 1)
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                facts[f"env.var.{name}"] = val
    if "docker.gpus" not in facts and "nvidia-docker" in text:
        facts["docker.gpus"] = "runtime=nvidia"
    facts["docker.nvidia_runtime_used"] = facts.get("docker.gpus") == "runtime=nvidia" or any(
        re.search(r"(?:^|\s)--runtime[= ]nvidia\b", " " + r) for r in runs) or "nvidia-docker" in text
    facts["docker.privileged"] = privileged
    facts["docker.rdma_devices"] = rdma or privileged
    facts["docker.rdma_devices_named"] = rdma
    facts.setdefault("docker.memlock_unlimited", False)
    if caps:
        facts["docker.cap_add"] = caps
    facts["docker.shm_limited"] = facts.get("docker.ipc") != "host" and (shm_mb is None or shm_mb < 1024)
    return facts
