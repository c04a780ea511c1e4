"""ngc-banner: the start-up banner of NVIDIA's NGC containers, read from real pastes with exact values."""

import pytest

from tests.corpus import load
from troubleshooter import parsers


@pytest.mark.parametrize("rel, facts", [
    ("ngc-banner/yolov5-1232-built-for-455-23-detected-450-66-cuinit-804.txt",
     {"ngc.required_driver": "455.23", "ngc.detected_driver": "450.66", "ngc.driver_too_old": True,
      "ngc.cuinit_error": 804, "ngc.mofed_missing": True}),
    ("ngc-banner/tensorrt1160-built-for-450-51-detected-440-33-01.txt",
     {"ngc.required_driver": "450.51", "ngc.detected_driver": "440.33.01", "ngc.driver_too_old": True,
      "ngc.cuinit_error": 804}),
    # the two lines run together by the reporter ("butversion")
    ("ngc-banner/llamafactory5962-built-for-545-23-butversion-run-together.txt",
     {"ngc.required_driver": "545.23", "ngc.detected_driver": "535.104.05", "ngc.driver_too_old": True}),
])
def test_the_banners_driver_check(rel, facts):
    text = load(rel)
    assert parsers.detect(text) == "ngc-banner"
    assert parsers.run("ngc-banner", text) == facts


@pytest.mark.parametrize("text", ["", "hello\n", "This container was built for\n"])
def test_other_text_is_refused(text):
    with pytest.raises(parsers.ParseError):
        parsers.run("ngc-banner", text)
    assert parsers.get("ngc-banner").detect(text) < parsers.DETECT_MIN
