"""Rendering check results and context for the terminal, JSON and JUnit (no Textual here)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # rich is imported where text is drawn, not by `check --json` (~30 ms of start-up)
    from rich.console import Console
    from rich.table import Table

from troubleshooter.diagnosis.checks import VERDICTS, CheckResult
from troubleshooter.model.facts import FactSet, Unknown, format_value
from troubleshooter.output.safe import escape_controls, xml_text

STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "n/a": "cyan", "unknown": "magenta"}
ICON = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "n/a": "N/A", "unknown": "????"}
#: the order the summary counts them in
ORDER = ("fail", "warn", "pass", "n/a", "unknown")


def context_lines(fs: FactSet, target_desc: dict[str, Any]) -> list[str]:
    """Where the probes ran: target, node, Slurm job/step, container, GPUs."""
    from troubleshooter import sources

    v = lambda n: fs.get_value(n, sources.producers_of(n))  # noqa: E731
    lines = [f"target: {target_desc.get('label', '?')}"]
    node = v("slurm.node")
    if not isinstance(node, Unknown):
        lines.append(f"node: {node}")
    job = v("slurm.job_id")
    if not isinstance(job, Unknown):
        step = v("slurm.step_id")
        lines.append(f"slurm: job {job}" + (f", step {step}" if not isinstance(step, Unknown) else ""))
    inside = v("container.inside")
    if inside is True:
        lines.append(f"container: {v('container.runtime')} ({', '.join(v('container.evidence') or [])})")
    elif inside is False:
        lines.append("container: none detected")
    n = v("gpu.count")
    if isinstance(n, Unknown):
        first = n.reason.split("; ")[0]
        detail = first.split(": ", 1)[-1] if ": " in first else first
        for status in ("no-gpu: ", "not-installed: ", "error: ", "permission-denied: "):
            detail = detail.removeprefix(status)
        lines.append(f"gpus: none visible ({detail})")
    else:
        names = v("gpu.names")
        drv = v("gpu.driver_version")
        lines.append(f"gpus: {n}" + (f" x {sorted(set(names))[0]}" if isinstance(names, list) and names else "")
                     + (f", driver {drv}" if not isinstance(drv, Unknown) else ""))
    virt = v("host.virt")
    if not isinstance(virt, Unknown):
        lines.append(f"virtualization: {virt}")
    return lines


def print_check(console: Console, results: list[CheckResult], context: list[str], profile_id: str, wall_s: float) -> None:
    from rich.table import Table
    from rich.text import Text

    for line in context:
        console.print(Text(escape_controls(line), style="dim"))
    console.print(Text(f"profile: {profile_id}   sweep: {wall_s:.1f}s", style="dim"))
    table = Table(show_header=True, header_style="bold", expand=True, pad_edge=False, box=None)
    table.add_column("", no_wrap=True, width=4)
    table.add_column("check", overflow="fold", ratio=2)
    table.add_column("why", overflow="fold", ratio=3)
    area = None
    for r in results:
        if r.area != area:
            area = r.area
            table.add_row("", Text(escape_controls(area), style="bold underline"), "")
        table.add_row(Text(ICON[r.verdict], style=STYLE[r.verdict]), Text(escape_controls(r.title)),
                      Text(escape_controls(r.reason), style="dim" if r.verdict == "pass" else ""))
    console.print(table)
    counts = {k: sum(r.verdict == k for r in results) for k in ICON}
    console.print(" ".join(f"[{STYLE[k]}]{counts[k]} {k}[/]" for k in ORDER))


def check_json(results: list[CheckResult], context: list[str], target_desc: dict, profile_id: str, evidence: dict) -> str:
    return json.dumps(check_doc(results, context, target_desc, profile_id, evidence), indent=2, default=str)


def check_doc(results: list[CheckResult], context: list[str], target_desc: dict, profile_id: str,
              evidence: dict) -> dict[str, Any]:
    """The ``check --json`` document (the CLI's emitter redacts it)."""
    return {
        "schema": "troubleshooter.check/1",
        "target": target_desc,
        "context": context,
        "profile": profile_id,
        "checks": [r.as_dict() for r in results],
        "evidence": {sid: {"status": ev.status.value, "reason": ev.reason, "duration_s": round(ev.duration_s, 3)}
                     for sid, ev in sorted(evidence.items())},
        "summary": {k: sum(r.verdict == k for r in results) for k in VERDICTS},
    }


def junit_xml(results: list[CheckResult], suite: str = "troubleshooter.check") -> bytes:
    """JUnit XML that parses whatever the facts hold: every text and attribute passes :func:`xml_text`
    (control characters escaped visibly, code points XML 1.0 forbids replaced)."""
    x = xml_text
    import xml.etree.ElementTree as ET  # JUnit only

    ts = ET.Element("testsuite", name=x(suite), tests=str(len(results)),
                    failures=str(sum(r.verdict == "fail" for r in results)),
                    skipped=str(sum(r.verdict in ("unknown", "n/a") for r in results)))
    for r in results:
        tc = ET.SubElement(ts, "testcase", classname=x(f"{suite}.{r.area}"), name=x(f"{r.id}: {r.title}"))
        if r.verdict == "fail":
            ET.SubElement(tc, "failure", message=x(r.reason)).text = x(json.dumps(r.as_dict()["facts"], default=str))
        elif r.verdict == "unknown":
            ET.SubElement(tc, "skipped", message=x(r.reason))
        elif r.verdict == "n/a":
            ET.SubElement(tc, "skipped", message=x(f"not applicable: {r.reason}"))
        else:
            ET.SubElement(tc, "system-out").text = x(f"{r.verdict}: {r.reason}")
    return ET.tostring(ET.ElementTree(ts).getroot(), encoding="utf-8", xml_declaration=True)


def facts_table(fs: FactSet, names: list[str] | None = None) -> Table:
    from rich.table import Table

    table = Table(show_header=True, header_style="bold")
    table.add_column("fact")
    table.add_column("value", overflow="fold")
    for name in names or sorted(fs):
        table.add_row(name, format_value(fs[name].value, fs[name].unit) if name in fs else "?")
    return table
