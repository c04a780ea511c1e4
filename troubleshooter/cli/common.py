"""What every verb shares: exit codes, the user-facing error, target options and their parsing."""

from __future__ import annotations

import argparse

from troubleshooter.probe.targetspec import add_target_options  # noqa: F401 (the verbs' shared options)

EXIT_OK, EXIT_FAIL, EXIT_CANNOT = 0, 1, 2


class CliError(Exception):
    """A user-facing error: printed as one line on stderr, exit 2."""


def _err(msg: str) -> None:
    """One line on stderr, through the verb's emitter (redacted, control characters escaped)."""
    emitter(None).error(msg)


_CURRENT: list = []  # the emitter of the verb running now (main() makes it)


def emitter(args: argparse.Namespace | None = None):
    """The verb's :class:`~troubleshooter.output.emit.Emitter`: everything a verb shows goes through it."""
    from troubleshooter.output.emit import Emitter

    em = getattr(args, "out", None) if args is not None else None
    if em is None:
        em = _CURRENT[-1] if _CURRENT else Emitter(redactor=_default_redactor())
    return em


def _default_redactor():
    from troubleshooter.output.redact import Redactor

    return Redactor()


def start(args: argparse.Namespace):
    """Make the verb's emitter (``--no-redact`` turns redaction off for that verb only)."""
    from troubleshooter.output.emit import Emitter

    em = Emitter(redact=not getattr(args, "no_redact", False))
    args.out = em
    _CURRENT.append(em)
    return em


def make_target(args: argparse.Namespace):
    from troubleshooter.probe.targets import make_target as mk

    errors: tuple[type[BaseException], ...] = (ValueError,)
    if getattr(args, "bundle", None):  # only a bundle can raise BundleError (tarfile and all, ~2 ms, otherwise)
        from troubleshooter.probe.bundle import BundleError

        errors = (BundleError, ValueError)
    try:
        return mk(bundle=getattr(args, "bundle", None), job=args.job, node=args.node,
                  container_name=args.container_name, exec_prefix=args.exec_prefix)
    except errors as exc:
        raise CliError(str(exc)) from exc


def make_params(args: argparse.Namespace, target=None):
    from troubleshooter.sources import Params

    params = Params(pid=getattr(args, "pid", None))
    if getattr(args, "job", None):
        params.extra["job"] = args.job
    for opt in ("steps_log", "nccl_log", "nccl_tests_dir"):
        if getattr(args, opt, None):
            params.extra[opt] = getattr(args, opt)
    if target is not None and getattr(target, "kind", "") == "bundle":
        saved = target.bundle.params
        if params.pid is None and saved.get("pid"):
            params.pid = saved["pid"]
    return params


def fit(line: str, width: int | None = None) -> str:
    """One listing line cut to the terminal's width with a visible "…" (human listings only: ``--json`` is
    never cut). Without a terminal, 80 columns, unless COLUMNS says otherwise."""
    import shutil

    width = width or shutil.get_terminal_size((80, 24)).columns
    return line if len(line) <= width else line[: max(width - 1, 10)] + "…"
