"""What NCCL's log says about its network plugins (the external net plugin, aws-ofi-nccl's Libfabric provider): the
patterns nccl_debug reads them by, kept apart from the rest of the log's reading."""

import re

_LOADED_PLUGIN = re.compile(r"Loaded net plugin (.(?:.*?\S)??)\s*\(v\d+\)\s*$")
_P2P_PLUGIN = re.compile(r"^P2P plugin (\S+)")
_PLUGIN_ABSENT = re.compile(r"No plugin found|Could not find: libnccl-net|Using internal network plugin|using internal implementation")
_PLUGIN_LOAD_ERR = re.compile(r"(?:Plugin load|dlerror=|Failed to open libnccl-net|Unable to load libnccl-net)")
# "Plugin load (libnccl-net.so)" or "... returned 2" with its reason (dlerror's text) cut off, as a terminal or a mail
# wraps it: whether the plugin is absent or failed is on the next line; this one says neither
_PLUGIN_LOAD_CUT = re.compile(r"Plugin load(?: \([^)]*\))?(?: returned -?\d+)?\s*:?\s*$")
_PLUGIN_FAIL = re.compile(
    r"plugin/net\.cc:\d+ -> \d+|Failed to initiali[sz]e (?:NET|net) plugin|"
    r"NET/Plugin\s*(?::\s*)?(?:(?!NET/Plugin).)*failed to initiali[sz]e"
)  # (from each "NET/Plugin" to the next, not to the line's end: .* from every repeat was quadratic in them)
# aws-ofi-nccl found no Libfabric provider for its NICs: fi_getinfo's FI_ENODATA (1.7+), "Couldn't find any optimal
# provider" (older), "No eligible providers were found" (the RDMA protocol's FI_ENODATA, 1.8+: src/nccl_ofi_rdma.cpp)
_OFI_NO_PROVIDER = re.compile(r"fi_getinfo\(\) call failed: No data available|find any optimal provider|No eligible providers were found")
# aws-ofi-nccl's own warnings when it cannot set itself up (src/nccl_ofi_*.c, 2019-2026): a fabric, domain, endpoint,
# AV or CQ it cannot open, an option the Libfabric cannot set (an older Libfabric than the plugin was built for), no
# protocol that initialises, a Libfabric too old for the provider. Read positively: the data path's warnings (a peer's
# address not inserted, GPU memory not registered, a completion error) are a working plugin meeting another fault.
_OFI_INIT_FAIL = re.compile(
    r"^NET/OFI\s+(?:Couldn'?t (?:set|open|create|allocate|enable)\b|Could not create Libfabric endpoint|"
    r"Failed to initiali[sz]e|Initiali[sz]ing (?:plugin|a new domain|control rail|rail)\b.{0,40}failed|"
    r"Unable to find a protocol|Failing initiali[sz]ation|\w+ provider requires at least libfabric|"
    r"Caught exception in (?:plugin init|rdma_init|sendrecv_init)|Insufficient Libfabric devices|"
    r"Unable to initiali[sz]e (?:hardware topology|domain)|Failed to create NCCL OFI topology|"
    r"aws-ofi-nccl initiali[sz]ation failed)",
    re.IGNORECASE,
)
_PLUGIN_BY_ENV = re.compile(r"Plugin name set by env to (\S+)")
# NCCL_NET names a network no loaded plugin provides (src/plugin/net.cc: "Error: network %s not found."), and
# NCCL_NET_PLUGIN named a plugin that is not there ("Could not find: ofi libnccl-net-ofi.so"): a requested plugin
# missing, not NCCL's default search finding none ("Could not find: libnccl-net.so")
_NET_NOT_FOUND = re.compile(r"Error: network (.{1,80}?) not found")
_NAMED_PLUGIN_MISSING = re.compile(r"Could not find: (\S+) libnccl-net-\S+\.so")
