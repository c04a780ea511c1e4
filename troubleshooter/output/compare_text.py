"""Comparisons as text for a terminal: host vs target and node vs node (the CLI prints them, the app shows
them captured into its screens)."""

from __future__ import annotations

from typing import Any

from troubleshooter.output.safe import escape_controls, markup


def _console():  # also the CLI's before/after table
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def _cell(v: Any) -> str:  # one value in a table cell
    from troubleshooter.model.facts import format_value

    if v is None:
        return "(absent)"
    s = format_value(v)
    return s if len(s) <= 70 else s[:69] + "…"


def _text(v: Any):  # data in a table cell: never read as markup, controls escaped
    from rich.text import Text

    return Text(escape_controls(str(v)))


def print_host(cmp, host_label: str, target_label: str, *, show_same: bool, console=None) -> None:
    from rich.table import Table

    con = console or _console()
    ctx = cmp.context
    con.print(f"host:   {markup(host_label)}  (container: {markup(_cell(ctx['host'].get('runtime')))})")
    con.print(f"target: {markup(target_label)}  (container: {markup(_cell(ctx['target'].get('runtime')))})")
    rows = [d for d in cmp.diffs]
    if rows:
        t = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for col in ("", "what", "host", "target", "note"):
            t.add_column(col, overflow="fold")
        for d in sorted(rows, key=lambda d: (not d.matters, d.status == "unknown", d.category, d.key)):
            mark = "[red]✗[/]" if d.matters else ("[dim]?[/]" if d.status == "unknown" else "[yellow]•[/]")
            t.add_row(mark, _text(d.key), _text(_cell(d.host)), _text(_cell(d.target)), _text(d.note))
        con.print(t)
    if show_same and cmp.same:
        con.print("[dim]same on both sides: " + markup(", ".join(cmp.same)) + "[/]")
    n, m = len([d for d in rows if d.status != "unknown"]), len(cmp.matters)
    if m:
        con.print(f"[bold red]{m} difference(s) that matter[/] ({n} in all): the job does not see what the host sees.")
    elif n:
        con.print(f"{n} difference(s), none that matters (✗ = matters: NCCL_* variables, topology file, RDMA, GPUs, memlock).")
    else:
        con.print("[green]no difference[/] in the runtime topology between the host and the target.")


def print_nodes(report, *, limit: int | None = 20, seconds: float | None = None, console=None) -> None:
    from troubleshooter.diagnosis import compare

    con = console or _console()
    n = len(report.nodes)
    took = f" in {seconds:.2f}s" if seconds is not None else ""
    con.print(f"{n} node(s) compared{took}: {report.compared} facts, {report.uniform} identical everywhere, "
              f"{len(report.identity)} differ on every node (identity, not compared)")
    for f in report.failed:
        con.print(f"[red]failed[/] {markup(f['node'])}: {markup(f['reason'])}")
    if report.outliers:
        con.print("[bold]nodes that stand out[/] (ranked; numbers: median/MAD rule, values: majority):")
        for fo in report.outliers[:limit]:
            typical = compare.display(fo.typical)
            typical = typical if len(typical) <= 60 else typical[:59] + "…"
            what = f"median {typical}" if fo.kind == "number" else f"majority {typical}"
            con.print(f"  [cyan]{markup(fo.fact)}[/]  {markup(what)} on {fo.typical_nodes} node(s)")
            for o in fo.outliers[: (limit or len(fo.outliers))]:
                val = compare.display(o.value if o.value is compare._MISSING else compare.canonical(o.value))
                how = f"{o.direction}, " if o.direction else ""
                con.print(f"      {markup(f'{o.node:16}')} {markup(val[:60])}  [dim]({how}score {o.score:.1f})[/]")
            if limit and len(fo.outliers) > limit:
                con.print(f"      … {len(fo.outliers) - limit} more")
        if limit and len(report.outliers) > limit:
            con.print(f"  … {len(report.outliers) - limit} more facts (--all)")
    else:
        con.print("[green]no node stands out[/].")
    for s in report.splits[:limit]:
        con.print(f"  [yellow]no majority[/] {markup(s['fact'])}: " + markup("; ".join(
            f"{_cell(v['value'])} on {v['nodes']}" for v in s["values"])))
    con.print(f"[bold]groups of nodes that look alike[/] ({len(report.groups)}):")
    for i, g in enumerate(report.groups[:limit], 1):
        what = ", ".join(f"{k}={v[:40]}" for k, v in list(g.differs.items())[:4]) or "like the majority"
        more = f" (+{len(g.differs) - 4} more)" if len(g.differs) > 4 else ""
        con.print(f"  {i}. {len(g.nodes):4} node(s) {markup(compare.hostlist(g.nodes))}: {markup(what)}{more}")


def _shown(v: Any) -> str:  # a compared value as the comparison document holds it ("json:[...]": a list's text)
    if isinstance(v, str):
        return v[5:] if v.startswith("json:") else v
    return "absent" if v is None else _cell(v)


def node_differences(comparison: dict[str, Any], limit: int = 12) -> list[str]:
    """A node comparison's document (``NodeReport.as_dict``, redacted) in plain lines: the facts where a node
    stands out from the majority, then those the nodes split on. A value kept as a digest (a whole record, every
    port's fields) is left out: the facts read out of it say the same, shorter."""
    def digest(values: list[Any]) -> bool:  # a value the comparator keeps as "sha1:... preview"
        return any(isinstance(v, str) and v.startswith("sha1:") for v in values)

    lines: list[str] = []
    left = 0
    for fo in comparison.get("outliers", []):
        typical = fo.get("median", fo.get("majority"))
        if len(lines) >= limit or digest([typical] + [o.get("value") for o in fo.get("nodes", [])]):
            left += 1
            continue
        odd = "; ".join(f"{o['node']}: {'absent' if o.get('absent') else _shown(o.get('value'))}" for o in fo["nodes"][:limit])
        typical_s = "absent" if fo.get("majority_absent") else _shown(typical)
        lines.append(f"{fo['fact']}: {typical_s} on {fo['typical_nodes']} node(s), but {odd}")
    for sp in comparison.get("splits", []):
        if len(lines) >= limit or digest([v.get("value") for v in sp.get("values", [])]):
            left += 1
            continue
        lines.append(f"{sp['fact']}: " + "; ".join(f"{_shown(v.get('value'))} on {v['nodes']}" for v in sp["values"]))
    if left:
        lines.append(f"... and {left} more (--json lists every fact compared)")
    identity = comparison.get("identity_facts") or []
    if identity:  # no majority to stand out from: each node its own value (a GUID, or three kernels on three nodes)
        lines.append("different on every node: " + ", ".join(identity[:limit]) + (" ..." if len(identity) > limit else ""))
    return lines
