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
    assert f == {"mpi.pmix_missing": True, "mpi.pmi_message": "no-pmix-server"}


@pytest.mark.parametrize("rel, locked, limit, init", [
    # the list's post goes on to the rank's MPI_Init abort; the FAQ's excerpt stops at the BTL's message
    ("openmpi/ompi-users-4443-openib-btl-locked-memory-memlock-32768-torque.txt", ["ibv_create_cq() on mthca0"], "32768",
     {"mpi.init_failed": True}),
    # the FAQ's example prints "Device: Out of memory" where the device would be: no device is named then
    ("openmpi/ompifaq-openib-btl-locked-memory-memlock-32767.txt", ["ibv_create_cq()"], "32767", {}),
])
def test_the_openib_btl_failing_to_allocate_locked_memory(rel, locked, limit, init):
    text = load(rel)
    assert parsers.detect(text) == "openmpi"
    assert parsers.run("openmpi", text) == {"mpi.locked_memory_failed": locked, "mpi.memlock_limit": limit} | init


@pytest.mark.parametrize("rel, reg, total, topics", [
    # the user's paste ends with the aggregation of the same warning from the other ranks
    ("openmpi/ompi-users-20124-registerable-memory-4096-of-32151-mib.txt", 4096, 32151,
     {"mpi.help_topics": ["help-mpi-btl-openib.txt / reg mem limit low"]}),
    ("openmpi/ompifaq-registerable-memory-32768-of-65476-mib.txt", 32768, 65476, {}),
])
def test_the_openib_btl_warning_that_only_part_of_memory_registers(rel, reg, total, topics):
    text = load(rel)
    assert parsers.detect(text) == "openmpi"
    assert parsers.run("openmpi", text) == {"mpi.registerable_memory_mib": reg, "mpi.total_memory_mib": total} | topics


def test_mpichs_yaksa_turning_cuda_off_for_exclusive_gpus_all_visible():
    text = load("openmpi/mpichwiki-summit-yaksa-exclusive-mode-cuda-disabled.txt")
    assert parsers.detect(text) == "openmpi"
    assert parsers.run("openmpi", text) == {"mpi.gpu_support_disabled": "exclusive-mode-all-gpus-visible"}


def test_hydras_bad_termination_banner():
    f = parsers.run("openmpi", load("openmpi/mpich6563-hydra-bad-termination-segfault-signal-11.txt"))
    assert f == {"mpi.exit_code": 11, "mpi.crash_signal": "Segmentation fault: 11 (signal 11)"}


def test_hydras_banner_with_a_web_pages_no_break_spaces_read_through_the_paste_reader():
    from pathlib import Path

    from tests.corpus import DATA
    from troubleshooter.diagnosis.pasted import EvidenceFacts

    f = EvidenceFacts.from_specs([str(Path(DATA) / "openmpi/mpichfaq-hydra-bad-termination-nbsp-exit-code-11.txt")])
    assert [(x.kind, x.facts) for x in f.files] == [
        ("openmpi", {"mpi.exit_code": 11, "mpi.crash_signal": "Segmentation fault (signal 11)"})]


@pytest.mark.parametrize("rel, fatal", [
    ("openmpi/mpichwiki-darshan-abort-pmpi-comm-size-invalid-communicator.txt",
     ["PMPI_Comm_size: Invalid communicator (Invalid communicator)"]),
    ("openmpi/mpichwiki-summit-abort-init-thread-ucx-init-worker-invalid-parameter.txt",
     ["PMPI_Init_thread: Other MPI error (ucx function returned with failed status(ucx_init.c 71 init_worker Invalid "
      "parameter))"]),
])
def test_mpichs_fatal_errors_with_the_innermost_message_of_the_stack(rel, fatal):
    text = load(rel)
    assert parsers.detect(text) == "openmpi"
    assert parsers.run("openmpi", text) == {"mpi.fatal_errors": fatal}


def test_open_mpis_older_words_for_a_srun_launch_it_cannot_join():
    f = parsers.run("openmpi", load("openmpi/trtllmdocs-pmi2-init-failed-direct-launch-not-built-with-slurm-pmi.txt"))
    assert f == {"mpi.pmix_missing": True, "mpi.pmi_message": "not-built-with-slurm-pmi"}


@pytest.mark.parametrize("rel, lines", [
    ("openmpi/horovod1516-btl-tcp-unexpected-process-identifier.txt", 1),
    ("openmpi/ompi9858-efa-btl-tcp-unexpected-process-identifier-many.txt", 9),
])
def test_the_tcp_btl_refusing_a_peers_handshake(rel, lines):
    text = load(rel)
    assert parsers.detect(text) == "openmpi"
    assert parsers.run("openmpi", text) == {"mpi.btl_tcp_unexpected_peer": lines}


def test_pmix_cannot_open_psec_munge_in_a_container_and_pmix_init_fails():
    text = load("openmpi/pyxis139-srun-container-pmix-psec-munge-not-found.txt")
    assert parsers.detect(text) == "openmpi"
    assert parsers.run("openmpi", text) == {"mpi.components_missing": ["psec/munge"], "mpi.pmix_init_failed": True}


def test_the_psec_munge_banner_alone_is_read_without_a_failure():
    # the banner twice (one per rank) and nothing said about pmix_init: a component missing, no failure claimed
    text = load("openmpi/ompi11557-srun-pmix-v4-psec-munge-warning.txt")
    assert parsers.run("openmpi", text) == {"mpi.components_missing": ["psec/munge"]}


def test_a_rank_that_aborted_in_mpi_init_on_a_null_communicator():
    text = load("slurm/pyxis78-srun-no-mpi-plugin-hpl-mpi-init-null-communicator.txt")
    block = text[text.index("*** An error"):text.index("srun: error")]
    assert parsers.detect(block) == "openmpi"
    assert parsers.run("openmpi", block) == {"mpi.init_failed": True}


@pytest.mark.parametrize("rel", ["openmpi/mpichwiki-summit-jsrun-cuda-hook-no-pami.txt",
                                 "openmpi/stencil16-jsrun-smpiargs-gpu-python-cuda-hook.txt"])
def test_spectrum_mpis_cuda_hook_without_pami(rel):
    text = load(rel)
    assert parsers.detect(text) == "openmpi"
    assert parsers.run("openmpi", text) == {"mpi.cuda_hook_missing_symbols": ["__PAMI_Invalidate_region"]}


@pytest.mark.parametrize("name,topics", [
    ("horovod-eval-help-aggregate-vader-cma-permission-denied.txt", ["help-btl-vader.txt / cma-permission-denied"]),
    ("container-run-help-aggregate-mpi-abort.txt", ["help-mpi-api.txt / mpi-abort"]),  # behind a line-number gutter
    ("notes-help-aggregate-accelerator-cuda-one-process-has.txt",
     ["help-accelerator-cuda.txt / cuMemHostRegister failed"]),  # '1 more process has sent' too, once
])
def test_the_help_messages_other_ranks_sent(name, topics) -> None:
    text = load("openmpi/" + name)
    assert parsers.detect(text) == "openmpi"
    assert parsers.run("openmpi", text)["mpi.help_topics"] == topics


def test_vaders_cma_permission_denied_is_a_possible_ptrace_block() -> None:
    from tests.test_causes_scope import _found, _suspected
    cma = "openmpi/horovod-eval-help-aggregate-vader-cma-permission-denied.txt"
    assert _found([cma]) == [] and "container-cma-ptrace-blocked" in _suspected([cma])
    assert _suspected(["openmpi/container-run-help-aggregate-mpi-abort.txt"]) == []


@pytest.mark.parametrize("name,errors", [
    # the wrap between the message and "file" joined (ompi#8356)
    ("ompi8356-orte-error-log-show-help-unpack-wrapped.txt", ["Data unpack would read past end of buffer (show_help.c:501)"]),
    ("precice103-orte-error-log-dpm-orte-comm-accept.txt", ["Data unpack would read past end of buffer (dpm_orte.c:406)"]),
    ("ompi13558-pmix-error-unpack-read-past-end-remote-host.txt",
     ["PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER (plm_base_launch_support.c:1578)"]),
])
def test_the_runtimes_own_error_log(name, errors) -> None:
    text = load("openmpi/" + name)
    assert parsers.detect(text) == "openmpi"
    assert parsers.run("openmpi", text)["mpi.runtime_errors"] == errors


def test_a_runtime_unpack_error_names_no_cause_in_the_domain() -> None:
    # differing Open MPI/PMIx builds between nodes, or the program's own port connection: read, shown, no cause
    from tests.test_causes_scope import _found, _suspected
    for name in ("ompi8356-orte-error-log-show-help-unpack-wrapped.txt",
                 "ompi13558-pmix-error-unpack-read-past-end-remote-host.txt"):
        assert _found(["openmpi/" + name]) == [] and _suspected(["openmpi/" + name]) == []


def test_a_run_of_spaces_in_a_runtime_error_line_is_linear() -> None:
    import time

    t0 = time.process_time()
    with pytest.raises(ParseError):
        parsers.run("openmpi", "ORTE_ERROR_LOG: x" + " " * (1 << 20) + "y\n")
    assert time.process_time() - t0 < 1.0  # 16 KB took 0.44 CPU-s when the message group was lazy before \s+
