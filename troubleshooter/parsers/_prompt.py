"""Shell prompts as people paste them, one pattern builder for every reader that cuts a transcript at its prompts
(the intake's splitter, and the kinds that read a transcript of their own: slurm-conf, nvidia-smi-status).

A prompt: ``user@host:dir$`` / ``root@host:/#`` / ``[user@host dir]$`` (``[ ~]#``: user@host cut out) /
after an optional ``(venv)`` /
bash's default ``sh-4.2$`` or ``bash-5.1#`` (zsh's ``zsh-5.8%`` too) / oh-my-zsh's default theme ``➜  ~`` or
``➜  repo git:(main) ✗`` / Singularity's and Apptainer's container shell ``Singularity>`` (group ``cshell``: the
command ran inside a container); where the reader allows it, a lone ``$`` (or ``#``, ``%``) and a host's name
alone before ``$`` or ``%`` (``casper$``). Groups: ``label`` (the
venv), ``who``/``host`` (or ``who2``/``host2`` in brackets), and ``cmd`` when a command must follow.
"""

from __future__ import annotations

import re

_LEAD = r"^\s{0,4}(?:\((?P<label>[\w.-]+)\)\s*)?"
_USER = r"(?P<who>[\w.-]+@(?P<host>[\w.-]+))(?::[^\s$#]*)?\s?[$#]"
_BRACKETS = r"\[(?P<who2>[\w.-]+@(?P<host2>[\w.-]+))[^\]]*\][$#]"
_REDACTED = r"\[ ?~[\w/.-]*\][$#]"  # the bracket prompt with user@host cut out before posting: "[ ~]#", "[~/src]$"
_SH = r"(?:ba|z)?sh-\d+(?:\.\d+)*[$#%]"
_ZSH = r"➜\s+(?:~\S*|/\S*|[\w.-]+)(?:\s+git:\([^)\s]*\))?(?:\s+✗)?"
_CONTAINER_SHELL = r"(?P<cshell>Singularity|Apptainer)>"
# a prompt of the host's name alone, as csh/tcsh and many site profiles print it: "casper$ ", "login1% "
_HOST_ONLY = r"[A-Za-z][\w.-]{0,40}[$%]"
_THEN = {"command": r"\s+(?P<cmd>\S.*)$", "space": r"\s", "nothing": r"\s*$"}


def prompt(lone: str = "", then: str = "command") -> re.Pattern[str]:
    """The pattern of a prompt at a line's start. ``lone``: the characters accepted as a prompt on their own
    (``"$#%"`` in a transcript; ``"$"`` where ``#`` starts a comment, as in a conf file; ``""`` for none).
    ``then``: ``command`` (a command follows, group ``cmd``), ``space`` (whitespace follows), ``nothing`` (the line
    ends: a prompt with nothing typed, which a lone character never is)."""
    alts = [_USER, _BRACKETS, _REDACTED, _SH, _ZSH, _CONTAINER_SHELL]
    if lone and then != "nothing":
        alts.append("[" + re.escape(lone) + "]")
        if "$" in lone:
            alts.append(_HOST_ONLY)
    return re.compile(_LEAD + "(?:" + "|".join(alts) + ")" + _THEN[then])
