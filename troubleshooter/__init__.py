"""troubleshooter: find why a GPU training cluster trains slower than its reference.

The core (sources, targets, evidence, parsers, facts, engine, session, export) never imports Textual;
the TUI in :mod:`troubleshooter.tui` is one front end over it, the headless CLI another.
"""

__version__ = "0.1.0"
