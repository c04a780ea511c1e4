"""dcgm-exporter's own log, read from real captures in its three logging styles (tests/data/dcgm-exporter)."""

from __future__ import annotations

import pytest

from tests.corpus import files, load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError

KIND = "dcgm-exporter"
D = "dcgm-exporter/"


def parse(name: str) -> dict:
    return parsers.run(KIND, load(D + name))


@pytest.mark.parametrize("path", files("dcgm-exporter"), ids=lambda p: p.name)
def test_detected(path) -> None:
    assert parsers.detect(load(D + path.name)) == KIND


def test_the_exporter_stopped_on_the_profiling_module() -> None:
    f = parse("gpumontools141-logrus-fatal-profiling-module-not-loaded.txt")
    assert f == {"dcgm_exporter.started": True, "dcgm_exporter.stopped_on":
                 "Error watching fields: This request is serviced by a module of DCGM that is not currently loaded"}


def test_dcp_not_collected_in_slog_with_its_version() -> None:
    f = parse("dcgmexporter459-slog-4.1.1-dcp-not-collected-skipping.txt")
    assert f["dcgm_exporter.version"] == "4.1.1-4.0.4"
    assert f["dcgm_exporter.dcp_unavailable"] == "This request is serviced by a module of DCGM that is not currently loaded"
    assert f["dcgm_exporter.skipped_metrics"][0] == "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
    assert len(f["dcgm_exporter.skipped_metrics"]) == 7 and "dcgm_exporter.stopped_on" not in f


def test_logrus_key_value_cut_inside_a_line() -> None:
    f = parse("dcgmexporter398-logrus-kv-3.3.8-dcp-not-collected.txt")
    assert f["dcgm_exporter.skipped_metrics"] == ["DCGM_FI_PROF_NVLINK_RX_BYTES", "DCGM_FI_PROF_NVLINK_TX_BYTES",
                                                  "DCGM_FI_PROF_GR_ENGINE_ACTIVE"]


def test_logrus_text_with_a_reporters_prints_between() -> None:
    f = parse("dcgmexporter368-logrus-text-recompiled-debug-prints.txt")
    assert f == {"dcgm_exporter.started": True, "dcgm_exporter.dcp_collecting": True}


@pytest.mark.parametrize("text", ["", "hello\n", 'time="2024-01-01T00:00:00Z" level=info msg="Starting device plugin"\n'])
def test_other_text_is_refused(text) -> None:
    with pytest.raises(ParseError):
        parsers.run(KIND, text)


def test_the_exporter_stopping_names_no_cluster_cause() -> None:
    # monitoring is not the job's path: the exporter's own trouble is shown, not made a cause
    from tests.test_causes_scope import _found, _suspected
    for name in ("gpumontools141-logrus-fatal-profiling-module-not-loaded.txt",
                 "dcgmexporter459-slog-4.1.1-dcp-not-collected-skipping.txt"):
        assert _found([D + name]) == [] and _suspected([D + name]) == []


def test_a_long_run_of_spaces_inside_a_line_is_linear():
    # logrus' and slog's message groups were lazy before \s*$: a 64 KB line took 31 CPU-s (base.logrus_entry)
    import time

    for line in ("INFO[0000] x" + " " * (1 << 20) + "y", "2025/03/03 06:51:55 INFO x" + " " * (1 << 20) + "y"):
        t0 = time.process_time()
        f = parsers.run("dcgm-exporter", "Starting dcgm-exporter\n" + line + "\n")
        assert time.process_time() - t0 < 1.0 and f["dcgm_exporter.started"] is True
