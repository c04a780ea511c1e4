"""The app picks the reference profile from the GPUs seen unless the user names one, as the CLI does
(docs/settings.md: profile '' = from the GPUs seen)."""

import pytest

from troubleshooter.service.practice import practice_bundle_path, practice_case
from troubleshooter.service.guide import Guide, TargetSpec
from troubleshooter.session import Session


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(tmp_path))


def _guide(case, profile=None):
    spec = TargetSpec(bundle=str(practice_bundle_path(practice_case(case))))
    return Guide.for_target(spec, profile)


def test_profile_from_the_gpus_seen_before_the_first_probe():
    g = _guide("case4")  # 8x NVIDIA B200
    g.begin("host-ok-container-slow")
    assert g.profile_id == "generic"  # nothing probed yet
    g.run_to_question()
    assert g.profile_id == "b200"
    assert g.engine.profile["ib_rate_min_gbps"] == 400
    assert g.doc()["profile"] == "b200"
    evs, _ = Session.open("latest").events()
    assert evs[0]["profile"] is None
    assert [e["profile"] for e in evs if e["event"] == "profile"] == ["b200"]


def test_a_named_profile_is_kept():
    g = _guide("case4", "generic")
    g.begin("host-ok-container-slow")
    g.run_to_question()
    assert g.profile_id == "generic"


def test_resume_guesses_again_and_reaches_the_same_causes():
    g = _guide("case2")  # H100
    g.begin("bimodal-step-time")
    g.run_to_question()
    r = Guide.resume(Session.open(g.session.id))
    assert r.profile_id == "h100"
    assert sorted(c.cause for c in r.walk.conclusions) == sorted(c.cause for c in g.walk.conclusions)


@pytest.mark.parametrize("case,profile,causes", [
    ("case4", "b200", ["topo-not-in-container"]), ("case2", "h100", ["cores-shared-housekeeping", "numa-remote",
                                                                     "cstates-limited"]),
    ("healthy", "h100", []),
])
def test_diagnose_bundle_uses_the_gpus_profile_and_finds_exactly_the_cases_causes(case, profile, causes):
    """diagnose --bundle read the GPUs only after choosing thresholds (generic for a B200 bundle that check read
    as b200); and the findings beyond the walk (signatures, comparison) add nothing to a reference case."""
    import json
    import subprocess
    import sys

    c = practice_case(case)
    r = subprocess.run([sys.executable, "-m", "troubleshooter", "diagnose", "--bundle", str(practice_bundle_path(c)),
                        "--symptom", c["symptom"], "--json", *[f"--answer={k}={v}" for k, v in c.get("answers", {}).items()]],
                       capture_output=True, text=True, timeout=120)
    doc = json.loads(r.stdout)
    assert doc["profile"] == profile
    assert sorted(x["cause"] for x in doc["conclusions"]) == sorted(causes)
