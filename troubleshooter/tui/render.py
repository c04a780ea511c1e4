"""Pure renderers shared by the screens: a step, the hypotheses table, a conclusion as Markdown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from rich.console import Group
from rich.table import Table
from rich.text import Text

from troubleshooter.diagnosis import engine as eng
from troubleshooter.output.safe import escape_controls as esc

if TYPE_CHECKING:  # pragma: no cover
    pass

# Imported where a screen needs them, not here: the start screen shows neither, and they cost the first frame
# ~35 ms (Markdown pulls markdown-it) -- docs/benchmarks.md. So does the guide (the walk, exports, sessions).


_MARKDOWN: Any = None


def _markdown(*args: Any, **kw: Any):
    """Textual's Markdown, with code blocks that are never wrapped and never silently cut: a command wider
    than the pane scrolls, with a visible scrollbar under it (focus it: tab or click, then ← →)."""
    global _MARKDOWN
    if _MARKDOWN is None:
        from textual.binding import Binding
        from textual.widgets import Markdown
        from textual.widgets.markdown import MarkdownFence

        class CommandFence(MarkdownFence):
            can_focus = True
            BINDINGS = [Binding("left", "scroll_left", "Scroll left", show=False),
                        Binding("right", "scroll_right", "Scroll right", show=False)]

        class TicketMarkdown(Markdown):
            BLOCKS = {**Markdown.BLOCKS, "fence": CommandFence, "code_block": CommandFence}

        _MARKDOWN = TicketMarkdown
    return _MARKDOWN(*args, **kw)

STATE_STYLE = {"ruled-in": ("●", "bold red"), "ruled-out": ("○", "green"), "untested": ("·", "dim"),
               "suspected": ("◐", "yellow"), "not-applicable": ("–", "dim")}
CONTEXT_SOURCES = ["env-self", "container-markers", "virt", "nvml", "nvidia-smi-q"]



# ---------------------------------------------------------------------------- rendering (pure)
def mark_terms(text: Text, terms: Iterable[tuple[str, str]]) -> Text:
    """Glossary terms in a step's text underlined; a click opens the glossary at the term."""
    import re

    from rich.style import Style

    for key, shown in terms:
        style = Style(underline=True, meta={"@click": f"app.glossary({key!r})"})
        text.highlight_regex(re.compile(rf"(?i)(?<!\w){re.escape(shown)}(?!\w)"), style)
    return text


def terms_line(terms: list[tuple[str, str]]) -> Text:
    """"  glossary (g): C-state · turbo", each term clickable."""
    from rich.style import Style

    line = Text("  glossary (g): ", style="dim")
    for i, (key, _shown) in enumerate(terms):
        if i:
            line.append(" · ", style="dim")
        line.append(key, Style(underline=True, meta={"@click": f"app.glossary({key!r})"}))
    return line


def render_step(step: eng.Step, *, show_why: bool, learn: bool, terms: list[tuple[str, str]] | None = None) -> Any:
    parts: list[Any] = []
    terms = terms or []
    if step.kind == "call":
        return Text(f"── {esc(step.title)} ──", style="bold cyan")
    if step.kind == "end":
        return Text("")
    if step.kind == "ask":
        parts.append(mark_terms(Text.assemble(("? ", "bold yellow"), (esc(step.title), "bold")), terms))
        if show_why and step.why:
            parts.append(mark_terms(Text(f"  {esc(step.why)}", style="italic dim"), terms))
        parts.append(Text(f"  → {esc(step.because)}", style="yellow"))
        if terms and show_why:
            parts.append(terms_line(terms))
        return Group(*parts)
    if step.kind == "conclude":
        parts.append(Text.assemble(("ROOT CAUSE ", "bold white on red"), (" " + esc(step.title), "bold red")))
        if step.because:
            parts.append(Text(f"  {esc(step.because)}"))
        return Group(*parts)
    # probe
    parts.append(mark_terms(Text.assemble(("● ", "bold cyan"), (esc(step.title), "bold")), terms))
    if show_why and step.why:
        parts.append(mark_terms(Text(f"  {esc(step.why)}", style="italic dim"), terms))
    if step.facts:
        from troubleshooter.diagnosis.plain import evidence_label

        t = Table.grid(padding=(0, 1))
        # learning: each fact by its plain name (the fact's own name after it, for grep); else the names
        t.add_column(style="dim", no_wrap=not learn, overflow="fold", max_width=44 if learn else None)
        t.add_column(overflow="fold")
        for k, v in step.facts.items():
            name = evidence_label(k) if learn else k
            if v.startswith("unknown"):
                t.add_row(Text(f"  {esc(name)}"), Text("unknown", style="magenta"))
            else:
                t.add_row(Text(f"  {esc(name)}"), Text(esc(v)))
        parts.append(t)
    bad = [f"{k}: {v}" for k, v in step.evidence.items() if not v.startswith(("ok", "from", "canned"))]
    for line in bad[:4]:
        parts.append(Text(f"  ! {esc(line)}", style="magenta"))
    parts.append(mark_terms(Text(f"  → {esc(step.because or step.decision)}", style="green"), terms))
    if learn and step.explain:
        from troubleshooter.diagnosis.plain import condense

        parts.append(Text(f"    {esc(condense(step.explain))}", style="dim"))
    if terms and show_why:
        parts.append(terms_line(terms))
    return Group(*parts)


def hypotheses_table(hyps: Iterable[eng.Hypothesis]) -> Table:
    t = Table.grid(padding=(0, 1))
    t.add_column(no_wrap=True)
    t.add_column(overflow="fold")
    for h in hyps:
        mark, style = STATE_STYLE.get(h.state, ("?", ""))
        t.add_row(Text(mark, style=style), Text(esc(h.title), style=style if h.state != "untested" else ""))
    return t


def conclusion_markdown(c: eng.Conclusion) -> str:
    from troubleshooter.output.export import NEEDS_TEXT

    lines = [f"## {c.title}", "", c.summary or "", ""]
    if c.evidence:
        lines += ["**Evidence**", ""]
        from troubleshooter.diagnosis.plain import evidence_label, split_evidence, uncollected_line

        known, uncollected = split_evidence(c.evidence)
        lines += [f"- {evidence_label(k)}: {v}" for k, v in known.items()]
        if uncollected:
            lines.append(f"- {uncollected_line(uncollected)}")
        lines.append("")
    for i, fx in enumerate(c.fixes, 1):
        needs = ", ".join(NEEDS_TEXT.get(n, n) for n in fx.get("needs", []))
        ctx = f" [{fx['context']}]" if fx.get("context") not in (None, "any") else ""
        lines += [f"**Fix {i}{ctx}: {fx['title']}**" + (f" (needs {needs})" if needs else ""), "",
                  "```sh", fx["command"], "```", ""]
    if c.verify.get("command"):
        lines += ["**Verify:**", "", "```sh", c.verify["command"], "```", c.verify.get("explain", ""), ""]
    if c.caution:
        lines += [f"> **Caution:** {c.caution}", ""]
    if c.recovered:
        lines += [f"Reference recovery: {c.recovered}", ""]
    if c.references:
        lines += ["References: " + "; ".join(c.references), ""]
    if c.missing_facts:
        lines += [f"_Placeholders to fill by hand: {', '.join(c.missing_facts)}_", ""]
    return esc("\n".join(lines))  # facts fill the text and the commands: no escape sequence reaches the screen


