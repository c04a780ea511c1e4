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


def test_an_image_too_large_for_the_runtime_path_is_read_with_the_squashfs_it_was_writing():
    f = parsers.run("pyxis", load("pyxis/pyxis41-mksquashfs-enospc-run-pyxis-tmpfs.txt"))
    assert f["pyxis.image_write_no_space"] is True
    assert f["pyxis.squashfs_output"] == "/run/pyxis/1000/7.0.squashfs"
    # the import log of pyxis#53, two lines in Markdown bold: read, the bold gone from the messages
    g = parsers.run("pyxis", load("pyxis/pyxis53-import-log-squashfs-enospc-bold-markers.txt"))
    assert g["pyxis.image_write_no_space"] is True
    assert "pyxis.squashfs_output" not in g
    assert g["pyxis.errors"][-2:] == ["Write failed because No space left on device",
                                      "FATAL ERROR:Failed to write to output filesystem"]


@pytest.mark.parametrize("text", ["", "hello\n", "slurmstepd: pyxis: importing docker image ...\n"])
def test_other_text_is_refused(text):
    with pytest.raises(parsers.ParseError):
        parsers.run("pyxis", text)
