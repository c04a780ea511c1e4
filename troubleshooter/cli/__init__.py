"""The headless command line: check, capture, parse, diagnose, export ... and the TUI when given no verb.

Machine output goes to stdout (``--json`` on every headless verb), diagnostics to stderr.
Exit codes: 0 ok, 1 something failed (a check, a root cause found for diagnose), 2 could not run.

One module per verb group; each has ``register(subparsers)``. A new verb group is one line in VERB_MODULES.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from troubleshooter import __version__
from troubleshooter.cli.common import _CURRENT, EXIT_CANNOT, EXIT_FAIL, EXIT_OK, CliError, _err, start  # noqa: F401

VERB_MODULES = ("troubleshooter.cli.probe", "troubleshooter.cli.diagnose", "troubleshooter.cli.session",
                "troubleshooter.cli.measure", "troubleshooter.cli.compare", "troubleshooter.cli.practice")
#: each verb's module, so that ``troubleshooter VERB ...`` imports and builds that module's parsers only (importing
#: every verb module cost `check --json` ~25 ms: the practice cases and yaml through cli.diagnose).
#: tests/test_cli.py checks it against what the modules register.
VERB_MODULE = {
    **dict.fromkeys(("check", "capture", "parse", "locate", "sources", "facts"), "troubleshooter.cli.probe"),
    **dict.fromkeys(("diagnose", "trees", "demo"), "troubleshooter.cli.diagnose"),
    **dict.fromkeys(("sessions", "export"), "troubleshooter.cli.session"),
    "measure": "troubleshooter.cli.measure",
    **dict.fromkeys(("compare", "fanout"), "troubleshooter.cli.compare"),
    "practice": "troubleshooter.cli.practice",
}


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors that describe bad input (a malformed tree, a bad bundle): one line, exit 2, no traceback."""
    from troubleshooter.probe.bundle import BundleError
    from troubleshooter.diagnosis.causes import CauseError
    from troubleshooter.diagnosis.checks import CheckError
    from troubleshooter.diagnosis.profiles import ProfileError
    from troubleshooter.yamlio import YamlError

    errs: list[type[BaseException]] = [BundleError, CauseError, CheckError, ProfileError, YamlError]
    try:
        from troubleshooter.diagnosis.engine import TreeError

        errs.append(TreeError)
    except ImportError:
        pass
    return tuple(errs)


# ------------------------------------------------------------------ main
def build_parser(modules: Sequence[str] = VERB_MODULES) -> tuple[argparse.ArgumentParser, set[str]]:
    """The parser and the names of its verbs (those of ``modules``; by default every verb's)."""
    p = argparse.ArgumentParser(
        prog="troubleshooter",
        description="Find why a GPU training cluster trains slower than its reference. "
        "With no verb, starts the interactive app.",
        epilog="The app: troubleshooter [--job J [--node N] [--container-name C]] [--exec PREFIX] [--bundle PATH] "
        "[--pid PID] [--resume [ID]] [--symptom ID] [--demo CASE] [--learn] [--profile ID] [--evidence FILE ...]. "
        "Every verb has --help.",
    )
    p.add_argument("--version", action="version", version=f"troubleshooter {__version__}")
    sub = p.add_subparsers(dest="verb", metavar="VERB")

    for mod in modules:
        importlib.import_module(mod).register(sub)
    return p, set(sub.choices)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:  # no verb, no option: the app, without building every verb's parser first (~12 ms of start-up)
        from troubleshooter.tui.entry import run_app

        return run_app(argv)
    if argv[0] in VERB_MODULE:  # the verb first, as argparse reads it: only its module's parsers are needed
        parser, verbs = build_parser((VERB_MODULE[argv[0]],))
    else:
        parser, verbs = build_parser()
    if not any(a in verbs for a in argv) and not {"-h", "--help", "--version"} & set(argv):
        from troubleshooter.tui.entry import run_app

        return run_app(argv)
    args = parser.parse_args(argv)
    if not args.verb:
        parser.print_help()
        return EXIT_CANNOT
    em = None
    try:
        em = start(args)
        return int(args.func(args) or 0)
    except CliError as exc:
        _err(str(exc))
        return EXIT_CANNOT
    except _user_errors() as exc:
        _err(str(exc))
        return EXIT_CANNOT
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug: one line for the user, the traceback on request
        import os
        import traceback

        if os.environ.get("TROUBLESHOOTER_DEBUG"):
            traceback.print_exc()
        _err(f"internal error: {type(exc).__name__}: {exc} (set TROUBLESHOOTER_DEBUG=1 for the traceback; "
             "please report it)")
        return EXIT_CANNOT
    finally:
        if em is not None and em in _CURRENT:
            _CURRENT.remove(em)
