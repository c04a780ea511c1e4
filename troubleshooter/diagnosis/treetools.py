"""Tooling for tree authors: the linter, Mermaid/DOT graphs, and promtool-style tree tests."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from troubleshooter.diagnosis import conditions, profiles
from troubleshooter.model import facts as factmod
from troubleshooter import locations, sources, yamlio
from troubleshooter.diagnosis import engine as eng
from troubleshooter.diagnosis.engine import NEED_WANTS, Engine, Tree, TreeError


def _labelled_edges(node: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Every way out of a node, in order: (next node, kind, label). Kinds: branch, unknown, default,
    choice, next. The linter and both graph formats read edges from here."""
    out = [(br["next"], "branch", br.get("because") or "") for br in node.get("branches", []) or []]
    out += [(node[key]["next"], key, key) for key in ("unknown", "default") if key in node]
    out += [(c["next"], "choice", c["label"]) for c in node.get("choices", []) or []]
    if node.get("next"):
        out.append((node["next"], "next", ""))
    return out


def _edges(node: dict[str, Any]) -> list[str]:
    return [target for target, _, _ in _labelled_edges(node)]


def lint(trees: dict[str, Tree] | None = None, directory: Path | None = None) -> list[str]:
    """Every problem in the trees, each naming file:line. Empty list = clean."""
    problems: list[str] = []
    try:
        trees = trees if trees is not None else eng.load_trees(directory)
    except TreeError as exc:
        return str(exc).splitlines()
    registry = sources.load_all()
    glossary = eng.load_glossary(directory)
    try:
        generic = profiles.get("generic").thresholds
    except profiles.ProfileError as exc:
        problems.append(str(exc))
        generic = {}
    all_hyps = {h["id"] for t in trees.values() for h in t.hypotheses}

    for t in trees.values():
        where = lambda nid: f"{t.path}:{t.line(nid) or '?'}: {t.id}.{nid}"  # noqa: E731
        if t.start not in t.nodes:
            problems.append(f"{t.path}: start node {t.start!r} does not exist")
        for nid, node in t.nodes.items():
            kind = node["kind"]
            for nxt in _edges(node):
                if nxt not in t.nodes:
                    problems.append(f"{where(nid)}: goes to {nxt!r}, which is not a node of {t.id}")
            if kind == "ask" and not node.get("choices"):
                problems.append(f"{where(nid)}: a question needs choices")
            if kind == "ask" and not node.get("question"):
                problems.append(f"{where(nid)}: a question needs 'question'")
            if kind == "ask" and node.get("assume") and node["assume"] not in [c["id"] for c in node.get("choices", [])]:
                problems.append(f"{where(nid)}: assume {node['assume']!r} is not one of its choices")
            if kind == "probe":
                if not node.get("branches") and "default" not in node:
                    problems.append(f"{where(nid)}: a probe needs branches")
                if node.get("branches") and "unknown" not in node:
                    problems.append(f"{where(nid)}: a probe needs an explicit 'unknown' branch (facts may be unknown)")
                if "default" not in node:
                    problems.append(f"{where(nid)}: a probe needs a 'default' branch (when no condition holds)")
                for need in node.get("needs", []):
                    wants = NEED_WANTS.get(need)
                    if wants and not (set(wants) & set(node.get("sources", [])) | set(wants) & set(node.get("sides", []))):
                        problems.append(f"{where(nid)}: needs {need} but neither reads {' nor '.join(wants)}")
                for s in node.get("sources", []):
                    if s not in registry:
                        problems.append(f"{where(nid)}: unknown source {s!r}")
                for i, br in enumerate(node.get("branches", [])):
                    for e in conditions.validate(br.get("when"), f"branches[{i}].when"):
                        problems.append(f"{where(nid)}: {e}")
                    for f, _ in conditions.facts_named(br.get("when")):
                        if not factmod.is_known_name(f):
                            problems.append(f"{where(nid)}: unknown fact {f!r}")
                    for k in conditions.profile_keys(br.get("when")):
                        if generic and k not in generic:
                            problems.append(f"{where(nid)}: unknown profile threshold {k!r}")
                for name in node.get("show", []) + node.get("show_known", []):
                    f = name.split(":", 1)[-1]
                    if not factmod.is_known_name(f):
                        problems.append(f"{where(nid)}: shows unknown fact {f!r}")
            if node.get("needs") and kind != "probe":
                problems.append(f"{where(nid)}: only a probe step 'needs' something (it is asked for before it runs)")
            if kind in ("probe", "ask", "conclude") and not node.get("why"):
                problems.append(f"{where(nid)}: every step needs a 'why' (what it checks, what the signal means)")
            if kind == "call":
                if node.get("tree") not in trees:
                    problems.append(f"{where(nid)}: calls unknown tree {node.get('tree')!r}")
                elif trees[node["tree"]].kind != "subtree":
                    problems.append(f"{where(nid)}: calls {node['tree']!r}, which is not a subtree")
            if kind == "conclude":
                if not node.get("verify"):
                    problems.append(f"{where(nid)}: a conclusion needs a verify step")
                if not node.get("fix"):
                    problems.append(f"{where(nid)}: a conclusion needs fix commands")
                if not node.get("cause"):
                    problems.append(f"{where(nid)}: a conclusion needs a stable 'cause' id")
                for name in node.get("evidence", []):
                    f = name.split(":", 1)[-1]
                    if not factmod.is_known_name(f):
                        problems.append(f"{where(nid)}: evidence names unknown fact {f!r}")
                if node.get("hypothesis") and node["hypothesis"] not in all_hyps:
                    problems.append(f"{where(nid)}: unknown hypothesis {node['hypothesis']!r}")
            for spec in [*node.get("branches", []), *(node[k] for k in ("unknown", "default") if k in node), *node.get("choices", [])]:
                for h in [*spec.get("rule_in", []), *spec.get("rule_out", []), *spec.get("not_applicable", [])]:
                    if h not in all_hyps:
                        problems.append(f"{where(nid)}: unknown hypothesis {h!r}")
            for field in ("why", "summary", "caution", "question"):
                for term in eng.linked_terms(node.get(field, "")):
                    if term.lower() not in glossary:
                        problems.append(f"{where(nid)}: [[{term}]] is not in the glossary")
        # reachability and cycles
        reach, stack = set(), [t.start] if t.start in t.nodes else []
        while stack:
            n = stack.pop()
            if n in reach or n not in t.nodes:
                continue
            reach.add(n)
            stack.extend(_edges(t.nodes[n]))
        for nid in t.nodes:
            if nid not in reach:
                problems.append(f"{where(nid)}: unreachable from {t.start!r}")
        cyc = _find_cycle(t)
        if cyc:
            problems.append(f"{t.path}: cycle {' -> '.join(cyc)}")
        problems += _lint_templates(t, registry)
    # call cycles between trees
    for t in trees.values():
        seen: list[str] = []
        if _call_cycle(trees, t.id, seen):
            problems.append(f"{t.path}: subtree calls loop: {' -> '.join(seen)}")
    return problems


def _find_cycle(t: Tree) -> list[str] | None:
    color: dict[str, int] = {}
    path: list[str] = []

    def dfs(n: str) -> list[str] | None:
        color[n] = 1
        path.append(n)
        for m in _edges(t.nodes.get(n, {})):
            if m not in t.nodes:
                continue
            if color.get(m) == 1:
                return path[path.index(m):] + [m]
            if color.get(m) is None:
                r = dfs(m)
                if r:
                    return r
        path.pop()
        color[n] = 2
        return None

    return dfs(t.start) if t.start in t.nodes else None


def _call_cycle(trees: dict[str, Tree], tid: str, seen: list[str]) -> bool:
    if tid in seen:
        seen.append(tid)
        return True
    seen.append(tid)
    for node in trees[tid].nodes.values():
        if node["kind"] == "call" and node.get("tree") in trees:
            if _call_cycle(trees, node["tree"], seen):
                return True
    seen.pop()
    return False


def _lint_templates(t: Tree, registry) -> list[str]:
    """A fix or verify template may only use facts that a source run on *every* path to it produces."""
    problems = []
    preds: dict[str, list[str]] = {n: [] for n in t.nodes}
    for nid, node in t.nodes.items():
        for m in _edges(node):
            if m in preds:
                preds[m].append(nid)
    everything = frozenset((s, side) for s in registry for side in ("target", "host"))
    guaranteed: dict[str, frozenset] = {n: everything for n in t.nodes}
    if t.start in guaranteed:
        guaranteed[t.start] = frozenset()
    changed = True
    while changed:
        changed = False
        for nid in t.nodes:
            if nid == t.start:
                continue
            sets = []
            for p in preds[nid]:
                pnode = t.nodes[p]
                add = frozenset((s, side) for s in pnode.get("sources", []) for side in pnode.get("sides", ["target"])) \
                    if pnode["kind"] == "probe" else frozenset()
                sets.append(guaranteed[p] | add)
            new = frozenset.intersection(*sets) if sets else frozenset()
            if new != guaranteed[nid]:
                guaranteed[nid] = new
                changed = True
    for nid, node in t.nodes.items():
        if node["kind"] != "conclude":
            continue
        have = guaranteed[nid]
        texts = [fx["command"] for fx in node.get("fix", [])] + [node.get("verify", {}).get("command", "")]
        for text in texts:
            for fact, side in eng.template_facts(text):
                if not factmod.is_known_name(fact):
                    problems.append(f"{t.path}:{t.line(nid) or '?'}: {t.id}.{nid}: template uses unknown fact {fact!r}")
                    continue
                prods = set(sources.producers_of(fact))
                if not any((p, side) in have for p in prods):
                    problems.append(f"{t.path}:{t.line(nid) or '?'}: {t.id}.{nid}: template uses {side}:{fact}, "
                                    f"which no probe on every path here establishes (producers: {', '.join(sorted(prods)) or 'none'})")
    return problems


# ---------------------------------------------------------------------------- graphs
def cut_words(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut between words with a visible "…" (never mid-word)."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    head = text[: width - 1]
    if text[width - 1] != " " and " " in head:
        head = head[: head.rindex(" ")]
    return head.rstrip(" ,;:(") + "…"


def _label(node_id: str, node: dict[str, Any]) -> str:
    text = node.get("title") or node.get("question") or node_id
    return cut_words(text.replace('"', "'"), 60)


def mermaid(t: Tree) -> str:
    shapes = {"ask": ('{{"', '"}}'), "probe": ('["', '"]'), "conclude": ('(["', '"])'), "call": ('[["', '"]]'), "end": ('(("', '"))')}
    lines = ["flowchart TD"]
    for nid, node in t.nodes.items():
        a, b = shapes[node["kind"]]
        lines.append(f"  {nid.replace('-', '_')}{a}{_label(nid, node)}{b}")
    arrows = {"branch": "-->", "choice": "-->", "unknown": "-.->", "default": "-.->"}
    for nid, node in t.nodes.items():
        src = nid.replace("-", "_")
        for target, kind, label in _labelled_edges(node):
            dst = target.replace("-", "_")
            if kind == "next":
                lines.append(f"  {src} --> {dst}")
            else:
                text = cut_words(label or "when", 30) if kind in ("branch", "choice") else label
                lines.append(f"  {src} {arrows[kind]}|{text}| {dst}")
    return "\n".join(lines).replace("|)", ")|") + "\n"


def dot(t: Tree) -> str:
    shapes = {"ask": "diamond", "probe": "box", "conclude": "doubleoctagon", "call": "component", "end": "circle"}
    lines = [f'digraph "{t.id}" {{', "  rankdir=TB;"]
    for nid, node in t.nodes.items():
        lines.append(f'  "{nid}" [shape={shapes[node["kind"]]}, label="{_label(nid, node)}"];')
    for nid, node in t.nodes.items():
        for target, kind, label in _labelled_edges(node):
            if kind == "next":
                lines.append(f'  "{nid}" -> "{target}";')
            elif kind in ("unknown", "default"):
                lines.append(f'  "{nid}" -> "{target}" [style=dashed, label="{label}"];')
            else:
                lines.append(f'  "{nid}" -> "{target}" [label="{cut_words(label, 30)}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- tree tests
@dataclasses.dataclass
class CaseResult:
    file: str
    tree: str
    name: str
    ok: bool
    problems: list[str]
    conclusions: list[str]
    path: list[str]


def tests_dir(directory: Path | None = None) -> Path:
    return (directory or locations.trees_dir()) / "tests"


def load_cases(directory: Path | None = None) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for p in sorted(tests_dir(directory).glob("*.yaml")):
        data = yamlio.load(p)
        if not isinstance(data, dict) or "cases" not in data:
            raise TreeError(f"{p}: a tree test file needs 'tree' and 'cases'")
        for case in data["cases"]:
            c = dict(case)
            c.setdefault("tree", data.get("tree"))
            out.append((p, c))
    return out


def run_case(path: Path, case: dict[str, Any], engine_: Engine | None = None, directory: Path | None = None) -> CaseResult:
    from troubleshooter.diagnosis.workbench import CannedFacts, LiveFacts

    name = str(case.get("name", "?"))
    tree_id = case.get("tree")
    where = f"{path}:{yamlio.line_of(case) or '?'}"
    prof = profiles.get(case.get("profile") or "generic").thresholds
    e = engine_ or Engine(profile=prof)
    e.profile = prof
    if "bundle" in case:
        from troubleshooter.probe.bundle import Bundle
        from troubleshooter.probe.targets import BundleTarget

        bpath = (directory or locations.trees_dir()) / case["bundle"]
        facts = LiveFacts.for_target(BundleTarget(Bundle.open(bpath)))
    elif "evidence" in case:
        from troubleshooter.diagnosis.pasted import EvidenceFacts

        base = (directory or locations.trees_dir())
        facts = EvidenceFacts.from_specs([str(base / s) if ":" not in s else s for s in case["evidence"]], base=base)
    else:
        facts = CannedFacts(case.get("facts", {}))
    problems: list[str] = []
    try:
        w = eng.auto_walk(e, tree_id, facts, answers=case.get("answers", {}))
    except TreeError as exc:
        return CaseResult(str(path), str(tree_id), name, False, [f"{where}: {exc}"], [], [])
    got = [c.cause for c in w.conclusions]
    path_nodes = [f"{s.tree}.{s.node}" if s.tree != tree_id else s.node for s in w.steps]
    exp = case.get("expect", {}) or {}
    if "conclusions" in exp and sorted(exp["conclusions"]) != sorted(got):
        problems.append(f"{where}: {name}: expected conclusions {sorted(exp['conclusions'])}, got {sorted(got)}")
    for c in exp.get("includes", []):
        if c not in got:
            problems.append(f"{where}: {name}: expected to reach {c!r}, got {got}")
    for c in exp.get("excludes", []):
        if c in got:
            problems.append(f"{where}: {name}: must NOT reach {c!r}, but did")
    if "path" in exp:
        it = iter(path_nodes)
        if not all(any(p == q for q in it) for p in exp["path"]):
            problems.append(f"{where}: {name}: expected path {exp['path']} (in order), got {path_nodes}")
    for hid, state in (exp.get("hypotheses") or {}).items():
        h = next((h for h in w.hypotheses if h.id == hid), None)
        if h is None or h.state != state:
            problems.append(f"{where}: {name}: hypothesis {hid} expected {state}, got {h.state if h else 'absent'}")
    return CaseResult(str(path), str(tree_id), name, not problems, problems, got, path_nodes)


def run_all(directory: Path | None = None) -> list[CaseResult]:
    return [run_case(p, c, directory=directory) for p, c in load_cases(directory)]


# ---------------------------------------------------------------------------- signal facts nobody reads
#: Fact names that report trouble (an error, a failure, a fault, a down or degraded link ...). Every one a
#: parser declares must be read by some rule: a tree condition, a preflight check or a cause's signature.
SIGNAL_PATTERNS = ("*.errors", "*.warnings", "*error*", "*_failed", "*failure*", "*fault*", "*.down_ports",
                   "*inactive*", "*degraded*", "*throttle*", "*fallen_off_bus*", "*no_device*", "*fallback*",
                   "*selects_none", "*.cmdline_warnings", "*memoryless*", "*wrong*", "*no_*interface*", "*fatal*")


#: Facts that match a signal pattern but describe rather than signal (the signal itself is another fact).
NOT_SIGNALS = {
    "dmesg.fallen_off_bus_devices": "which buses; dmesg.fallen_off_bus is the signal",
    "dmesg.xid_nonfatal_codes": "the NVLink Xids the driver said it recovered from (the name matches *fatal*): it takes "
                                "them out of the faults, classed 'corrected' in gpu.xid_classes, which the rules read",
    "docker.default_runtime": "the engine's default runtime, a setting (it matches *fault* by its name only)",
    "dmesg.iommu_default_domain": "the IOMMU mode, a setting; dmesg.iommu_faults is the signal",
    "nccl.topo_file.parse_error": "the parser's message; nccl.topo_file.parse_ok is the signal",
    "gpu.throttle_reasons": "which reasons; gpu.throttled is the signal",
    "numa.memoryless_nodes": "includes normal CPU-less nodes (GPU memory on GH200); numa.cpu_memoryless_nodes is the signal",
    "cuda.errors": "the messages; cuda.error_codes (and cuda.system_not_ready) are the signals",
    "rdma_dp.errors": "the RDMA device plugin's start-up failures as printed; rdma_dp.netns_exclusive is the signal a "
                      "cause reads (an invalid configuration or no device found names none by itself)",
    "cuda.error_numbers": "the numbers as printed; cuda.error_codes names them",
    "pyxis.errors": "pyxis's and enroot's messages as printed (an image that failed to import, a container that exited "
                    "too soon), which name no cause by themselves; pyxis.dirs_not_created is the signal a cause reads "
                    "(and the NVIDIA hook's errors in the same log are nvidia-container-cli's)",
    "ngc.cuinit_error": "the cuInit result an NGC banner prints beside its driver check; ngc.driver_too_old is the "
                        "signal cuda-driver-mismatch reads (804 alone is also a consumer GPU refused forward compatibility)",
    "mpi.fatal_errors": "MPICH's fatal error classes as printed (an invalid communicator, 'Other MPI error' from UCX), "
                        "which name no cause in the domain by themselves: an application's own bug or a library it "
                        "loads (set AP's darshan case); shown as evidence",
    "gpu.nvlink_inactive_links": "which links; gpu.nvlink_inactive is the signal",
    "gpu.nvlink_all_inactive": "PCIe GPUs without NVLink print it too; gpu.nvlink_inactive counts real links down",
    "gpu.nvlink_error_counts": "counter totals; gpu.nvlink_error_links is the signal",
    "gpu.smi_error": "nvidia-smi's message as printed; gpu.smi_error_kind classifies it and is the signal",
    "torch.errors": "the exception lines as raised in Python; their NCCL part is also nccl.errors, and NCCL's "
                    "'Last error' text nccl.warnings, which the causes read",
    "torch.nccl_error_kinds": "NCCL's result class (ncclSystemError ...), which names no cause by itself; the "
                              "'Last error' text (nccl.warnings) does",
    "nhc.fault_codes": "NHC's codes for the checks it failed, which name no cause (a failed NCCL check can be a "
                       "topology file, a GPU or the fabric); the measured figures it carries are what rules weigh",
    "ucx.error_sites": "which UCX source files; ucx.errors (and ucx.warnings) are the signals",
    "nccl_tests.nccl_error": "the error code the test stopped on ('unhandled system error'), which names no cause; "
                             "NCCL's own WARN lines (nccl.warnings, nccl.no_socket_interface ...) are the signals",
    "nvshmem.errors": "NVSHMEM's messages as printed; nvshmem.peermem_missing is the signal a cause reads",
    "hami.segfault": "that HAMi-core caught a crash, which names no cause by itself; where it crashed "
                     "(hami.crash_in_nccl) does",
    "hami.errors": "HAMi-core's ERROR lines as printed (an out-of-memory refusal is its limit at work); its crash "
                   "inside NCCL (hami.crash_in_nccl) is the signal cuda-interposer-preload reads",
    "nvbandwidth.testcase_errors": "nvbandwidth's messages for testcases that stopped (a failed data check, an invalid "
                                   "testcase name), as printed, which name no cause by themselves",
    "driver_install.errors": "the installer's and DKMS's messages as printed; driver_install.failed is the signal "
                             "(gpu-driver-not-loaded reads it) and driver_install.reason says why",
    "k8s_device_plugin.errors": "the device plugin's error lines as printed; k8s_device_plugin.nvml_missing is the "
                                "signal nvidia-runtime-not-default reads",
    "k8s_device_plugin.nvml_error": "NVML's answer as the plugin printed it; the library not loading "
                                    "(k8s_device_plugin.nvml_missing) is the signal, other answers name no cause "
                                    "by themselves",
    "k8s_device_plugin.no_devices": "that the plugin serves nothing, which follows from NVML missing "
                                    "(k8s_device_plugin.nvml_missing, the signal) or from a node without GPUs",
    "container_cli.error": "the NVIDIA container hook's first message as printed; its kind (container_cli.error_kinds) "
                           "is the signal the causes read",
    "container_cli.errors": "the hook's messages as printed; their kinds (container_cli.error_kinds) are the signal",
    "container_cli.error_kind": "the first message's kind only; the causes read every message's "
                                "(container_cli.error_kinds), where unknown-device, mount-error, requirement-other "
                                "and other name no cause: they have several (a GPU index this node lacks, a device "
                                "plugin's list strategy, a driver file baked into the image, a denied mount)",
    "ucx.segfault": "that a process crashed inside UCX, which names no cause by itself; where the crash is a CPU copy of "
                    "a buffer in UCX's send path (ucx.segfault_in_copy), ucx-not-cuda-aware reads it",
    "ib.symbol_errors_max": "the largest symbol error count since the counters' last reset (its name matches *error*); "
                            "ib.physical_error_ports, read by fabric-link-errors, names the ports",
    "dcgm.cli_errors": "dcgmi's own errors (the host engine unreachable, health watches not set, a module not "
                       "loaded): DCGM's state, not the GPUs'; shown as evidence",
    "dcgm.nvlink_down": "which GPUs' links DCGM reports down; dcgm.nvlink_links_down, read by nvlink-down, counts them",
    "libfabric.warnings": "libfabric's warn and error lines as printed, which name no cause by themselves (a provider "
                          "that is tried and skipped warns too); what they say of memory registration "
                          "(libfabric.mr_reg_refused) is what the causes read",
    "fm.log.errors": "the fabric manager's ERROR lines as printed; what they say (fm.log.config_failed, "
                     "fm.log.nvswitch_fatal, fm.log.gpu_nvl_fatal) is what the causes read",
    "fm.log.nvswitch_nonfatal": "a count of non-fatal NVSwitch errors, which the fabric manager corrects (GPUd classes "
                                "them as events, not an unhealthy node); the fatal ones (fm.log.nvswitch_fatal) are the "
                                "signal",
    "slurm.client.alloc_failed": "Slurm's reason for refusing an allocation as printed (a QOS or account limit, a "
                                 "partition's node limit, a request no node fits): a site's policy or the request, "
                                 "which names no cause in the domain by itself; shown as evidence",
    "slurm.client.launch_failed": "a node refusing to start a step's tasks as srun printed it (an invalid job "
                                  "credential, a SPANK plugin's init): the plugin's own errors (pyxis's) are the "
                                  "signals its causes read",
    "slurm.client.node_failures": "which nodes Slurm lost during the step; the node's own logs say why",
    "slurm.client.plugins_failed": "which Slurm plugins did not load; the library the loader could not find "
                                   "(slurm.client.missing_libraries) is the signal slurm-command-inside-container reads",
    "slurm.client.task_failures": "tasks' exit codes and signals as srun printed them, which name no cause by themselves "
                                  "(the program's own error is in its output): even a bus error in every task is a "
                                  "program overwritten while it ran as often as a full /dev/shm (tests/data/slurm-client)",
    "cdi_generate.errors": "nvidia-ctk's error lines while writing a CDI spec as printed (NVML not loading, a path it "
                           "cannot write); the engine's refusal of a device the spec lacks (cdi.unresolvable_devices, "
                           "cdi.missing_host_devices) is the signal the causes read",
    "image.pull_failed": "a registry that would not give an image (a tag it does not have, a repository it refuses): "
                         "the image, not the node, so no cause in the domain; the references (image.not_found) are "
                         "shown as evidence",
    "mpi.runtime_errors": "the MPI runtime's own error log lines as printed; the usual one, 'Data unpack would read "
                          "past end of buffer', is Open MPI, PMIx or hwloc builds that differ between the nodes (or a "
                          "program's own port connection), outside the tool's causes; shown as evidence",
    "nvshmem.init_failed": "that NVSHMEM stopped at init, which the user already sees and which names no cause by "
                           "itself; what stopped it (nvshmem.peermem_missing) is read by gdr-disabled",
}


def _condition_facts(cond: Any, out: set[str]) -> None:
    for name, _side in conditions.facts_named(cond):
        out.add(name)


def facts_read_by_rules(trees: dict[str, Tree] | None = None) -> set[str]:
    """Every fact name a tree condition, a preflight check or a cause signature reads."""
    from troubleshooter.diagnosis import causes, checks

    trees = trees if trees is not None else eng.load_trees()
    read: set[str] = set()
    for t in trees.values():
        for node in t.nodes.values():
            for br in node.get("branches", []) or []:
                _condition_facts(br.get("when", {}), read)
            if isinstance(node.get("verify"), dict) and node["verify"].get("expect"):
                _condition_facts(node["verify"]["expect"], read)
    for c in checks.load():
        for block in c.blocks.values():
            _condition_facts(block["when"], read)
    for cause in causes.load():
        for s in cause.signatures:
            _condition_facts(s.when, read)
    from troubleshooter.model import combine

    for derived, inputs in combine.READS.items():
        if derived in read:
            read.update(inputs)
    return read


def unread_signals(trees: dict[str, Tree] | None = None) -> list[str]:
    """Signal facts (SIGNAL_PATTERNS) that parsers declare and no rule reads: each a problem line."""
    import fnmatch

    read = facts_read_by_rules(trees)
    sources.load_all()
    out = []
    for name, spec in sorted(factmod.REGISTRY.items()):
        if not any(fnmatch.fnmatchcase(name, p) for p in SIGNAL_PATTERNS):
            continue
        if name in read or name in NOT_SIGNALS or any(fnmatch.fnmatchcase(r, name) for r in read if "*" in name):
            continue
        out.append(f"signal fact {name} ({spec.parser}: {spec.doc[:70]}) is read by no rule "
                   "(a tree condition, a check or a cause signature in decision_trees/causes.yaml)")
    return out
