"""GPU health from NVML, read in-process by the ``nvml`` source (:mod:`troubleshooter.sources.nvml`).

The source writes a versioned JSON document (sample: one RTX 5080 Laptop GPU, the values of the corpus
file ``nvidia-smi-q/rtx5080-laptop-driver580-full-q-event-reason-counters.txt`` as NVML returns them)::

    {"schema": 1, "driver_version": "580.173.02", "cuda_version": "13.0", "nvml_version": "13.580.173.02",
     "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 5080 Laptop GPU", "uuid": "GPU-49db0f63-...",
               "bus_id": "00000000:01:00.0", "perf_state": "P8", "sm_clock_mhz": 427, "sm_clock_max_mhz": 3090,
               "mem_clock_mhz": 405, "mem_clock_max_mhz": 14001, "power_w": 12.72, "power_limit_w": 80.0,
               "temp_c": 49, "clocks_event_reasons": [], "ecc_uncorrected_volatile": null, ...,
               "remapped_rows": null, "retired_pages": null, "nvlink": null, "pcie_gen": 1, "pcie_gen_max": 5,
               "pcie_width": 8, "pcie_width_max": 16, "persistence_mode": false,
               "processes": [{"pid": 2573, "used_mb": 276, "type": "G"}, ...]}],
     "errors": {"gpu0.remapped_rows": "not supported", ...}}

``null`` is a value the GPU or driver does not report (the ``errors`` map says which query failed and why).
The ``nvidia-smi-q`` parser reads ``nvidia-smi -q`` text into the same per-GPU dicts, and
:func:`gpu_facts` turns either into the same ``gpu.*`` facts, so a tree does not care which one ran.

What the facts mean for training speed: an active throttle reason (``sw_power_cap``, ``hw_slowdown``,
``hw_thermal_slowdown``, ``sw_thermal_slowdown``, ``hw_power_brake_slowdown``) under load caps SM clocks and
makes every step slower; a GPU with remapped rows pending (needs a reset) or a remapping failure, uncorrected
ECC errors or inactive NVLinks is a straggler or a failure in waiting; a PCIe link below its maximum
generation or width *under load* (idle GPUs drop to Gen1 to save power: look at ``perf_state``) halves host
transfers; persistence mode off adds driver load latency to every job start.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from troubleshooter.parsers.base import ParseError, parser, require_text

# Reasons that are not a slowdown: the GPU is idle, or clocks were set on purpose.
BENIGN_REASONS = frozenset({"gpu_idle", "applications_clocks_setting"})
# SW power cap is how a GPU under full load stays within its power budget (NVIDIA: "reducing the clocks below
# requested clocks because the GPU is consuming too much power"): normal at the default limit, a cause when
# someone set the limit below the default (nvidia-smi -pl)
POWER_CAP = "sw_power_cap"
LIMIT_LOWERED_RATIO = 0.95

DEVICE_KEYS = (
    "index", "name", "uuid", "bus_id", "perf_state", "sm_clock_mhz", "sm_clock_max_mhz", "mem_clock_mhz",
    "mem_clock_max_mhz", "power_w", "power_limit_w", "power_default_limit_w", "temp_c", "clocks_event_reasons",
    "ecc_uncorrected_volatile", "ecc_corrected_volatile", "remapped_rows", "retired_pages", "nvlink",
    "pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max", "persistence_mode", "processes",
)

FACTS = [
    ("gpu.count", "number", "count", "GPUs attached"),
    ("gpu.names", "list", "", "product name of each GPU, in index order"),
    ("gpu.driver_version", "string", "", "NVIDIA driver version"),
    ("gpu.cuda_version", "string", "", "highest CUDA version the driver supports"),
    ("gpu.devices", "list", "", "per-GPU dicts: index, name, uuid, bus_id, perf_state, clocks (MHz), power (W), "
     "temp_c, clocks_event_reasons, ECC, remapped_rows, retired_pages, nvlink, PCIe gen/width, persistence_mode, processes"),
    ("gpu.throttle_reasons", "list", "", "distinct active clock event (throttle) reasons across GPUs, sorted, "
     "without gpu_idle and applications_clocks_setting (e.g. sw_power_cap, hw_slowdown, hw_thermal_slowdown)"),
    ("gpu.throttled", "list", "", "indexes of GPUs whose clocks are held down: a hardware or thermal slowdown active, or SW power cap active under a power limit set below the default (SW power cap at the default limit is how a loaded GPU stays in its budget)"),
    ("gpu.power_limit_lowered", "list", "", "indexes of GPUs whose enforced power limit is below 95% of the default (nvidia-smi -pl)"),
    ("gpu.sm_clock_ratio_min", "number", "ratio", "lowest current/max SM clock across GPUs (low at idle, by design)"),
    ("gpu.power_ratio_max", "number", "ratio", "highest power draw / enforced power limit across GPUs"),
    ("gpu.temp_max_c", "number", "C", "hottest GPU temperature"),
    ("gpu.ecc_uncorrected_total", "number", "count", "volatile uncorrected ECC errors, summed over GPUs that report ECC"),
    ("gpu.remapped_rows_pending", "number", "count", "GPUs with a row remapping pending (needs a GPU reset)"),
    ("gpu.remapped_rows_failure", "number", "count", "GPUs where a row remapping failed (replace the GPU)"),
    ("gpu.nvlink_inactive", "number", "count", "inactive NVLinks across GPUs (only where the GPUs have NVLink)"),
    ("gpu.nvlink_present", "bool", "", "the GPUs have NVLink: true when NVML lists links, false when NVML says every GPU supports none (PCIe-only GPUs); absent when it could not tell"),
    ("gpu.pcie_degraded", "list", "", "GPUs whose PCIe link runs below its max: {index, gen, gen_max, width, width_max} "
     "(normal at idle: links train down to save power)"),
    ("gpu.persistence_off", "list", "", "indexes of GPUs with persistence mode off"),
    ("gpu.fabric_states", "dict", "", "GPU -> its NVSwitch fabric registration 'State/Status' (nvidia-smi -q 'Fabric'; "
     "Completed/Success when the fabric manager set it up); only on NVSwitch systems"),
    ("gpu.fabric_incomplete", "list", "", "GPUs whose fabric registration is not Completed (In Progress, Not "
     "Started): the fabric manager has not set them up"),
    ("gpu.fabric_failed", "list", "", "GPUs whose fabric registration Completed without Success, with the status "
     "('GPU 0: Insufficient Resources'): the GPU was given no NVLink partition or clique"),
    ("gpu.vgpu_license", "dict", "", "GPU -> its vGPU software license status as nvidia-smi -q prints it ('Licensed "
     "(Expiry: ...)', 'Unlicensed (Restricted)'); vGPU guests only"),
    ("gpu.vgpu_unlicensed", "list", "", "vGPU guests' GPUs whose license status is Unlicensed: compute drops to an idle "
     "level after a 20-minute grace period"),
    ("gpu.recovery_actions", "dict", "", "GPU -> the recovery the driver asks for it after an error (nvidia-smi -q 'GPU "
     "Recovery Action': None, Reset, Reboot, Drain P2P, Drain and Reset; before driver 570 'GPU Reset Status': Reset "
     "Required: Yes -> Reset, Drain and Reset Recommended: Yes -> Drain and Reset)"),
    ("gpu.recovery_needed", "list", "", "GPUs whose driver asks for a recovery action (a reset, a reboot, a drain): the "
     "GPU hit an error it does not work normally again after until then"),
]


def _num(value: Any) -> float | int | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _lowered(devices: list[dict[str, Any]]) -> list[Any]:
    return [d["index"] for d in devices if _num(d["power_limit_w"]) and _num(d["power_default_limit_w"])
            and d["power_limit_w"] < LIMIT_LOWERED_RATIO * d["power_default_limit_w"]]


def gpu_facts(devices: Iterable[dict[str, Any]], *, driver: Any = None, cuda: Any = None,
              count: Any = None) -> dict[str, Any]:
    """The ``gpu.*`` facts from per-GPU dicts (the ``gpus`` of the NVML document, or parsed ``nvidia-smi -q``).

    Facts that no GPU reports are omitted, never defaulted.
    """
    devices = list(devices)
    fabric = [(d.get("index"), d.get("fabric")) for d in devices if isinstance(d.get("fabric"), dict)]
    lic = [(d.get("index"), d["vgpu_license"]) for d in devices if isinstance(d.get("vgpu_license"), str)]
    recovery = [(d.get("index"), d["recovery_action"]) for d in devices if isinstance(d.get("recovery_action"), str)]
    devices = [{k: d.get(k) for k in DEVICE_KEYS} for d in devices]
    facts: dict[str, Any] = {}
    if fabric:  # NVSwitch systems only (N/A elsewhere): the fabric manager registered each GPU, or not
        facts["gpu.fabric_states"] = {str(i): f"{f.get('state', '')}/{f.get('status', '')}" for i, f in fabric}
        facts["gpu.fabric_incomplete"] = [i for i, f in fabric if f.get("state") != "Completed"]
        # the registration finished and came back with an error (Insufficient Resources: no NVLink partition, no
        # clique): something answered, so it is not a fabric manager that never ran
        facts["gpu.fabric_failed"] = [f"GPU {i}: {f.get('status', '')}" for i, f in fabric
                                      if f.get("state") == "Completed" and f.get("status") not in ("Success", "", "N/A")]
    if lic:  # vGPU guests only (nvidia-smi -q 'vGPU Software Licensed Product'); absent on bare metal
        facts["gpu.vgpu_license"] = {str(i): v for i, v in lic}
        facts["gpu.vgpu_unlicensed"] = [i for i, v in lic if v.lower().startswith("unlicensed")]
    if recovery:  # nvidia-smi -q's GPU Reset Status / GPU Recovery Action
        facts["gpu.recovery_actions"] = {str(i): a for i, a in recovery}
        facts["gpu.recovery_needed"] = [i for i, a in recovery if a.strip().lower() not in ("none", "no")]
    facts["gpu.count"] = int(count) if isinstance(count, int) and count >= len(devices) else len(devices)
    facts["gpu.names"] = [d["name"] for d in devices if isinstance(d["name"], str)]
    if isinstance(driver, str) and driver:
        facts["gpu.driver_version"] = driver
    if isinstance(cuda, str) and cuda:
        facts["gpu.cuda_version"] = cuda
    facts["gpu.devices"] = devices

    with_reasons = [d for d in devices if isinstance(d["clocks_event_reasons"], list)]
    if with_reasons:
        active = {d["index"]: sorted({r for r in d["clocks_event_reasons"] if isinstance(r, str)} - BENIGN_REASONS)
                  for d in with_reasons}
        facts["gpu.throttle_reasons"] = sorted({r for rs in active.values() for r in rs})
        lowered = set(_lowered(devices))
        facts["gpu.throttled"] = [i for i, rs in active.items()
                                  if set(rs) - {POWER_CAP} or (POWER_CAP in rs and i in lowered)]
    if any(_num(d["power_default_limit_w"]) for d in devices):
        facts["gpu.power_limit_lowered"] = _lowered(devices)

    ratios = [d["sm_clock_mhz"] / d["sm_clock_max_mhz"] for d in devices
              if _num(d["sm_clock_mhz"]) is not None and _num(d["sm_clock_max_mhz"])]
    if ratios:
        facts["gpu.sm_clock_ratio_min"] = round(min(ratios), 4)
    power = [d["power_w"] / d["power_limit_w"] for d in devices
             if _num(d["power_w"]) is not None and _num(d["power_limit_w"])]
    if power:
        facts["gpu.power_ratio_max"] = round(max(power), 4)
    temps = [d["temp_c"] for d in devices if _num(d["temp_c"]) is not None]
    if temps:
        facts["gpu.temp_max_c"] = max(temps)
    ecc = [d["ecc_uncorrected_volatile"] for d in devices if _num(d["ecc_uncorrected_volatile"]) is not None]
    if ecc:
        facts["gpu.ecc_uncorrected_total"] = sum(ecc)
    remapped = [d["remapped_rows"] for d in devices if isinstance(d["remapped_rows"], dict)]
    if remapped:
        facts["gpu.remapped_rows_pending"] = sum(1 for r in remapped if r.get("pending") is True)
        facts["gpu.remapped_rows_failure"] = sum(1 for r in remapped if r.get("failure") is True)
    links = [link for d in devices if isinstance(d["nvlink"], list) for link in d["nvlink"] if isinstance(link, dict)]
    if links:
        facts["gpu.nvlink_inactive"] = sum(1 for link in links if not link.get("active"))
    pcie_known = False
    degraded = []
    for d in devices:
        gen, gen_max, width, width_max = (_num(d[k]) for k in ("pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max"))
        if (gen is None or gen_max is None) and (width is None or width_max is None):
            continue
        pcie_known = True
        if (gen is not None and gen_max is not None and gen < gen_max) or (
                width is not None and width_max is not None and width < width_max):
            degraded.append({"index": d["index"], "gen": gen, "gen_max": gen_max, "width": width, "width_max": width_max})
    if pcie_known:
        facts["gpu.pcie_degraded"] = degraded
    persistence = [d for d in devices if isinstance(d["persistence_mode"], bool)]
    if persistence:
        facts["gpu.persistence_off"] = [d["index"] for d in persistence if not d["persistence_mode"]]
    return facts


def _detect(text: str) -> float:
    head = text.lstrip()[:4096]
    if head.startswith("{") and '"schema"' in head and '"gpus"' in head:
        return 0.95
    return 0.0


@parser(
    "nvml-json",
    detect=_detect,
    summary="GPU health read in-process through NVML (the nvml source's JSON document)",
    facts=FACTS,
    command="troubleshooter collect nvml",
)
def parse(text: str) -> dict[str, object]:
    text = require_text(text, "the NVML JSON document of the nvml source")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"not JSON: {exc}") from None
    if not isinstance(doc, dict) or "gpus" not in doc:
        raise ParseError("not an NVML document: no 'gpus' list")
    if doc.get("schema") != 1:
        raise ParseError(f"unsupported NVML document schema {doc.get('schema')!r} (this version reads schema 1)")
    gpus = doc["gpus"]
    if not isinstance(gpus, list) or not all(isinstance(g, dict) for g in gpus):
        raise ParseError("'gpus' is not a list of objects")
    for i, g in enumerate(gpus):
        if not isinstance(g.get("index"), int):
            g["index"] = i
    facts = gpu_facts(gpus, driver=doc.get("driver_version"), cuda=doc.get("cuda_version"))
    present = _nvlink_present(gpus, doc.get("errors") if isinstance(doc.get("errors"), dict) else {})
    if present is not None:
        facts["gpu.nvlink_present"] = present
    return facts


def _nvlink_present(gpus: list[dict[str, Any]], errors: dict[str, Any]) -> bool | None:
    """NVLink or not, from what NVML answered: links listed, or "not supported" for every GPU's first link (a
    link query that failed otherwise is not an answer)."""
    if any(isinstance(g.get("nvlink"), list) and g["nvlink"] for g in gpus):
        return True
    if not gpus or any(k.startswith(f"gpu{g['index']}.nvlink[") for g in gpus for k in errors):
        return None
    if all(g.get("nvlink") is None and errors.get(f"gpu{g['index']}.nvlink") == "not supported" for g in gpus):
        return False
    return None
