"""mpi-ranks: an MPI program's own rank and world-size lines, from real pastes with exact values."""

import pytest

from tests.corpus import load
from troubleshooter import parsers


@pytest.mark.parametrize("rel, reported, sizes, alone", [
    ("mpi-ranks/apptainerdocs-host-mpich-mpirun-openmpi-container-rank-0-of-1.txt", 8, [1], 8),
    ("mpi-ranks/starcluster533-openmpi-mpirun-mpich2-build-process-0-of-1.txt", 2, [1], 2),
    ("mpi-ranks/starcluster533-after-removing-mpich2-process-of-2.txt", 2, [2], 0),
    ("mpi-ranks/mpich712-mpiexec-through-sudo-world-size-1.txt", 2, [1], 2),
])
def test_the_ranks_and_world_sizes_processes_print(rel, reported, sizes, alone):
    text = load(rel)
    assert parsers.detect(text) == "mpi-ranks"
    assert parsers.run("mpi-ranks", text) == {"mpi.ranks.reported": reported, "mpi.ranks.world_sizes": sizes,
                                               "mpi.ranks.alone": alone}


def test_mpichs_refusal_of_a_rank_in_a_world_of_one():
    # the error line of open-mpi/ompi#10647 and #8824 (MPICH's wording, an MPICH library under another launcher)
    f = parsers.run("mpi-ranks", "Invalid rank has value 1 but must be nonnegative and less than 1\n")
    assert f == {"mpi.ranks.reported": 0, "mpi.ranks.world_sizes": [1], "mpi.ranks.alone": 1}


@pytest.mark.parametrize("text", ["", "hello\n", "rank 3 of 2\n", "#  Rank  0 Group  0 Pid  4242 on node1 device  0\n"])
def test_other_text_is_refused(text):
    with pytest.raises(parsers.ParseError):
        parsers.run("mpi-ranks", text)
    assert parsers.get("mpi-ranks").detect(text) < parsers.DETECT_MIN


def test_open_mpis_singletons_under_srun_beside_its_warning():
    # Open MPI's own warning leads, and its parser reads it (slurm-mpi-plugin-not-pmix); the rank lines say the same
    text = load("mpi-ranks/ompi13523-srun-mpi-pmi2-ompi5-four-singletons.txt")
    assert parsers.run("mpi-ranks", text) == {"mpi.ranks.reported": 4, "mpi.ranks.world_sizes": [1], "mpi.ranks.alone": 4}
