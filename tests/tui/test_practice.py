"""Pilot tests of practice that teaches (issue 13, item 6): the trainee chooses each probe, reads its output,
sees the expert's choice with feedback and a score, names the root cause and gets a debrief; intros do not
give the answer away; a practice walk keeps its steps on screen; learn mode reads conditions in plain English."""

from __future__ import annotations

import os

import pytest
from textual.widgets import Markdown, OptionList, Static

from troubleshooter.tui.screens.practice import PracticeScreen
from troubleshooter.tui.screens.quiz import NEXT, QuizScreen
from troubleshooter.tui.screens.results import ResultsScreen
from troubleshooter.tui.screens.walk import WalkScreen

from .conftest import make_app, settle


def shown_text(screen, selector: str = "#transcript") -> str:
    """Everything the widgets under ``selector`` show, as plain text (printed by Rich)."""
    from rich.console import Console

    con = Console(record=True, width=120, file=open(os.devnull, "w"))
    root = screen.query_one(selector)
    for w in root.query(Static):
        con.print(w.content if not isinstance(w.content, str) else w.content)
    for md in root.query(Markdown):
        con.print(md.source)
    return con.export_text()


async def open_quiz(app, pilot, case: str) -> QuizScreen:
    await settle(app, pilot)
    await pilot.press("d")  # the start screen's "practise"
    await settle(app, pilot)
    assert isinstance(app.screen, PracticeScreen)
    ol = app.screen.query_one("#cases", OptionList)
    ol.highlighted = [ol.get_option_at_index(i).id for i in range(ol.option_count)].index(case)
    await pilot.press("enter")
    await settle(app, pilot)
    assert isinstance(app.screen, QuizScreen), app.screen
    return app.screen


async def pick(app, pilot, option_id: str) -> None:
    ol = app.screen.query_one("#choices", OptionList)
    ids = [ol.get_option_at_index(i).id for i in range(ol.option_count)]
    ol.highlighted = ids.index(option_id)
    await pilot.press("enter")
    await settle(app, pilot)


@pytest.mark.asyncio
async def test_quiz_choose_read_reveal_score_and_debrief():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_quiz(app, pilot, "case1")
        quiz = screen.quiz
        # round 1: the trainee picks the expert's probe, reads its output, and is told it is right
        r1 = quiz.current()
        assert r1.prompt == "Which probe do you run next?" and len(r1.options) >= 3
        await pick(app, pilot, r1.expert)
        text = shown_text(screen)
        assert "what it printed" in text and "kvm" in text  # systemd-detect-virt's own output
        assert "✓ Right:" in text and "Why this probe:" in text
        assert quiz.score()[0] == 1
        # the steps are seen: nothing moved on until the trainee asks for the next round
        assert quiz.current().index == 2 and shown_text(screen, "#question").count("Next round") == 0
        await pick(app, pilot, NEXT)
        # round 2: a wrong pick shows that probe's output, then the expert's probe and why it discriminates
        r2 = quiz.current()
        wrong = next(o.id for o in r2.options if o.id != r2.expert)
        await pick(app, pilot, wrong)
        text = shown_text(screen)
        assert "✗ Not the expert's choice" in text and "perf" in text.lower()
        assert "SMMU command-queue time" in text  # why the expert's probe decides, in plain English
        assert "perf.smmu_cmdq_pct" not in text
        assert quiz.score()[0] == 1
        await pick(app, pilot, NEXT)
        # the remaining probe rounds, then a wrong diagnosis: it ends in a debrief, not "no root cause"
        while not quiz.current().is_diagnosis:
            await pick(app, pilot, quiz.current().expert)
            await pick(app, pilot, NEXT)
        await pick(app, pilot, "nothing-wrong")
        assert "Not this one" in shown_text(screen)
        await pick(app, pilot, NEXT)
        debrief = screen.query_one("#debrief", Markdown).source
        assert "SMMU command-queue contention" in debrief and "Score:" in debrief
        assert "Your choices and the expert path" in debrief and "CMDQV" in debrief  # the fix, the story
        assert "No root cause found" not in debrief
        assert not screen.query_one("#question").display
        assert isinstance(app.screen, QuizScreen)  # no jump to Results


@pytest.mark.asyncio
async def test_quiz_whole_output_opens_and_expert_walk_from_the_quiz():
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_quiz(app, pilot, "case3")
        await pilot.press("o")  # nothing chosen yet: said, not an error
        await settle(app, pilot)
        assert isinstance(app.screen, QuizScreen)
        await pick(app, pilot, screen.quiz.current().expert)
        await pilot.press("o")
        await settle(app, pilot)
        assert "the whole output" in str(app.screen.query_one(".dialog-title", Static).content)
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is screen


@pytest.mark.asyncio
async def test_practice_walk_keeps_its_steps_on_screen_and_intro_hides_the_cause():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.start_practice("case1")
        await settle(app, pilot)
        await pilot.press("enter")  # dense is fine
        await settle(app, pilot)
        assert isinstance(app.screen, WalkScreen), app.screen  # the walk ended; its steps stay visible
        assert app.guide.walk.done
        text = shown_text(app.screen)
        story = text.split("?")[0]
        assert "CMDQV" not in story and "SMMU" not in story and "smmu" not in story
        # learn mode reads conditions in plain English, not fact names and operators
        assert "SMMU command-queue time (share of CPU samples) is 24.1%, above" in text
        assert "perf.smmu_cmdq_pct =" not in text and "(gt " not in text
        # a practice walk keeps the reference to its case
        assert "(case 1" in text
        await pilot.press("r")
        await settle(app, pilot)
        assert isinstance(app.screen, ResultsScreen)


@pytest.mark.asyncio
async def test_real_walk_has_no_practice_case_references():
    from .conftest import practice_spec

    app = make_app(spec=practice_spec("case1"))  # the same capture, opened as a real bundle
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.start_walk("moe-only-slowdown")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, ResultsScreen)
        from troubleshooter.output import export

        md = export.to_markdown(app.guide.doc())
        assert "SMMU command-queue contention" in md
        assert "case 1" not in md.lower() and "(case" not in md
        assert "(ne (none))" not in md and "(gt " not in md


# ---------------------------------------------------------------------------- the glossary
@pytest.mark.asyncio
async def test_typing_in_the_glossary_search_never_triggers_global_keys():
    from textual.widgets import Input

    from troubleshooter.tui.screens.dialogs import GlossaryScreen

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        theme, learn = app.theme, app.learn
        await pilot.press("g")
        await settle(app, pilot)
        assert isinstance(app.screen, GlossaryScreen)
        await pilot.press(*"steal")  # s starts the search; then t was the theme, l learn mode, q would quit
        await settle(app, pilot)
        assert app.theme == theme and app.learn == learn and isinstance(app.screen, GlossaryScreen)
        assert app.screen.query_one("#glossary-search", Input).value == "steal"
        ol = app.screen.query_one("#terms", OptionList)
        assert ol.get_option_at_index(0).id == "steal time"
        assert "hypervisor ran something else" in app.screen.query_one("#term-md", Markdown).source
        # a search for a word of the entries' text finds the terms that use it; nothing found is said
        await pilot.press(*"qxz")
        await settle(app, pilot)
        assert ol.option_count == 0 and "No term matches" in app.screen.query_one("#term-md", Markdown).source
        assert isinstance(app.screen, GlossaryScreen)  # q was typed, not quit
        assert app.return_code is None
        await pilot.press("escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, GlossaryScreen)


@pytest.mark.asyncio
async def test_glossary_slash_searches_and_keys_still_work_on_the_terms():
    from textual.widgets import Input

    from troubleshooter.tui.screens.dialogs import GlossaryScreen

    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("g")
        await settle(app, pilot)
        theme = app.theme
        await pilot.press("t")  # on the terms, t is the app's key as everywhere
        await settle(app, pilot)
        assert app.theme != theme and isinstance(app.screen, GlossaryScreen)
        await pilot.press("slash", *"turbo")  # / starts the search: now t is typed
        await settle(app, pilot)
        search = app.screen.query_one("#glossary-search", Input)
        assert search.value == "turbo" and app.screen.focused is search
        assert app.screen.query_one("#terms", OptionList).get_option_at_index(0).id == "turbo"
        await pilot.press("down")
        await settle(app, pilot)
        assert app.screen.focused is app.screen.query_one("#terms", OptionList)


@pytest.mark.asyncio
async def test_terms_in_step_text_are_marked_and_open_the_glossary_there():
    from troubleshooter.tui.screens.dialogs import GlossaryScreen

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.start_practice("case2")  # bimodal step time: C-states, NUMA, steal time are linked terms
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, WalkScreen)
        marked = [k for s in app.guide.walk.steps for k, _ in app.guide.glossary_terms(s)]
        assert "numa" in marked or "c-state" in marked, marked
        assert "glossary (g):" in shown_text(screen)
        term = screen.newest_term()
        assert term
        await pilot.press("g")  # opens at the newest marked term
        await settle(app, pilot)
        assert isinstance(app.screen, GlossaryScreen)
        ol = app.screen.query_one("#terms", OptionList)
        assert ol.get_option_at_index(ol.highlighted).id == term
        await pilot.press("escape")
        await settle(app, pilot)
        # a click on a term runs the same action with the term named
        await app.run_action("app.glossary('numa')")
        await settle(app, pilot)
        ol = app.screen.query_one("#terms", OptionList)
        assert ol.get_option_at_index(ol.highlighted).id == "numa"


@pytest.mark.asyncio
async def test_a_practice_walk_that_misses_the_cause_says_how_to_find_it():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.start_practice("case3")
        await settle(app, pilot)
        q = app.guide.question()
        other = next(c.id for c in q.choices if c.id != "yes")
        await pick(app, pilot, other)  # "a single node is slow too": the walk goes elsewhere
        assert app.guide.walk.done and not app.guide.walk.conclusions
        await pilot.press("r")
        await settle(app, pilot)
        assert isinstance(app.screen, ResultsScreen)
        text = app.screen.query_one("#cause-md", Markdown).source
        assert "Practice: this path did not reach 1 of the case's 1 root cause" in text
        assert f"you answered {other!r}" in text and "Press **b**" in text
        await pilot.press("b")  # back to the walk, then back to the question: the other branch
        await settle(app, pilot)
        await pilot.press("b")
        await settle(app, pilot)
        await pick(app, pilot, "yes")
        assert "ib-qps-per-connection" in [c.cause for c in app.guide.walk.conclusions]
        assert app.guide.practice_missed() == ""
