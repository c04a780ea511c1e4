"""df parser on real captures (a DataLoader bus-error report, a Kubernetes pod) and df's 1K-block form."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_df_h_of_dev_shm_alone():
    text = load("df/dataloader-bus-error-report-df-h-dev-shm-64m.txt")
    assert parsers.detect(text) == "df"
    f = parsers.run("df", text)
    assert f["fs.mounts"] == {"/dev/shm": {"filesystem": "shm", "size_mib": 64.0, "used_pct": 0}}
    assert (f["shm.size_mib"], f["shm.used_pct"], f["fs.full_mounts"]) == (64.0, 0, [])


def test_df_h_in_a_pod_with_volumes():
    f = parsers.run("df", load("df/k8s-pod-df-h-shm-64m-ebs-volume.txt"))
    assert f["fs.mounts"]["/"] == {"filesystem": "overlay", "size_mib": 81920.0, "used_pct": 5}
    assert f["fs.mounts"]["/usr/share/nginx/html"]["size_mib"] == 2969.6
    assert f["shm.size_mib"] == 64.0
    assert len(f["fs.mounts"]) == 10


def test_one_k_blocks_and_a_wrapped_long_device_name():
    text = ("Filesystem              1K-blocks    Used Available Use% Mounted on\n/dev/mapper/centos-root\n"
            "                         52403200 9123456  43279744  18% /\ntmpfs 65536 65536 0 100% /dev/shm\n")
    f = parsers.run("df", text)
    assert f["fs.mounts"]["/"]["filesystem"] == "/dev/mapper/centos-root"
    assert (f["shm.size_mib"], f["shm.used_pct"], f["fs.full_mounts"]) == (64.0, 100, ["/dev/shm"])
    with pytest.raises(ParseError):
        parsers.run("df", "no table here\n")
