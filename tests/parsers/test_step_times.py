import random

import pytest
from hypothesis import given, settings, strategies as st

from troubleshooter.model import facts
from troubleshooter import parsers
from troubleshooter.parsers import ParseError
from tests.corpus import files, load

KIND = "step-times"


def run(text):
    return parsers.run(KIND, text)


def numbers(vals):
    return "\n".join(f"{v:.3f}" for v in vals)


def test_megatron_issue_756_exact():
    f = run(load("steps/megatron-lm-756-mixtral-8x7b-16xh100-elapsed-time-per-iteration.txt"))
    assert f["steps.format"] == "megatron"
    assert f["steps.count"] == 3
    assert f["steps.median_ms"] == 5533.8
    assert f["steps.min_ms"] == 5444.9 and f["steps.max_ms"] == 5718.6
    assert f["steps.mean_ms"] == 5565.767
    assert "steps.shape" not in f  # fewer than 8 steps


def test_real_megatron_excerpt_two_regimes_is_bimodal():
    # iterations 122-125 at ~88 s, 201-205 at ~140 s: training slowed down between the two excerpts
    f = run(load("steps/epfllm-megatron-llm-11-two-excerpts-slowing-iterations.txt"))
    assert f["steps.count"] == 9
    assert f["steps.median_ms"] == 139113.4
    assert f["steps.shape"] == "bimodal"
    assert f["steps.slow_share_pct"] == 55.56
    assert f["steps.stall_ms"] == pytest.approx(140197.9 - (87871.6 + 89075.2) / 2, abs=0.01)


def test_megatron_deepspeed_prints_seconds():
    # JUWELS Booster's benchmark (Megatron-LM patched to print seconds): five iterations at ~35 s
    f = run(load("steps/jubench-megatron-deepspeed-iterations-seconds.txt"))
    assert (f["steps.format"], f["steps.count"], f["steps.min_ms"], f["steps.max_ms"]) == ("megatron", 5, 34870.9, 35865.1)


def test_the_runs_first_iteration_is_warm_up_even_in_a_short_excerpt():
    # LUMI, 175B on 256 nodes: iteration 1 took 100.19 s, the next seven ~36.3 s. Not a bimodal run
    f = run(load("steps/lumi-llm-scaling-megatron-deepspeed-iterations-seconds.txt"))
    assert (f["steps.count"], f["steps.skipped_warmup"], f["steps.max_ms"]) == (7, 1, 36560.0)
    assert "steps.shape" not in f  # seven steps left: too few for a shape
    assert f["steps.slow_share_pct"] == 0.0


def test_a_batch_size_ramp_is_not_a_slowdown():
    # HF datablations: global batch size 128 up to iteration 5200, 256 from 5400; the step time doubles with it
    f = run(load("steps/datablations-megatron-deepspeed-iterations-seconds.txt"))
    assert f["steps.batch_size_changes"] == ["128 -> 256 at iteration 5400"]
    assert (f["steps.other_batch_size"], f["steps.count"]) == (4, 4)
    assert (f["steps.min_ms"], f["steps.max_ms"]) == (7410.0, 7970.0)
    assert "steps.shape" not in f


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_bimodal_stalls(seed):
    r = random.Random(seed)
    vals = [r.gauss(1000, 5) + (r.uniform(50, 100) if r.random() < 0.1 else 0) for _ in range(500)]
    f = run(numbers(vals))
    assert f["steps.shape"] == "bimodal"
    assert 6 <= f["steps.slow_share_pct"] <= 14
    assert 55 <= f["steps.stall_ms"] <= 95


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_long_tail(seed):
    r = random.Random(seed)
    f = run(numbers([1000 + r.expovariate(1 / 150) for _ in range(500)]))
    assert f["steps.shape"] == "long-tail"
    assert f["steps.p99_ms"] / f["steps.median_ms"] >= 1.3


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_steady(seed):
    r = random.Random(seed)
    f = run(numbers([r.gauss(1000, 10) for _ in range(500)]))
    assert f["steps.shape"] == "steady"
    assert f["steps.slow_share_pct"] == 0.0 and "steps.stall_ms" not in f
    assert f["steps.cv_pct"] < 2


def test_unitless_seconds_become_ms_and_warmup_dropped():
    f = run(numbers([30.0] + [1.0] * 30))
    assert f["steps.skipped_warmup"] == 1
    assert f["steps.count"] == 30 and f["steps.median_ms"] == 1000.0 and f["steps.shape"] == "steady"


def test_lightning_progress_lines():
    text = "\n".join(
        [f"Epoch 0:  {i}%|##   | {i}/100 [00:{i:02d}<01:00,  2.00it/s, loss=2.3]" for i in range(1, 11)]
        + ["Epoch 0:  10%|##   | 10/100 [00:10<01:00,  2.00it/s, loss=2.3]"]  # a repaint of step 10
        + [f"Epoch 1:  {i}%|##   | {i}/100 [00:{i:02d}<01:00,  1.25s/it, loss=2.1]" for i in range(1, 3)]
    )
    f = run(text)
    assert f["steps.format"] == "lightning"
    assert f["steps.count"] == 12
    assert f["steps.min_ms"] == 500.0 and f["steps.max_ms"] == 1250.0


def test_plain_step_lines_and_csv():
    f = run("\n".join(f"step {i} loss 2.1 time {0.5 if i % 10 else 0.8}s" for i in range(40)))
    assert f["steps.format"] == "step-lines" and f["steps.median_ms"] == 500.0 and f["steps.max_ms"] == 800.0
    f = run("step,loss,step_time_ms\n" + "\n".join(f"{i},2.0,{100 + i}" for i in range(10)))
    assert f["steps.format"] == "csv" and f["steps.min_ms"] == 100.0 and f["steps.max_ms"] == 109.0


def test_nemo_train_step_timing():
    f = run("\n".join(f"Epoch 0: ... train_step_timing in s: {1.5 + i / 100:.2f}" for i in range(5)))
    assert f["steps.format"] == "nemo" and f["steps.min_ms"] == 1500.0


@pytest.mark.parametrize("text", ["", "  \n", "loss went down\naccuracy up\n", "step 1 loss 2.0\nstep 2 loss 1.9\n"])
def test_empty_or_no_step_times(text):
    with pytest.raises(ParseError):
        run(text)


@pytest.mark.parametrize("path", files("steps"), ids=lambda p: p.name)
def test_detect(path):
    assert parsers.detect(load("steps/" + path.name)) == KIND


def test_declared_facts():
    declared = set(parsers.get(KIND).facts)
    outs = [run(load("steps/" + p.name)) for p in files("steps")]
    outs.append(run(numbers([1000 + (i % 7) * 300 for i in range(50)])))
    for out in outs:
        assert set(out) <= declared
        for name in out:
            assert facts.spec(name) is not None


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_random_text_only_parse_error(text):
    try:
        parsers.get(KIND).func(text)
    except ParseError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(), max_size=60))
def test_random_numbers_only_parse_error(vals):
    try:
        parsers.get(KIND).func("\n".join(repr(v) for v in vals))
    except ParseError:
        pass
