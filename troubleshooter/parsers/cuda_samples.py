"""The CUDA toolkit's sample programs people run to check a GPU box: ``deviceQuery``, ``simpleP2P`` and the NVML
``example`` (``/usr/local/cuda/nvml/example``).

Real sample (deviceQuery on a node with an RTX 2080 Ti and a Tesla P100, CUDA 11.5; tests/data/cuda-samples)::

    Detected 2 CUDA Capable device(s)

    Device 0: "NVIDIA GeForce RTX 2080 Ti"
      CUDA Driver Version / Runtime Version          11.5 / 11.5
    ...
    > Peer access from NVIDIA GeForce RTX 2080 Ti (GPU0) -> Tesla P100-PCIE-12GB (GPU1) : No
    > Peer access from Tesla P100-PCIE-12GB (GPU1) -> NVIDIA GeForce RTX 2080 Ti (GPU0) : No

    deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 11.5, CUDA Runtime Version = 11.5, NumDevs = 2
    Result = PASS

and the NVML example's device list (``Found 2 devices`` / ``Listing devices:`` / ``0. GeForce RTX 2080 Ti
[00000000:01:00.0]``), which people extend with their own queries: lines of the example this parser does not
know are left alone (they are the user's code, not the sample's). ``simpleP2P`` prints the same peer-access
lines and ``cudaMemcpyPeer / cudaMemcpy between GPU0 and GPU1: 10.39GB/s``.

What it means: the GPUs the CUDA runtime sees and whether each pair may access the other's memory directly
(``No`` between GPUs of different architectures or across a PCIe root that blocks P2P is expected; NCCL then
stages peer traffic through host memory). The sample's ``Result = PASS`` says only that the query ran.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("gpu.count", "number", "count", "GPUs attached"),
    ("gpu.names", "list", "", "product name of each GPU, in index order"),
    ("cuda_samples.program", "string", "", "which sample printed this: deviceQuery, simpleP2P or nvml-example"),
    ("cuda_samples.bus_ids", "list", "", "PCI bus id of each GPU the NVML example lists, in index order"),
    ("cuda_samples.peer_access", "dict", "", "'0->1' -> true/false: whether GPU 0 may access GPU 1's memory directly"),
    ("cuda_samples.peer_access_none", "bool", "", "every GPU pair listed answers 'No' to peer access"),
    ("cuda_samples.driver_cuda_version", "string", "", "CUDA version of the driver (deviceQuery)"),
    ("cuda_samples.runtime_cuda_version", "string", "", "CUDA runtime version the sample was built with (deviceQuery)"),
    ("cuda_samples.result", "string", "", "the sample's own verdict: PASS or FAIL (deviceQuery's 'Result =', simpleP2P's 'Test passed/failed')"),
    ("cuda_samples.p2p_copy_gbps", "number", "GB/s", "simpleP2P's cudaMemcpyPeer bandwidth between its two GPUs"),
]

_DETECTED = re.compile(r"Detected (\d+) CUDA Capable device")
_DEVICE = re.compile(r'^\s*Device (\d+): "([^"]+)"')
_PEER = re.compile(r"Peer access from .*?\(GPU(\d+)\) -> .*?\(GPU(\d+)\)\s*:\s*(Yes|No)\b")
_VERSIONS = re.compile(r"CUDA Driver Version = ([\d.]+), CUDA Runtime Version = ([\d.]+)")
_RESULT = re.compile(r"^\s*Result = (PASS|FAIL|WAIVED)\b|^\s*Test (passed|failed)", re.IGNORECASE)
_FOUND = re.compile(r"^\s*Found (\d+) devices?\s*$")
_NVML_DEV = re.compile(r"^\s*(\d+)\. (.+?) \[([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\]\s*$")
_COPY = re.compile(r"cudaMemcpyPeer / cudaMemcpy between GPU\d+ and GPU\d+:\s*([\d.]+)\s*GB/s")
_COUNT = re.compile(r"CUDA-capable device count:\s*(\d+)")


def _detect(text: str) -> float:
    head = text[:262144]
    if _DETECTED.search(head):
        return 0.9
    if "CUDA Device Query (Runtime API)" in head:
        return 0.4  # a deviceQuery that found no device failed with a CUDA error: the cuda-errors kind reads it
    if "Peer access from" in head and ("simpleP2P" in head or "CUDA-capable device count" in head):
        return 0.85
    if "Listing devices:" in head and re.search(r"^[^\S\n]*Found \d+ devices?\s*$", head, re.MULTILINE) \
            and re.search(r"^[^\S\n]*\d+\. .+ \[[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]\]\s*$", head, re.MULTILINE):
        return 0.85
    return 0.0


@parser(
    "cuda-samples",
    detect=_detect,
    summary="CUDA sample programs: deviceQuery, simpleP2P, the NVML example's device list",
    facts=FACTS,
    command="/usr/local/cuda/extras/demo_suite/deviceQuery",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "deviceQuery, simpleP2P or NVML example output")
    names: dict[int, str] = {}
    bus: dict[int, str] = {}
    peer: dict[str, bool] = {}
    facts: dict[str, Any] = {}
    program = None
    count = None
    nvml = False
    found: int | None = None
    for raw in text.split("\n"):
        line = raw.rstrip()
        m = _DETECTED.search(line)
        if m:
            program, count = "deviceQuery", int(m.group(1))
            continue
        m = _COUNT.search(line)
        if m:
            program = program or "simpleP2P"
            count = int(m.group(1))
            continue
        m = _DEVICE.match(line)
        if m:
            names[int(m.group(1))] = m.group(2)
            continue
        m = _FOUND.match(line)
        if m:
            found = int(m.group(1))
            continue
        if line.strip() == "Listing devices:" and found is not None:
            program, count, nvml = program or "nvml-example", found, True
            continue
        m = _NVML_DEV.match(line) if nvml else None
        if m:
            names[int(m.group(1))] = m.group(2).strip()
            bus[int(m.group(1))] = m.group(3)
            continue
        m = _PEER.search(line) if "Peer access" in line else None
        if m:
            peer[f"{m.group(1)}->{m.group(2)}"] = m.group(3) == "Yes"
            continue
        m = _VERSIONS.search(line) if "CUDA Driver Version =" in line else None
        if m:
            facts["cuda_samples.driver_cuda_version"], facts["cuda_samples.runtime_cuda_version"] = m.group(1), m.group(2)
            continue
        m = _RESULT.match(line)
        if m and program:
            word = (m.group(1) or m.group(2)).upper()
            facts["cuda_samples.result"] = {"PASSED": "PASS", "FAILED": "FAIL"}.get(word, word)
            continue
        m = _COPY.search(line) if "cudaMemcpyPeer" in line else None
        if m:
            program = program or "simpleP2P"
            facts["cuda_samples.p2p_copy_gbps"] = float(m.group(1))
    if program is None:
        raise ParseError("no deviceQuery ('Detected N CUDA Capable device(s)'), simpleP2P or NVML example "
                         "('Found N devices') output found")
    facts["cuda_samples.program"] = program
    if count is not None:
        facts["gpu.count"] = count
    if names and sorted(names) == list(range(len(names))):
        facts["gpu.names"] = [names[i] for i in sorted(names)]
    if bus and sorted(bus) == list(range(len(bus))):
        facts["cuda_samples.bus_ids"] = [bus[i] for i in sorted(bus)]
    if peer:
        facts["cuda_samples.peer_access"] = peer
        facts["cuda_samples.peer_access_none"] = not any(peer.values())
    return facts
