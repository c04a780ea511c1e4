"""Decision trees: loading, validation, and the walk from a symptom to root causes.

A tree file (``decision_trees/*.yaml``; schema in ``decision_trees/SCHEMA.md`` and
:data:`TREE_SCHEMA`) holds one tree: an entry tree for a symptom (``kind: entry``) or a shared subtree
(``kind: subtree``) that entry trees ``call``. Node kinds:

- ``ask``: a question with choices, each with an explanation and a next node.
- ``probe``: run named sources (on the job's side, or also on the host side), then take the first branch
  whose condition is true; ``unknown`` is taken when a condition could not be decided because facts are
  unknown, ``default`` when every condition is false.
- ``conclude``: a root cause with evidence facts, fix commands (templates filled with shell-quoted facts),
  the verify command, caution and references; may continue (``next``) to look for further causes, since
  gaps are cumulative.
- ``call``: walk a subtree, then continue at ``next``.
- ``end``: stop (or return from a subtree).

Branches and choices may ``rule_in`` / ``rule_out`` hypotheses; the walk keeps the hypotheses table.
"""

from __future__ import annotations

from troubleshooter.diagnosis.engine.schema import (  # noqa: F401
    FIX_CONTEXTS, FIX_NEEDS, NEED_WANTS, NODE_KINDS, PROBE_NEEDS, TREE_SCHEMA, Tree, TreeError, _SCHEMA_KEYWORDS, _conforms, _load_doc, _schema_keywords, load_tree, tree_files,
)
from troubleshooter.diagnosis.engine.cache import (  # noqa: F401
    _decode_mapping, _encode_doc, load_trees,
)
from troubleshooter.diagnosis.engine.text import (  # noqa: F401
    GLOSSARY_LINK, CASE_REF, display, fill, linked_terms, load_glossary, plain_text, strip_case_refs, strip_links, template_facts,
)
from troubleshooter.diagnosis.engine.walk import (  # noqa: F401
    Choice, Conclusion, Engine, FactSource, HYP_STATES, Hypothesis, MissingAnswer, Question, Step, Walk, auto_walk,
)
