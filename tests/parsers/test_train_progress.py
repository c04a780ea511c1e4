"""train-progress parser: a training script's own progress lines, on real captures (exact values)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_centernet_data_wait_against_iteration_time():
    text = load("train-progress/centernet-progress-data-0.517s-net-1.014s.txt")
    assert parsers.detect(text) == "train-progress"
    assert parsers.run("train-progress", text) == {
        "train.progress_lines": 2, "train.data_wait_s": 0.517, "train.iter_s": 1.014, "train.data_wait_share_pct": 51.0}


def test_nmtgminor_throughput_and_its_last_line_cut_mid_word():
    text = load("train-progress/nmtgminor-epoch-ppl-tok-per-s-cut.txt")
    assert parsers.detect(text) == "train-progress"
    assert parsers.run("train-progress", text) == {
        "train.progress_lines": 9, "train.throughput_unit": "src tok/s", "train.throughput_first": 890.0,
        "train.throughput_last": 26377.0, "train.throughput_median": 41216.0,
        "train.throughput_last_vs_median_pct": 64.0}


def test_step_time_logs_are_left_to_step_times_and_prose_is_not_progress():
    meg = " iteration       43/     100 | elapsed time per iteration (ms): 5444.9 | lm loss: 2.1E+00 |\n" * 3
    assert parsers.get("train-progress").detect(meg) == 0.0
    with pytest.raises(ParseError):
        parsers.run("train-progress", "the loss went down and then the job hung\n")
