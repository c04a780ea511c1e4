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
