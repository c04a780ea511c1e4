"""mpirun: the ranks a launch line starts and the hosts it names (real command lines)."""

import pytest

from tests.corpus import load
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def test_two_hosts_one_rank_each_over_continued_lines():
    f = parsers.run("mpirun", load("mpirun/horovod110-two-hosts-one-rank-each.txt"))
    assert f == {"mpi.launch.np": 2, "mpi.launch.hosts": ["192.168.2.249", "192.168.2.243"],
                 "mpi.launch.ranks_per_host_max": 1}


def test_eight_slots_on_each_of_two_hosts():
    # the launch line of tests/data/nccl-tests/h200-baremetal-vs-kvm-vm-passthrough-collapse.txt, as typed there
    line = [ln for ln in load("nccl-tests/h200-baremetal-vs-kvm-vm-passthrough-collapse.txt").split("\n") if "mpirun" in ln][0]
    f = parsers.run("mpirun", line.split("$ ", 1)[1])
    assert f["mpi.launch.np"] == 16 and f["mpi.launch.hosts"] == ["20.0.8.1", "20.0.8.2"]
    assert f["mpi.launch.ranks_per_host_max"] == 8


def test_ranks_per_node_and_hostfile_and_mpich_hosts():
    f = parsers.run("mpirun", "mpirun --hostfile hosts.txt -npernode 8 -np 16 ./all_reduce_perf -b 8 -e 1G -g 1")
    assert f == {"mpi.launch.np": 16, "mpi.launch.hosts": [], "mpi.launch.hostfile": "hosts.txt",
                 "mpi.launch.ranks_per_host_max": 8}
    assert parsers.run("mpirun", "mpiexec -n 4 -hosts a,b -ppn 2 ./a.out")["mpi.launch.ranks_per_host_max"] == 2
    assert parsers.run("mpirun", "mpirun -np 4 --map-by ppr:2:node -H a,b python t.py")["mpi.launch.ranks_per_host_max"] == 2


@pytest.mark.parametrize("text", ["srun -N 2 python t.py", "all_reduce_perf -b 8 -e 1G", "mpirun 'unclosed"])
def test_no_mpirun_line(text):
    with pytest.raises(ParseError):
        parsers.run("mpirun", text)
