"""What a ``grep`` in a pasted command line looked for: a grep that printed nothing then says what is absent
(``lsmod | grep nv_peer`` with no line: no such module loaded; ``grep CONFIG_X= /boot/config-...`` with no line:
the option is not enabled)."""

from __future__ import annotations

import re

from troubleshooter.parsers.base import shell_words


def grepped_words(command: str, tool: str) -> list[str]:
    """What ``TOOL | grep [-i] [-E] PATTERN`` looked for, the alternatives of the pattern split (``a|b``, ``a\\|b``).

    >>> grepped_words("lsmod | grep nv_peer", "lsmod"), grepped_words("lsmod | grep -E 'peermem|nv_peer'", "lsmod")
    (['nv_peer'], ['peermem', 'nv_peer'])
    """
    head, bar, tail = command.partition("|")
    if not bar or tool not in head.split() or "grep" not in tail:
        return []
    try:
        words = shell_words(tail)
    except ValueError:
        return []
    if "grep" not in words:
        return []
    words = words[words.index("grep") + 1:]
    words = words[:words.index("|")] if "|" in words else words
    pats = [w for w in words if not w.startswith("-")]
    if len(pats) != 1:
        return []
    return [p for p in re.split(r"\\\||\|", pats[0]) if re.fullmatch(r"[\w.-]+", p)]


def grepped_config_names(command: str) -> list[str]:
    """The kernel options a ``grep`` for exact names looks for (``grep CONFIG_X= FILE``, ``grep -E
    'CONFIG_A(_B)?='`` is not exact and gives none): an empty result then means each is not enabled.

    >>> grepped_config_names("zcat /proc/config.gz | grep CONFIG_ARM_SMMU_V3_SVA="), grepped_config_names("grep -E 'CONFIG_A(_B)?=' f")
    (['CONFIG_ARM_SMMU_V3_SVA'], [])
    """
    if "grep" not in command:
        return []
    tail = command.split("grep", 1)[1]
    try:
        words = shell_words(tail)
    except ValueError:
        return []
    pats = [w for w in words if not w.startswith("-") and "CONFIG_" in w]
    names = []
    for p in pats[:1] if pats else []:
        for alt in (p.split("\\|") if "\\|" in p else [p]):
            m = re.fullmatch(r"\^?(CONFIG_[A-Z0-9_]+)=?", alt)
            if not m:
                return []
            names.append(m.group(1))
    return names
