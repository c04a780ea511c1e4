"""openmpi parser: a rank's crash report and CMA failures, on real captures (nccl-tests#18, horovod#300)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_a_segfault_in_mpi_comm_size_at_start():
    text = load("openmpi/nccltests18-segfault-in-mpi-comm-size.txt")
    assert parsers.detect(text) == "openmpi"
    assert parsers.run("openmpi", text) == {
        "mpi.crash_signal": "Segmentation fault (11)",
        "mpi.crash_frames": ["libpthread.so.0", "libmpi.so.20(MPI_Comm_size)", "libc.so.6(__libc_start_main)"]}


def test_cross_memory_attach_refused_in_a_container():
    text = load("openmpi/horovod300-docker-cma-read-errno-1.txt")
    assert parsers.detect(text) == "openmpi"
    assert parsers.run("openmpi", text) == {"mpi.cma_errors": 6, "mpi.cma_errnos": [1]}


def test_mpirun_noticed_and_nothing_of_mpis():
    line = ("mpirun noticed that process rank 3 with PID 0 on node gpu7 exited on signal 9 (Killed).\n")
    assert parsers.run("openmpi", line) == {"mpi.exited_on_signal": ["rank 3: signal 9 (Killed)"]}
    with pytest.raises(ParseError):
        parsers.run("openmpi", "hello\n")


def test_open_mpi_saying_it_was_built_without_cuda():
    f = parsers.run("openmpi", load("openmpi/condaforgeompi83-cuda-support-requested-not-compiled.txt"))
    assert f["mpi.cuda_aware"] is False and f["mpi.crash_signal"] == "Segmentation fault (11)"
    assert parsers.run("openmpi", "mca:mpi:base:param:mpi_built_with_cuda_support:value:true\n")["mpi.cuda_aware"] is True


def test_cray_mpich_asked_for_gpu_support_without_its_gtl():
    f = parsers.run("openmpi", load("openmpi/cscs-cray-mpich-gpu-support-gtl-not-linked.txt"))
    assert f == {"mpi.cuda_aware": False}


def test_open_mpi_5_started_by_srun_without_pmix():
    f = parsers.run("openmpi", load("openmpi/cscs-ompi5-no-pmix-server-pmi2-detected.txt"))
    assert f == {"mpi.pmix_missing": True}
