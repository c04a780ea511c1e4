"""Derived facts: values that need more than one source (the effective NCCL setting, say).

Each rule reads facts already in the set and adds a documented fact; none overrides a parsed one.
"""

from __future__ import annotations

from troubleshooter.model.facts import Fact, FactSet, declare

declare("derived", [
    ("nccl.effective.*", "string", "", "the value NCCL would use for a variable: the environment, else /etc/nccl.conf; absent when neither sets it (NCCL's default applies)"),
    ("nccl.ib_qps_effective", "number", "count", "NCCL_IB_QPS_PER_CONNECTION as NCCL would use it (environment, nccl.conf, else NCCL's default of 1)"),
    ("nccl.ib_hca_selected", "list", "", "the RDMA ports (dev:port) the effective NCCL_IB_HCA selects among those present"),
    ("nccl.ib_hca_selects_none", "bool", "", "NCCL_IB_HCA is set but selects none of the ports present here (NCCL then falls back)"),
])

NCCL_DEFAULTS = {"NCCL_IB_QPS_PER_CONNECTION": "1"}


def apply(fs: FactSet) -> None:
    env = {k[len("env.var."):]: f.value for k, f in fs.items() if k.startswith("env.var.NCCL_")}
    conf = {k[len("nccl_conf.var."):]: f.value for k, f in fs.items() if k.startswith("nccl_conf.var.")}
    for name in sorted(set(env) | set(conf)):
        value, src = (env[name], fs[f"env.var.{name}"].source) if name in env else (conf[name], fs[f"nccl_conf.var.{name}"].source)
        key = f"nccl.effective.{name}"
        if key not in fs:
            fs.add(Fact(key, str(value), "", src, "", 0.0))
    _hca(fs)
    if "nccl.ib_qps_effective" not in fs and (env or conf or "env.names" in fs):
        raw = env.get("NCCL_IB_QPS_PER_CONNECTION", conf.get("NCCL_IB_QPS_PER_CONNECTION", NCCL_DEFAULTS["NCCL_IB_QPS_PER_CONNECTION"]))
        try:
            fs.add(Fact("nccl.ib_qps_effective", int(str(raw).strip()), "count", "derived", "", 0.0))
        except ValueError:
            pass


def _hca(fs: FactSet) -> None:
    from troubleshooter.model import ibhca

    spec_fact = fs.get("nccl.effective.NCCL_IB_HCA")
    ports_fact = fs.get("ib.ports")
    if spec_fact is None or ports_fact is None or "nccl.ib_hca_selected" in fs:
        return
    ports = [(p.get("device"), int(p.get("port") or 1)) for p in ports_fact.value if isinstance(p, dict) and p.get("device")]
    if not ports:
        return
    chosen = ibhca.match_hca(str(spec_fact.value), ports)
    fs.add(Fact("nccl.ib_hca_selected", [f"{d}:{p}" for d, p in chosen], "", "derived", "", 0.0))
    fs.add(Fact("nccl.ib_hca_selects_none", not chosen, "", "derived", "", 0.0))
