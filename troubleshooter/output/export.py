"""Exports of a diagnosis: the ticket (Markdown that pastes well into GitHub, GitLab and Jira) and JSON.

Everything passes through the redactor first. The Markdown uses only what all three render: headings,
bold, lists, tables with a header row, fenced code blocks.
"""

from __future__ import annotations

import json
import time
from typing import Any

from troubleshooter.diagnosis.engine import Conclusion, Hypothesis, Step
from troubleshooter.output.redact import DEFAULT, Redactor
from troubleshooter.output.summary import counts, headline, settle_lines

clock = time.time  # tests and screenshots freeze it

NEEDS_TEXT = {"root": "root", "reboot": "a reboot", "bios": "a BIOS/firmware change", "job-script": "a change of the job script",
              "hypervisor": "the hypervisor / host admin", "drain": "draining the node", "none": "nothing special"}
STATE_MARK = {"ruled-in": "ruled in", "ruled-out": "ruled out", "untested": "untested",
              "suspected": "possible (the outputs point here; untested)",
              "not-applicable": "not applicable here"}


def _cell(text: Any) -> str:
    """Text for a Markdown table cell: a '|' would end the cell, and '<training pid>' would be read as an HTML
    tag and vanish (GitHub, rich), so both are backslash-escaped (CommonMark renders them as typed)."""
    return _prose(str(text).replace("|", "\\|").replace("\n", " "))


def _prose(text: str) -> str:
    return text.replace("<", "\\<")


def diagnosis_doc(*, symptom: dict[str, str], target: dict[str, Any], profile: str, steps: list[Step],
                  hypotheses: list[Hypothesis], conclusions: list[Conclusion], evidence: dict[str, dict[str, str]],
                  missing: list[dict[str, str]] | None = None, extra: dict[str, Any] | None = None,
                  redactor: Redactor = DEFAULT) -> dict[str, Any]:
    doc = {
        "schema": "troubleshooter.diagnosis/1",
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(clock())),
        "symptom": symptom,
        "target": target,
        "profile": profile,
        "root_cause_found": bool(conclusions),
        "headline": headline(len(conclusions), counts(hypotheses)),
        "hypothesis_states": counts(hypotheses),
        "conclusions": [c.as_dict() for c in conclusions],
        "hypotheses": [h.as_dict() for h in hypotheses],
        "path": [s.as_dict() for s in steps],
        "evidence": evidence,
        "missing_evidence": missing or [],
    }
    if extra:
        doc.update(extra)
    return redactor.obj(doc)


def to_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, default=str)


def _evidence_name(key: str) -> str:
    """``SMMU command-queue time [`perf.smmu_cmdq_pct`]``: the plain name, the fact name kept in code."""
    from troubleshooter.diagnosis.plain import evidence_label

    text = evidence_label(key)
    head, sep, name = text.rpartition(" [")
    return f"{head} (`{name[:-1]}`)" if sep else f"`{text}`"


def to_markdown(doc: dict[str, Any]) -> str:
    out: list[str] = []
    sym = doc["symptom"]
    kind = "Failing training" if sym.get("id") == "nccl-fails" else "Slow training"  # an error or a hang, not a slowdown
    if doc.get("symptom_inferred") and sym.get("id") == "below-reference":
        # nobody said the training is slow: the outputs were read against every check
        out.append("## Pasted outputs: every check (no symptom given)")
    else:
        out.append(f"## {kind}: {sym.get('title', sym.get('id', '?'))}")
    out.append("")
    tgt = doc.get("target", {})
    out.append(f"- **Where:** {tgt.get('label', '?')}")
    if doc.get("symptom_inferred"):
        took = (", so the outputs were read against every check (the below-reference sweep)"
                if sym.get("id") == "below-reference" else f"; the outputs show: {sym.get('title', sym.get('id', '?'))}")
        out.append(f"- **Symptom:** none given{took}. Choose one with `--symptom` (`troubleshooter trees list`), or on the app's symptom list")
    for line in doc.get("context", []) or []:
        out.append(f"- {line}")
    out.append(f"- **Reference profile:** {doc.get('profile', 'generic')}")
    out.append(f"- **Diagnosed:** {doc.get('created_at', '')} with troubleshooter")
    for a in doc.get("assumed") or []:
        out.append(f"- **Assumed:** {a}")
    for n in doc.get("noted") or []:
        out.append(f"- **Noted:** {_prose(str(n))}")
    for n in doc.get("not_given") or []:
        out.append(f"- **Not given:** {n.get('what', n.get('need', '?'))} (rerun: "
                   + " or ".join(f"`{r}`" for r in n.get("rerun", [])) + ")")
    out.append("")
    concl = doc.get("conclusions", [])
    hyps = doc.get("hypotheses", [])
    head = doc.get("headline") or headline(len(concl), counts(hyps))
    if concl:
        out.append(f"### {head}")
        out.append("")
        for i, c in enumerate(concl, 1):
            out.append(f"#### {i}. {c['title']} (`{c['cause']}`)")
            out.append("")
            if c.get("summary"):
                out.append(c["summary"])
                out.append("")
            if c.get("evidence"):
                from troubleshooter.diagnosis.plain import split_evidence, uncollected_line

                known, uncollected = split_evidence(c["evidence"])
                if known:
                    out.append("| evidence | value |")
                    out.append("|---|---|")
                    for k, v in known.items():
                        out.append(f"| {_cell(_evidence_name(k))} | {_cell(v)} |")
                    out.append("")
                if uncollected:
                    out.append(_cell(uncollected_line(uncollected, _evidence_name)))
                    out.append("")
            for fx in c.get("fixes", []):
                needs = ", ".join(NEEDS_TEXT.get(n, n) for n in fx.get("needs", []))
                ctx = f" ({fx['context']})" if fx.get("context") not in (None, "any") else ""
                out.append(f"**Fix{ctx}: {fx['title']}**" + (f" (needs {needs})" if needs else ""))
                out.append("")
                out.append("```sh")
                out.append(fx["command"])
                out.append("```")
                if fx.get("note"):
                    out.append(f"_{fx['note']}_")
                out.append("")
            v = c.get("verify") or {}
            if v.get("command"):
                out.append("**Verify:**")
                out.append("")
                out.append("```sh")
                out.append(v["command"])
                out.append("```")
                if v.get("explain"):
                    out.append(v["explain"])
                out.append("")
            if c.get("caution"):
                out.append(f"> **Caution:** {c['caution']}")
                out.append("")
            if c.get("recovered"):
                out.append(f"Reference recovery: {c['recovered']}")
                out.append("")
            if c.get("references"):
                out.append("References: " + "; ".join(c["references"]))
                out.append("")
            if c.get("missing_facts"):
                out.append(f"_Placeholders to fill by hand: {', '.join(c['missing_facts'])}_")
                out.append("")
    else:
        out.append(f"### {head}")
        out.append("")
        lines = settle_lines(hyps)
        if lines:
            out.append("Untested here, and the output that would settle each:")
            out.append("")
            out += [f"- {ln}" for ln in lines]
            out.append("")
    verifs = doc.get("verifications") or []
    if verifs:
        out.append("### Verification (before / after the fix)")
        out.append("")
        out.append("| cause | result | before | after |")
        out.append("|---|---|---|---|")
        for v in verifs:
            result = {True: "fixed", False: "still failing", None: "could not tell"}.get(v.get("passed"), "?")
            if v.get("replay"):
                result += " (replayed capture)"
            before = "; ".join(f"{k}={x}" for k, x in (v.get("before") or {}).items())
            after = "; ".join(f"{k}={x}" for k, x in (v.get("after") or {}).items())
            out.append(f"| `{v.get('cause', '')}` | {result} | {_cell(before)} | {_cell(after)} |")
        out.append("")
    if doc.get("waterfall"):
        out.append("### Where the gap went, fix by fix")
        out.append("")
        out.append("```")
        out.append(doc["waterfall"].rstrip())
        out.append("```")
        out.append("")
    if hyps:
        out.append("### Hypotheses")
        out.append("")
        out.append("| hypothesis | state | why |")
        out.append("|---|---|---|")
        for h in hyps:
            out.append(f"| {_cell(h['title'])} | {STATE_MARK.get(h['state'], h['state'])} | {_cell(h.get('evidence', '') or h.get('settle', ''))} |")
        out.append("")
    missing = doc.get("missing_evidence") or []
    if missing and concl:  # without a cause, the headline section already lists them
        out.append("### Evidence that would settle what is open")
        out.append("")
        for m in missing:
            out.append(f"- {m.get('hypothesis', '')}: attach `{m.get('command', '')}`" + (f" ({m['why']})" if m.get("why") else ""))
        out.append("")
    path = doc.get("path", [])
    if path:
        out.append("<details><summary>Path taken</summary>")
        out.append("")
        for i, s in enumerate(path, 1):
            line = f"{i}. **{_prose(s['title'])}**"
            if s.get("because"):
                line += f": {_prose(s['because'])}"
            out.append(line)
            if s.get("explain"):
                out.append(f"   - {s['explain']}")
            for k, v in (s.get("facts") or {}).items():
                if s["kind"] == "probe":
                    out.append(f"   - `{k}` = {v}")
        out.append("")
        out.append("</details>")
        out.append("")
    ev = doc.get("evidence", {})
    if ev:
        out.append("<details><summary>Evidence collected</summary>")
        out.append("")
        out.append("| side | source | status |")
        out.append("|---|---|---|")
        for side, items in ev.items():
            for sid, status in items.items():
                out.append(f"| {side} | `{sid}` | {_cell(status)} |")
        out.append("")
        out.append("</details>")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
