"""Parallel-shell pastes: one text holding several nodes' outputs, cut into each node's.

An SRE asks every node at once (``pdsh -w gpu[01-16] ibstat``, ``clush -b -w ... nvidia-smi -L``) and pastes
what came back. Two forms (and Ansible's):

- **prefixed**, as pdsh and clush print by default: every line of a node's output after ``HOST: `` (pdsh writes
  ``"%s: %s"``), the nodes' lines interleaved as they arrived;
- **gathered**, as ``dshbak`` and ``clush -b`` print: each node's output (or one output several nodes printed
  alike) under a header of its own, the host list between two rules of dashes (``node[01-03]``, clush adding
  ``(3)``, the node count); and as Ansible's ad-hoc runs print (``ansible gpu -m shell -a 'uname -r'``): each
  host's output under ``gpu01 | CHANGED | rc=0 >>`` (a module's JSON result under ``gpu02 | UNREACHABLE! => {``,
  kept as that host's and read by nothing); and as ``kubectl logs -l SELECTOR --prefix`` prints several pods'
  logs: each line after ``[pod/NAME/CONTAINER] ``, each pod taken for a node (a job's workers run one per node);
  and ``srun -l`` or ``mpirun --tag-output`` output of several tasks whose lines arrived mixed: each task's lines
  its own (``task0``, ``rank1``, ...).

Each node's lines become blocks of their own, with the node's name as their side, so that every node is read and
diagnosed as one machine (:mod:`troubleshooter.diagnosis.pasted_nodes`); the command the parallel shell ran on
every node (the ``-a`` of Ansible's command, shell or raw module), when the paste shows it, is each node's
command line. A text in none of these forms is cut at its prompts as before (:func:`intake.split`).

Without the pdsh or clush command line in the paste, ``name: text`` lines are taken for a node's only when they
are nearly every line, come from two or more names that each start several lines, and every name reads like a
node's (letters, digits, dots and dashes, with a digit: gpu07, x3006c0s1b1n0, ip-10-1-74-228); a network
interface or device name (eth0, mlx5_0, nvme0n1) is not a node.
"""

from __future__ import annotations

import collections
import dataclasses
import re

from troubleshooter.diagnosis import intake, unpaste
from troubleshooter.diagnosis.unpaste import KUBECTL_PREFIX
from troubleshooter.parsers.base import shell_words

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,62}[A-Za-z0-9])?"
_PREFIXED = re.compile(rf"^({_NAME}):(?: (.*))?$")
# a name that reads like a node's when no pdsh/clush line says so: with a digit, not an interface's or a device's
_NODE_LIKE = re.compile(r"^(?=.*\d)[A-Za-z][A-Za-z0-9.-]*$")
_NOT_NODE = re.compile(r"^(?:(?:eth|ib|en[ops]|eno|bond|team|vlan|docker|virbr|br|nvme|md|dm-|loop|nvidia|qib|cxi|efa|"
                       r"rdma|port|cpu|core|numa|rank|tcp|udp)\d[\w.-]*|(?:mlx|hfi)\d\w*|veth\w*|lo|wl\w+|"
                       r"[shv]d[a-z]{1,2}\d*|arm-smmu-v\d)$", re.IGNORECASE)  # a kernel driver's prefix: arm-smmu-v3
_RESERVED = frozenset({"host", "target", "container", "job"})
_RULE = re.compile(r"^-{6,}$")
# dshbak's header: the host list alone; clush -b's: the host list and the node count in brackets
_GROUP = re.compile(r"^([A-Za-z0-9][A-Za-z0-9.,\[\]-]{0,300})(?: \((\d+)\))?$")
_PSHELLS = frozenset({"pdsh", "clush", "ansible"})
# Ansible's ad-hoc result header: "gpu01 | CHANGED | rc=0 >>" before the command's output (SUCCESS before 2.8),
# or "gpu02 | UNREACHABLE! => {" before a JSON result (a module's, or why the host could not be reached); an
# inventory name may hold an underscore (work_01), which a host name may not
_ANSIBLE = re.compile(r"^(\w[\w.-]{0,252}) \| (?:CHANGED|SUCCESS|FAILED!?|UNREACHABLE!?)(?: \| rc=-?\d+ >>| => \{)$")
_CONTINUED = re.compile(r"^\s{0,4}>\s")  # a shell's PS2 prompt before the rest of a command
# the first line of a two-line prompt ("root@jazz15 ~" above "#pdsh -w ..."): no output of anything
_PS1_HEAD = re.compile(r"^\s{0,4}\[?[\w.-]{1,64}@[\w.-]{1,253}(?:[: ][~/][^\s]{0,400})?\]?\s*$")
_ANSIBLE_RUNS = frozenset({"command", "shell", "raw", "ansible.builtin.command", "ansible.builtin.shell",
                           "ansible.builtin.raw"})
# options of pdsh and clush that take a value in the next word when it is not attached (-w gpu[01-02])
_TAKES_VALUE = frozenset({"-w", "-x", "-R", "-l", "-f", "-t", "-u", "-g", "-X", "-F", "-m", "-o", "-O", "-E",
                          "--hostfile", "--nodes", "--exclude", "--group", "--user", "--fanout", "--options",
                          "--option", "--connect_timeout", "--command_timeout"})
NODE_SHARE = 0.8  # of the non-blank lines, without a pdsh/clush command line in the paste
SHOWN_SHARE = 0.5  # with one


@dataclasses.dataclass
class Part:
    node: str | None  # None: the lines around the nodes' (the prompt, the parallel shell's own messages)
    lines: list[str]
    numbers: list[int]  # each line's number in the paste (1-based)
    command: str | None = None  # the command the parallel shell ran on the node, when the paste shows it


def _pshell_words(line: str) -> list[str] | None:
    """A pdsh, clush or ansible command line's words from the tool's name on (after a prompt or bare, past sudo,
    time and their options); None for any other line."""
    if "pdsh" not in line and "clush" not in line and "ansible" not in line:
        return None
    m = intake.prompt_match(line)
    cmd = (m.group("cmd") if m else line.strip().lstrip("#$% ")).rstrip().removesuffix("\\")  # continued below
    try:
        words = shell_words(cmd)
    except ValueError:
        return None
    while words and (words[0] in ("sudo", "time", "command") or words[0].startswith("-") and words[:1] != ["--"]):
        words = words[1:]
    return words if words and words[0].rsplit("/", 1)[-1] in _PSHELLS else None


def remote_command(line: str) -> str | None:
    """The command pdsh or clush ran on every node, from its command line (after a prompt or bare); None when
    the line is not a pdsh or clush command."""
    words = _pshell_words(line)
    if words is None:
        return None
    if words[0].rsplit("/", 1)[-1] == "ansible":
        return _ansible_command(words)
    i = 1
    while i < len(words):
        w = words[i]
        if w == "--":
            i += 1
            break
        if not w.startswith("-"):
            break
        i += 2 if w in _TAKES_VALUE else 1
    rest, stages = words[i:], []
    while "|" in rest:  # pdsh ... | grep X | dshbak -c: piped here, not run on the nodes; a grep still filtered
        cut = len(rest) - 1 - rest[::-1].index("|")  # what each node printed, dshbak only gathered it
        stage, rest = rest[cut + 1:], rest[:cut]
        if stage and stage[0].rsplit("/", 1)[-1] != "dshbak":
            stages.insert(0, " ".join(stage))
    return " | ".join([" ".join(rest)] + stages) if rest else None


def _ansible_command(words: list[str]) -> str | None:
    """What ``ansible HOSTS -m shell -a 'CMD'`` ran on each host: the -a value of the command, shell or raw module
    (command is the default); None for another module (its result is JSON, not a command's output)."""
    module, args = "command", None
    for i, w in enumerate(words):
        name, eq, value = w.partition("=")
        if name in ("-m", "--module-name", "-a", "--args") and (eq or i + 1 < len(words)):
            value = value if eq else words[i + 1]
            module, args = (value, args) if name in ("-m", "--module-name") else (module, value)
    return args if module in _ANSIBLE_RUNS and args else None


def _is_pshell_line(line: str) -> bool:
    return _pshell_words(line) is not None


def parts(text: str) -> list[Part]:
    """The paste cut per node ([] when it is not a parallel shell's output). A paste of several pdsh or clush runs
    is cut at each one's command line first: each run's nodes, with the command it ran."""
    lines = text.split("\n")
    starts = [i for i, ln in enumerate(lines) if _is_pshell_line(ln)]
    bounds = ([0] if not starts or starts[0] else []) + starts + [len(lines)]
    out: list[Part] = []
    for a, b in zip(bounds, bounds[1:]):
        remote, end = None, a
        if a in starts:  # the command line, continued with backslashes ("> " a shell's prompt for the rest)
            end = a + 1
            while end < b and lines[end - 1].rstrip().endswith("\\"):
                end += 1
            remote = remote_command(" ".join(_CONTINUED.sub("", ln.rstrip().removesuffix("\\")) for ln in lines[a:end]))
        got = (_gathered(lines, end, b) or _ansible(lines, end, b) or _pods(lines, end, b) or _tasks(lines, end, b)
               or _prefixed(lines, end, b, shown=a in starts))
        if not got:
            out.append(Part(None, lines[a:b], list(range(a + 1, b + 1))))
            continue
        out += [dataclasses.replace(p, command=remote or p.command) if p.node else p for p in got]
    return out if any(p.node for p in out) else []


def _gathered(lines: list[str], a: int, b: int) -> list[Part]:
    heads, i = [], a
    while i < b - 2:  # one header's closing rule is never the next one's opening rule: a group whose output is
        # one line ("jdk-7u79-linux-x64.tar.gz") sits between two rules like a header's host list
        if _RULE.match(lines[i]) and _GROUP.match(lines[i + 1]) and _RULE.match(lines[i + 2]):
            heads.append(i)
            i += 3
        else:
            i += 1
    names = [_GROUP.match(lines[h + 1]).group(1) for h in heads]  # type: ignore[union-attr]
    return _under_heads(lines, a, b, [(h, name, h + 3) for h, name in zip(heads, names)])


def _under_heads(lines: list[str], a: int, b: int, heads: list[tuple[int, str, int]]) -> list[Part]:
    """Lines a..b cut at their headers, each (line index, node, index of its first output line): each node's
    output runs to the next header; the lines before the first are no node's."""
    if not heads:
        return []
    out = [Part(None, lines[a:heads[0][0]], list(range(a + 1, heads[0][0] + 1)))]
    for j, (_, name, first) in enumerate(heads):
        end = heads[j + 1][0] if j + 1 < len(heads) else b
        out.append(Part(name, lines[first:end], list(range(first + 1, end + 1))))
    return out


def _ansible(lines: list[str], a: int, b: int) -> list[Part]:
    heads = [(i, m.group(1), i if lines[i].endswith("{") else i + 1)  # a module's JSON, not a command's output: kept
             for i in range(a, b) if (m := _ANSIBLE.match(lines[i]))]  # with its header line, read by nothing
    return _under_heads(lines, a, b, heads)


def _prefixed(lines: list[str], a: int, b: int, shown: bool) -> list[Part]:
    body = [ln for ln in lines[a:b] if ln.strip()]
    found = [_PREFIXED.match(ln) for ln in lines[a:b]]
    count = collections.Counter(m.group(1) for m in found if m)
    names = {n for n, c in count.items() if n.lower() not in _RESERVED and (
        shown or (c >= 2 and _NODE_LIKE.match(n) and not _NOT_NODE.match(n)))}
    covered = sum(count[n] for n in names)
    if not names or covered < (SHOWN_SHARE if shown else NODE_SHARE) * len(body) or (not shown and len(names) < 2):
        return []
    return _cut(lines, a, [(m.group(1), m.group(2) or "") if m and m.group(1) in names else None for m in found])


def _cut(lines: list[str], a: int, found: list[tuple[str, str] | None], prefix: str = "") -> list[Part]:
    """Lines a.. cut per node: ``found`` holds each line's (node, its text) or None (no node's line, kept around
    the nodes'); the nodes in the order they first answered."""
    around = Part(None, [], [])
    per: dict[str, Part] = {}
    for i, got in enumerate(found, a):
        p = per.setdefault(got[0], Part(prefix + got[0], [], [])) if got else around
        p.lines.append(got[1] if got else lines[i])
        p.numbers.append(i + 1)
    return [around] + sorted(per.values(), key=lambda p: p.numbers[0])


def _pods(lines: list[str], a: int, b: int) -> list[Part]:
    """``kubectl logs -l SELECTOR --prefix``: each line after ``[pod/NAME/CONTAINER] ``, two or more pods (a job's
    workers, each on its node) interleaved; each pod's lines are its node's output."""
    return _labelled(lines, a, b, [KUBECTL_PREFIX.match(ln) for ln in lines[a:b]], "")


# what srun runs as one job across its tasks (a collective test, a training run): its tasks' lines are one output
_ONE_JOB = frozenset({"nccl-tests", "nccl1-tests", "nccl-sweep", "nccl-debug", "perftest", "steps", "train-progress",
                      "torch-distributed", "mpirun", "srun"})


# the launchers whose task labels a paste shows: srun -l's "0: ", mpirun --tag-output's "[1,0]<stdout>:"
_LAUNCHES = ((unpaste.SRUN_LABEL, re.compile(r"(?:sudo\s+)?srun\s(?:.*\s)?(?:-l|--label)\b"), "task"),
             (unpaste.OMPI_TAG, re.compile(r"(?:sudo\s+)?(?:mpirun|mpiexec|orterun|prterun)\s(?:.*\s)?--tag-output\b"),
              "rank"))


def _tasks(lines: list[str], a: int, b: int) -> list[Part]:
    """Output of two or more tasks whose lines arrived mixed, under the launch line, when the command is a tool each
    task runs on its own node (``srun -N2 -l ibstat``, ``mpirun -np 2 --tag-output nvidia-smi -L``): each task's
    lines are its output, read as a node's (``task0``, ``rank1``), with the launch line as its command; run together
    they would be no tool's output. A job's log (no launch line shown, or a program run as one job) is left whole:
    each of its lines stands alone."""
    for label, launch, prefix in _LAUNCHES:
        if not unpaste.interleaved_tasks(lines[a:b], label):
            continue
        for k in range(a, b):
            m = intake.prompt_match(lines[k])
            cmd = m.group("cmd").strip() if m else ""
            if launch.match(cmd) and intake.tool_of(cmd) not in (None, *_ONE_JOB):
                got = _labelled(lines, a, b, [label.match(ln) for ln in lines[a:b]], prefix)
                if got:
                    i = got[0].numbers.index(k + 1)
                    del got[0].lines[i], got[0].numbers[i]
                    return [got[0]] + [dataclasses.replace(p, command=cmd) for p in got[1:]]
    return []


def _labelled(lines: list[str], a: int, b: int, found: list, prefix: str) -> list[Part]:
    """Lines a..b cut by the label each carries (``found``: its match, the label in group 1), two or more labels
    over nearly every line; the lines without one are no node's."""
    body = [ln for ln in lines[a:b] if ln.strip()]
    labels = collections.Counter(m.group(1) for m in found if m)
    if len(labels) < 2 or sum(labels.values()) < NODE_SHARE * len(body):
        return []
    return _cut(lines, a, [(m.group(1), m.string[m.end():]) if m else None for m in found], prefix)


def split(text: str) -> list[intake.Block]:
    """:func:`intake.split`, per node for a parallel shell's paste: each node's blocks with its name as their side
    and the remote command as their command line; the lines around them without the pdsh/clush lines."""
    got = parts(text)
    if not got:
        return intake.split(unpaste.merge_tasks(text))
    out: list[intake.Block] = []
    for p in got:
        if p.node is None:
            keep = [(ln, n) for ln, n in zip(p.lines, p.numbers) if not _is_pshell_line(ln) and not _PS1_HEAD.match(ln)]
            if not any(ln.strip() for ln, _ in keep):
                continue
            p = Part(None, [ln for ln, _ in keep], [n for _, n in keep])
        lead = [f"$ {p.command}"] if p.command and p.node is not None else []
        text = "\n".join(lead + p.lines)  # a node's lines may carry what pasting adds to each (a time, a prefix)
        for blk in intake.split(intake.clean(text) if p.node is not None else text):
            at = blk.line - 1 - len(lead)
            blk.line = p.numbers[min(max(at, 0), len(p.numbers) - 1)] if p.numbers else blk.line
            if p.node is not None:  # a node called "host" or "container" is a node, not that side of the job
                blk.side = p.node if p.node.lower() not in _RESERVED else f"node-{p.node}"
            out.append(blk)
    return out
