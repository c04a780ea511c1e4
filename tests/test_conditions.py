"""The condition language: every operator true/false/unknown, Kleene all/any/not, profile and fact values,
sides, validate() errors, facts_named/profile_keys, and "evaluate never raises" on validated input."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from troubleshooter.diagnosis.conditions import LOGIC, OPS, Evaluator, facts_named, profile_keys, validate
from troubleshooter.model.facts import Unknown

FACTS: dict[tuple[str, str], Any] = {
    ("cpu.busy_mhz", "target"): 3000,
    ("cpu.max_mhz", "target"): 3800.0,
    ("cpu.governor", "target"): " Performance ",
    ("numa.remote_pct", "target"): "18.5",
    ("gpu.names", "target"): ["NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"],
    ("env.vars", "target"): {"NCCL_TOPO_FILE": "/etc/nccl/topo.xml"},
    ("flag", "target"): True,
    ("env.var.NCCL_TOPO_FILE", "host"): "/etc/nccl/topo.xml",
    ("cpu.busy_mhz", "host"): 3700,
}
PROFILE = {"cpu_busy_mhz_min_ratio": 0.9, "numa_remote_max_pct": 10, "governors": ["performance", "schedutil"]}


def lookup(name: str, side: str) -> Any:
    if (name, side) in FACTS:
        return FACTS[(name, side)]
    return Unknown(name, f"no {side}:{name} in this test")


EV = Evaluator(lookup, PROFILE)


def ev(cond: dict[str, Any]) -> bool | None:
    assert validate(cond) == [], validate(cond)
    return EV.evaluate(cond).value


# ---------------------------------------------------------------------------- operators
@pytest.mark.parametrize("cond, want", [
    # eq / ne: numbers compare as numbers (a string that is a number too), strings trimmed and case-folded
    ({"fact": "cpu.busy_mhz", "op": "eq", "value": 3000}, True),
    ({"fact": "cpu.busy_mhz", "op": "eq", "value": 3000.0}, True),
    ({"fact": "cpu.busy_mhz", "op": "eq", "value": 2999}, False),
    ({"fact": "numa.remote_pct", "op": "eq", "value": 18.5}, True),
    ({"fact": "cpu.governor", "op": "eq", "value": "performance"}, True),
    ({"fact": "cpu.governor", "op": "eq", "value": "powersave"}, False),
    ({"fact": "flag", "op": "eq", "value": True}, True),
    ({"fact": "flag", "op": "eq", "value": False}, False),
    ({"fact": "nope", "op": "eq", "value": 1}, None),
    ({"fact": "cpu.busy_mhz", "op": "ne", "value": 2999}, True),
    ({"fact": "cpu.governor", "op": "ne", "value": "PERFORMANCE"}, False),
    ({"fact": "nope", "op": "ne", "value": 1}, None),
    # ordering: numbers only; a non-number is unknown, not false
    ({"fact": "cpu.busy_mhz", "op": "lt", "value": 3800}, True),
    ({"fact": "cpu.busy_mhz", "op": "lt", "value": 3000}, False),
    ({"fact": "cpu.busy_mhz", "op": "le", "value": 3000}, True),
    ({"fact": "cpu.busy_mhz", "op": "le", "value": 2999.9}, False),
    ({"fact": "numa.remote_pct", "op": "gt", "value": 10}, True),
    ({"fact": "numa.remote_pct", "op": "gt", "value": 18.5}, False),
    ({"fact": "numa.remote_pct", "op": "ge", "value": 18.5}, True),
    ({"fact": "numa.remote_pct", "op": "ge", "value": 19}, False),
    ({"fact": "cpu.governor", "op": "gt", "value": 1}, None),
    ({"fact": "gpu.names", "op": "lt", "value": 1}, None),
    ({"fact": "nope", "op": "lt", "value": 1}, None),
    ({"fact": "nope", "op": "ge", "value": 1}, None),
    # membership
    ({"fact": "cpu.governor", "op": "in", "value": ["performance", "schedutil"]}, True),
    ({"fact": "cpu.governor", "op": "in", "value": ["powersave"]}, False),
    ({"fact": "cpu.busy_mhz", "op": "in", "value": [1000, 3000]}, True),
    ({"fact": "nope", "op": "in", "value": ["a"]}, None),
    ({"fact": "cpu.governor", "op": "not_in", "value": ["powersave", "ondemand"]}, True),
    ({"fact": "cpu.governor", "op": "not_in", "value": ["Performance"]}, False),
    ({"fact": "nope", "op": "not_in", "value": ["a"]}, None),
    ({"fact": "cpu.governor", "op": "in", "value": {"profile": "governors"}}, True),
    # contains: lists (normalised), strings (substring), mappings (key)
    ({"fact": "gpu.names", "op": "contains", "value": "nvidia h100 80gb hbm3"}, True),
    ({"fact": "gpu.names", "op": "contains", "value": "NVIDIA B200"}, False),
    ({"fact": "cpu.governor", "op": "contains", "value": "form"}, True),
    ({"fact": "cpu.governor", "op": "contains", "value": "xyz"}, False),
    ({"fact": "env.vars", "op": "contains", "value": "NCCL_TOPO_FILE"}, True),
    ({"fact": "env.vars", "op": "contains", "value": "NCCL_IB_HCA"}, False),
    ({"fact": "cpu.busy_mhz", "op": "contains", "value": "3"}, None),  # a number contains nothing
    ({"fact": "nope", "op": "contains", "value": "x"}, None),
    # matches: re.search on the text
    ({"fact": "gpu.names", "op": "matches", "value": r"H100"}, True),
    ({"fact": "cpu.governor", "op": "matches", "value": r"^ Perf"}, True),
    ({"fact": "cpu.governor", "op": "matches", "value": r"^perf"}, False),
    ({"fact": "nope", "op": "matches", "value": "."}, None),
    # exists / missing are about unknown itself: never unknown
    ({"fact": "cpu.busy_mhz", "op": "exists"}, True),
    ({"fact": "cpu.busy_mhz"}, True),  # exists is the default op
    ({"fact": "nope", "op": "exists"}, False),
    ({"fact": "nope", "op": "missing"}, True),
    ({"fact": "cpu.busy_mhz", "op": "missing"}, False),
])
def test_operator(cond: dict[str, Any], want: bool | None) -> None:
    assert ev(cond) is want


def test_every_operator_is_covered_above() -> None:
    import inspect

    src = inspect.getsource(test_operator) + str(test_operator.pytestmark[0].args[1])
    for op in OPS:
        assert f"'op': '{op}'" in src, op


def test_bad_regex_at_runtime_is_unknown_not_an_exception() -> None:
    # validate() refuses a literal bad regex, but a value from the profile is only known at run time
    e = Evaluator(lookup, {"rx": "(unclosed"})
    assert e.evaluate({"fact": "cpu.governor", "op": "matches", "value": {"profile": "rx"}}).value is None


# ---------------------------------------------------------------------------- Kleene logic
T = {"fact": "cpu.busy_mhz", "op": "eq", "value": 3000}
F = {"fact": "cpu.busy_mhz", "op": "eq", "value": 1}
U = {"fact": "nope", "op": "eq", "value": 1}
VAL = {"T": (T, True), "F": (F, False), "U": (U, None)}


def _kleene_and(vals: list[bool | None]) -> bool | None:
    if False in vals:
        return False
    return None if None in vals else True


def _kleene_or(vals: list[bool | None]) -> bool | None:
    if True in vals:
        return True
    return None if None in vals else False


@pytest.mark.parametrize("combo", ["T", "F", "U", "TT", "TF", "TU", "FU", "UU", "FF", "UT", "UF", "TTU", "FUT", "UUF"])
def test_all_any_are_kleene(combo: str) -> None:
    conds = [VAL[c][0] for c in combo]
    vals = [VAL[c][1] for c in combo]
    assert ev({"all": conds}) is _kleene_and(vals)
    assert ev({"any": conds}) is _kleene_or(vals)


@pytest.mark.parametrize("c, want", [(T, False), (F, True), (U, None)])
def test_not_keeps_unknown(c: dict[str, Any], want: bool | None) -> None:
    assert ev({"not": c}) is want
    assert ev({"not": {"not": c}}) is (None if want is None else not want)


def test_nested_logic_and_every_leaf_recorded() -> None:
    cond = {"any": [{"all": [T, U]}, {"not": F}]}
    res = EV.evaluate(cond)
    assert res.value is True
    # all leaves were evaluated (the UI explains every one), in order
    assert [leaf.fact for leaf in res.leaves] == ["cpu.busy_mhz", "nope", "cpu.busy_mhz"]
    assert [leaf.result for leaf in res.leaves] == [True, None, False]
    text = res.raw()
    assert "✓ cpu.busy_mhz = 3000 (eq 3000)" in text and "? nope = unknown" in text and "✗" in text
    plain = res.explain()  # what people read: no fact names, no operators
    assert "cpu.busy_mhz" not in plain and "(eq" not in plain and "✓" in plain and "?" in plain and "✗" in plain


def test_explain_names_the_side_and_exists() -> None:
    res = EV.evaluate({"all": [{"fact": "env.var.NCCL_TOPO_FILE", "side": "host", "op": "exists"},
                               {"fact": "nope", "op": "missing"}]})
    assert res.value is True
    assert "host:env.var.NCCL_TOPO_FILE exists: yes" in res.raw()
    assert "nope missing: yes" in res.raw()
    assert "on the host: NCCL_TOPO_FILE is set here" in res.explain()
    assert "nope is not there" in res.explain()


# ---------------------------------------------------------------------------- plain English, every operator
def _plain(cond: dict[str, Any], facts: dict[str, Any], profile: dict[str, Any] | None = None) -> str:
    from troubleshooter.model.facts import Unknown

    look = lambda n, s: facts[n] if n in facts else Unknown(n, "turbostat: permission denied")  # noqa: E731
    return Evaluator(look, profile or {}).evaluate(cond).explain()


@pytest.mark.parametrize("cond, facts, want", [
    ({"fact": "perf.smmu_cmdq_pct", "op": "gt", "value": 5}, {"perf.smmu_cmdq_pct": 24.13},
     "✓ SMMU command-queue time (share of CPU samples) is 24.1%, above 5%"),
    ({"fact": "perf.smmu_cmdq_pct", "op": "le", "value": 5}, {"perf.smmu_cmdq_pct": 2.0}, "is 2%, at most 5%"),
    ({"fact": "perf.smmu_cmdq_pct", "op": "lt", "value": 5}, {"perf.smmu_cmdq_pct": 7.0}, "✗ SMMU command-queue time"),
    ({"fact": "cpu.busy_cores_mhz", "op": "ge", "value": 3500}, {"cpu.busy_cores_mhz": 3000}, "is 3000 MHz, below 3500 MHz"),
    ({"fact": "gpu.throttled", "op": "ne", "value": []}, {"gpu.throttled": [0, 3]},
     "✓ GPUs with a clock-throttle reason active: 0, 3"),
    ({"fact": "gpu.throttled", "op": "eq", "value": []}, {"gpu.throttled": []}, "✓ GPUs with a clock-throttle reason active: none"),
    ({"fact": "cpu.deep_cstates_enabled", "op": "eq", "value": True}, {"cpu.deep_cstates_enabled": False},
     "✗ a deep idle state (C6 or deeper) is enabled on every CPU: no"),
    ({"fact": "cpu.freq.governor", "op": "eq", "value": "performance"}, {"cpu.freq.governor": "powersave"},
     "✗ the CPU frequency governor is powersave, not performance"),
    ({"fact": "cpu.freq.governor", "op": "in", "value": ["performance", "ondemand"]}, {"cpu.freq.governor": "powersave"},
     "not one of performance, ondemand"),
    ({"fact": "cpu.freq.governor", "op": "not_in", "value": ["powersave"]}, {"cpu.freq.governor": "powersave"},
     "✗ the CPU frequency governor is powersave, one of powersave"),
    ({"fact": "dmesg.xid_codes", "op": "contains", "value": 79}, {"dmesg.xid_codes": [79]}, "which include 79"),
    ({"fact": "cpu.freq.governor", "op": "matches", "value": "^perf"}, {"cpu.freq.governor": "powersave"}, "does not match"),
    ({"fact": "cpu.busy_cores_mhz", "op": "lt", "value": 3500}, {},
     "? the clock of the busy CPU cores is unknown (turbostat: permission denied)"),
    ({"fact": "perf.smmu_cmdq_pct", "op": "exists"}, {}, "could not be established"),
    ({"fact": "env.var.NCCL_TOPO_FILE", "op": "missing"}, {}, "✓ NCCL_TOPO_FILE is not set here"),
])
def test_plain_english_for_every_operator(cond: dict[str, Any], facts: dict[str, Any], want: str) -> None:
    text = _plain(cond, facts)
    assert want in text, text
    assert cond["fact"] not in text and f"({cond['op']} " not in text and "(none)" not in text


def test_condense_keeps_what_decided_each_once() -> None:
    from troubleshooter.diagnosis.plain import condense

    assert condense("✗ a; ✓ b; ✓ b; ✓ c") == "✓ b; ✓ c"
    assert condense("? x is unknown; ? x is unknown; ✗ y") == "? x is unknown; ✗ y"
    assert condense("; ".join(f"? f{i}" for i in range(6)), 4).endswith("(+2 more)")


def test_every_operator_has_a_plain_rendering() -> None:
    from troubleshooter.diagnosis.conditions import OPS

    for op in OPS:
        value = ["x"] if op in ("in", "not_in") else "x"
        text = _plain({"fact": "cpu.freq.governor", "op": op, "value": value}, {"cpu.freq.governor": "x"})
        assert text and "cpu.freq.governor" not in text and f"({op} " not in text, (op, text)


# ---------------------------------------------------------------------------- values from the profile and facts
def test_profile_value_present_and_missing() -> None:
    assert ev({"fact": "numa.remote_pct", "op": "gt", "value": {"profile": "numa_remote_max_pct"}}) is True
    assert ev({"fact": "numa.remote_pct", "op": "le", "value": {"profile": "numa_remote_max_pct"}}) is False
    res = EV.evaluate({"fact": "numa.remote_pct", "op": "gt", "value": {"profile": "no_such_key"}})
    assert res.value is None
    assert isinstance(res.leaves[0].expected, Unknown) and "no_such_key" in res.leaves[0].expected.reason


def test_fact_value_times_constant() -> None:
    # busy 3000 < 0.9 * max 3800 = 3420
    assert ev({"fact": "cpu.busy_mhz", "op": "lt", "value": {"fact": "cpu.max_mhz", "times": 0.9}}) is True
    assert ev({"fact": "cpu.busy_mhz", "op": "lt", "value": {"fact": "cpu.max_mhz", "times": 0.7}}) is False
    res = EV.evaluate({"fact": "cpu.busy_mhz", "op": "lt", "value": {"fact": "cpu.max_mhz", "times": 0.5}})
    assert res.leaves[0].expected == pytest.approx(1900.0)
    # without times it is the fact itself
    assert ev({"fact": "cpu.busy_mhz", "op": "lt", "value": {"fact": "cpu.max_mhz"}}) is True


def test_fact_value_times_profile() -> None:
    cond = {"fact": "cpu.busy_mhz", "op": "lt", "value": {"fact": "cpu.max_mhz", "times": {"profile": "cpu_busy_mhz_min_ratio"}}}
    assert ev(cond) is True
    assert Evaluator(lookup, {"cpu_busy_mhz_min_ratio": 0.5}).evaluate(cond).value is False
    assert Evaluator(lookup, {}).evaluate(cond).value is None  # profile lacks the ratio: unknown


def test_fact_value_unknown_makes_leaf_unknown() -> None:
    assert ev({"fact": "cpu.busy_mhz", "op": "lt", "value": {"fact": "nope", "times": 2}}) is None


def test_side_lookups() -> None:
    assert ev({"fact": "cpu.busy_mhz", "side": "host", "op": "eq", "value": 3700}) is True
    assert ev({"fact": "cpu.busy_mhz", "op": "eq", "value": 3700}) is False
    assert ev({"fact": "env.var.NCCL_TOPO_FILE", "op": "exists"}) is False
    assert ev({"fact": "env.var.NCCL_TOPO_FILE", "side": "host", "op": "exists"}) is True
    # a fact value inherits the leaf's side unless it names its own
    assert ev({"fact": "cpu.busy_mhz", "side": "host", "op": "eq", "value": {"fact": "cpu.busy_mhz"}}) is True
    assert ev({"fact": "cpu.busy_mhz", "op": "lt", "value": {"fact": "cpu.busy_mhz", "side": "host"}}) is True
    seen: list[tuple[str, str]] = []
    Evaluator(lambda n, s: seen.append((n, s)) or 1).evaluate(
        {"fact": "a", "side": "host", "op": "eq", "value": {"fact": "b"}})
    assert seen == [("a", "host"), ("b", "host")]


# ---------------------------------------------------------------------------- validate
@pytest.mark.parametrize("cond, fragment", [
    ("fact: x", "must be a mapping"),
    ([{"fact": "x"}], "must be a mapping"),
    ({"fact": "x", "op": "approx", "value": 1}, "unknown op 'approx'"),
    ({"fact": "x", "op": "eq"}, "op eq needs a value"),
    ({"fact": "x", "op": "lt"}, "op lt needs a value"),
    ({"fact": "x", "op": "matches", "value": "(unclosed"}, "bad regular expression"),
    ({"fact": "x", "op": "in", "value": "abc"}, "op in needs a list value"),
    ({"fact": "x", "op": "not_in", "value": 3}, "op not_in needs a list value"),
    ({"all": [{"fact": "x"}], "fact": "y"}, "must be alone"),
    ({"all": [{"fact": "x"}], "any": [{"fact": "y"}]}, "must be alone"),
    ({"not": {"fact": "x"}, "op": "eq"}, "must be alone"),
    ({"all": []}, "non-empty list"),
    ({"any": {"fact": "x"}}, "non-empty list"),
    ({"op": "eq", "value": 1}, "needs 'fact'"),
    ({"fact": "x", "op": "eq", "value": 1, "sidee": "host"}, "unknown keys ['sidee']"),
    ({"fact": "x", "op": "eq", "value": {"profil": "k"}}, "a value mapping is"),
    ({"fact": "x", "op": "eq", "value": {"fact": "y", "timez": 2}}, "a value mapping is"),
    ({"fact": "x", "op": "eq", "value": {"times": 2}}, "a value mapping is"),
    ({"fact": "x", "op": "eq", "value": {"fact": "y", "times": {"prof": "k"}}}, "times is a number or {profile: KEY}"),
    ({"all": [{"fact": "x"}, {"fact": "y", "op": "bogus", "value": 1}]}, "condition.all[1]: unknown op"),
    ({"not": {"any": [{"fact": "x", "op": "eq"}]}}, "condition.not.any[0]: op eq needs a value"),
])
def test_validate_errors(cond: Any, fragment: str) -> None:
    errs = validate(cond)
    assert errs, f"no error for {cond!r}"
    assert any(fragment in e for e in errs), errs


def test_validate_names_where() -> None:
    errs = validate({"fact": "x", "op": "nope", "value": 1}, "branches[2].when")
    assert errs and errs[0].startswith("branches[2].when: unknown op")


@pytest.mark.parametrize("cond", [
    {"fact": "x"},
    {"fact": "x", "op": "missing"},
    {"fact": "x", "op": "eq", "value": "a", "side": "host"},
    {"fact": "x", "op": "in", "value": {"profile": "k"}},
    {"fact": "x", "op": "lt", "value": {"fact": "y", "times": 0.9}},
    {"fact": "x", "op": "lt", "value": {"fact": "y", "times": {"profile": "k"}, "side": "host"}},
    {"fact": "x", "op": "matches", "value": r"^\d+$"},
    {"all": [{"fact": "x"}, {"not": {"any": [{"fact": "y"}, {"fact": "z", "op": "ge", "value": 0}]}}]},
])
def test_validate_accepts_good_conditions(cond: dict[str, Any]) -> None:
    assert validate(cond) == []


# ---------------------------------------------------------------------------- facts_named / profile_keys
def test_facts_named_and_profile_keys() -> None:
    cond = {"all": [
        {"fact": "a", "op": "lt", "value": {"fact": "b", "times": {"profile": "ratio"}}},
        {"not": {"fact": "c", "side": "host", "op": "eq", "value": {"fact": "d"}}},
        {"any": [{"fact": "e", "op": "gt", "value": {"profile": "limit"}},
                 {"fact": "f", "side": "host", "op": "eq", "value": {"fact": "g", "side": "target"}}]},
    ]}
    assert facts_named(cond) == [("a", "target"), ("b", "target"), ("c", "host"), ("d", "host"), ("e", "target"),
                                 ("f", "host"), ("g", "target")]
    assert profile_keys(cond) == ["ratio", "limit"]
    assert facts_named("not a condition") == [] and profile_keys(None) == []


# ---------------------------------------------------------------------------- never raises
_FACT_NAMES = st.sampled_from(["a", "b", "c"])
_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
                       st.text(max_size=8), st.sampled_from(["(", "[a-", "\\", "*", "3.5", " yes ", 10 ** 400]))
_json = st.recursive(_json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                           st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                     max_leaves=6)
_value = st.one_of(
    _json,
    st.builds(lambda k: {"profile": k}, st.sampled_from(["p1", "p2", "absent"])),
    st.builds(lambda f, t: {"fact": f, "times": t}, _FACT_NAMES,
              st.one_of(st.integers(), st.floats(), st.builds(lambda k: {"profile": k}, st.sampled_from(["p1", "p2"])))),
)


@st.composite
def _leaf(draw) -> dict[str, Any]:
    cond: dict[str, Any] = {"fact": draw(_FACT_NAMES), "op": draw(st.sampled_from(OPS))}
    if draw(st.booleans()):
        cond["value"] = draw(_value)
    if draw(st.booleans()):
        cond["side"] = draw(st.sampled_from(["target", "host"]))
    return cond


_cond = st.recursive(_leaf(), lambda inner: st.one_of(
    st.builds(lambda xs: {"all": xs}, st.lists(inner, min_size=1, max_size=3)),
    st.builds(lambda xs: {"any": xs}, st.lists(inner, min_size=1, max_size=3)),
    st.builds(lambda x: {"not": x}, inner),
), max_leaves=6)


_FACTS = st.fixed_dictionaries({(n, "target"): _json for n in ("a", "b", "c")},
                                optional={(n, "host"): _json for n in ("a", "b", "c")})
_PROFILE = st.fixed_dictionaries({}, optional={"p1": _json, "p2": _json})


@pytest.mark.filterwarnings("ignore::FutureWarning")  # generated regexes like "[[a"
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(cond=_cond, facts=_FACTS, profile=_PROFILE)
def test_evaluate_never_raises_on_validated_conditions(cond, facts, profile) -> None:
    if validate(cond):
        return
    e = Evaluator(lambda n, s: facts.get((n, s), Unknown(n, "absent")), profile)
    res = e.evaluate(cond)
    assert res.value in (True, False, None)
    assert len(res.leaves) == len(_leaves(cond))  # every leaf is evaluated and recorded
    res.explain()  # the UI shows it: must not raise either


@pytest.mark.parametrize("cond, facts, profile", [
    # the profile or another fact supplies a value of the wrong shape: unknown, not an exception
    ({"fact": "a", "op": "in", "value": {"profile": "p1"}}, {"a": 1}, {"p1": 5}),
    ({"fact": "a", "op": "not_in", "value": {"fact": "b", "times": 2}}, {"a": 1, "b": 3}, {}),
    ({"fact": "a", "op": "contains", "value": {"profile": "p1"}}, {"a": {"k": 1}}, {"p1": [1]}),
    ({"fact": "a", "op": "contains", "value": ["k"]}, {"a": {"k": 1}}, {}),
    ({"fact": "a", "op": "lt", "value": 10 ** 400}, {"a": 1}, {}),
    ({"fact": "a", "op": "eq", "value": 1}, {"a": 10 ** 400}, {}),
    ({"fact": "a", "op": "lt", "value": {"fact": "b", "times": 2}}, {"a": 1, "b": 10 ** 400}, {}),
])
def test_wrong_shaped_values_are_unknown(cond, facts, profile) -> None:
    assert validate(cond) == []
    e = Evaluator(lambda n, s: facts.get(n, Unknown(n, "absent")), profile)
    res = e.evaluate(cond)
    assert res.value in (True, False, None)
    res.explain()


def _leaves(cond: dict[str, Any]) -> list[dict[str, Any]]:
    for k in LOGIC:
        if k in cond:
            sub = cond[k]
            return [leaf for c in (sub if isinstance(sub, list) else [sub]) for leaf in _leaves(c)]
    return [cond]


def test_matches_on_a_list_anchors_to_each_item():
    from troubleshooter.diagnosis import conditions as c

    ev = c.Evaluator(lambda name, side="target": {"x": ["alpha: one", "check_ecc: Uncorrectable"]}[name], {})
    assert ev.evaluate({"fact": "x", "op": "matches", "value": "^check_ecc\\b.*Uncorrectable"}).value is True
    assert ev.evaluate({"fact": "x", "op": "matches", "value": "^one"}).value is False
