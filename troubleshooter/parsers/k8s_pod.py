"""A Kubernetes pod spec: ``kubectl get pod NAME -o yaml``, or a manifest with pod templates (Job, PyTorchJob,
MPIJob, Deployment, LeaderWorkerSet ...).

Real sample (a Job of 8 training pods with 8 GPUs and a shared RDMA device each; tests/data/k8s-pod)::

    apiVersion: batch/v1
    kind: Job
    spec:
      template:
        spec:
          containers:
            - name: trainer
              resources:
                limits:
                  nvidia.com/gpu: 8
                  rdma/rdma_shared_device_a: 1
              env:
                - name: NCCL_IB_DISABLE
                  value: "0"

Every container of every pod template in the text is read (YAML documents separated by ``---`` and
``kind: List`` items too); the facts say what the training containers were given.

What it means for NCCL: a pod's ``/dev/shm`` is the runtime's 64 MB unless an ``emptyDir`` with ``medium:
Memory`` is mounted there (or ``hostIPC``); RDMA needs a device-plugin resource (``rdma/...``, an SR-IOV
``nvidia.com/...`` or ``mellanox...`` resource), a mounted ``/dev/infiniband`` or a privileged container, and
``IPC_LOCK`` to pin memory; without ``hostNetwork`` the pod has its own interfaces (a Multus annotation
``k8s.v1.cni.cncf.io/networks`` adds the RDMA ones). ``env`` entries with a ``value`` are given as
``env.var.*`` (the environment is not known in full from a spec).
"""

from __future__ import annotations

import re
from typing import Any, Iterator


from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("k8s.kinds", "list", "", "the kinds of the YAML documents (Pod, Job, PyTorchJob ...)"),
    ("k8s.containers", "list", "", "names of the containers read (init containers not included)"),
    ("k8s.images", "list", "", "the images of the containers read, as written (nvcr.io/nvidia/pytorch:24.05-py3 ...)"),
    ("k8s.gpus", "number", "count", "most nvidia.com/gpu (or amd.com/gpu) a container asks for (limits, else requests)"),
    ("k8s.rdma_resources", "list", "", "RDMA device-plugin resources the containers ask for (rdma/..., nvidia.com/...hostdev/sriov, mellanox..., ...infiniband...)"),
    ("k8s.rdma_devices", "bool", "", "the containers get RDMA devices: an RDMA resource, a mounted /dev/infiniband, or privileged"),
    ("k8s.privileged", "bool", "", "some container is privileged"),
    ("k8s.capabilities", "list", "", "capabilities added to the containers (IPC_LOCK lets RDMA pin memory)"),
    ("k8s.host_network", "bool", "", "the pod uses the node's network (hostNetwork: true)"),
    ("k8s.host_ipc", "bool", "", "the pod shares the node's IPC namespace and /dev/shm (hostIPC: true)"),
    ("k8s.shm_memory_volume", "bool", "", "an emptyDir volume with medium Memory is mounted at /dev/shm"),
    ("k8s.shm_size_limit", "string", "", "sizeLimit of that volume, as written"),
    ("k8s.shm_limited", "bool", "", "neither a memory-backed /dev/shm volume nor hostIPC: /dev/shm is the runtime's default (64 MB); absent when /dev/shm is mounted from a volume the paste does not show"),
    ("k8s.networks_annotation", "string", "", "the Multus k8s.v1.cni.cncf.io/networks annotation (extra, e.g. RDMA, interfaces)"),
    ("env.var.*", "string", "", "the value of one environment variable, as set (secrets included; redacted in output)"),
]

_RDMA = re.compile(r"^(rdma/|mellanox\.com/|nvidia\.com/.*(?:hostdev|sriov|rdma|mlnx|ib)|.*infiniband|.*/sriov|"
                   r"openshift\.io/.*(?:rdma|mlnx|ib)|networking\.gke\.io/.*rdma)", re.IGNORECASE)


def _detect(text: str) -> float:
    head = text[:262144]
    if re.search(r"^[^\S\n]*apiVersion:", head, re.MULTILINE) and re.search(r"^[^\S\n]*kind:", head, re.MULTILINE) \
            and re.search(r"^[^\S\n]*-?\s*containers:|^[^\S\n]*containers:", head, re.MULTILINE):
        return 0.85
    # the containers section alone, as people paste it from a manifest: a 'containers:' list whose items carry an
    # image and the keys of a container (resources, volumeMounts, securityContext, env)
    if re.search(r"^[^\S\n]*containers:\s*$", head, re.MULTILINE) and re.search(r"^[^\S\n]*-\s+(?:image|name):", head, re.MULTILINE) \
            and len(re.findall(r"^[^\S\n]*(?:resources|volumeMounts|securityContext|env|command|args):", head, re.MULTILINE)) >= 2:
        return 0.7
    return 0.0


def _pod_specs(node: Any, annotations: dict | None = None) -> Iterator[tuple[dict, dict]]:
    """Every dict holding a 'containers' list, with the annotations of its nearest metadata."""
    if isinstance(node, dict):
        meta = node.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
            annotations = meta["annotations"]
        if isinstance(node.get("containers"), list):
            yield node, annotations or {}
        for v in node.values():
            yield from _pod_specs(v, annotations)
    elif isinstance(node, list):
        for v in node:
            yield from _pod_specs(v, annotations)


def _count(v: Any) -> int | None:
    try:
        return int(str(v).strip())
    except (TypeError, ValueError):
        return None


@parser(
    "k8s-pod",
    detect=_detect,
    summary="a Kubernetes pod spec (kubectl get pod -o yaml, or a Job/PyTorchJob/MPIJob manifest): GPUs, RDMA, /dev/shm, network",
    facts=FACTS,
    command="kubectl get pod POD -o yaml",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a Kubernetes pod spec in YAML")
    import yaml  # here, not at the top: `check` imports every parser while its probes run (~10 ms)

    # libyaml's scanner where PyYAML was built with it (the wheels are): the pure-Python one took ~2.7 CPU-s on a 1 MB
    # line of "1 1 1 ..." (linear, but 3 s on a loaded CI machine: tests/test_hardening.py)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        docs = [d for d in yaml.load_all(text, Loader=loader) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ParseError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
                         line=(mark.line + 1) if mark is not None else None) from exc
    except RecursionError as exc:  # thousands of nested '[' or '{': no pod spec, and no reason to crash on it
        raise ParseError("not a pod spec: YAML nested deeper than the parser follows") from exc
    specs = [s for d in docs for s in _pod_specs(d)]
    if not specs:
        raise ParseError("no pod spec (a 'containers:' list) in this YAML")
    kinds = [str(d.get("kind")) for d in docs if isinstance(d, dict) and d.get("kind")]
    names: list[str] = []
    gpus: int | None = None
    rdma: list[str] = []
    caps: list[str] = []
    images: list[str] = []
    privileged = host_net = host_ipc = shm_mem = ib_mount = shm_unseen = False
    shm_limit = None
    networks = None
    env: dict[str, str] = {}
    for spec, ann in specs:
        host_net |= spec.get("hostNetwork") is True
        host_ipc |= spec.get("hostIPC") is True
        if networks is None and ann.get("k8s.v1.cni.cncf.io/networks"):
            networks = str(ann["k8s.v1.cni.cncf.io/networks"])
        volumes = {v.get("name"): v for v in spec.get("volumes") or [] if isinstance(v, dict)}
        for c in spec.get("containers") or []:
            if not isinstance(c, dict):
                continue
            ident = c.get("name") or c.get("image")  # a pasted fragment may give the image only
            if ident and str(ident) not in names:
                names.append(str(ident))
            if c.get("image") and str(c["image"]) not in images:
                images.append(str(c["image"]))
            res = c.get("resources") if isinstance(c.get("resources"), dict) else {}  # a cut paste: 'resources: li'
            for part in ("limits", "requests"):
                for rname, val in (res.get(part) or {}).items() if isinstance(res.get(part), dict) else ():
                    rname = str(rname)
                    if rname in ("nvidia.com/gpu", "amd.com/gpu"):
                        n = _count(val)
                        if n is not None:
                            gpus = max(gpus or 0, n)
                    elif _RDMA.match(rname) and rname not in rdma:
                        rdma.append(rname)
            sc = c.get("securityContext") or {}
            if isinstance(sc, dict):
                privileged |= sc.get("privileged") is True
                for cap in ((sc.get("capabilities") or {}).get("add") or []) if isinstance(sc.get("capabilities"), dict) else ():
                    cap = str(cap).upper().removeprefix("CAP_")
                    if cap not in caps:
                        caps.append(cap)
            for m in c.get("volumeMounts") or []:
                if not isinstance(m, dict):
                    continue
                path = str(m.get("mountPath", ""))
                vol = volumes.get(m.get("name")) or {}
                if path.rstrip("/") == "/dev/shm":
                    if m.get("name") not in volumes:
                        shm_unseen = True  # mounted from a volume the paste does not show: its size is unknown
                    ed = vol.get("emptyDir") if isinstance(vol, dict) else None
                    if isinstance(ed, dict) and str(ed.get("medium", "")).lower() == "memory":
                        shm_mem = True
                        if ed.get("sizeLimit") is not None:
                            shm_limit = str(ed["sizeLimit"])
                if path.startswith("/dev/infiniband"):
                    ib_mount = True
            for e in c.get("env") or []:
                if isinstance(e, dict) and e.get("name") and "value" in e and e["value"] is not None:
                    n = str(e["name"])
                    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n):
                        env[f"env.var.{n}"] = str(e["value"])
    if not names:
        raise ParseError("the pod spec lists no container")
    facts: dict[str, Any] = {"k8s.kinds": kinds, "k8s.containers": names}
    if images:
        facts["k8s.images"] = images
    if gpus is not None:
        facts["k8s.gpus"] = gpus
    facts.update({"k8s.rdma_resources": rdma, "k8s.rdma_devices": bool(rdma) or ib_mount or privileged,
                  "k8s.privileged": privileged, "k8s.capabilities": caps, "k8s.host_network": host_net,
                  "k8s.host_ipc": host_ipc, "k8s.shm_memory_volume": shm_mem})
    if shm_mem or host_ipc or not shm_unseen:
        facts["k8s.shm_limited"] = not shm_mem and not host_ipc
    if shm_limit is not None:
        facts["k8s.shm_size_limit"] = shm_limit
    if networks is not None:
        facts["k8s.networks_annotation"] = networks
    facts.update(env)
    return facts
