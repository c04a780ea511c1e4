"""The NVIDIA GPU Operator's controller log, and Node Feature Discovery's refusal of the labels it relies on.

Real samples (NVIDIA/gpu-operator#149, a blog's EKS walk-through; NVIDIA/gpu-operator#106; tests/data/gpu-operator)::

    {"level":"info","ts":1776590639.476854,"logger":"controllers.ClusterPolicy","msg":"ClusterPolicy step completed","state:":"state-device-plugin","status":"disabled"}
    {"level":"info","ts":1613468313.7898238,"logger":"controller_clusterpolicy","msg":"Could not get any nodes to match nvidia.com/gpu.present label","Request.Namespace":"default","Request.Name":"Node","ERROR":""}
    2020/11/24 09:15:59 Namespace 'nvidia.com' is not allowed. Ignoring label 'nvidia.com/cuda.runtime.major'

Read: each ClusterPolicy state and the status of its last step (ready, notReady, disabled); the number of nodes the
operator found labelled as GPU nodes; its "Could not get any nodes to match nvidia.com/gpu.present label" (no node
carries the label NFD and GFD put on GPU nodes: the nodes have no GPU, or NFD is not running) and "Could not find
kernel full version" (NFD's kernel-version label is missing too); NFD master's refusal of a label namespace; and in
the operator's Helm values, the containerd config its toolkit is told to edit and whether to make nvidia the default.

What it means here: the operator deploys the driver, toolkit and device plugin only where its states run and its
labels are found. A state "disabled" was turned off in the ClusterPolicy (Helm's devicePlugin.enabled=false): nothing
of it runs, and unless something else provides it (a separately installed device plugin), pods asking for
nvidia.com/gpu stay Pending. Missing NFD labels stop the operator before it does anything on the nodes.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

MAX_STATES = 40

FACTS = [
    ("gpu_operator.states", "dict", "", "each ClusterPolicy state -> the status of its last step in the log (ready, "
     "notReady, disabled)"),
    ("gpu_operator.disabled_states", "list", "", "the states whose last step was 'disabled' (state-device-plugin: no "
     "device plugin deployed)"),
    ("gpu_operator.not_ready_states", "list", "", "the states whose last step was 'notReady'"),
    ("gpu_operator.gpu_node_count", "number", "count", "nodes the operator found with the GPU label ('Number of nodes "
     "with GPU label')"),
    ("gpu_operator.no_gpu_labelled_nodes", "bool", "", "the operator found no node labelled nvidia.com/gpu.present "
     "('Could not get any nodes to match nvidia.com/gpu.present label'): no GPU node, or NFD not labelling them"),
    ("gpu_operator.kernel_version_missing", "bool", "", "the operator could not read a node's kernel version label "
     "('Could not find kernel full version'), which NFD sets"),
    ("gpu_operator.toolkit_containerd_config", "string", "", "the containerd config file the operator's toolkit is told to "
     "edit (Helm values' toolkit.env CONTAINERD_CONFIG)"),
    ("gpu_operator.toolkit_sets_default", "bool", "", "the toolkit is told to make the nvidia runtime containerd's default "
     "(toolkit.env CONTAINERD_SET_AS_DEFAULT)"),
    ("nfd.rejected_label_namespaces", "list", "", "label namespaces Node Feature Discovery's master refused ('Namespace "
     "'nvidia.com' is not allowed. Ignoring label ...'): GPU Feature Discovery's labels dropped"),
]

# the controller's logger, in its JSON lines ("logger":"controllers.ClusterPolicy") or zap's console lines
# ("2022-08-02 10:46:461\tINFO\tcontrollers.ClusterPolicy\tINFO: ClusterPolicy step completed\t{...}")
_OPERATOR = re.compile(r'(?:"logger"\s*:\s*"|\t)(?:controllers\.ClusterPolicy|controller_clusterpolicy)(?:"|\t)')
_STEP = re.compile(r'"state:?"\s*:\s*"([\w-]{1,80})"\s*,\s*"status"\s*:\s*"(\w{1,20})"')
_NOT_READY = re.compile(r"states not ready: \[([^\]]{0,2000})\]")
_NODE_COUNT = re.compile(r'Number of nodes with GPU label"?\s*(?:,\s*)?\{?\s*"NodeCount"\s*:\s*(\d+)')
_NFD_NS = re.compile(r"Namespace '([^']{1,100})' is not allowed\. Ignoring label")
# Helm values' toolkit.env, block ("- name: X" / "value: Y") or flow ("- {name: X, value: Y}") style
_ENV = re.compile(r"name:\s*(CONTAINERD_CONFIG|CONTAINERD_SET_AS_DEFAULT)\s*(?:,\s*)?\n?\s*value:\s*\\?[\"']?([^\s\"'\\}]+)")
_NO_NODES = "Could not get any nodes to match nvidia.com/gpu.present label"
_NO_KERNEL = "Could not find kernel full version"


def _detect(text: str) -> float:
    head = text[:262144]
    if _OPERATOR.search(head) or _NFD_NS.search(head):
        return 0.85
    return 0.8 if "toolkit:" in head and _ENV.search(head) else 0.0


@parser(
    "gpu-operator",
    detect=_detect,
    summary="the GPU Operator's controller log (ClusterPolicy states, NFD labels it needs) and NFD's label refusals",
    facts=FACTS,
    command="kubectl logs -n gpu-operator deploy/gpu-operator --tail=200",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "the GPU Operator's log")
    states: dict[str, str] = {}
    nodes: int | None = None
    no_nodes = no_kernel = False
    rejected: list[str] = []
    operator_lines = 0
    for ln in text.split("\n"):
        s = ln.strip()
        m = _NFD_NS.search(s) if "is not allowed" in s else None
        if m:
            if m.group(1) not in rejected and len(rejected) < 10:
                rejected.append(m.group(1))
            continue
        if not _OPERATOR.search(s):
            continue
        operator_lines += 1
        no_nodes = no_nodes or _NO_NODES in s
        no_kernel = no_kernel or _NO_KERNEL in s
        n = _NODE_COUNT.search(s)
        if n:
            nodes = int(n.group(1))
        st = _STEP.search(s)
        if st and (st.group(1) in states or len(states) < MAX_STATES):
            states[st.group(1)] = st.group(2)
        nr = _NOT_READY.search(s)
        if nr:  # "ClusterPolicy is not ready, states not ready: [state-driver state-device-plugin]"
            for name in nr.group(1).split():
                if states.get(name) != "disabled" and (name in states or len(states) < MAX_STATES):
                    states[name] = "notReady"
    env = {m.group(1): m.group(2) for m in _ENV.finditer(text[:1 << 20])}
    if not operator_lines and not rejected and not env:
        raise ParseError("no GPU Operator controller line (logger controllers.ClusterPolicy), no NFD label refusal and no "
                         "toolkit.env of its Helm values")
    facts: dict[str, Any] = {}
    if operator_lines:
        facts["gpu_operator.states"] = states
        facts["gpu_operator.disabled_states"] = [k for k, v in states.items() if v == "disabled"]
        facts["gpu_operator.not_ready_states"] = [k for k, v in states.items() if v == "notReady"]
        facts["gpu_operator.no_gpu_labelled_nodes"] = no_nodes
        facts["gpu_operator.kernel_version_missing"] = no_kernel
        if nodes is not None:
            facts["gpu_operator.gpu_node_count"] = nodes
    if "CONTAINERD_CONFIG" in env:
        facts["gpu_operator.toolkit_containerd_config"] = env["CONTAINERD_CONFIG"]
    if "CONTAINERD_SET_AS_DEFAULT" in env:
        facts["gpu_operator.toolkit_sets_default"] = env["CONTAINERD_SET_AS_DEFAULT"].lower() in ("true", "1", "yes")
    if rejected:
        facts["nfd.rejected_label_namespaces"] = rejected
    return facts
