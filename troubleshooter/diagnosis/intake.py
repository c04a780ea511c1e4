"""Intake of what people paste: a terminal transcript, a ticket's Markdown, a chat message, not one clean output.

:func:`clean` (:mod:`unpaste`) undoes what pasting does to text (colour escapes, CR line ends, Markdown fences, mail
and chat quote marks, a launcher's rank prefix, a log viewer's names or a collector's time on every line);
:func:`split` cuts a transcript at its shell prompts (``user@host:~$ sudo numastat -p 4391``, ``# ibstat``,
``$ srun ... nvidia-smi -q -d PERFORMANCE``) and names, for each block, the tool its command ran (past ``sudo``,
``srun``, ``docker exec``, ``kubectl exec`` and other wrappers) and the side it ran on (inside a container when the
command went through one, or when the prompt is a container's). A block without a command is read by detection, as
``parse`` does.

>>> [(b.kind, b.side, b.text.strip()) for b in split("user@gpu1:~$ cat /proc/cmdline\\nro quiet\\n"
...                                                  "$ docker exec trainer env\\nNCCL_DEBUG=INFO\\n")]
[('cmdline', None, 'ro quiet'), ('env', 'container', 'NCCL_DEBUG=INFO')]
>>> clean("\\x1b[1;31m[1,0]<stdout>:NCCL WARN x\\x1b[0m\\r\\n[1,1]<stdout>:NCCL INFO y\\r\\n")
'NCCL WARN x\\nNCCL INFO y\\n'
"""

from __future__ import annotations

import dataclasses
import re
import shlex

from troubleshooter.diagnosis.unpaste import clean  # noqa: F401 (intake's API; the cleaning half lives there)
from troubleshooter.parsers import _bind
from troubleshooter.parsers._prompt import prompt
from troubleshooter.parsers.base import shell_words

# ---------------------------------------------------------------------------- transcripts
# A prompt and its command (parsers/_prompt.py says which prompts): "user@host:~$ nvidia-smi", "# ibstat"
_PROMPT = prompt("$#%", "command")
# a kernel config's "# CONFIG_X is not set" is output (grep CONFIG_ /boot/config-*), not a root prompt's command
_NOT_SET = re.compile(r"^\s*#\s*CONFIG_\w+ is not set\s*$")

# command word (and, for some, a word that must follow) -> parser kind
_TOOLS: list[tuple[str, tuple[str, ...], str]] = [
    ("nvidia-smi", ("topo",), "nvidia-smi-topo"),
    ("nvidia-smi", ("--query-gpu",), "nvidia-smi-csv"),
    ("nvidia-smi", ("-q", "--query"), "nvidia-smi-q"),
    ("nvidia-smi", ("nvlink",), "nvlink-status"),
    ("nvidia-smi", ("-L", "--list-gpus"), "nvidia-smi-status"),
    ("nvidia-smi", (), "nvidia-smi"),
    ("gpustat", (), "gpustat"),
    ("numastat", (), "numastat"),
    ("cpupower", ("idle-info", "frequency-info"), "cpupower"),
    ("df", (), "df"),
    ("pip", ("freeze", "list"), "packages"),
    ("pip3", ("freeze", "list"), "packages"),
    ("conda", ("list",), "packages"),
    ("dpkg", ("-l",), "packages"),
    ("ofed_info", (), "packages"),
    ("rpm", ("-qa", "-q "), "packages"),
    ("dpkg", ("-L slurm", "--listfiles slurm"), "slurm-plugins"),
    ("rpm", ("-ql slurm", "-qil slurm", "-qlp slurm"), "slurm-plugins"),
    ("lsmod", (), "kmod"),
    ("modinfo", (), "kmod"),
    ("docker", ("info",), "docker-info"),
    ("numactl", (), "numactl"),
    ("ibstat", (), "ibstat"),
    ("ibstatus", (), "ibstatus"),
    ("iblinkinfo", (), "iblinkinfo"),
    ("show_gids", (), "show-gids"),
    ("p2pBandwidthLatencyTest", (), "p2p-bandwidth"),
    ("bandwidthTest", (), "bandwidth-test"),
    ("bpftool", ("cgroup",), "cgroup"),
    ("ibv_devinfo", (), "ibv-devinfo"),
    ("ibdev2netdev", (), "ibdev2netdev"),
    ("env", (), "env"),
    ("printenv", (), "env"),
    ("dmesg", (), "dmesg"),
    ("journalctl", (), "dmesg"),
    ("talosctl", ("dmesg",), "dmesg"),
    ("turbostat", (), "turbostat"),
    ("lscpu", (), "lscpu"),
    ("taskset", (), "taskset"),
    ("perf", ("report",), "perf-report"),
    ("scontrol", ("show job", "show jobid"), "scontrol-job"),
    ("scontrol", ("show node",), "scontrol-node"),
    ("systemd-detect-virt", (), "virt"),
    ("uname", (), "uname"),
    ("ulimit", (), "limits"),
    ("ucx_info", (), "ucx"),
    ("deviceQuery", (), "cuda-samples"),
    ("ifconfig", (), "ip-addr"),
    ("lspci", (), "lspci"),
    ("rdma", ("link",), "rdma-link"),
    ("mlxconfig", (), "mlxconfig"),
    ("mlxlink", (), "mlxlink"),
    ("mstlink", (), "mlxlink"),   # mstflint's name for mlxlink
    ("ethtool", (), "ethtool"),
    ("mlnx_qos", (), "roce-qos"),
    ("dcgmi", ("diag",), "dcgm-diag"),
    ("kubectl", ("-o yaml", "-oyaml", "--output=yaml", "--output yaml", "-o=yaml"), "k8s-pod"),
    ("ip", ("addr", "address", "link", "-br", "-brief"), "ip-addr"),
    ("simpleP2P", (), "cuda-samples"),
    ("nvbandwidth", (), "nvbandwidth"),
    # perftest's bandwidth and latency tests (a run that stopped before its table is read by detection instead)
    *((f"ib_{verb}_{test}", (), "perftest") for verb in ("write", "read", "send", "atomic") for test in ("bw", "lat")),
    ("raw_ethernet_bw", (), "perftest"),
    ("raw_ethernet_lat", (), "perftest"),
    ("fi_info", (), "fi-info"),
    ("ls", ("/dev/nvidia",), "dev-nvidia"),
    ("dkms", (), "nvidia-installer"),
    ("nvidia-installer", (), "nvidia-installer"),
    # the NVIDIA Container Toolkit's programs asked for their version (their other verbs print other things)
    ("nvidia-ctk", ("--version", "-v"), "container-toolkit-version"),
    ("nvidia-container-toolkit", ("--version",), "container-toolkit-version"),
    ("nvidia-container-runtime-hook", ("--version",), "container-toolkit-version"),
    ("nvidia-container-runtime", ("--version",), "container-toolkit-version"),
    ("nvidia-cdi-hook", ("--version",), "container-toolkit-version"),
    ("nvidia-container-cli", ("--version", "-V"), "container-toolkit-version"),
]
_CAT_FILES = [("cgroup.conf", "slurm-conf"), ("gres.conf", "slurm-conf"), ("/proc/cmdline", "cmdline"), ("/proc/meminfo", "meminfo"), ("/proc/stat", "procstat"),
              ("/etc/nccl.conf", "nccl-conf"), ("nccl.conf", "nccl-conf"), ("topo", "nccl-topo"),
              ("status", "proc-status"), ("config-", "kernel-config"), ("/boot/config", "kernel-config"),
              ("cpuidle", "cpuidle"), ("cpufreq", "cpufreq"), ("/limits", "limits"), ("devices.list", "cgroup"), ("config.gz", "kernel-config"),
              ("traffic_class", "roce-qos"),
              ("nvidia-installer.log", "nvidia-installer"), ("/var/lib/dkms/nvidia", "nvidia-installer")]
# the driver's .run installer, run as ./NVIDIA-Linux-x86_64-535.183.01.run or sh NVIDIA-Linux-...run
_NV_RUN = re.compile(r"^NVIDIA-Linux-[\w]+-[\d.]+[\w.-]*\.run$")
# `kubectl logs` of a pod whose name says what it runs: the log is that program's
_POD_LOGS = (("nvidia-device-plugin", "k8s-device-plugin"),)
# NCCL 1.x's own tests (test/single/*_test of the NCCL 1 repository)
_NCCL1_TESTS = re.compile(r"(?:^|/)(all_reduce|all_gather|reduce_scatter|broadcast|reduce)_test$")
_NCCL_TESTS = re.compile(r"(?:^|/)(all_reduce|all_gather|reduce_scatter|alltoall|broadcast|reduce|sendrecv|gather|scatter|hypercube)_perf(?:_mpi)?$")
_WRAPPERS = {"sudo", "time", "nohup", "exec", "timeout", "stdbuf", "nice", "ionice", "env", "mpirun", "mpiexec",
             "srun", "docker", "podman", "kubectl", "enroot", "singularity", "apptainer", "ssh", "bash", "sh"}
_CONTAINER_WRAPPERS = ("docker exec", "podman exec", "docker run", "podman run", "nvidia-docker run", "docker container run", "kubectl exec", "enroot exec", "enroot start", "singularity exec",
                       "apptainer exec", "--container-image", "--container-name", "nerdctl exec", "crictl exec")
# what a command line can start with (anything else is a sentence or a comment that happens to follow a '#')
_CAT_LIKE = ("cat", "less", "more", "head", "tail", "grep", "zcat", "zgrep", "zless", "bzcat")
_FIRST_WORDS = frozenset({t for t, _, _ in _TOOLS} | _WRAPPERS | set(_CAT_LIKE) | {"printenv"})
# a prompt whose host is a 12-hex container id (docker's default hostname) is inside a container
_CONTAINER_HOST = re.compile(r"^[0-9a-f]{12}$")


@dataclasses.dataclass
class Block:
    text: str
    line: int                    #: 1-based line of the block's first output line in the paste
    command: str | None = None   #: the command line that printed it, when the paste shows one
    kind: str | None = None      #: the parser its command calls for, when the command says
    side: str | None = None      #: 'container' when the command ran inside one ('host' when the paste labels it so); None: as the file says
    of_command: bool = False     #: the block is the command line's own content (its variables, a docker run's options)


def tool_of(command: str) -> str | None:
    """The parser kind for a command line, looking past wrappers (sudo, srun ..., docker exec NAME ...)."""
    cmd = command.split("|")[0]
    try:
        words = shell_words(cmd)
    except ValueError:
        words = cmd.split()
    if not words:
        return None
    first = words[0].rsplit("/", 1)[-1]
    if first not in _FIRST_WORDS and not _NCCL_TESTS.search(first) and not _NCCL1_TESTS.search(first) \
            and "=" not in first and not _NV_RUN.match(first):
        return None  # a sentence or a comment line ("# Collective test starting: ..."), not a command
    for i, w in enumerate(words):
        if " " in w and i and words[i - 1] == "-c":  # bash -c "ulimit -a", sh -c 'cat /proc/cmdline'
            return tool_of(w)
        base = w.rsplit("/", 1)[-1]
        if base in ("env", "printenv"):
            # a bare `env` (or `env | sort`, `printenv`) prints the environment; `env FOO=1 cmd` runs cmd
            if not [x for x in words[i + 1:] if "=" not in x and not x.startswith("-")] or base == "printenv":
                return "env"
            continue
        if base in _CAT_LIKE and i + 1 < len(words):
            target = words[-1]
            for needle, kind in _CAT_FILES:
                if needle in target:
                    return kind
            continue
        if base in ("numactl", "taskset"):
            bound = _bind.launch_words(words[i:])
            if bound is not None:  # numactl -N1 -m1 ./bandwidthTest: the output is the program's
                return tool_of(shlex.join(words[i + bound[1]:]))
        if _NCCL_TESTS.search(base):
            return "nccl-tests"
        if _NCCL1_TESTS.search(base):
            return "nccl1-tests"
        if _NV_RUN.match(base):
            return "nvidia-installer"
        if base == "kubectl" and "logs" in words[i + 1:]:
            for needle, kind in _POD_LOGS:
                if any(needle in x for x in words[i + 1:]):
                    return kind
        rest = " ".join(words[i + 1:])
        for tool, needs, kind in _TOOLS:
            if base == tool and (not needs or any(rest.startswith(n) or f" {n}" in f" {rest}" for n in needs)):
                return kind
        if base in _WRAPPERS or base.startswith("-") or "=" in base:
            continue
    return None


def _side_of(command: str, host: str | None) -> str | None:
    if any(w in command for w in _CONTAINER_WRAPPERS):
        return "container"
    if host and _CONTAINER_HOST.match(host):
        return "container"
    return None


_LEADING_ASSIGN = re.compile(r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+\S")
_NAME_EQ = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def leading_assignments(command: str) -> tuple[list[str], str]:
    """``NCCL_DEBUG=INFO NCCL_IB_HCA='^=mlx5_8' srun ...`` -> (["NCCL_DEBUG=INFO", "NCCL_IB_HCA=^=mlx5_8"], "srun ...").
    The variables a command line sets for its command are the environment the command ran with; read as one
    value they would make NCCL_DEBUG's value the whole line."""
    if not _LEADING_ASSIGN.match(command):
        return [], command
    try:
        words = shell_words(command.split("|")[0])
    except ValueError:
        return [], command
    assigns = []
    for w in words:
        if not _NAME_EQ.match(w):
            break
        assigns.append(w)
    rest = words[len(assigns):]
    if not assigns or not rest:
        return [], command
    return assigns, shlex.join(rest)


_DOCKER_RUN = re.compile(r"\b(?:nvidia-docker|docker|podman)\s+(?:container\s+)?run\b")
# a launcher as the command (after sudo, env, time, VAR=value ...), not a word of another command's arguments: srun
# (what the step asked Slurm for), mpirun/mpiexec (where it places its ranks), whatever program either starts
_AS_COMMAND = r"^(?:(?:sudo|time|env|nohup|[A-Za-z_]\w*=\S*)\s+)*(?:\S*/)?"
_SRUN = re.compile(_AS_COMMAND + r"srun\s")
_MPIRUN = re.compile(_AS_COMMAND + r"(?:mpirun|mpiexec|orterun|prterun)\s")
_DOCKER_RUN_LINE = re.compile(r"^\s*(?:sudo\s+)?(?:nvidia-docker|docker|podman)\s+(?:container\s+)?run\s")


_LAUNCH_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# a training program's launch line that sets the stack's variables for it (``NCCL_P2P_DISABLE=1 torchrun ...``,
# ``rm -r /tmp/x; CUDA_VISIBLE_DEVICES=0,1 NCCL_IB_DISABLE=1 python -m torch.distributed.launch ...``): the
# variables are the environment the run had, whatever the program printed after it
_STACK_VAR = re.compile(r"^(?:NCCL|UCX|FI|NVSHMEM|CUDA|TORCH|TORCH_NCCL|OMPI|GLOO|HOROVOD|MLX5|OMP|KMP)_\w*=")
_TRAIN_LAUNCHERS = frozenset({"python", "python3", "torchrun", "deepspeed", "accelerate", "horovodrun", "ray",
                              "vllm", "composer", "lightning"})


def training_launch(line: str) -> tuple[list[str], str] | None:
    """(variables, command) of a training launch line that sets the stack's variables, else None; of a list of
    commands (``a; b && c``) the last that sets them.

    >>> training_launch("rm -r /tmp/t; CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 python -m torch.distributed.launch x.py")
    (['CUDA_VISIBLE_DEVICES=0,1', 'NCCL_P2P_DISABLE=1'], 'python -m torch.distributed.launch x.py')
    >>> training_launch("FOO=1 python x.py"), training_launch("NCCL_DEBUG=INFO make")
    (None, None)
    """
    for part in reversed(re.split(r";|&&", line)):
        assigns, rest = leading_assignments(part.strip())
        if not assigns or not any(_STACK_VAR.match(a) for a in assigns):
            continue
        first = rest.split(None, 1)[0].rsplit("/", 1)[-1] if rest.strip() else ""
        if first in _TRAIN_LAUNCHERS or re.fullmatch(r"python3?(?:\.\d+)?", first):
            return assigns, rest
    return None


def launcher_env(command: str) -> list[str]:
    """``NAME=value`` pairs a launcher passes to the processes it starts: mpirun's ``-x NAME=value``,
    srun's ``--export=ALL,NAME=value``, ``env NAME=value cmd``. ``-x NAME`` alone forwards the caller's value,
    which the line does not show: it is not given.

    >>> launcher_env("mpirun -np 8 -x NCCL_DEBUG=INFO -x LD_LIBRARY_PATH -x NCCL_IB_HCA=mlx5_0 ./all_reduce_perf")
    ['NCCL_DEBUG=INFO', 'NCCL_IB_HCA=mlx5_0']
    >>> launcher_env("srun --export=ALL,NCCL_SOCKET_IFNAME=ib0 python t.py"), launcher_env("env NCCL_P2P_DISABLE=1 ./a")
    (['NCCL_SOCKET_IFNAME=ib0'], ['NCCL_P2P_DISABLE=1'])
    """
    try:
        words = shell_words(command.split("|")[0])
    except ValueError:
        return []
    out: list[str] = []
    for i, w in enumerate(words):
        base = w.rsplit("/", 1)[-1]
        if w in ("-x", "--env", "-genv") and i + 1 < len(words) and _LAUNCH_VAR.match(words[i + 1]):
            if base == w and any(x.rsplit("/", 1)[-1] in ("mpirun", "mpiexec", "orterun", "prterun")
                                 for x in words[:i]):
                out.append(words[i + 1])
        elif w.startswith("--export="):
            out += [p for p in w.split("=", 1)[1].split(",") if _LAUNCH_VAR.match(p)]
        elif base == "env" and i + 1 < len(words):
            for x in words[i + 1:]:
                if not _LAUNCH_VAR.match(x):
                    break
                out.append(x)
    return out


# a sentence around a pasted output: "Here is the output on the failing node:", "Thanks for any help!"
_SENTENCE_WORD = re.compile(r"[(\"'`]?[A-Za-z][A-Za-z'’-]*[)\"'`]?[,.:;!?]?")


def _is_sentence(line: str) -> bool:
    s = line.strip()
    if len(s) > 300 or not s or s[-1] not in ".:!?" or any(c in s for c in "=|\t<>{}[]") or s.startswith(("#", "-", "*")):
        return False
    words = s.split()
    return len(words) >= 4 and sum(1 for w in words if _SENTENCE_WORD.fullmatch(w)) >= 0.8 * len(words)


def split_bare_commands(block: Block) -> list[Block]:
    """The block cut at lines that are a command this reads given without a prompt ('docker info | grep -i cgroup',
    'ibstatus'), each part read as that command's output; [] when no line is one. Used only when the block as pasted
    could not be read: a tool's output line that happens to start with a tool's name would otherwise cut it."""
    lines = block.text.split("\n")
    cuts = []
    for i, ln in enumerate(lines):
        s = ln.strip()
        if not s or len(s) > 300 or s.startswith(("#", ">")) or ":" in s.split()[0] or "=" in s.split()[0]:
            continue
        kind = tool_of(s)
        if kind is not None:
            cuts.append((i, s, kind))
    if not cuts:
        return []
    out = []
    for n, (i, cmd, kind) in enumerate(cuts):
        end = cuts[n + 1][0] if n + 1 < len(cuts) else len(lines)
        text = "\n".join(lines[i + 1:end])
        if text.strip():
            out.append(Block(text, block.line + i + 1, cmd, kind, block.side))
    return out


def trim_prose(text: str) -> str:
    """The text without the sentences a person wrote before and after the output (blanked, so line numbers stay
    the paste's). Used only when the text as pasted could not be read: a tool's own first line can read like a
    sentence ("Successfully ran diagnostic for group.")."""
    lines = text.split("\n")
    lo, hi = 0, len(lines)
    while lo < hi and (not lines[lo].strip() or _is_sentence(lines[lo])):
        lo += 1
    while hi > lo and (not lines[hi - 1].strip() or _is_sentence(lines[hi - 1])):
        hi -= 1
    return "\n".join([""] * lo + lines[lo:hi] + [""] * (len(lines) - hi))


def prompt_match(line: str) -> re.Match[str] | None:
    """The prompt and its command at the line's start, unless the line is a kernel config's '# CONFIG_X is not set'."""
    return _PROMPT.match(line) if not _NOT_SET.match(line) else None


# what a root shell's lone '#' prompt is followed by when it is a prompt (a tool's own '# Avg bus bandwidth : 24.2'
# or '# Using devices' is output): a command this reads, a common shell command, or a path
_SHELL_WORDS = frozenset({"cd", "ls", "echo", "export", "source", "module", "ml", "cp", "mv", "rm", "mkdir", "chmod",
                          "which", "whoami", "hostname", "uname", "id", "ps", "top", "kill", "systemctl", "service",
                          "apt", "apt-get", "yum", "dnf", "pip", "pip3", "python", "python3", "make", "git", "vi", "vim",
                          "nano", "modprobe", "rmmod", "insmod", "reboot", "exit", "su", "ssh", "scp", "wget", "curl",
                          "tar", "find", "nvcc", "ldd", "ldconfig", "sysctl", "ip", "ibv_devices", "ofed_info"})


def is_prompt(line: str) -> bool:
    """A shell prompt with its command (``user@host:~$ cd dir``), whatever the command; a lone ``#`` only before a
    command word (``# ibstat``, ``# cd /tmp``), not before a tool's own commented output line."""
    m = prompt_match(line)
    if m is None:
        return False
    if line.lstrip().startswith("#") and not (m.group("who") or m.group("who2")):
        word = m.group("cmd").split()[0] if m.group("cmd").split() else ""
        base = word.rsplit("/", 1)[-1]
        return base in _FIRST_WORDS or base in _SHELL_WORDS or word.startswith(("./", "/", "~/"))
    return True


# a section banner a collection script echoes between its commands' outputs: "=== DRIVER ===", "----- ibstat -----"
# (nvidia-smi -q's own "====NVSMI LOG====" and UCX's crash report "==== backtrace (tid: N) ====" are output, not sections a
# script echoed)
_SECTION_BANNER = re.compile(r"^(?!.*NVSMI LOG|\s*=+ backtrace\b)\s*(?:={3,}|-{3,}|#{3,}|\*{3,})[ \t]*[A-Za-z][^=#*]{0,78}?[ \t]*(?:={3,}|-{3,}|#{3,}|\*{3,})\s*$")


# "user@host:~$", "[root@gpu3 ~]#" (after an optional "(env)"), bash's default "sh-4.2$" or zsh's "➜  ~" with no
# command after it
_BARE_PROMPT = prompt("", "nothing")
# a line after a command's trailing backslash that is plainly output, not more of the command (a paste that cut the
# rest of the command): a program's "INFO: ..." / "ERROR: ...", Open MPI's "*** ...", Slurm's "srun: ..." prefixes
_OUTPUT_LINE = re.compile(r"^(?:[A-Z][A-Z_]{2,}: |\*\*\* |srun: |slurmstepd: |sbatch: |salloc: )")


def split(text: str) -> list[Block]:
    """Cut a transcript at its prompts. Text before the first prompt, or a paste with none, is one block.

    A command continued with backslashes is read whole. A ``docker run`` line (after a prompt or not) is also a
    block of its own, read by the docker-run kind: its options say what the container was given. A collection
    script's section banner (``=== FABRIC MANAGER SERVICE ===``) also starts a block, read by detection."""
    lines = text.split("\n")
    blocks: list[Block] = []
    cur: Block | None = None
    buf: list[str] = []
    start = 1

    def flush() -> None:
        body = "\n".join(buf)
        if cur is not None or body.strip():
            b = cur or Block("", start)
            b.text = body + ("\n" if body and not body.endswith("\n") else "")
            blocks.append(b)

    def continued(first: str, at: int) -> tuple[str, int]:
        full, used = first, 0
        while full.endswith("\\") and at + used + 1 < len(lines) and used < 200 \
                and not _OUTPUT_LINE.match(lines[at + used + 1]):
            used += 1
            full = full[:-1].rstrip() + " " + lines[at + used].strip()
        if full.endswith("\\"):  # the rest of the command was not pasted: what it shows is read
            full = full[:-1].rstrip()
        return full, used

    idx = 0
    while idx < len(lines):
        ln = lines[idx]
        i = idx + 1
        m = prompt_match(ln)
        cmd = host = None
        used = 0
        assigns: list[str] = []
        rest = ""
        if m:
            full, used = continued(m.group("cmd").strip(), idx)
            assigns, rest = leading_assignments(full)
            if tool_of(rest) is not None or _DOCKER_RUN.search(rest) or _SRUN.search(rest) or _MPIRUN.search(rest):
                cmd, host = full, m.group("host") or m.group("host2")
            elif "=" in full and (launch := training_launch(full)):
                (assigns, rest), cmd, host = launch, full, m.group("host") or m.group("host2")
        elif _DOCKER_RUN_LINE.match(ln):  # a container's launch line pasted without its prompt
            cmd, used = continued(ln.strip(), idx)
            rest = cmd
        else:  # a launch line pasted without its prompt: VAR=value ... tool args, or mpirun -x VAR=value ... tool
            full, used = continued(ln.strip(), idx)
            assigns, rest = leading_assignments(full)
            if ((assigns or launcher_env(full)) and tool_of(rest) is not None) or _MPIRUN.search(rest) or _SRUN.search(rest):
                cmd = full
            elif "=" in full and (launch := training_launch(full)):
                (assigns, rest), cmd = launch, full
            else:
                used = 0
        if cmd is None and m and (m.group("host") or m.group("host2")):
            # a user@host prompt with a command no kind reads (rpm -e, cd, yum install): the output before it ends
            # here, and what follows is that command's, read by detection
            flush()
            cur = Block("", i + used + 1, full, None, _side_of(full, m.group("host") or m.group("host2")))
            buf, start = [], i + used + 1
            idx += used + 1
            continue
        if cmd is None and (_BARE_PROMPT.match(ln) or _SECTION_BANNER.match(ln)):
            # a prompt with nothing typed after it (the end of a transcript), or a script's "=== FABRIC MANAGER
            # SERVICE ===" echo: the output before it ends here (what follows is another command's, or none)
            flush()
            cur, buf, start = None, [], i + 1
            idx += 1
            continue
        if cmd is None:
            used = 0
            assigns = []
        else:
            assigns = assigns + [a for a in launcher_env(rest) if a not in assigns]
        if cmd is not None:
            flush()
            label = (m.group("label") or "").lower() if m else ""
            side = (_side_of(cmd, host) or ("container" if m and m.group("cshell") else None)  # Singularity> prompt
                    or (label if label in ("container", "host") else None))
            if assigns:  # the environment the command ran with, as its own block
                blocks.append(Block("\n".join(assigns) + "\n", i, cmd, "env", side, of_command=True))
            if _DOCKER_RUN.search(rest):  # what the container was given, as its own block
                blocks.append(Block(rest + "\n", i, cmd, "docker-run", "container", of_command=True))
            elif _SRUN.search(rest):  # what the step asked Slurm for (GPUs, a pyxis container), as its own block
                blocks.append(Block(rest + "\n", i, cmd, "srun", side, of_command=True))
            elif _MPIRUN.search(rest):  # how many ranks on which hosts, as its own block
                blocks.append(Block(rest + "\n", i, cmd, "mpirun", side, of_command=True))
            cur = Block("", i + used + 1, cmd, tool_of(rest), side)
            buf = []
            start = i + used + 1
            idx += used + 1
            continue
        buf.append(ln)
        idx += 1
    flush()
    # a grep that printed nothing said something (that option is not set, that module is not loaded): kept
    return [b for b in blocks if b.text.strip() or (b.command and not b.of_command and " grep " in f" {b.command} ")]
