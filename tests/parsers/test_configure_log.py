"""An autoconf configure run's output, read from a real paste with exact values."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers

DEEPOPS = "configure-log/deepops1295-slurm-configure-no-nvml-gpuless-master.txt"


def test_slurms_configure_finding_no_nvml_on_a_gpu_less_master() -> None:
    text = load(DEEPOPS)
    assert parsers.detect(text) == "configure-log"
    f = parsers.run("configure-log", text)
    assert f["configure.nvml"] is False
    assert f["configure.checks"]["nvml.h"] == "no" and f["configure.checks"]["nvmlInit in -lnvidia-ml"] == "no"
    # two checks printed on one line (the first one's answer never came)
    assert f["configure.checks"]["lz4 is wanted"] == "" and f["configure.checks"]["hwloc installation"] == "/opt/deepops/hwloc"
    assert len(f["configure.checks"]) == 10


def test_nvml_found() -> None:
    text = "checking for nvml.h... yes\nchecking for nvmlInit in -lnvidia-ml... yes\nchecking for lz4... no\n"
    assert parsers.run("configure-log", text)["configure.nvml"] is True


@pytest.mark.parametrize("text", ["", "hello\nworld\n", "checking for nvml.h... no\n",
                                  "Checking the fabric...\nDone.\n"])
def test_other_text_is_refused(text: str) -> None:
    with pytest.raises(parsers.ParseError):
        parsers.run("configure-log", text)
    assert parsers.get("configure-log").detect(text) < parsers.DETECT_MIN
