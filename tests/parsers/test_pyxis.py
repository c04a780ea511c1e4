"""pyxis: pyxis's and enroot's errors as Slurm shows them, read from real pastes with exact values."""

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_the_epilog_that_could_not_create_enroots_data_directory():
    text = load("pyxis/awsomedai185-slurmd-journal-spank-epilog-enroot-data-mkdir-denied.txt")
    assert parsers.detect(text) == "pyxis"
    assert parsers.run("pyxis", text) == {
        "pyxis.errors": ["mkdir: cannot create directory '/opt/dlami/nvme/tmp/enroot/data': Permission denied"],
        "pyxis.dirs_not_created": ["/opt/dlami/nvme/tmp/enroot/data: Permission denied"]}


def test_an_import_that_failed_on_the_shared_enroot_runtime_directory():
    f = parsers.run("pyxis", load("slurm/pyxis-import-failed-mkdir-run-enroot-permission-denied.txt"))
    assert f["pyxis.dirs_not_created"] == ["/run/enroot: Permission denied"]
    assert f["pyxis.errors"][:2] == ["child 12004 failed with error code: 1", "failed to import docker image"]


def test_pyxis_own_runtime_directory_in_slurmds_log():
    f = parsers.run("pyxis", load("slurm/pyxis-slurmd-log-couldnt-mkdir-run-pyxis-plugin-init-failed.txt"))
    assert f["pyxis.dirs_not_created"] == ["/run/pyxis/100005: No such file or directory"]


def test_a_user_the_node_cannot_resolve_is_read_apart():
    f = parsers.run("pyxis", load("pyxis/cscsdocs-pyxis-unknown-uid-then-mkdir-scratch-denied.txt"))
    assert f["pyxis.unknown_uids"] == ["42"]
    assert f["pyxis.dirs_not_created"] == ["/iopsstor/scratch/cscs/42: Permission denied"]


@pytest.mark.parametrize("text", ["", "hello\n", "slurmstepd: pyxis: importing docker image ...\n"])
def test_other_text_is_refused(text):
    with pytest.raises(parsers.ParseError):
        parsers.run("pyxis", text)
