"""README.md keeps exactly two set-up commands, and CI runs the test one verbatim."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup_commands():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, re.S)


def test_exactly_two_setup_commands():
    cmds = setup_commands()
    assert len(cmds) == 2, cmds
    assert cmds[0].endswith(".venv/bin/troubleshooter")
    assert "pytest" in cmds[1]


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text()
    m = re.search(r"^TEST_COMMAND='(.*)'$", ci, re.M)
    assert m, "no TEST_COMMAND in .ci/run"
    assert m.group(1) == setup_commands()[1]
