"""Lines a terminal, a mail client or a ticket system wrapped at a fixed width, joined again (issue 15: "lines
re-wrapped by a ticket system"); and whether the joined text reads more than the text as it is, which decides.

Joining is a guess: a table's rows of one width, a banner, a log's longest line before a record of another shape look
like wrapped lines too. So the joined text is read beside the text as pasted (by :mod:`pasted` and ``parse``) and
taken only where it reads more: every fact read as before (or, where the wrapping is plain to see, completed) and
more. Values are never rewritten otherwise.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from typing import Any

#: a line's first characters with its digits as 0: the way a tool's records start ("[ 0000.0", "node00:", "kernel")
_SHAPE = str.maketrans(dict.fromkeys("0123456789", "0"))
# more lines than a terminal's copy, a mail or a ticket holds: a log saved from the job, which nothing wrapped (and
# reading it a second time would double the time a long log takes)
_PASTE_MAX = 10_000
_WRAP_MIN = 60  # narrower than any terminal or mail client wraps at: such short lines are a tool's own
_RULE = re.compile(r"^\s*([-=_*#~+])\1{3,}\s*$")  # a rule a tool draws between its messages, a line of its own
_GAP = re.compile(r"\S {3,}(?=\S)")  # the blanks between a table's columns
_MAIL_MAX = 80  # the widest a mail client or a ticket wraps at (72, 76, 78, 80)
_WORD = 12  # a mail client's line ends this near its width, mostly: the next word did not fit


def _start_shape(line: str) -> str:
    return line[:6].translate(_SHAPE)


@dataclasses.dataclass(frozen=True)
class Unwrapped:
    """A text with its wrapped lines joined. ``sure`` where the wrapping is plain to see: a terminal's cuts at its
    width in mid-word, or a mail client's or a ticket's at 80 columns or fewer (a tool's own lines run longer)."""

    text: str
    sure: bool


def unwrapped(text: str) -> list[Unwrapped]:
    """The text with the lines a terminal, a mail client or a ticket system wrapped at a fixed width joined again,
    each way it may have been wrapped (none when it shows no wrapping). One is read in place of ``text`` only where it
    reads more (see :mod:`pasted`): joining is a guess, the reading decides.

    The width is the longest line's. A line is taken for a wrap where the next line's first word would have
    overflowed it, and the next line starts unlike the records of the text (a record starts where its first word
    would have fitted on the line before: "[ 1234.5" of a kernel log, "host:pid:tid" of NCCL's), is no rule and is
    not indented (a terminal's cut before a space aside); and where a run of such lines ends in a shorter piece (a
    table's rows, all of the width, end in none). A terminal cuts at the width exactly, in the middle of words:
    those pieces are joined as they are; a mail client or a ticket cuts at the spaces: joined with one."""
    lines = text.split("\n")
    body = [ln for ln in lines if ln]
    if not 3 <= len(body) <= _PASTE_MAX:
        return []
    width = max(map(len, body))
    if width < _WRAP_MIN or 4 * sum(len(_GAP.findall(ln)) >= 2 for ln in body) >= len(body):
        return []  # short lines are a tool's own; a table's rows, cut, are not joined (its columns would shift)

    def fits(a: str, b: str) -> bool:  # b's first word would have fitted on line a: b starts a line of its own
        return len(a) + 1 + len(b.lstrip().split(" ", 1)[0]) <= width

    pairs = list(itertools.pairwise(lines))
    starts = {_start_shape(b) for a, b in pairs if b and (not a or fits(a, b))} | {_start_shape(body[0])}
    cut = {i for i, (a, b) in enumerate(pairs)
           if a and b.strip() and not fits(a, b) and _start_shape(b) not in starts and not _RULE.match(a)
           and not _RULE.match(b)
           and (b[0] not in " \t" or len(a) == width and b[1:2] not in (" ", "\t"))}  # a terminal's cut at a space
    wraps: list[int] = []
    i = 0
    while i < len(lines):
        j = i
        while j in cut:
            j += 1
        if j > i and len(lines[j]) < width - 1:  # a run of full lines, then the last, shorter piece
            wraps.extend(range(i, j))
        i = j + 1
    if len(wraps) < 2:
        return []
    full = sum(len(lines[k]) == width for k in wraps)
    spaced = sum(len(lines[k]) == width - 1 for k in wraps)  # cut at a space the paste's line ends lost
    # a terminal cuts at its width, nowhere else (a shorter line before an odd start is a record of its own there)
    near = sum(width - _WORD <= len(lines[k]) < width - 1 for k in wraps)  # where a mail client's cuts fall
    terminal = full >= 1 and 3 * near <= full and spaced <= full
    sure = width <= _MAIL_MAX or terminal and full >= 2
    mail = _joined(lines, {k: "" if lines[k + 1][0] == " " else " " for k in wraps}, sure)
    if not terminal:
        return [mail]
    cuts = [k for k in wraps if len(lines[k]) >= width - 1]
    tty = _joined(lines, {k: "" if len(lines[k]) == width or lines[k + 1][0] == " " else " " for k in cuts}, sure)
    # cuts at the width: a terminal's, or a mail client's whose words ended there; both are read, a terminal's first
    # unless a cut fell where only a mail client's does
    return [tty, mail] if near == 0 else [mail, tty]


def _joined(lines: list[str], glue: dict[int, str], sure: bool) -> Unwrapped:
    """``lines`` with each line ``k`` in ``glue`` and the next made one, ``glue[k]`` between them."""
    out: list[str] = []
    for i, ln in enumerate(lines):
        if i - 1 in glue:
            out[-1] += glue[i - 1] + ln
        else:
            out.append(ln)
    return Unwrapped("\n".join(out), sure)


def reads_more(facts: dict[str, Any], was: dict[str, Any], *, wrapped: bool) -> bool:
    """Whether ``facts`` (read from the text with its lines joined) read more than ``was`` (read from it as it is):
    every fact of ``was`` still read, each the same, and facts more. Where the text is surely wrapped (``wrapped``: a
    terminal cut lines at its width in mid-word, or a mail client at most 80 columns) a fact may also be completed: a
    value cut at the wrap, read whole (:func:`covers`)."""
    if not was.keys() <= facts.keys():
        return False
    if wrapped:
        return (any(k not in _LAYOUT_COUNTS and _bare(facts[k]) != _bare(was.get(k)) for k in facts)
                and all(k in _LAYOUT_COUNTS or covers(facts[k], v) for k, v in was.items()))
    return was.keys() < facts.keys() and all(repr(facts[k]) == repr(v) for k, v in was.items())


#: facts that count the lines of the text, not anything of the machine: joining wrapped lines changes them
_LAYOUT_COUNTS = frozenset({"dmesg.lines"})


def _bare(value: Any) -> str:  # a value without its blanks: pieces joined with a space or without are the same
    return "".join(repr(value).split())


def covers(new: Any, old: Any) -> bool:
    """``new`` holds all of ``old``: the same, or what a wrap cut ``old`` from (a string inside the whole line, its
    blanks aside; a number's first digits; an unknown now known), item by item in a list (a wrap's two pieces may be
    one item now) or a mapping."""
    if old is None or new == old:
        return True
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and covers(new[k], v) for k, v in old.items())
    if isinstance(old, (list, tuple)):
        return isinstance(new, (list, tuple)) and all(any(covers(n, o) for n in new) for o in old)
    if isinstance(old, str):  # blanks aside: a parser may have joined the wrapped pieces itself, with a space
        return isinstance(new, str) and "".join(old.split()) in "".join(new.split())
    if isinstance(old, (int, float)) and not isinstance(old, bool):
        return type(new) is type(old) and str(new).startswith(str(old))
    return False
