"""Making data safe to show: control characters escaped for a terminal, Rich markup escaped, XML 1.0's
forbidden characters replaced. Data (probed outputs, environment values, bundle labels) may hold anything;
what reaches a terminal must not be able to move the cursor, clear the screen, set the clipboard (OSC 52) or
open a hyperlink (OSC 8).

>>> escape_controls("a\\x1b]52;c;ZWNobwo=\\x07b\\n\\tc\\x9b2J")
'a\\\\x1b]52;c;ZWNobwo=\\\\x07b\\n\\tc\\\\x9b2J'
"""

from __future__ import annotations

import re

# C0 except newline and tab, DEL, C1; and the bidirectional overrides that reorder what a line shows
_CONTROLS = [c for c in range(0x20) if c not in (0x09, 0x0A)] + list(range(0x7F, 0xA0))
_BIDI = [0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_TABLE = ({c: f"\\x{c:02x}" for c in _CONTROLS} | {c: f"\\u{c:04x}" for c in _BIDI}
          | {c: "\ufffd" for c in range(0xD800, 0xE000)})  # lone surrogates (undecodable bytes) cannot be written
_TABLE_ONE_LINE = _TABLE | {0x0A: "\\n", 0x09: "\\t"}
_ANY_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# XML 1.0 allows #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF] (compiled at first use:
# ~3 ms, paid by every start-up when it was compiled at import)
_XML_BAD_PATTERN = "[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


def escape_controls(s: str, *, one_line: bool = False) -> str:
    """Every control character as a visible escape (``\\x1b``); newlines and tabs kept unless ``one_line``."""
    if not s:
        return s
    return s.translate(_TABLE_ONE_LINE if one_line else _TABLE)


def has_controls(s: str) -> bool:
    return bool(_ANY_CONTROL.search(s))


def markup(s: object) -> str:
    """Data to put inside a Rich markup string: controls escaped, ``[`` not read as a tag."""
    from rich.markup import escape

    return escape(escape_controls(str(s)))


def xml_text(s: object) -> str:
    """Text XML 1.0 can hold: controls escaped (visibly, as ``\\x1b``), other forbidden code points replaced."""
    return re.compile(_XML_BAD_PATTERN).sub("\ufffd", escape_controls(str(s)))  # re's cache keeps it
