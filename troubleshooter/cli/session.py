"""Verbs over saved sessions: sessions (list), export (a session to a ticket, JSON or bundle)."""

from __future__ import annotations

import argparse

from troubleshooter import locations
from troubleshooter.cli.common import EXIT_OK, CliError, emitter, fit


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("sessions", help="list saved sessions (newest first)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_sessions)

    c = sub.add_parser("export", help="export a session as a ticket (Markdown) or JSON",
                       description="Export a saved session (see `troubleshooter sessions`; 'latest' for the newest). "
                       "Secrets are redacted unless --no-redact.")
    c.add_argument("session", nargs="?", default="latest", help="session id (or a unique part of it), default latest")
    c.add_argument("--format", choices=("md", "json"), default="md")
    c.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    c.add_argument("--no-redact", action="store_true", help="keep secrets (only when you are sure)")
    c.add_argument("--json", action="store_true", help="same as --format json")
    c.set_defaults(func=cmd_export)


def cmd_sessions(args: argparse.Namespace) -> int:
    from troubleshooter import session

    em = emitter(args)
    infos = session.list_sessions()
    if args.json:
        em.json([i.as_dict() for i in infos])
        return EXIT_OK
    if not infos:
        em.line("no sessions yet (start one with `troubleshooter`)", err=True)
        return EXIT_OK
    for i in infos:
        causes = ", ".join(i.conclusions) or "-"
        em.line(fit(f"{i.id}  {i.created}  {i.status:9}  {i.symptom:24}  {causes}  [{i.target}]"))
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from troubleshooter.output import export
    from troubleshooter.session import Session, SessionError

    em = emitter(args)  # redacts unless --no-redact, with the settings' redact_extra

    try:
        s = Session.open(args.session)
        evs, lost = s.events()
    except SessionError as exc:
        raise CliError(str(exc)) from exc
    snap = next((e for e in reversed(evs) if e.get("event") == "snapshot"), None)
    if snap is None:
        # interrupted before any conclusion: build what we know from the journal
        start = evs[0]
        steps = [e["step"] for e in evs if e.get("event") == "step"]
        doc = {"schema": "troubleshooter.diagnosis/1", "symptom": {"id": start.get("symptom"), "title": start.get("symptom_title", "")},
               "target": {"label": start.get("target_label", "?")}, "profile": start.get("profile", "generic"),
               "created_at": "", "conclusions": [], "hypotheses": [], "path": steps, "evidence": {},
               "note": "session ended before reaching a conclusion"}
    else:
        doc = snap["doc"]
    verifs = [{k: v for k, v in e.items() if k not in ("event", "at")} for e in evs if e.get("event") == "verify"]
    if verifs:
        doc["verifications"] = verifs
    if lost:
        doc["journal_lost_lines"] = lost
    doc["session"] = s.id
    doc = em.clean(doc, keep={"session"})  # the key "session" looks like a secret's name: it is ours
    fmt = "json" if args.json else args.format
    if fmt == "json":
        text = em.json_text(doc, keep={"session"})
    else:
        text = em.safe(export.to_markdown(doc))  # a ticket: controls escaped, as on the terminal
    if args.output:
        try:
            locations.write_private(args.output, (text if text.endswith("\n") else text + "\n").encode("utf-8"))
        except OSError as exc:  # the old file, if any, is untouched: the new one is renamed over it
            raise CliError(str(exc)) from exc
        em.line(args.output)
    else:
        em.out.write(text if text.endswith("\n") else text + "\n")
    return EXIT_OK
