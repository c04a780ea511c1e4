"""The NVIDIA device plugin for Kubernetes' log (``kubectl logs -n kube-system nvidia-device-plugin-daemonset-xxxx``):
whether it could load NVML in its container, found GPUs and registered them with the kubelet.

Real samples (NVIDIA/k8s-device-plugin#23 and #303, 1.x and 0.x wording; awslabs/amazon-eks-ami#1817, newer klog
lines; bottlerocket-os/bottlerocket#4250, a plugin that registered)::

    Failed to start nvml with error:  could not load NVML library
    2022/05/13 23:09:23 Failed to initialize NVML: could not load NVML library.
    2022/05/13 23:09:23 If this is a GPU node, did you set the docker default runtime to 'nvidia'?
    I0519 11:02:49.799461       1 factory.go:104] Detected non-NVML platform: could not load NVML library: libnvidia-ml.so.1: cannot open shared object file: No such file or directory
    E0402 22:17:31.198643       1 factory.go:112] Incompatible strategy detected auto
    I1017 12:05:33.312453    1667 server.go:154] Registered device plugin for 'nvidia.com/gpu' with Kubelet

What it means: the plugin finds the GPUs through NVML, and NVML (``libnvidia-ml.so.1``) reaches its container only
through the NVIDIA container runtime's hook. "could not load NVML library" (``ERROR_LIBRARY_NOT_FOUND``, "non-NVML
platform", and from v0.16 "Incompatible strategy detected auto", which the plugin prints when its platform check
found neither NVML nor Tegra: internal/plugin/factory.go) says the plugin's container was started without that hook:
most often the node's container runtime does not default to the nvidia runtime and no RuntimeClass selects it (or
the node has no driver or toolkit at all). The node then advertises no ``nvidia.com/gpu`` and GPU pods stay Pending.
"No devices found. Waiting indefinitely." is the plugin serving nothing; "Registered device plugin ... with Kubelet"
is it working. NVML loading but failing ("Unknown Error", "Driver Not Loaded") is another story, kept as the error.
Lines may carry klog, log.Printf, CRI-log (``... stderr F``) or journal prefixes; messages are found anywhere in a line.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, add_clipped, parser, require_text

FACTS = [
    ("k8s_device_plugin.nvml_missing", "bool", "", "the plugin could not load the NVML library (libnvidia-ml.so.1) in "
     "its container ('could not load NVML library', ERROR_LIBRARY_NOT_FOUND, 'non-NVML platform', 'Incompatible "
     "strategy detected auto'); false when it loaded NVML or registered devices"),
    ("k8s_device_plugin.nvml_error", "string", "", "what NVML's initialisation answered, as printed ('could not load "
     "NVML library', 'ERROR_LIBRARY_NOT_FOUND', 'Unknown Error')"),
    ("k8s_device_plugin.no_devices", "bool", "", "the plugin found no device to serve ('No devices found. Waiting "
     "indefinitely.'), so the node advertises no nvidia.com/gpu"),
    ("k8s_device_plugin.registered", "bool", "", "the plugin registered with the kubelet ('Registered device plugin "
     "... with Kubelet')"),
    ("k8s_device_plugin.resources", "list", "", "the resources it served or registered ('nvidia.com/gpu', MIG "
     "resources), where its lines name them"),
    ("k8s_device_plugin.errors", "list", "", "its error lines, as printed (the message, without the log prefix)"),
    ("k8s_device_plugin.xid_codes", "list", "", "sorted distinct Xid codes the plugin's health check saw in NVML's "
     "critical-error events ('XidCriticalError: Xid=79 on Device=GPU-...; marking device as unhealthy'): the node's "
     "kernel log has them too"),
    ("k8s_device_plugin.config_error", "string", "", "the plugin (or GPU Feature Discovery, which reads the same file) "
     "refused its configuration and did not start: what follows 'error parsing config file:' ('number of replicas must "
     "be >= 2', 'cannot unmarshal array into ... deviceListStrategy of type string'), as printed"),
    ("k8s_device_plugin.mig_memory_info_denied", "bool", "", "NVML refused the plugin a MIG device's memory info "
     "('error getting device memory info: Insufficient Permissions'): the plugin lacks the MIG monitor capability"),
    ("k8s_device_plugin.unhealthy", "list", "", "the devices the plugin marked unhealthy and stopped advertising "
     "('device marked unhealthy: GPU-...'; 'all' when it marked every device)"),
]

# (?!(?<=\s)\s): the lazy message ends nowhere inside a run of spaces but at its start, where the same tail matches
# (the tail is not retried at every space of a run: linear, with the same match); \s*+ keeps the blanks after the colon
# (a message that is only blanks is no message: the old \s* gave one back to make it one)
_NVML_FAILED = re.compile(r"Failed to (?:initialize|start) NVML(?: with error)?:\s*+(.+?)(?!(?<=\s)\s)\.?\s*$", re.IGNORECASE)
_NVML_INIT_FAILED = re.compile(r"nvml init failed:\s*(\S(?:.*\S)?)\s*$", re.IGNORECASE)
_NON_NVML = re.compile(r"Detected non-NVML platform:\s*(.(?:.*\S)?)\s*$", re.MULTILINE)  # (a line among others: GFD's start-up log)
_AUTO = re.compile(r"Incompatible strategy detected auto\b")
_MISSING = re.compile(r"could not load NVML|ERROR_LIBRARY_NOT_FOUND|libnvidia-ml\.so(?:\.1)?: cannot open", re.IGNORECASE)
_LOADING = re.compile(r"\b(?:Loading|Initializing) NVML\b", re.IGNORECASE)
_REGISTERED = re.compile(r"Registered device plugin(?: for '([^']+)')? with Kubelet")
_SERVING = re.compile(r"Starting (?:GRPC server for|to serve) '([^']+)'")
_NO_DEVICES = re.compile(r"No devices found\. Waiting indefinitely")
_KLOG_ERROR = re.compile(r"\bE\d{4} [\d:.]+\s+\d+ [\w.-]+:\d+\] (.+)$")  # klog's E level: the message after ']'
_ERROR_WORDS = re.compile(r"\b((?:Failed|Could not|Incompatible|error starting) .+)$")  # log.Printf lines have no level
_ADVICE = re.compile(r"did you (?:set the docker default runtime to|configure the NVIDIA Container Toolkit)|"
                     r"k8s-device-plugin#prerequisites")
_NOT_ERRORS = re.compile(r"You can (?:check|learn)|If this is (?:not )?a GPU node")  # its advice, printed at E level
# its health check (internal/rm/health.go; nvidia.go before 0.9: "..., the device will go unhealthy." and
# "XidCriticalError: Xid=%d, All devices will go unhealthy.")
_XID = re.compile(r"XidCriticalError: Xid=(\d{1,3})(?: on Device=(\S+?)[;,]|, (All devices))")
_UNHEALTHY = re.compile(r"device marked unhealthy: (\S+)|Marking (all) devices as unhealthy")
# its config loader (api/config/v1): "unable to load config: unable to finalize config: unable to parse config file:
# error parsing config file: unmarshal error: error unmarshaling JSON: while decoding JSON: number of replicas must be >= 2"
_CONFIG = re.compile(r"error parsing config file:\s*(.*\S)")
# its device walk (internal/rm): NVML refusing a MIG device's memory info to a plugin without the MIG monitor
# capability ("Insufficient Pemmissions", the plugin's own spelling at the time; k8s-device-plugin#399)
_MEMINFO = re.compile(r"error getting device memory info: Insufficient Pe\w*issions")
_ANY = (_XID, _UNHEALTHY, _NVML_FAILED, _NON_NVML, _AUTO, _LOADING, _REGISTERED, _SERVING, _NO_DEVICES, _ADVICE, _CONFIG,
        _MEMINFO)
MAX_LINE = 4000


def _detect(text: str) -> float:
    head = text[:131072]
    hits = sum(1 for rx in _ANY if rx.search(head))
    if hits >= 2 or _AUTO.search(head) or _NON_NVML.search(head) or _CONFIG.search(head):
        return 0.9
    # one line alone: the plugin's own wording, not 'Failed to initialize NVML' (nvidia-smi prints that too)
    return 0.6 if hits == 1 and not (_LOADING.search(head) or _NVML_FAILED.search(head)) else 0.0


@parser(
    "k8s-device-plugin",
    detect=_detect,
    summary="the NVIDIA Kubernetes device plugin's log: NVML loaded or not in its container, devices registered",
    facts=FACTS,
    command="kubectl logs -n kube-system -l name=nvidia-device-plugin-ds --tail=100 (or the daemonset's pod)",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "the NVIDIA device plugin's log lines")
    missing = loaded = registered = no_devices = seen = meminfo = False
    nvml_error = ""
    resources: list[str] = []
    errors: list[str] = []
    xids: list[int] = []
    unhealthy: list[str] = []
    config_error = ""
    lines = text.split("\n")
    for i, raw in enumerate(lines):
        ln = raw[:MAX_LINE].rstrip()
        if not ln.strip():
            continue
        m = _NVML_FAILED.search(ln) or _NVML_INIT_FAILED.search(ln)
        n = _NON_NVML.search(ln)
        if m or n or _AUTO.search(ln):
            # 'Failed to initialize NVML' alone is nvidia-smi's wording too; the plugin's 1.x wording is its own
            seen = seen or not m or "with error" in ln
            msg = (m or n).group(1).rstrip("`'") if (m or n) else ""
            if msg and not nvml_error:
                nvml_error = msg
            if _MISSING.search(ln) or n or _AUTO.search(ln):
                missing = True
        elif _LOADING.search(ln):
            seen = loaded = True
        r = _REGISTERED.search(ln)
        if r:
            seen = registered = True
            if r.group(1):
                add_clipped(resources, r.group(1), 20)
        s = _SERVING.search(ln)
        if s:
            seen = True
            add_clipped(resources, s.group(1), 20)
        if _NO_DEVICES.search(ln):
            seen = no_devices = True
        if "Xid=" in ln and (x := _XID.search(ln)):
            seen = True
            if int(x.group(1)) not in xids:
                xids.append(int(x.group(1)))
            add_clipped(unhealthy, x.group(2) or "all", 64)
        elif "nhealthy" in ln and (u := _UNHEALTHY.search(ln)):
            seen = True
            add_clipped(unhealthy, u.group(1) or "all", 64)
        if "config file" in ln and not config_error and (c := _CONFIG.search(ln)):
            seen = True
            # a terminal or a paste cuts the long message after "unmarshaling JSON:": its reason is on the next line
            rest = next((x.strip() for x in lines[i + 1:i + 2] if x.strip()), "") if c.group(1).endswith(":") else ""
            config_error = f"{c.group(1)} {rest}".strip()
        seen = seen or bool(_ADVICE.search(ln))
        if "memory info" in ln and _MEMINFO.search(ln):
            seen = meminfo = True
        e = _KLOG_ERROR.search(ln) or _ERROR_WORDS.search(ln)
        if e and not _NOT_ERRORS.search(ln):
            add_clipped(errors, e.group(1).rstrip("`"), 20)
    if not seen:
        raise ParseError("no NVIDIA device plugin line ('Loading NVML', 'Failed to initialize NVML: ...', "
                         "'Registered device plugin ... with Kubelet', 'No devices found. Waiting indefinitely.', "
                         "'XidCriticalError: Xid=...')")
    facts: dict[str, Any] = {}
    if missing or loaded or registered:
        facts["k8s_device_plugin.nvml_missing"] = missing and not registered
    if nvml_error:
        facts["k8s_device_plugin.nvml_error"] = nvml_error
    if no_devices:
        facts["k8s_device_plugin.no_devices"] = True
    facts["k8s_device_plugin.registered"] = registered
    if resources:
        facts["k8s_device_plugin.resources"] = resources
    facts["k8s_device_plugin.errors"] = errors
    if xids:
        facts["k8s_device_plugin.xid_codes"] = sorted(xids)
    if unhealthy:
        facts["k8s_device_plugin.unhealthy"] = unhealthy
    if config_error:
        facts["k8s_device_plugin.config_error"] = config_error
    if meminfo:
        facts["k8s_device_plugin.mig_memory_info_denied"] = True
    return facts
