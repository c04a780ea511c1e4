"""What pasting does to a tool's output, undone (the cleaning half of :mod:`intake`): colour escapes (and colour
codes whose ESC a copy lost), CR line ends, Markdown fences and an issue template's HTML, mail and chat quote marks,
the prefix a launcher (srun -l, mpirun --tag-output, torchrun, Ray), a log viewer (docker compose, kubectl --prefix)
or a log collector (docker logs -t, kubectl --timestamps, CRI log files) writes before every line, notes a person
wrote at a line's end, and an indentation the whole paste shares. Only whole-line decorations go; values are never
rewritten, and line numbers stay the paste's.
"""

from __future__ import annotations

import collections
import re

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# colour codes whose ESC a copy lost: shown as U+FFFD ("�[36m", GitHub's rendering) or gone ("[36m(RayWorkerVllm
# pid=4773) [0m"); the bare form is taken only beside a bare reset ("[0m"), its telltale
_SGR_LOST = re.compile(r"\ufffd\[[0-9;?]*[ -/]*[@-~]")
_SGR_BARE = re.compile(r"\[(?:[0-9]{1,3}(?:;[0-9]{1,3}){0,4})?m")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)[\w+-]*\s*$")
# the HTML a ticket or an issue template wraps a log in, on lines of its own: <details>, <summary>Log</summary>, <pre>
_HTML_WRAP = re.compile(r"^\s*(?:</?(?:details|pre|code|br|p)\s*/?>|<summary>.{0,200}</summary>|</?summary>)\s*$",
                        re.IGNORECASE)
# launcher prefixes, one per line: Ray's "(worker1, rank=1, pid=27522, ip=10.105.0.4) ", Open MPI's [1,0]<stdout>:
# (with --timestamp-output the time ctime() prints before it, "Mon Feb 26 12:09:14 2018[1,0]<stderr>:", or before
# "<stdout>:" alone without --tag-output: orte/mca/iof/base), torchrun's "[rank4]:" (twice when a launcher wraps
# torchrun) and "[default0]:", srun -l's "0: "; pdsh's "host: " is left alone
_OMPI_STREAM = r"<std(?:out|err|diag)>:\s?"
_RANK_PREFIXES = (re.compile(r"^\((?:[\w.-]+,? )?(?:\w+=[^,()\s]+(?:, )?)+\)\s"),
                  re.compile(r"^(?:\[\d+,\d+\]|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}(?:\[\d+,\d+\])?)"
                             + _OMPI_STREAM),
                  re.compile(r"^\[(?:rank|default)\d+\]:\s?"), re.compile(r"^\[(?:rank|default)\d+\]:\s?"),
                  # (srun -l writes "0: " with its space; "86:00.0 ..." is lspci's bus address, not a rank)
                  re.compile(r"^\s{0,3}(\d{1,5})(?:: |:$)"))
_QUOTE = re.compile(r"^>[ ]?")
SRUN_LABEL = _RANK_PREFIXES[-1]  # srun -l's task label, the task in group 1
OMPI_TAG = re.compile(r"^\[\d+,(\d+)\]" + _OMPI_STREAM)  # mpirun --tag-output's [job,rank] (the second, its rank)
_TASK_LABELS = ((_RANK_PREFIXES[1], OMPI_TAG), (SRUN_LABEL, SRUN_LABEL))  # (the prefix stripped, its task label)
# the time a log collector writes before each line it keeps: `docker logs -t` and `kubectl logs --timestamps`
# (RFC 3339 with nanoseconds, "2026-12-04T10:00:00.123456789Z "), the node's CRI log files under /var/log/pods
# (then "stdout F " / "stderr P "), log exports with a UTC offset
_COLLECTOR_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)[ \t]"
                            r"(?:(?:stdout|stderr) [FP] )?")
# the name a log viewer writes before each line: docker compose's service ("trainer-1  | ", padded to the longest
# name), kubectl logs --prefix's pod and container ("[pod/trainer-worker-0/pytorch] "). Compose's services run on
# one machine: their names go whatever they are; pods of several names are several machines, cut apart by hostsplit
_COMPOSE = re.compile(r"^[A-Za-z0-9][\w.-]{0,127} +\|(?: |$)")
KUBECTL_PREFIX = re.compile(r"^\[pod/([a-z0-9][a-z0-9.-]{0,252})/[a-z0-9][a-z0-9-]{0,62}\] ?")  # Kubernetes' names
# "host prog[pid]: " after the time: a host's name in lower case or with a digit ("Configured with: " is a sentence),
# a program's starting with a letter ("Link 0: " is nvlink's line)
_HOST_PROG = r"((?=[^\s\[\]]*\d)[A-Za-z0-9][\w.-]*|[a-z][\w.-]*)[ \t]+[A-Za-z_][\w.@/-]*(?:\[\d+\])?:[ \t]"
_SYSLOG_REST = re.compile(_HOST_PROG)
# a whole syslog prefix (journalctl's "Dec 04 10:00:00 host prog[pid]: ", its -o short-iso, rsyslog's RFC 3339)
_SYSLOG_PREFIX = re.compile(r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
                            r"(?:Z|[+-]\d\d:?\d\d)?)[ \t]+" + _HOST_PROG + "?")
# a note a person wrote at a line's end, pointing at it ("...to 1.  # ← IB disabled by the environment",
# "Using network Socket   <-- here"): theirs, not the tool's, so it is not read into the line's value
_ARROW_NOTE = re.compile(r"(?<![ \t])[ \t]{2,}(?:#[ \t]*)?(?:←|⬅|👈|<-{1,3}|<={1,2})(?:[ \t].*)?$")


def _strip_collector_time(lines: list[str]) -> list[str]:
    """The log collector's time before each line, gone; a syslog's own time (its lines name one host: journalctl
    -o short-iso, rsyslog's RFC 3339) stays, for the kernel log's and the daemons' parsers to read."""
    hosts: dict[str, int] = {}
    stamped = 0
    for ln in lines:
        if (m := _COLLECTOR_TIME.match(ln)) is not None:
            stamped += 1
            if (h := _SYSLOG_REST.match(ln, m.end())) is not None:
                hosts[h.group(1)] = hosts.get(h.group(1), 0) + 1
    if not stamped or (hosts and 2 * max(hosts.values()) >= stamped):
        return lines
    return _strip_common_prefix(lines, _COLLECTOR_TIME)


def _strip_viewer_names(lines: list[str]) -> list[str]:
    """Compose's service names before the lines, gone (a few names over many lines: a table's first column differs
    from row to row); kubectl's pod prefix, gone when it names one pod."""
    pods = {m.group(1) for ln in lines if (m := KUBECTL_PREFIX.match(ln))}
    if len(pods) == 1:
        lines = _strip_common_prefix(lines, KUBECTL_PREFIX)
    names = collections.Counter(ln.split(" ", 1)[0] for ln in lines if _COMPOSE.match(ln))
    if names and (len(names) == 1 or 3 * len(names) <= sum(names.values())):  # a few services, many lines each
        lines = _strip_common_prefix(lines, _COMPOSE)
    return lines


def _strip_common_prefix(lines: list[str], pattern: re.Pattern[str]) -> list[str]:
    """Remove ``pattern`` from every line only when it starts most non-blank lines (so a value is never cut)."""
    body = [ln for ln in lines if ln.strip()]
    if not body:
        return lines
    hits = sum(1 for ln in body if pattern.match(ln))
    if hits < max(2, int(0.6 * len(body))):
        return lines
    return [pattern.sub("", ln, count=1) for ln in lines]


_NBSP = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2007": " "})


def clean(text: str) -> str:
    """What pasting did to the text, undone. Values are never rewritten: only whole-line decorations go."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    # a web page's or a word processor's no-break spaces (the tools print plain ones): plain again
    text = text.translate(_NBSP)
    text = _ANSI.sub("", text)
    if "\ufffd[" in text:
        text = _SGR_LOST.sub("", text)
    if "[0m" in text and len(_SGR_BARE.findall(text, 0, 1 << 20)) >= 2:
        text = _SGR_BARE.sub("", text)
    lines = text.split("\n")
    lines = ["" if _FENCE.match(ln) or _HTML_WRAP.match(ln) else ln for ln in lines]  # blank, not gone: line
    # numbers stay the paste's
    lines = _strip_common_prefix(lines, _QUOTE)
    for _ in range(4):  # wrappers nest in any order (srun -l around torchrun's [rank0]:, a time before either)
        before = lines
        lines = _strip_collector_time(_strip_viewer_names(lines))
        # mixed tasks keep their labels: hostsplit decides (merge_tasks)
        mixed = {prefix for prefix, label in _TASK_LABELS if interleaved_tasks(lines, label)}
        for pat in _RANK_PREFIXES:
            if pat not in mixed:
                lines = _strip_common_prefix(lines, pat)
        if lines == before:
            break
    # a fence inside what those prefixed (a quoted reply's "> ```", a log's own code block): blank too
    lines = ["" if _FENCE.match(ln) or _HTML_WRAP.match(ln) else ln for ln in lines]
    lines = [_ARROW_NOTE.sub("", ln) if ("←" in ln or "<-" in ln or "<=" in ln or "⬅" in ln or "👈" in ln) else ln
             for ln in lines]
    lines = [ln.rstrip(" \t") for ln in lines]  # the blanks a browser, a terminal or a ticket left at line ends
    return "\n".join(_dedent(lines))


def _dedent(lines: list[str]) -> list[str]:
    """A paste indented as a whole (a Markdown indented code block, a quote in an e-mail): the indentation every
    non-blank line shares goes, so a tool's own column-0 lines are at column 0 again. A single space is kept
    (aligned columns can start with one)."""
    body = [ln for ln in lines if ln.strip()]
    if len(body) < 2:
        return lines
    first = body[0]
    common = first[: len(first) - len(first.lstrip(" \t"))]
    for ln in body[1:]:
        while common and not ln.startswith(common):
            common = common[:-1]
        if not common:
            return lines
    if len(common) < 2 and common != "\t":
        return lines
    return [ln[len(common):] if ln.strip() else "" for ln in lines]


def without_syslog(text: str) -> str:
    """The text without the syslog prefix on its lines (time, host, program): a tool's output a service logged
    (``journalctl -u gpu-health`` of a timer that runs ``dcgmi diag``), read again this way when nothing read it as
    it is; the kernel's and the daemons' own logs are read with their prefix."""
    lines = text.split("\n")
    got = _strip_common_prefix(lines, _SYSLOG_PREFIX)
    return text if got is lines else "\n".join(_dedent(got))


def interleaved_tasks(lines: list[str], label: re.Pattern[str] = SRUN_LABEL) -> bool:
    """Output of two or more tasks (``srun -l``) or ranks (``mpirun --tag-output``) whose lines arrived mixed (a
    task's label again after another's): without the labels it would be their outputs run together line by line."""
    seen: set[str] = set()
    last, returns = None, 0
    for ln in lines:
        if (m := label.match(ln)) is None or m.group(1) == last:
            continue
        returns += m.group(1) in seen
        seen.add(last := m.group(1))
    return len(seen) >= 2 and returns >= 2


def merge_tasks(text: str) -> str:
    """The text with its task labels (srun -l, mpirun --tag-output) gone even where the tasks' lines are mixed (a
    job's log, each line its own), as :func:`clean` leaves them for :mod:`hostsplit` to cut apart when it can."""
    lines = got = text.split("\n")
    for prefix, _ in _TASK_LABELS:
        got = _strip_common_prefix(got, prefix)
    return text if got is lines else clean("\n".join(got))
