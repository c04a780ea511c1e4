"""Text in trees: glossary links (``[[term]]``), fact templates (``{fact}``, ``{host:fact}``) filled shell-quoted.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any, Callable

from troubleshooter.diagnosis.caserefs import CASE_REF, strip_case_refs  # noqa: F401  (the engine's names)
from troubleshooter.model import facts as factmod
from troubleshooter import locations, yamlio
from troubleshooter.model.facts import Unknown, format_value

def load_glossary(directory: Path | None = None) -> dict[str, dict[str, Any]]:
    p = (directory or locations.trees_dir()) / "glossary.yaml"
    if not p.exists():
        return {}
    data = yamlio.load(p)
    terms = data.get("terms", {}) if isinstance(data, dict) else {}
    return {str(k).lower(): dict(v, term=str(k)) for k, v in terms.items()}


GLOSSARY_LINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")


def strip_links(text: str) -> str:
    """'[[C-state]]' -> 'C-state', '[[QP|queue pairs]]' -> 'queue pairs'."""
    return GLOSSARY_LINK.sub(lambda m: m.group(2) or m.group(1), text or "")


#: a practice-case reference in tree text: "(case 2)", "(case 3: the residual gap was a version difference)",
#: "(as in case 2)". Trees write every such reference as one parenthetical, so it can be left out of real
#: steps and tickets and kept where a trainee practises on the case (tests/test_trees.py holds them to it).
def plain_text(text: str, practice: bool = False) -> str:
    """Tree text as shown: glossary links as their words; practice-case references only when practising."""
    text = strip_links(text)
    return text if practice else strip_case_refs(text)


def linked_terms(text: str) -> list[str]:
    return [m.group(1).strip() for m in GLOSSARY_LINK.finditer(text or "")]


# ---------------------------------------------------------------------------- templates
_TEMPLATE = re.compile(r"\{(?:(host|target):)?([a-z][\w.*-]*)\}")


def template_facts(text: str) -> list[tuple[str, str]]:
    return [(m.group(2), m.group(1) or "target") for m in _TEMPLATE.finditer(text or "")]


def fill(template: str, lookup: Callable[[str, str], Any]) -> tuple[str, list[str]]:
    """Fill ``{fact}`` / ``{host:fact}`` with shell-quoted values. Returns the text and the facts missing."""
    missing: list[str] = []

    def sub(m: re.Match) -> str:
        side = m.group(1) or "target"
        v = lookup(m.group(2), side)
        if isinstance(v, Unknown) or v is None:
            missing.append(m.group(2))
            return f"<{m.group(2)}>"
        if isinstance(v, (list, tuple)):
            v = ",".join(str(x) for x in v)
        elif isinstance(v, bool):
            v = "1" if v else "0"
        return shlex.quote(str(v))

    return _TEMPLATE.sub(sub, template or ""), missing


def display(name: str, value: Any) -> str:
    """A fact's value for people: unknown env vars read as unset; other unknowns keep their reason."""
    if isinstance(value, Unknown):
        if name.startswith(("env.var.", "nccl_conf.var.", "kernel.")) and value.reason.startswith("not in the output"):
            return "(not set)"
        return str(value)
    s = factmod.spec(name)
    return format_value(value, s.unit if s else "")


