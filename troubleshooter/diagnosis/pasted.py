"""Diagnose from outputs someone pasted: files of tool output, their kinds detected as ``parse`` does.

A spec is ``[SIDE:][KIND=]PATH``:

- ``SIDE`` says where the output was taken: ``host``, ``container`` (the job's side, also ``target`` or
  ``job``), or a node name (two or more nodes: each diagnosed, :mod:`pasted_nodes`). Without it, the job's side.
- ``KIND`` overrides detection (``troubleshooter parse --list``). A file whose kind cannot be told is
  reported, never guessed.
- ``PATH`` may be a directory: its files are read (a file named after a source id, ``turbostat.txt``, is read
  with that source's parser); a ``host/`` subdirectory is the host side, any other one a side of its own name.

Several files of one kind on one side are all kept (listed in the report); the facts of the last one read
are the side's facts for that kind. The walk then treats each probe's sources as present when a file of
their parser's kind was attached, and missing otherwise, with the command that would produce it.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, Callable, Iterable

from troubleshooter.model import combine as derived
from troubleshooter import parsers, sources
from troubleshooter.diagnosis import grepped, hostsplit, intake, unpaste, unwrap
from troubleshooter.diagnosis.engine import FactSource, Walk
from troubleshooter.model.facts import Fact, FactSet, Unknown
from troubleshooter.diagnosis.listings import listings_differ, nvml_dropped

MAX_FILE_BYTES = 256 * 1024 * 1024
TARGET_ALIASES = {"container", "target", "job", ""}
SPEC = re.compile(r"^(?:(?P<side>[A-Za-z0-9][A-Za-z0-9._-]*):(?!//))?(?:(?P<kind>[a-z][a-z0-9-]*)=)?(?P<path>.+)$")


class PastedError(ValueError):
    pass


@dataclasses.dataclass
class PastedFile:
    path: Path
    side: str
    kind: str | None
    facts: dict[str, Any]
    error: str = ""
    how: str = ""  # how the kind was chosen: named, command, file name, detected
    where: str = ""  # the block of the paste it came from, when the paste held several
    declared: str = ""  # the side as the person named it ('container' is the job's side, said outright)
    text: str = dataclasses.field(default="", repr=False)  # what was parsed, kept for outputs that add up

    @property
    def display(self) -> str:
        side = "" if self.side == "target" else f"{self.side}:"
        return f"{side}{self.path.name}" + (f" ({self.where})" if self.where else "")


def _side(raw: str | None) -> str:
    if raw is None or raw.lower() in TARGET_ALIASES:
        return "target"
    return raw


def _expand(spec: str, base: Path | None) -> list[tuple[str, str | None, Path, str]]:
    m = SPEC.match(spec)
    if not m:
        raise PastedError(f"not a [SIDE:][KIND=]FILE spec: {spec!r}")
    side_raw, kind, path_s = m.group("side"), m.group("kind"), m.group("path")
    path = Path(path_s)
    if side_raw and not path.exists() and Path(spec).exists():  # 'a:b.txt' that is really a file name
        side_raw, kind, path = None, None, Path(spec)
    if base is not None and not path.is_absolute() and not path.exists():
        path = base / path
    if kind is not None and kind not in parsers.kinds():
        raise PastedError(f"{spec}: unknown kind {kind!r}; known kinds: {', '.join(parsers.kinds())}")
    if not path.exists():
        raise PastedError(f"{path}: no such file or directory")
    side = _side(side_raw)
    if path.is_dir():
        out = []
        for f in sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")):
            rel = f.relative_to(path)
            sub = rel.parts[0] if len(rel.parts) > 1 else None
            out.append((side if sub is None else _side(sub), kind, f, (side_raw or "") if sub is None else sub))
        if not out:
            raise PastedError(f"{path}: empty directory")
        return out
    return [(side, kind, path, side_raw or "")]


def read_spec(spec: str, base: Path | None = None) -> list[PastedFile]:
    """The files one spec names, each read and parsed (the costly part of reading outputs, done once per spec)."""
    source_kind = {sid: s.parser for sid, s in sources.load_all().items()}
    files: list[PastedFile] = []
    for side, kind, path, declared in _expand(spec, base):
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                files.append(PastedFile(path, side, None, {}, f"larger than {MAX_FILE_BYTES >> 20} MB"))
                continue
            # bounded while reading too: a FIFO or /dev/zero says size 0
            text = _strip_provenance(parsers.read_file(path, max_bytes=MAX_FILE_BYTES))
        except OSError as exc:
            files.append(PastedFile(path, side, None, {}, exc.strerror or str(exc)))
            continue
        except parsers.ParseError as exc:
            files.append(PastedFile(path, side, None, {}, str(exc)))
            continue
        got = _read_paste(path, side, kind, text, source_kind)
        if not got:  # every line a prompt of a command this does not read, or nothing at all
            why = "no output in it: only command lines" if text.strip() else "the file is empty"
            got = [PastedFile(path, side, None, {}, why)]
        files += [dataclasses.replace(f, declared=f.declared or declared.lower()) for f in got]
    return files


def _strip_provenance(text: str) -> str:
    """Leading ``#%`` provenance lines (and the blank line after them) are ours, not the tool's."""
    lines, i = text.splitlines(keepends=True), 0
    while i < len(lines) and lines[i].startswith("#%"):
        i += 1
    if i and i < len(lines) and not lines[i].strip():
        i += 1
    return "".join(lines[i:]) if i else text


#: facts inferred across every file of the evidence (two nodes' listings compared), given to the target side
ACROSS_FILES = (("packages.nccl_versions_differ", listings_differ, "the package listings compared"),
                ("slurm.plugins.nvml_dropped", nvml_dropped, "the Slurm packages' file lists compared"))


class EvidenceFacts(FactSource):
    def __init__(self, files: list[PastedFile]) -> None:
        self.files = files
        self.factsets: dict[str, FactSet] = {}
        self.kinds_by_side: dict[str, dict[str, list[PastedFile]]] = {}
        together_by: dict[tuple[str, str], dict[str, Any]] = {}  # (side, kind) -> the facts of its files read as one
        kind_of: dict[tuple[str, str], str] = {}  # (side, fact) -> the kind of the file that gave it
        for f in files:
            if f.kind is None or f.error:
                continue
            fs = self.factsets.setdefault(f.side, FactSet(f.side))
            values = dict(f.facts)
            for name, value in f.facts.items():
                # a list two tools both report (NCCL's warnings from its log and from a Python traceback) is
                # the union of both; from two files of one kind, the last one read is the side's, as said above
                old = fs.get(name)
                prev = kind_of.get((f.side, name))
                if old is not None and prev is not None and prev != f.kind and isinstance(old.value, list) \
                        and isinstance(value, list):
                    values[name] = old.value + [v for v in value if v not in old.value]
                kind_of[(f.side, name)] = f.kind
            fs.update_from(values, source=f"file {f.path.name}", target=f.side, at=0.0)
            self.kinds_by_side.setdefault(f.side, {}).setdefault(f.kind, []).append(f)
        for side, kinds in self.kinds_by_side.items():
            for kind, group in kinds.items():
                # several logs of one side (one per node, or a log in pieces) are one log: read together, the
                # facts of every node count (hosts, interfaces, runs), not only the last file's
                if kind in _ACCUMULATE and len(group) > 1 and all(g.text for g in group):
                    try:
                        together = parsers.run(kind, "\n".join(g.text for g in group))
                    except parsers.ParseError:
                        continue
                    together_by[(side, kind)] = together
                    names = ", ".join(dict.fromkeys(g.path.name for g in group))
                    self.factsets[side].update_from(together, source=f"files {names}, read together", target=side, at=0.0)
        self.factsets.setdefault("target", FactSet("target"))
        for name, compared, how in ACROSS_FILES:
            if got := compared(files):
                self.factsets["target"].add(Fact(name, got, "", f"inferred: {how}", "", 0.0))
        self._inherit_from_host(together_by)
        registry = sources.load_all()
        by_side: dict[str, list[PastedFile]] = {}  # once, not per side: a pdsh paste of 5,000 nodes is 5,000 sides
        for f in files:
            by_side.setdefault(f.side, []).append(f)
        for side, fs in self.factsets.items():
            have = self.kinds_by_side.get(side, {})
            for sid, src in registry.items():
                if src.parser not in have:
                    fs.source_unavailable(sid, f"no {src.parser} output attached")
            if "container.inside" not in fs and any(f.declared == "container" for f in by_side.get(side, ())):
                # the person said where these were taken (or the command went through a container): a process inside
                # a container rarely can tell
                fs.add(Fact("container.inside", True, "", "inferred: the outputs were taken in the container", "", 0.0))
            mine = [f for f in by_side.get(side, ()) if f.kind and not f.error]
            if "container.inside" not in fs and mine and all(f.declared == "host" for f in mine):
                # every output of the side was given as the host's (host:FILE): not inside a container
                fs.add(Fact("container.inside", False, "", "inferred: the outputs were given as the host's", "", 0.0))
            derived.apply(fs)

    def _inherit_from_host(self, together_by: dict[tuple[str, str], dict[str, Any]]) -> None:
        """A job's container or step runs on its host's kernel and hardware: outputs of those given for the host
        side (its kernel log, boot line, modules, PCI devices, CPU power states) speak for the target too, where the
        target has no output of that kind of its own. A container's view of its GPUs, devices, environment and
        limits is its own and is never taken from the host."""
        host, target = self.kinds_by_side.get("host"), self.kinds_by_side.setdefault("target", {})
        if not host or not target:
            return
        fs = self.factsets["target"]
        for kind in sorted(_HOST_WIDE.intersection(host).difference(target)):
            group = host[kind]
            values: dict[str, Any] = {}
            for g in group:
                values.update(g.facts)
            values = together_by.get(("host", kind), values)  # as the host side read them: one log in pieces is one log
            names = ", ".join(dict.fromkeys(g.path.name for g in group))
            fs.update_from({k: v for k, v in values.items() if k not in fs},
                           source=f"host side {names}: the kernel and hardware the job shares with its host",
                           target="target", at=0.0)
            target[kind] = list(group)

    @classmethod
    def from_specs(cls, specs: Iterable[str], base: Path | None = None,
                   read: Callable[[str, Path | None], list[PastedFile]] | None = None) -> "EvidenceFacts":
        """``read`` gives one spec's files (:func:`read_spec`, or a cache of its results: service.outputs)."""
        files = [f for spec in specs for f in (read or read_spec)(spec, base)]
        if not any(f.kind and not f.error for f in files):
            raise PastedError("none of the files could be read: " + "; ".join(f"{f.path}: {f.error}" for f in files))
        sides = {f.side for f in files if f.kind and not f.error}  # a file nothing could read speaks for no side
        if "target" not in sides and len(sides) == 1:
            # outputs from one machine only (all marked host: or one node's name): that machine is the one
            # under diagnosis; a host side exists only to be compared with a job's container or step
            only = sides.pop()
            files = [dataclasses.replace(f, side="target", how=f"{f.how}; {only} outputs only, read as the machine diagnosed")
                     for f in files]
        elif "target" in sides and "host" not in sides and len(sides) == 2:
            # the job's outputs and one named machine's (`nodeGPU01:cgroup.conf`): that machine is the node the job
            # ran on: outside the job's container its host side, else the job's own machine; two named machines
            # stay apart (they are compared, node against node)
            node = next(s for s in sides if s != "target")
            contained = any(f.declared == "container" for f in files if f.side == "target")
            to, what = ("host", "the job's host") if contained else ("target", "the job's machine")
            files = [dataclasses.replace(f, side=to, how=f"{f.how}; node {node}'s outputs, read as {what}")
                     if f.side == node else f for f in files]
        return cls(files)

    def overridden(self) -> list[tuple[PastedFile, dict[str, str], list[PastedFile]]]:
        """Files whose facts a later file of the same side and kind replaced with other values (a paste from before
        and after a change, or two machines given as one side): each with {fact: 'its value here, the other in
        FILE'} and the later files. Outputs that add up (logs) are read together and never replace each other."""
        out = []
        for kinds in self.kinds_by_side.values():
            for kind, group in kinds.items():
                if kind in _ACCUMULATE:
                    continue
                for i, a in enumerate(group):
                    diff: dict[str, str] = {}
                    later: list[PastedFile] = []
                    for b in group[i + 1:]:
                        for name, va in a.facts.items():
                            vb = b.facts.get(name)
                            if vb is not None and vb != va and name not in diff:
                                diff[name] = f"{_short(va)} in {a.path.name}, {_short(vb)} in {b.path.name}"
                                if b not in later:
                                    later.append(b)
                    if diff:
                        out.append((a, diff, later))
        return out

    # -- FactSource
    def factset(self, side: str) -> FactSet | None:
        return self.factsets.get(side)

    def has_side(self, side: str) -> bool:
        return side in self.factsets

    def ensure(self, source_ids: list[str], side: str = "target") -> dict[str, str]:
        registry = sources.load_all()
        have = self.kinds_by_side.get(side, {})
        out = {}
        for sid in source_ids:
            src = registry.get(sid)
            if src is None:
                continue
            got = have.get(src.parser)
            if got:
                out[sid] = "from " + ", ".join(f.path.name for f in got)
            else:
                cmd = parsers.get(src.parser).command or " ".join(src.argv[:3])
                out[sid] = f"missing: attach the output of `{cmd}`"
        return out

    def lookup(self, name: str, side: str = "target") -> Any:
        fs = self.factsets.get(side)
        if fs is None:
            return Unknown(name, f"no {side} outputs attached")
        return fs.get_value(name, sources.producers_of(name))

    # -- reporting
    def report_lines(self) -> list[str]:
        lines = []
        for f in self.files:
            if f.kind and not f.error:
                lines.append(f"  {f.display}: {f.kind} ({f.how}), {len(f.facts)} facts")
            else:
                lines.append(f"  {f.display}: NOT USED: {f.error}")
        return ["read these outputs:"] + lines

    def evidence_table(self) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for f in self.files:
            out.setdefault(f.side, {})[f.path.name] = f.kind if (f.kind and not f.error) else f"not used: {f.error}"
        return out

    def missing_for(self, walk: Walk) -> list[dict[str, str]]:
        """For each hypothesis left untested, what to attach to settle it."""
        out = []
        for h in walk.hypotheses:
            if h.state in ("untested", "suspected"):  # suspected ones come first in the list, with why
                out.append({"hypothesis": h.title, "command": h.settle or "see the tree",
                            "why": h.evidence if h.state == "suspected" else ""})
        return out


def _short(v: Any) -> str:
    t = ", ".join(map(str, v)) if isinstance(v, list) else str(v)
    return t if len(t) <= 60 else t[:59] + "…"


_SHELL_ERROR = re.compile(r"^-?(?:ba|z|da)?sh: (?:line \d+: )?[^\n:]+: (?:command not found|No such file or directory|"
                          r"Permission denied)\s*$|^sudo: [^\n]+: command not found\s*$")
_QUERY_GPU = re.compile(r"--query-gpu[= ]([\w.,]+)")
_CONFIG_LINE = re.compile(r"^[^\S\n]*(?:#[^\S\n]*)?CONFIG_\w+", re.MULTILINE)


#: facts of an env listing that claim the whole environment, which a command line's variables are not
PARTIAL_ENV_DROPS = ("env.names", "env.count")

_KERNEL_WORDS = re.compile(r"NVRM: |\bS?Xid \(|\bkernel: |\bpcieport |\bAER: ")

#: kinds whose lines other tools' outputs carry interleaved (read alongside whatever the block is): the NVIDIA
#: container hook's error comes back inside docker's, compose's, kubelet's or enroot's output, after a docker run line;
#: libibverbs warns on the program's stderr; syslog's kernel lines pasted below another command's output; a CUDA error
#: ending a training log whose iteration lines made the block the step-time kind; srun's and slurmstepd's messages in
#: any job's output, and libfabric's FI_LOG_LEVEL lines in the program's
INTERLEAVED = ("nccl-debug", "torch-distributed", "ucx", "nvidia-container-cli", "verbs-errors", "dmesg", "cuda-errors",
               "slurm-client", "libfabric-log")
#: the kinds a CUDA error is read beside only: training logs whose iteration lines won the block (NCCL's and the
#: frameworks' own kinds read the CUDA errors they carry themselves)
_CUDA_BESIDE = frozenset({"step-times", "train-progress"})


# Kinds of output that describe the kernel (its log, options, modules, security policy) and the hardware, which a
# container or a job step shares with its host (a cgroup, a namespace or a device list does not change them)
_HOST_WIDE = {"dmesg", "cmdline", "kernel-config", "kmod", "lspci", "cpufreq", "cpuidle", "cpupower", "turbostat",
              "mlxconfig", "virt", "selinux"}
# Outputs that add up when one paste holds several (two nccl-tests runs, a log in pieces); a state listing
# (ibstat, env) is a snapshot, and the last one shown stands
_ACCUMULATE = {"nccl-tests", "nccl-debug", "dmesg", "cuda-errors", "steps", "nhc", "torch-distributed", "ucx", "bandwidth-test",
               "thread-placement", "perftest", "roce-qos"}


def _gather(blocks: list[intake.Block]) -> list[intake.Block]:
    """Blocks of one accumulating kind and side, read as one output (each run's numbers kept)."""
    out: list[intake.Block] = []
    first: dict[tuple[str, str | None], intake.Block] = {}
    for b in blocks:
        key = (b.kind or "", b.side)
        if b.kind in _ACCUMULATE and not b.of_command:
            if key in first:  # a later run keeps its command line where its parser reads it (which collective)
                first[key].text += "\n" + _as_read(b.kind, b, b.text)
                continue
            first[key] = b
        out.append(b)
    return out


def _reads_more(new: list[PastedFile], old: list[PastedFile], *, wrapped: bool) -> bool:
    """Whether ``new`` (a block read again: joined, trimmed, cut) reads more than ``old``: something where nothing
    was read, or every kind ``old`` read and more facts (:func:`unwrap.reads_more`, ``wrapped`` its)."""
    def facts(files: list[PastedFile]) -> dict[str, Any]:
        return {k: v for f in files if not f.error for k, v in f.facts.items()}
    read = {f.kind for f in new if not f.error}
    return bool(read) and (not old or _unread(old) or {f.kind for f in old if not f.error} <= read
                           and unwrap.reads_more(facts(new), facts(old), wrapped=wrapped))


def _unread(files: list[PastedFile]) -> bool:  # a block's files, every one an error: nothing read it
    return bool(files) and all(f.error for f in files)


def _read_paste(path: Path, side: str, kind: str | None, text: str, source_kind: dict[str, str]) -> list[PastedFile]:
    """One pasted file: cleaned, cut at its prompts, each block read by the tool its command names, else by
    detection; a block two tools' parsers both read (numactl -H and topo -m in one paste) gives both."""
    blocks = _gather(hostsplit.split(intake.clean(text)))  # per node for a pdsh or clush paste
    if not blocks:
        return [PastedFile(path, side, None, {}, "empty")]
    out: list[PastedFile] = []

    def reread(parts: list[intake.Block], n_blocks: int, wrapped: bool = False) -> None:
        """The block read again as these parts, kept where that reads more (anything, where nothing read it)."""
        again: list[PastedFile] = []
        for part in parts:
            _read_block(path, side, kind, part, n_blocks, source_kind, again)
        if _reads_more(again, out[first_out:], wrapped=wrapped):
            out[first_out:] = again

    for b in blocks:
        first_out = len(out)
        _read_block(path, side, kind, b, len(blocks), source_kind, out)
        for joined in unwrap.unwrapped(b.text):  # lines a terminal or a ticket wrapped: joined where that reads more
            reread([dataclasses.replace(b, text=intake.clean(joined.text))], len(blocks), joined.sure)
        trimmed = intake.trim_prose(b.text) if _unread(out[first_out:]) else b.text
        if trimmed != b.text:  # nothing read it: once more without the sentences the person wrote around it
            reread([dataclasses.replace(b, text=trimmed)], len(blocks))
        if _unread(out[first_out:]) and (plain := unpaste.without_syslog(b.text)) != b.text:
            reread([dataclasses.replace(b, text=plain)], len(blocks))  # a tool's output a service logged to syslog
        if _unread(out[first_out:]) and b.command is None:
            # still nothing: the paste may give its commands without a prompt ('docker info | grep -i cgroup' on
            # the line before its output); cut it there and read each part by its command
            parts = intake.split_bare_commands(b)
            if parts:
                reread(parts, len(blocks) + len(parts))
        if b.side == "container":  # the command went through a container, or its prompt is a container's
            out[first_out:] = [dataclasses.replace(f, declared="container") for f in out[first_out:]]
    if len(out) > 1 and any(f.kind and not f.error for f in out):
        # an ambiguous block that one candidate could not read is not a failure of the paste
        out = [f for f in out if not (f.error and f.how.startswith("detected (several"))]
    return out


#: kinds whose parser takes every line as content (a command line's words, a variable's continued value): the sentences
_EVERY_LINE_KINDS = frozenset({"cmdline", "env", "slurm-env"})  # a person wrote around the output go first
#: kinds that read their own command line, given to them as its prompt line: nccl-tests names its collective by
#: the binary ("./build/all_reduce_perf"), fi_info the provider asked for ("-p efa"), which its "-61" does not say;
#: slurm-conf which file it prints (cgroup.conf, gres.conf) and whether whole (cat) or in part (grep);
#: nvidia-smi-status how srun launched the tasks whose GPU listings it reads (--gpus-per-task, a pyxis container);
#: /proc/PID/limits the process whose limits they are; slurm-plugins which package it lists and through which grep;
#: bandwidthTest the NUMA binding numactl or taskset gave it; bpftool cgroup show its cgroup; uname whether it is -r;
#: ibv_devinfo the device (-d) and port (-i) of lines a grep kept without their hca_id and port lines
_READS_COMMAND_LINE = frozenset({"nccl-tests", "fi-info", "slurm-conf", "nvidia-smi-status", "limits", "slurm-plugins",
                                 "bandwidth-test", "cgroup", "perftest", "roce-qos", "scontrol-node", "uname", "ibv-devinfo"})


def _as_read(kind: str | None, b: intake.Block, text: str) -> str:
    """The text a kind is given: after its command line, as a prompt line, for the kinds that read it."""
    return f"$ {b.command}\n{text}" if kind in _READS_COMMAND_LINE and b.command else text


def _read_block(path: Path, side: str, kind: str | None, b: intake.Block, nblocks: int,
                source_kind: dict[str, str], out: list[PastedFile]) -> None:
    """One block of a paste, read by the kind its command names, else by detection, into ``out``."""
    if not b.command and all(intake.is_prompt(ln) for ln in b.text.split("\n") if ln.strip()):
        return  # only prompts of commands this does not read (cd, ls): no output to read
    where = f"line {b.line}: `{b.command[:60]}`" if b.command else (f"line {b.line}" if nblocks > 1 else "")
    bside = "target" if b.side == "container" else (b.side or side)  # 'host', or a node's name (pdsh's lines)
    k, how = kind, "named"
    if b.of_command:  # the command line's own variables or options: their kind whatever the file's
        k, how = b.kind, "command"
    if k is None and b.kind:
        k, how = b.kind, "command"
    if k is None and path.stem in source_kind:
        k, how = source_kind[path.stem], "file name"
    candidates = [k] if k else []
    if not candidates:
        ranked = parsers.scores(b.text)
        last = parsers.fallbacks(ranked)
        if last:  # every fallback kind that claims it: an exception line and a harmless warning are both read
            ranked = [(parsers.DETECT_MIN, kd) for kd in last]
        if not ranked or ranked[0][0] < parsers.DETECT_MIN:
            why = (f"`{b.command[:40]}` is not a command whose output this reads" if b.command else
                   "cannot tell what tool printed this; name the kind (see `troubleshooter parse --list`)")
            out.append(PastedFile(path, bside, None, {}, why, "", where))
            return
        top = ranked[0][0]
        candidates = [kd for sc, kd in ranked if top - sc < parsers.DETECT_MARGIN]
        how = "detected" if len(candidates) == 1 else "detected (several tools in one paste)"
    first = next((ln.strip() for ln in b.text.split("\n") if ln.strip()), "")
    shell_error = _SHELL_ERROR.match(first) if b.command else None
    if shell_error and re.search(r"\bnvidia-smi: command not found", first):
        # no nvidia-smi where it ran is itself evidence (a container the engine put no driver into): its kind reads it
        shell_error, candidates = None, ["nvidia-smi-status"]
    if shell_error:
        # the command never ran: what the shell said is the whole output
        out.append(PastedFile(path, bside, None, {}, f"the command did not run: {shell_error.group(0)[:200]}", how, where))
        return
    tried = set(candidates)
    failed = []
    text = b.text
    q = _QUERY_GPU.search(b.command or "")
    if candidates == ["nvidia-smi-csv"] and q and "noheader" in (b.command or ""):
        # a noheader CSV: its columns are the ones the command line asked for
        text = ", ".join(q.group(1).split(",")) + "\n" + b.text
    for kd in candidates:
        try:
            kt = intake.trim_prose(text) if kd in _EVERY_LINE_KINDS else text
            as_read = _as_read(kd, b, kt)
            facts = parsers.run(kd, as_read)
        except parsers.ParseError as exc:
            failed.append(PastedFile(path, bside, kd, {}, f"{kd}: {exc}", how, where))
            continue
        if b.of_command and kd == "env":
            # the variables a command line sets are not the whole environment: what it lacks is unknown
            facts = {n: v for n, v in facts.items() if n not in PARTIAL_ENV_DROPS}
        # what was read, command line included: logs of one side read together keep each run's command
        out.append(PastedFile(path, bside, kd, facts, "", how, where, text=as_read if kd in _ACCUMULATE else ""))
    if failed and how == "command" and failed[0].kind == "kmod" and not b.text.strip().strip("#$").strip():
        # `lsmod | grep X` that printed nothing: no loaded module matches X
        pats = grepped.grepped_words(b.command or "", "lsmod")
        if pats:
            out.append(PastedFile(path, bside, "kmod", {"kmod.not_loaded": pats}, "", "command (its grep printed "
                                  "nothing: not loaded)", where))
            failed = []
    if failed and how == "command" and failed[0].kind == "kernel-config":
        # `grep CONFIG_X= /boot/config-...` that printed no CONFIG_ line: the option is not enabled
        names = grepped.grepped_config_names(b.command or "")
        if names and not _CONFIG_LINE.search(b.text):
            facts = parsers.run("kernel-config", "".join(f"# {n} is not set\n" for n in names))
            out.append(PastedFile(path, bside, "kernel-config", facts, "", "command (its grep printed no "
                                  "line: not enabled)", where))
            failed = []
    if failed and how == "named" and b.kind and b.kind not in tried:
        # the file was named one kind and this block's command is another tool's (an `ethtool --show-fec` between
        # nccl-tests runs): the naming is kept, and the reason says how to have the block read
        failed = [dataclasses.replace(f, error=f"{f.error} (its command is {b.kind}'s: give the file without a kind "
                                                f"to read it)") for f in failed]
    if failed and how in ("command", "file name"):
        # the command (or the file's name) names a tool whose output is not there (a run that died before its
        # table; nvidia-smi's mismatch message saved as nvidia-smi.txt): the block is read as detection reads it
        ranked = [kd for sc, kd in parsers.scores(b.text) if sc >= parsers.DETECT_MIN and kd not in tried]
        named = "command's" if how == "command" else "file name's"
        for kd in ranked[:1]:
            tried.add(kd)
            try:
                out.append(PastedFile(path, bside, kd, parsers.run(kd, _as_read(kd, b, b.text)), "", f"detected (the {named} "
                                      f"{failed[0].kind} output is not there)", where))
                failed = []  # the block was read; the line above says which kind the command's name gave way to
            except parsers.ParseError:
                pass
    out += failed
    if how != "named":
        # lines another tool interleaves into this one's output (NCCL_DEBUG=INFO inside an nccl-tests run, a
        # Python traceback carrying NCCL's error, UCX warnings): their facts too
        for kd in INTERLEAVED:
            if kd in tried or parsers.get(kd).detect(b.text[:262144]) < parsers.DETECT_MIN:
                continue
            if kd == "dmesg" and not _KERNEL_WORDS.search(b.text[:262144]):
                continue  # bracketed timestamps alone (UCX's, a tool's) are no kernel log inside another output
            if kd == "cuda-errors" and not tried & _CUDA_BESIDE:
                continue
            tried.add(kd)
            try:
                out.append(PastedFile(path, bside, kd, parsers.run(kd, b.text), "", "interleaved", where,
                                      text=b.text if kd in _ACCUMULATE else ""))
            except parsers.ParseError:
                pass


#: outputs that only speak of NCCL's network and the job's RDMA / socket setup: the wrong-fabric tree's evidence
NCCL_FABRIC_KINDS = frozenset({"nccl-debug", "env", "ibstat", "ibstatus", "ib-sysfs", "ibv-devinfo", "rdma-link",
                               "ibdev2netdev", "show-gids", "ip-addr", "torch-distributed", "docker-run", "k8s-pod",
                               "job-script", "ucx", "limits", "roce-qos"})


def infer_symptom(facts: EvidenceFacts) -> str | None:
    """A symptom when the outputs make it clear; else the full sweep (below-reference)."""
    sides = set(facts.kinds_by_side)
    kinds = {k for d in facts.kinds_by_side.values() for k in d}
    if "host" in sides and "target" in sides and kinds & {"env", "topo-file-probe", "nccl-topo"}:
        return "host-ok-container-slow"
    shape = facts.lookup("steps.shape")
    if isinstance(shape, str) and shape in ("bimodal", "long-tail"):
        return "bimodal-step-time"
    if _nccl_failed(facts) and not any(_known(facts, n) for n in ("nccl_tests.busbw_at_max_size_gbps", "steps.shape")):
        return "nccl-fails"  # an error or a hang, not a measured slowdown
    if kinds and kinds <= NCCL_FABRIC_KINDS:
        return "nccl-wrong-fabric"
    return "below-reference"


def _nccl_failed(facts: EvidenceFacts) -> bool:
    """The outputs show NCCL (or NVSHMEM beside it) failing: its error lines, a framework's NCCL error class,
    nccl-tests stopping on an NCCL error, or NVSHMEM giving up at init."""
    for name in ("nccl.errors", "torch.nccl_error_kinds"):
        v = facts.lookup(name)
        if isinstance(v, list) and v:
            return True
    return _known(facts, "nccl_tests.nccl_error") or facts.lookup("nvshmem.init_failed") is True


def _known(facts: EvidenceFacts, name: str) -> bool:
    v = facts.lookup(name)
    return v is not None and not isinstance(v, Unknown)


class EvidenceTarget:
    """Stands in for a target when the facts come from pasted files (no live probes)."""

    kind = "evidence"
    is_live = False

    def __init__(self, facts: EvidenceFacts) -> None:
        self.facts = facts
        self.label = "pasted outputs (" + ", ".join(f.display for f in facts.files[:4]) + \
            (f", +{len(facts.files) - 4}" if len(facts.files) > 4 else "") + ")"

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "files": [str(f.path) for f in self.facts.files]}
