"""nccl-debug parser on every NCCL_DEBUG=INFO log of the corpus (tests/data/nccl-debug)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.corpus import files, load
from troubleshooter.model import facts
from troubleshooter import parsers
from troubleshooter.parsers import ParseError


def parse(rel):
    return parsers.run("nccl-debug", load(f"nccl-debug/{rel}"))


def test_docker_without_ib_falls_back_to_socket():
    f = parse("a100-sxm4-docker-no-ib-socket-fallback-p2p-direct-2gpu.txt")
    assert f["nccl.version"] == "2.20.5"
    assert f["nccl.net"] == "Socket"
    assert f["nccl.nets"] == ["Socket"]
    assert f["nccl.socket_fallback"] is True
    assert f["nccl.ib_no_device"] is True
    assert f["nccl.net_plugin"] == "IBext_v8"  # HPC-X plugin loaded fine, found no IB device
    assert f["nccl.net_plugin_failed"] is False
    assert f["nccl.net_plugin_absent"] is False
    assert "nccl.hcas" not in f
    assert f["nccl.channels"] == 24
    assert f["nccl.rings"] == 24
    assert f["nccl.trees"] == 24
    assert f["nccl.ranks"] == 2
    assert f["nccl.hosts"] == ["3767c65d25c4"]
    assert f["nccl.env_set"] == {"NCCL_WORK_FIFO_DEPTH": "4194304"}
    assert f["nccl.init_complete"] is True
    assert f["nccl.warnings"] == [] and f["nccl.errors"] == []
    assert "nccl.topo_file_used" not in f


def test_aws_efa_libfabric_plugin_sets_topo_file():
    f = parse("aws-p4d-eks-4pods-same-node-efa-libfabric-nccl2.27.3.txt")
    assert f["nccl.version"] == "2.27.3"
    assert f["nccl.net"] == "Libfabric"
    assert f["nccl.net_plugin"] == "Libfabric"
    assert f["nccl.net_plugin_failed"] is False
    assert f["nccl.socket_fallback"] is False
    assert f["nccl.topo_file_used"] == "/opt/amazon/ofi-nccl/share/aws-ofi-nccl/xml/p4d-24xl-topo.xml"
    assert "nccl.topo_file_loaded" not in f  # no GRAPH lines: whether it loaded is not shown
    assert "nccl.topo_file_error" not in f
    assert f["nccl.env_set"] == {
        "NCCL_SOCKET_IFNAME": "^docker0,lo",
        "NCCL_TOPO_FILE": "/opt/amazon/ofi-nccl/share/aws-ofi-nccl/xml/p4d-24xl-topo.xml",
        "NCCL_BUFFSIZE": "8388608",
        "NCCL_P2P_NET_CHUNKSIZE": "524288",
        "NCCL_PROTO": "simple",
    }
    assert f["nccl.channels"] == 2 and f["nccl.rings"] == 2 and f["nccl.trees"] == 2
    assert f["nccl.ranks"] == 4
    assert f["nccl.hosts"] == ["llama-3-8b-node-0-0"]
    assert f["nccl.init_complete"] is True


def test_azure_mixed_ib_roce_completion_error_12_wrapped_line():
    f = parse("azure-2node-ib-not-colocated-completion-error-12.txt")
    assert f["nccl.net"] == "IB"
    assert f["nccl.hcas"] == ["ibP111p0s0:1", "rdmaP1111p0s2:1"]
    assert f["nccl.hca_transports"] == {"ibP111p0s0:1": "IB", "rdmaP1111p0s2:1": "RoCE"}
    msg = "NET/IB : Got completion from peer 10.2.0.5<33092> with error 12, opcode 0, len 0, vendor err 129 (Recv)"
    assert f["nccl.warnings"] == [msg]  # the wrapped tail "0, vendor err 129 (Recv)" is joined back
    assert f["nccl.errors"] == [msg]
    assert f["nccl.hosts"] == ["node-2"]
    assert "nccl.version" not in f
    assert "nccl.init_complete" not in f  # the excerpt shows no init


def test_h200_vm_topology_print_and_ibv_reg_mr_warning():
    f = parse("h200-kvm-vm-topo-system-print-pci-0.2-and-ibv_reg_mr-warn.txt")
    assert f["nccl.topo_max_bw"] == 48.0
    assert f["nccl.topo_total_bw"] == 370.8
    assert f["nccl.topo_min_pci_bw"] == 0.2
    assert f["nccl.net"] == "IB"  # from "via NET/IB/11/GDRDMA"
    assert f["nccl.warnings"] == ["Call to ibv_reg_mr failed with error Bad address"]
    assert f["nccl.errors"] == []
    assert f["nccl.hosts"] == ["node1", "node_2"]
    assert "nccl.channels" not in f and "nccl.rings" not in f


def test_malformed_topo_file_xml_parse_warning_and_internal_error():
    f = parse("nccl2.18.3-topo-file-xml-parse-warn-internal-error.txt")
    assert f["nccl.version"] == "2.18.3"
    assert f["nccl.topo_file_used"] == "/root/rdma-bench/NCCL_GP/test2/nccl_topo.xml"
    assert f["nccl.topo_file_error"] == "XML Parse : expected >, got ' '"
    assert f["nccl.topo_file_loaded"] is False
    assert f["nccl.net_plugin_absent"] is True  # "No plugin found, using internal implementation"
    assert f["nccl.net_plugin_failed"] is False
    assert "nccl.net_plugin" not in f
    assert f["nccl.errors"] == ["NCCL error at mpi_nccl_bcast.c:67 'internal error - please report this issue to the NCCL developers'"]
    assert f["nccl.init_complete"] is False  # init.cc:1644 -> 3
    assert f["nccl.hosts"] == ["node2"]
    assert "nccl.net" not in f


@pytest.mark.parametrize("cut", [
    "NET/Plugin : Plugin load (libnccl-net.so)\nreturned 2 : libnccl-net.so: cannot open shared object file: No such file",
    "NET/Plugin : Plugin load (libnccl-net.so) returned 2\n : libnccl-net.so: cannot open shared object file: No such",
], ids=["at the mail's width", "at the terminal's"])
def test_a_plugin_load_line_cut_before_its_reason_is_neither_absent_nor_failed(cut):
    # the real 2.18.3 log, its "Plugin load ... returned 2 : <dlerror>" line cut before dlerror's text, as a wrap
    # cuts it: the line alone said the plugin failed (and a wrapped paste of it gave net-plugin-failed, wrongly)
    text = load("nccl-debug/nccl2.18.3-topo-file-xml-parse-warn-internal-error.txt")
    line = next(ln for ln in text.split("\n") if "Plugin load" in ln)
    f = parsers.run("nccl-debug", text.replace(line, line.split("NET/Plugin")[0] + cut))
    assert f["nccl.net_plugin_failed"] is False
    assert f["nccl.net_plugin_absent"] is True  # its "No plugin found, using internal implementation"
    f = parsers.run("nccl-debug", text.replace("cannot open shared object file: No such file or directory",
                                               "undefined symbol: ncclNetPlugin_v9"))
    assert f["nccl.net_plugin_failed"] is True  # a reason that is no missing file: a failure, as before


def test_nccl_2_5_6_rings_via_shared_memory_truncated():
    f = parse("nccl2.5.6-docker-4gpu-ring-via-direct-shared-memory-suboptimal-ring.txt")
    assert f["nccl.trees"] == 4  # old "a->b|c->d" tree format
    assert f["nccl.rings"] == 1  # only "Ring 00 : ..." lines survived the excerpt
    assert f["nccl.hosts"] == ["73e9f9f45158"]
    assert "nccl.version" not in f and "nccl.net" not in f and "nccl.channels" not in f
    assert "nccl.init_complete" not in f


def test_stale_aws_ofi_plugin_fails_then_internal_ib_roce():
    f = parse("roce-8nic-stale-aws-ofi-plugin-verbs-rxm-fallback-to-ib-nccl2.27.5.txt")
    assert f["nccl.version"] == "2.27.5"
    assert f["nccl.net"] == "IB"
    assert f["nccl.net_plugin"] == "AWS Libfabric"
    assert f["nccl.net_plugin_failed"] is True
    assert f["nccl.socket_fallback"] is False
    assert f["nccl.hcas"] == ["mlx5_0:1", "mlx5_1:1", "mlx5_2:1", "mlx5_5:1", "mlx5_6:1", "mlx5_7:1", "mlx5_8:1", "mlx5_11:1"]
    assert set(f["nccl.hca_transports"].values()) == {"RoCE"}
    assert f["nccl.env_set"] == {"NCCL_SOCKET_IFNAME": "enp25s0np0", "NCCL_IB_DISABLE": "0",
                                 "NCCL_IB_HCA": "mlx5_0,mlx5_1,mlx5_2,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_11"}
    assert f["nccl.hosts"] == ["tpgds-aihub0008"]


def test_topo_file_not_found_and_launcher_tags():
    text = (
        "MLVM2: MLVM2:10792:10792 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : "
        "libnccl-net.so: cannot open shared object file: No such file or directory\n"
        "[1,0]<stdout>:h1:5:5 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /etc/nccl/topo.xml\n"
        "[1,0]<stdout>:h1:5:9 [0] misc/xml.cc:10 NCCL WARN Could not open XML topology file /etc/nccl/topo.xml : No such file or directory\n"
        "h1:5:9 [0] NCCL INFO NET/IB : No device found.\n"
        "h1:5:9 [0] NCCL INFO Using network Socket\n"
        "h1:5:9 [0] NCCL INFO comm 0x1 rank 0 nranks 16 cudaDev 0 busId 1000 - Init START\n"
    )
    f = parsers.run("nccl-debug", text)
    assert f["nccl.hosts"] == ["MLVM2", "h1"]
    assert f["nccl.topo_file_used"] == "/etc/nccl/topo.xml"
    assert f["nccl.topo_file_error"] == "Could not open XML topology file /etc/nccl/topo.xml : No such file or directory"
    assert f["nccl.topo_file_loaded"] is False
    assert f["nccl.socket_fallback"] is True
    assert f["nccl.net_plugin_absent"] is True
    assert f["nccl.ranks"] == 16
    assert f["nccl.init_complete"] is False


def test_warnings_are_deduplicated_and_capped():
    text = "".join(f"h:1:1 [0] x.cc:1 NCCL WARN thing {i % 30}\n" for i in range(200))
    f = parsers.run("nccl-debug", text)
    assert len(f["nccl.warnings"]) == 20
    assert f["nccl.warnings"][0] == "thing 0"


@pytest.mark.parametrize("text", ["", "\n \n", "epoch 1 loss 2.3\nepoch 2 loss 2.1\n", "NCCL_DEBUG=INFO python train.py\n"])
def test_empty_or_not_a_log_fails(text):
    with pytest.raises(ParseError):
        parsers.run("nccl-debug", text)


NCCL_TESTS_TABLE = "a100-sxm4-docker-no-ib-socket-fallback-p2p-direct-2gpu.txt"


@pytest.mark.parametrize("path", files("nccl-debug"), ids=lambda p: p.name)
def test_detect(path):
    text = load(f"nccl-debug/{path.name}")
    score = parsers.get("nccl-debug").detect(text)
    if path.name == NCCL_TESTS_TABLE:
        # an all_reduce_perf run with NCCL_DEBUG=INFO: an nccl-tests table, which the nccl-tests parser owns
        assert score <= 0.5
        expected = "nccl-tests" if "nccl-tests" in parsers.kinds() else "nccl-debug"
        assert parsers.detect(text) == expected
    else:
        # a single quoted line is less certain than a log; it must still be told apart from every other kind
        assert score >= (0.5 if len([ln for ln in text.splitlines() if ln.strip()]) == 1 else 0.8)
        assert parsers.detect(text) == "nccl-debug"


@pytest.mark.parametrize("path", sorted((files("nccl-debug")[0].parent.parent / "nccl-tests").glob("*.txt"))
                         if (files("nccl-debug")[0].parent.parent / "nccl-tests").is_dir() else [],
                         ids=lambda p: p.name)
def test_nccl_tests_outputs_are_not_stolen(path):
    text = load(f"nccl-tests/{path.name}")
    assert parsers.get("nccl-debug").detect(text) <= 0.5


@pytest.mark.parametrize("path", files("nccl-debug"), ids=lambda p: p.name)
def test_only_declared_facts(path):
    out = parsers.run("nccl-debug", load(f"nccl-debug/{path.name}"))
    assert set(out) <= set(parsers.get("nccl-debug").facts)
    assert all(facts.is_known_name(n) for n in out)


def test_source_reads_a_named_log_only():
    import troubleshooter.sources.fabric  # noqa: F401
    from troubleshooter.sources.base import SOURCES, Params
    from troubleshooter.probe.targets import LocalTarget

    src = SOURCES["nccl-debug-log"]
    assert src.parser == "nccl-debug" and not src.active
    assert src.missing_params(Params()) == ["nccl_log"]
    ev = LocalTarget().run(src, Params())
    assert ev.status.value == "skipped"


def test_source_reads_the_file(tmp_path):
    import troubleshooter.sources.fabric  # noqa: F401
    from troubleshooter.sources.base import SOURCES, Params
    from troubleshooter.probe.targets import LocalTarget

    log = tmp_path / "nccl.log"
    log.write_text(load("nccl-debug/roce-8nic-stale-aws-ofi-plugin-verbs-rxm-fallback-to-ib-nccl2.27.5.txt"))
    ev = LocalTarget().run(SOURCES["nccl-debug-log"], Params(extra={"nccl_log": str(log)}))
    assert ev.ok, ev.reason
    assert parsers.run("nccl-debug", ev.text)["nccl.net_plugin_failed"] is True


_fragments = st.sampled_from([
    "h:1:2 [0] NCCL INFO ", "h:1:2 [0] a.cc:1 NCCL WARN ", "NCCL INFO Using network ", "NET/IB : Using [0]mlx5_0:1/IB",
    "Channel 00/99999999999999999999 :    0 1", "Trees [0] 1/-1/-1->0->-1", "NCCL version 2.", "=== System : maxBw 1e999 totalBw x ===",
    "+ PCI[1e999] - ", "NCCL_TOPO_FILE set by environment to ", "init.cc:1 -> 3", "Loaded net plugin X (v1)", "nranks 9",
])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_fragments, st.text(max_size=50)), max_size=30), st.sampled_from(["", " ", "\n"]))
def test_random_text_only_parse_error(parts, sep):
    try:
        parsers.get("nccl-debug").func(sep.join(parts) if sep else "\n".join(parts))
    except ParseError:
        pass


def test_gdr_per_hca_warn_sites_and_socket_interfaces_on_real_logs():
    f = parsers.run("nccl-debug", load("nccl-debug/gdr-enabled-and-disabled-per-hca-and-socket-variant.txt"))
    # HCA 5 lost GPUDirect RDMA while HCA 0 has it; the socket run's 'Disabled for eth0' is not an HCA losing GDR
    assert f["nccl.gdr_disabled_hcas"] == ["mlx5_5"] and f["nccl.gdr_enabled"] is True
    assert f["nccl.socket_interfaces"] == ["eth0"]
    f = parsers.run("nccl-debug", load("nccl-debug/nccl2.18.3-topo-file-xml-parse-warn-internal-error.txt"))
    assert f["nccl.warn_sites"] == ["graph/xml.cc"] and f["nccl.socket_interfaces"] == ["eno8303"]
    f = parsers.run("nccl-debug", load("nccl-debug/azure-2node-ib-not-colocated-completion-error-12.txt"))
    assert f["nccl.warn_sites"] == ["transport/net_ib.cc"] and "nccl.gdr_disabled_hcas" not in f


def test_old_warn_lines_without_the_nccl_word_container_without_an_interface():
    # NCCL < 2.4: "host:pid:tid [dev] file:line WARN message", no "NCCL" before the level
    f = parsers.run("nccl-debug", load("nccl-debug/nccl-old-warn-lines-container-socket-creation-failed.txt"))
    assert f["nccl.warnings"] == ["Failed to open libibverbs.so[.1]",
                                  "Socket creation failed : Address family not supported by protocol"]
    assert f["nccl.warn_sites"] == ["misc/ibvwrap.cu", "include/socket.h"]
    assert f["nccl.hosts"] == ["e66aa18dc444"]
    assert f["nccl.ib_no_device"] is True
    assert f["nccl.no_socket_interface"] is True
    assert "nccl.net" not in f


def test_quoted_net_socket_line_with_its_interface_list_rewrapped_one_per_line():
    f = parsers.run("nccl-debug", load("nccl-debug/quoted-net-socket-list-rewrapped-docker-bridges.txt"))
    assert f["nccl.socket_interfaces"] == [
        "bond0", "br-05ab815fa14e", "br-d5d80d7dbbad", "br-dd40dc616638", "br-e3fd6ba7b530", "br-f286beab47e9",
        "br-f5798861ef0d", "br-846ccdc1c516", "br-d77707f6d10f", "br-364ef9f0bffe", "br-9aa3d4529a15",
        "br-46146ba14da2", "veth6163fba", "veth70ec058", "veth07ee21a", "veth9026f58"]
    assert f["nccl.net"] == "Socket"
    assert "nccl.no_socket_interface" not in f
    assert parsers.detect(load("nccl-debug/quoted-net-socket-list-rewrapped-docker-bridges.txt")) == "nccl-debug"


def test_prose_with_info_and_warn_words_is_not_an_nccl_log():
    with pytest.raises(ParseError):
        parsers.run("nccl-debug", "INFO: starting the server\nWARN something odd\n[1]item:value<0>\n")


def test_old_using_interface_lines_name_the_socket_interfaces_not_the_network():
    f = parsers.run("nccl-debug", "a:1:1 [0] INFO NET : Using interface eth0:10.0.0.1<0>\n"
                                  "a:1:1 [0] INFO NET/IB : Using interface ib0 for sideband communication\n")
    assert f["nccl.socket_interfaces"] == ["eth0", "ib0"]
    g = parsers.run("nccl-debug", "a:1:1 [0] INFO NET : Using interface eth0:10.0.0.1<0>\n")
    assert g["nccl.socket_interfaces"] == ["eth0"] and "nccl.net" not in g  # the bootstrap's interface, not the network


def test_affinity_masks_of_two_runs_under_different_launchers():
    """'Setting affinity for GPU 0 to ff' under Slurm, 'ffffff' under Open MPI (nccl-tests#57): 8 CPUs against 24."""
    f = parse("nccltests57-affinity-ff-under-slurm-ffffff-under-openmpi.txt")
    assert f["nccl.affinity_masks"] == {"0": ["ff", "ffffff"]}
    assert f["nccl.affinity_cpus_min"] == 8
    assert f["nccl.affinity_spread"] == 3.0


def test_affinity_as_a_cpu_list_and_as_32_bit_hex_groups():
    f = parse("aws-p4d-eks-4pods-same-node-efa-libfabric-nccl2.27.3.txt")
    assert f["nccl.affinity_masks"] == {"0": ["0-23,48-71"]}
    assert f["nccl.affinity_cpus_min"] == 48
    assert "nccl.affinity_spread" not in f  # four pods, the same mask
    f = parse("a100-sxm4-docker-no-ib-socket-fallback-p2p-direct-2gpu.txt")
    assert f["nccl.affinity_cpus_min"] == 127  # 7fffffff,ffffffff,...: 63 + 64 CPUs


def test_bootstrap_error_returns_and_the_ib_transports_oob_interface():
    f = parse("nccl1000-ipoib-oob-bootstrap-failure-chunk.txt")
    assert f["nccl.bootstrap_failed"] is True
    assert f["nccl.socket_interfaces"] == ["ibp75s0"]
    assert f["nccl.hosts"] == ["dso-s1-r1-a100-03"]
    assert f["nccl.net"] == "IBext"


def test_an_old_warn_quoted_with_its_source_location_but_no_prefix():
    f = parse("nccl210-old-warn-with-location-no-prefix-socket-creation-failed.txt")
    assert f["nccl.warnings"] == ["Socket creation failed : Address family not supported by protocol"]
    assert f["nccl.warn_sites"] == ["include/socket.h"]
    assert f["nccl.no_socket_interface"] is True


def test_the_duplicate_gpu_warn_text_quoted_alone():
    text = load("nccl-debug/msn24-duplicate-gpu-warn-text-alone.txt")
    assert parsers.detect(text) == "nccl-debug"
    f = parsers.run("nccl-debug", text)
    assert f["nccl.warnings"] == ["Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 40"]
    assert f["nccl.hosts"] == []


def test_intra_node_channels_through_shared_memory_and_a_quoted_env_line():
    f = parse("nccltests228-a100-channels-via-shm-direct-excerpt.txt")
    assert (f["nccl.channels_via_shm"], f["nccl.channels_via_p2p"]) == (13, 0)
    text = load("nccl-debug/nccltests228-p2p-level-loc-line-quoted-alone.txt")
    assert parsers.detect(text) == "nccl-debug"
    assert parsers.run("nccl-debug", text)["nccl.env_set"] == {"NCCL_P2P_LEVEL": "LOC"}


def test_last_error_on_the_line_after_a_launcher_tag():
    f = parse("nccl1837-socket-ifname-eth2-last-error-family-garbage.txt")
    assert f["nccl.warnings"] == [
        "ncclSocketInit: connecting to address with family 59936 is neither AF_INET(2) nor AF_INET6(10)"]
    assert f["nccl.env_set"] == {"NCCL_SOCKET_IFNAME": "eth2"}


def test_the_duplicate_gpu_warn_retold_in_a_post():
    f = parse("thomaskalnik-rank-and-rank-both-on-cuda-device-retold.txt")
    assert f["nccl.warnings"] == ["rank 27 and rank 19 both on CUDA device 53000 (PCI 53:00.0)",
                                  "rank 29 and rank 21 both on CUDA device 91000 (PCI 91:00.0)"]


def test_completion_errors_in_the_format_after_nccl_2_19_are_errors():
    """'Got completion from peer X with status=12 ... vendor err 129' (NVIDIA/nccl#1405), not 'with error 12'."""
    f = parse("nccl1405-ib-plugin-completion-from-peer-status-12-vendor-err-129.txt")
    assert len(f["nccl.errors"]) == 3
    assert f["nccl.errors"][0].startswith("NET/IB : Got completion from peer 10.216.210.236<54862> with status=12 "
                                          "opcode=0 len=0 vendor err 129 (Recv)")
    assert f["nccl.warn_sites"] == ["ib_plugin.c"]


def test_the_cuda_calls_nccls_warnings_say_failed_are_cuda_errors() -> None:
    """NCCL's CUDACHECK prints cudaGetErrorString: the nccl-debug kind reads the error through the cuda-errors
    table, so an NCCL log counts for the causes that read cuda.error_codes as a framework traceback does."""
    old = parsers.run("nccl-debug", load("nccl-warn-lines/cuml5961-cuda-failure-driver-insufficient-for-runtime.txt"))
    assert old["cuda.error_codes"] == ["cudaErrorInsufficientDriver"] and old["cuda.error_numbers"] == [35]
    nvls = parsers.run("nccl-debug", load("nccl-warn-lines/nccl1488-nvls-cuda-failure-1-invalid-argument.txt"))
    assert nvls["cuda.error_codes"] == ["cudaErrorInvalidValue"] and nvls["cuda.error_numbers"] == [1]
    assert nvls["nccl.warn_sites"] == ["transport/nvls.cc"]
    # a WARN naming no CUDA call leaves the facts absent (not an empty list that would rule causes out)
    plain = parsers.run("nccl-debug", load("nccl-warn-lines/nemo13996-could-not-find-net-with-id-0.txt"))
    assert "cuda.error_codes" not in plain and "cuda.error_numbers" not in plain


def test_the_ofi_plugin_finding_no_provider_is_no_efa_device_not_a_failed_plugin() -> None:
    new = parsers.run("nccl-debug", load("nccl-warn-lines/awsofi1020-ofi-fi-getinfo-no-data-available-container.txt"))
    assert new["nccl.ofi_no_provider"] is True and new["nccl.net_plugin"] == "OFI"
    assert new["nccl.net_plugin_failed"] is False and new["nccl.ib_no_device"] is False
    old = parsers.run("nccl-debug", load("nccl-warn-lines/efabaseami2-ofi-couldnt-find-any-optimal-provider.txt"))
    assert old["nccl.ofi_no_provider"] is True
    other = parsers.run("nccl-debug", load("nccl-warn-lines/cuml5961-cuda-failure-driver-insufficient-for-runtime.txt"))
    assert "nccl.ofi_no_provider" not in other


def test_ofi_plugin_set_up_failure_is_read_positively():
    # aws-ofi-nccl#241: an option the run-time Libfabric cannot set (the plugin built against a newer one); the
    # index cut the line at "FI_OPT_E"
    f = parse("../nccl-warn-lines/awsofi241-ofi-couldnt-set-fi-opt-efa-truncated.txt")
    assert f["nccl.net_plugin_failed"] is True
    assert "nccl.ofi_no_provider" not in f
    # a working plugin meeting another fault: GPU memory not registered (Libfabric too old for the NCCL)
    assert parse("awsome203-ofi-register-rail-mr-type2-einval.txt")["nccl.net_plugin_failed"] is False


def test_ofi_no_eligible_provider_then_init_failure_is_no_provider_not_a_failed_plugin():
    f = parse("polaris-ofi1.21-cxi-no-eligible-providers-init-failed.txt")
    assert f["nccl.ofi_no_provider"] is True
    assert f["nccl.net_plugin"] == "AWS Libfabric"
    assert f["nccl.net_plugin_failed"] is False  # the WARNs that follow are the plugin giving up for want of one
    assert "NET/OFI Unable to find a protocol that worked. Failing initialization." in f["nccl.warnings"]


def test_a_requested_network_whose_plugin_is_missing():
    f = parse("cscs-ofi-plugin-not-found-network-aws-libfabric-not-found.txt")
    assert f["nccl.net_plugin_failed"] is True  # NCCL_NET='AWS Libfabric' asked for; its plugin never loaded
    assert f["nccl.warnings"] == ["Error: network AWS Libfabric not found."]
    assert "nccl.ofi_no_provider" not in f
