"""Practice-case references in tree and check text ('(case 2)'), dropped from what a real node's steps and tickets
show. Its own module: `check` strips them from its checks' text without importing the decision-tree engine
(~12 ms of its start-up)."""

from __future__ import annotations

import re

CASE_REF = re.compile(r"\s*\((?:as in )?case \d\b[^()]*\)", re.I)


def strip_case_refs(text: str) -> str:
    """'~4% of step time (case 2)' -> '~4% of step time': no practice case in a real node's steps or tickets."""
    return CASE_REF.sub("", text or "")
