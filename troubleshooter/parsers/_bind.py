"""numactl and taskset as launchers: ``numactl -m1 -N1 bandwidthTest``, ``numactl --cpunodebind=0 --membind=0 --
python train.py``, ``taskset -c 0-5 ./all_reduce_perf``. The output that follows such a line is the started
program's, not numactl's or taskset's; the line itself says the CPU and memory binding the program ran under.

``numactl --hardware`` / ``--show`` and ``taskset -p PID`` print and start nothing: they are not launchers.

>>> launch("numactl -m1 -N1 bandwidthTest")
({'membind': '1', 'cpunodebind': '1'}, 3)
>>> launch("numactl --cpunodebind=0 --membind=0 -- python train.py")[0]
{'cpunodebind': '0', 'membind': '0'}
>>> launch("taskset -c 0-5 ./bandwidthTest --device=0")
({'physcpubind': '0-5'}, 3)
>>> launch("numactl --hardware"), launch("taskset -cp 4391")
(None, None)
"""

from __future__ import annotations

from troubleshooter.parsers import _srun
from troubleshooter.parsers.base import shell_words

# numactl's options that take a value (man numactl), by every name, and the binding each sets
_NUMACTL_VALUED = {
    "-N": "cpunodebind", "--cpunodebind": "cpunodebind", "--cpubind": "cpunodebind",
    "-m": "membind", "--membind": "membind",
    "-C": "physcpubind", "--physcpubind": "physcpubind",
    "-p": "preferred", "--preferred": "preferred", "-P": "preferred", "--preferred-many": "preferred",
    "-i": "interleave", "--interleave": "interleave", "-w": "interleave", "--weighted-interleave": "interleave",
}
_NUMACTL_FLAGS = {"-l": "localalloc", "--localalloc": "localalloc", "-a": "", "--all": "", "-b": "", "--balancing": ""}
# options after which numactl starts nothing (it prints the policy or the hardware, or works on shared memory)
_NUMACTL_NO_PROGRAM = {"-H", "--hardware", "-s", "--show", "-S", "--shm", "-f", "--file", "-I", "--shmid", "-d", "--dump",
                       "-D", "--dump-nodes"}


def _numactl(words: list[str]) -> tuple[dict[str, str], int] | None:
    bind: dict[str, str] = {}
    i = 1
    while i < len(words):
        w = words[i]
        if w == "--":
            i += 1
            break
        if not w.startswith("-") or w == "-":
            break
        if w in _NUMACTL_NO_PROGRAM:
            return None
        name, eq, value = w.partition("=")
        if name in _NUMACTL_VALUED:
            if not eq:
                if i + 1 >= len(words):
                    return None
                value = words[i + 1]
                i += 1
            bind[_NUMACTL_VALUED[name]] = value
        elif w in _NUMACTL_FLAGS:
            if _NUMACTL_FLAGS[w]:
                bind[_NUMACTL_FLAGS[w]] = "yes"
        elif len(w) > 2 and w[:2] in _NUMACTL_VALUED and not w.startswith("--"):
            bind[_NUMACTL_VALUED[w[:2]]] = w[2:]  # -N1, -m0 (getopt's glued short option)
        else:
            return None  # an option this does not know: cannot tell where the program starts
        i += 1
    return (bind, i) if i < len(words) else None


def _taskset(words: list[str]) -> tuple[dict[str, str], int] | None:
    cpulist = False
    i = 1
    while i < len(words) and words[i].startswith("-"):
        w = words[i]
        if w in ("-p", "--pid") or (not w.startswith("--") and "p" in w[1:]):
            return None  # taskset -p [MASK] PID: queries or changes a running process, starts nothing
        if w in ("-c", "--cpu-list") or (not w.startswith("--") and set(w[1:]) <= {"a", "c"}):
            cpulist = cpulist or "c" in w or w == "--cpu-list"
        elif w not in ("-a", "--all-tasks"):
            return None
        i += 1
    if i + 1 >= len(words):
        return None
    spec = words[i]
    return ({"physcpubind": spec} if cpulist else {"cpumask": spec.lower().removeprefix("0x")}), i + 1


def launch(command: str) -> tuple[dict[str, str], int] | None:
    """``(binding, index of the program's word)`` when the command starts a program under numactl or taskset (after
    sudo/env/time and ``VAR=value`` words); None otherwise. The binding's keys: cpunodebind, membind, physcpubind,
    preferred, interleave, localalloc, cpumask; values as written."""
    try:
        words = shell_words(command.split("|")[0])
    except ValueError:
        words = command.split()
    return launch_words(words)


def launch_words(words: list[str]) -> tuple[dict[str, str], int] | None:
    """:func:`launch` of a command line already split into words."""
    i = _srun.skip_before(words)
    if i >= len(words):
        return None
    base = words[i].rsplit("/", 1)[-1]
    got = _numactl(words[i:]) if base == "numactl" else _taskset(words[i:]) if base == "taskset" else None
    if got is None:
        return None
    return got[0], got[1] + i


def single_node(binding: dict[str, str]) -> int | None:
    """The one NUMA node a binding puts the program's CPUs (else its memory) on; None if several or none."""
    for key in ("cpunodebind", "membind", "preferred"):
        v = binding.get(key, "").strip()
        if v.isdigit():
            return int(v)
    return None
