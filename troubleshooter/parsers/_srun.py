"""srun's command line, read the way srun reads it: its options up to the command it runs (shared by the kinds that
read an srun line: srun, and nvidia-smi-status for the listings an srun printed)."""

from __future__ import annotations

import re

from troubleshooter.parsers.base import shell_words

#: srun options that take their value as the next word (the first other word is the command srun runs)
VALUED = frozenset({"-p", "--partition", "-N", "--nodes", "-n", "--ntasks", "--tasks", "--ntasks-per-node",
                    "-G", "--gpus", "--gpus-per-task", "--gpus-per-node", "--gpus-per-socket", "--gres", "-c",
                    "--cpus-per-task", "-t", "--time", "-J", "--job-name", "-A", "--account", "-w", "--nodelist", "-x",
                    "--exclude", "--mpi", "--export", "--mem", "-o", "--output", "-e", "--error", "--qos",
                    "--reservation", "--gpu-bind", "--cpu-bind", "-m", "--distribution", "--jobid", "-C", "--constraint",
                    "--container-image", "--container-name", "--container-mounts", "--container-workdir",
                    "--container-env", "--mem-per-gpu", "--cpus-per-gpu", "--environment"})
#: a VAR=value word before the command, and the wrappers that may stand before srun or mpirun (shared with mpirun)
ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
BEFORE = frozenset({"sudo", "time", "env", "nohup", "exec", "stdbuf", "-E"})


def skip_before(words: list[str]) -> int:
    """The index of the command word: past the VAR=value words and the wrappers (sudo, time, env ...) before it."""
    i = 0
    while i < len(words) and (ASSIGN.match(words[i]) or words[i] in BEFORE):
        i += 1
    return i


def command_line(text: str) -> str:
    """The first command line of a pasted launch line: its backslash continuations joined, a leading "$ " dropped
    (srun and mpirun lines are pasted both ways, after a prompt and across several lines)."""
    joined = re.sub(r"\\\s*\n", " ", text)
    line = next((ln.strip() for ln in joined.split("\n") if ln.strip()), "")
    return line[2:] if line.startswith("$ ") else line


def options(command: str) -> tuple[dict[str, str], list[str]] | None:
    """(srun's options: name -> value, '' for a flag; the variables set for the step: NAME=value before srun and in
    --export) of a command line that runs srun (after variables, sudo, time, env), or None when it does not."""
    try:
        words = shell_words(command)
    except ValueError:
        return None
    names = [w.rsplit("/", 1)[-1] for w in words]
    if "srun" not in names:
        return None
    at = names.index("srun")
    if skip_before(words) < at:
        return None  # srun is a word of another command ("echo srun"), not the command
    env = [w for w in words[:at] if ASSIGN.match(w)]
    opts: dict[str, str] = {}
    rest = words[at + 1:]
    i = 0
    while i < len(rest) and rest[i].startswith("-") and rest[i] != "--":
        opt, eq, value = rest[i].partition("=")
        if not eq and not opt.startswith("--") and len(opt) > 2 and opt[:2] in VALUED:
            opt, value = opt[:2], opt[2:]  # a short option with its value attached: "-n5", "-t2", "-wnode01"
        elif not eq and opt in VALUED and i + 1 < len(rest):
            value = rest[i + 1]
            i += 1
        opts[opt] = value
        if opt == "--export":
            env += [p for p in value.split(",") if ASSIGN.match(p)]
        i += 1
    return opts, env


def asks_for_gpus(opts: dict[str, str]) -> list[str]:
    """The options that ask for GPUs, as written ('--gres=gpu:A100:1', '--gpus-per-task=1', '-G 1')."""
    out = []
    for name in ("--gres", "-G", "--gpus", "--gpus-per-node", "--gpus-per-task", "--gpus-per-socket"):
        value = opts.get(name)
        if value is None or (name == "--gres" and not re.search(r"(?:^|,)gpu(?::|$|,)", value)):
            continue
        if value in ("0", "none") or re.fullmatch(r"gpu(?::[\w.-]+)?:0", value):
            continue
        out.append(f"{name} {value}" if not name.startswith("--") else f"{name}={value}")
    return out


def in_container(opts: dict[str, str]) -> bool:
    """pyxis starts the step in an enroot container (--container-image or --container-name); CSCS's Container
    Engine does from an environment definition file (--environment=NAME or a .toml path)."""
    return "--container-image" in opts or "--container-name" in opts or bool(opts.get("--environment"))
