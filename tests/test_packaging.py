"""A regular (non-editable) install ships the decision trees, profiles, glossary, practice bundles and the
app's stylesheet: built as a wheel and inspected, so a user who runs `pip install .` gets a working tool."""

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_contains_the_data(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                        str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:  # no setuptools in the build environment: build with isolation
        r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
                           capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    wheel = next(tmp_path.glob("troubleshooter-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for must in ("troubleshooter/decision_trees/checks.yaml", "troubleshooter/decision_trees/glossary.yaml",
                 "troubleshooter/decision_trees/profiles/generic.yaml",
                 "troubleshooter/decision_trees/sub-runtime-topology.yaml",
                 "troubleshooter/decision_trees/practice/cases.yaml",
                 "troubleshooter/decision_trees/practice/case4/bundle/manifest.json",
                 "troubleshooter/tui/app.tcss", "troubleshooter/parsers/turbostat.py"):
        assert must in names, must
