"""``ibv_devinfo`` (ibverbs-utils): the RDMA devices as the verbs library sees them, from this context.

Real sample (inside a container on an H100 node, ConnectX-7; from ../shared/corpus/lscpu-ibstat)::

    hca_id: mlx5_0
            transport:                      InfiniBand (0)
            fw_ver:                         28.39.2048
            node_guid:                      58a2:e103:002a:09b8
            vendor_id:                      0x02c9
            vendor_part_id:                 4129
            hw_ver:                         0x0
            board_id:                       MT_0000000838
            phys_port_cnt:                  1
                    port:   1
                            state:                  PORT_DOWN (1)
                            max_mtu:                4096 (5)
                            active_mtu:             4096 (5)
                            sm_lid:                 0
                            port_lid:               65535
                            port_lmc:               0x00
                            link_layer:             InfiniBand

Unlike ``ibstat`` (which reads sysfs / umad), this opens the verbs devices, so it shows what a process
in *this* context (container, job step) can use: no output here while the host has HCAs means the
``/dev/infiniband`` devices were not passed in. ``PORT_DOWN`` with ``port_lid 65535`` is a port with no
link. Plain ``ibv_devinfo`` has no link rate; with ``-v`` it prints ``active_width`` and
``active_speed``, whose product is the rate (``4X`` x ``100.0 Gbps`` = 400), reported only when both
are there. ``vendor_part_id`` 4129 is ConnectX-7 (ibstat shows it as ``CA type: MT4129``). The ``-v``
output ends each port with its GID table (``GID[  3]:  ::ffff:10.0.0.1, RoCE v2``): read into the same
``ib.gid*`` facts as ``show_gids`` (which RoCE v2 IPv4 GID index NCCL_IB_GID_INDEX should name).
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text, to_number
from troubleshooter.parsers.ibstat import COMMON_FACTS, set_port_state_field, summarize
from troubleshooter.parsers.show_gids import GID_FACTS, gid_facts, ipv4_of, roce_version

FACTS = list(COMMON_FACTS) + [
    ("ib.vendor_part_ids", "list", "", "sorted distinct PCI device ids of the HCAs (4129 = ConnectX-7, 4123 = ConnectX-6, 41692 = BlueField-3)"),
] + GID_FACTS

_HCA = re.compile(r"^hca_id:\s*(\S+)")
_PORT = re.compile(r"^port:\s*(\d+)\s*$")
_KV = re.compile(r"^([a-z_]+)\s*:\s*(.*)$")
_WIDTH = re.compile(r"^(\d+)X\b")
_SPEED = re.compile(r"^([\d.]+)\s*Gbps\b")
_DEVICE_KEYS = {"fw_ver": "fw", "board_id": "board_id", "transport": "transport"}
# a port's own lines: under a grep that kept them without their "port:" line they are still a port's
_PORT_KEYS = frozenset({"state", "phys_state", "link_layer", "active_mtu", "max_mtu", "active_width", "active_speed",
                        "port_lid", "sm_lid", "port_lmc", "sm_sl", "subnet_timeout", "max_msg_sz", "port_cap_flags",
                        "max_vl_num", "bad_pkey_cntr", "qkey_viol_cntr", "pkey_tbl_len", "gid_tbl_len"})
_COMMAND = re.compile(r"^\$ (?:sudo )?(?:\S*/)?ibv_devinfo\b(?P<opts>.*)$")
_DEV_OPT = re.compile(r"(?:^|\s)(?:-d\s*|--ib-dev=)(\S+)")
_PORT_OPT = re.compile(r"(?:^|\s)(?:-i\s*|--ib-port=)(\d+)")
_GID = re.compile(r"^GID\[\s*(\d+)\]:\s*([0-9A-Fa-f:.]+)\s*(?:,\s*(.*\S|))?\s*$")


_GID_ANY = re.compile(r"^[^\S\n]*GID\[\s*\d+\]:\s*[0-9A-Fa-f:.]+\s*,\s*RoCE v[12]", re.MULTILINE)


def _detect(text: str) -> float:
    head = text[:65536]
    if not re.search(r"^[^\S\n]*(?:-\s*)?hca_id:\s*\S+", head, re.MULTILINE):
        # a fragment of ibv_devinfo -v: only a port's GID table (its "GID[  3]: ..., RoCE v2" lines)
        return 0.7 if len(_GID_ANY.findall(head)) >= 2 else 0.0
    hits = sum(k in head for k in ("transport:", "fw_ver:", "vendor_part_id:", "phys_port_cnt:", "link_layer:", "PORT_"))
    return 0.95 if hits >= 3 else 0.5


@parser(
    "ibv-devinfo",
    detect=_detect,
    summary="ibv_devinfo: RDMA devices visible to verbs in this context, port state, link layer, firmware",
    facts=FACTS,
    command="ibv_devinfo -v",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "ibv_devinfo output (hca_id: blocks)")
    devices: list[dict[str, Any]] = []
    ports: list[dict[str, Any]] = []
    part_ids: set[int] = set()
    gids: list[dict[str, Any]] = []
    dev: dict[str, Any] | None = None
    port: dict[str, Any] | None = None
    width: int | None = None
    speed: float | None = None
    # the command line, when the paste shows it: `-d mlx5_1` names the device of hca_id-less lines (a grep), `-i 2`
    # the port of port lines without their "port:" line
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    cmd = _COMMAND.match(first)
    named_dev = _DEV_OPT.search(cmd.group("opts")) if cmd else None
    named_port = _PORT_OPT.search(cmd.group("opts")) if cmd else None
    seen: set[str] = set()  # a port's keys read since its "port:" line, or since an implicit port began

    def close_port() -> None:
        if port is not None and width is not None and speed is not None:
            rate = width * speed
            if not 0 < rate < 1e6:  # garbage, not a link rate
                return
            port["rate_gbps"] = int(rate) if float(rate).is_integer() else round(rate, 3)
            port["width"], port["lane_gbps"] = width, speed

    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("- "):  # pastebin-style list rendering
            line = line[2:].strip()
        if not line:
            continue
        m = _HCA.match(line)
        if m:
            close_port()
            dev = {"name": m.group(1), "ports": []}
            devices.append(dev)
            port, width, speed = None, None, None
            continue
        kv = _KV.match(line)
        if dev is None and named_dev is not None and kv and (kv.group(1) in _PORT_KEYS or kv.group(1) in _DEVICE_KEYS
                                                              or kv.group(1) == "vendor_part_id"):
            dev = {"name": named_dev.group(1), "ports": []}  # `ibv_devinfo -d DEV | grep ...`: DEV's lines
            devices.append(dev)
        if dev is not None and kv and kv.group(1) in _PORT_KEYS and (port is None or (port.get("implicit")
                                                                                   and kv.group(1) in seen)):
            # a port line with no "port:" line before it (grep kept the keys, not the port numbers): ibv_devinfo
            # prints a device's ports in order, so a key seen again is the next port's
            close_port()
            number = int(named_port.group(1)) if named_port and not dev["ports"] else len(dev["ports"]) + 1
            port = {"device": dev["name"], "port": number, "implicit": True}
            width, speed, seen = None, None, set()
            dev["ports"].append(number)
            ports.append(port)
        if dev is None:
            m = _GID.match(line)
            if m:  # a pasted fragment: the GID table without its hca_id and port lines
                gid = {"device": "(not shown)", "port": 0, "index": int(m.group(1)), "gid": m.group(2)}
                if ipv4_of(m.group(2)):
                    gid["ipv4"] = ipv4_of(m.group(2))
                if roce_version(m.group(3) or ""):
                    gid["version"] = roce_version(m.group(3) or "")
                gids.append(gid)
            continue
        m = _PORT.match(line)
        if m:
            close_port()
            port = {"device": dev["name"], "port": int(m.group(1))}
            width, speed, seen = None, None, set()
            dev["ports"].append(port["port"])
            ports.append(port)
            continue
        m = _GID.match(line)
        if m:
            if port is not None:
                gid = {"device": dev["name"], "port": port["port"], "index": int(m.group(1)), "gid": m.group(2)}
                ipv4 = ipv4_of(m.group(2))
                if ipv4:
                    gid["ipv4"] = ipv4
                version = roce_version(m.group(3) or "")
                if version:
                    gid["version"] = version
                gids.append(gid)
            continue
        if not kv:  # (matched once, above)
            continue
        key, value = kv.group(1), kv.group(2).strip()
        if not value:
            continue
        seen.add(key)
        if port is None:
            if key in _DEVICE_KEYS:
                dev[_DEVICE_KEYS[key]] = re.sub(r"(?<!\s)\s*\(\d+\)$", "", value)
            elif key == "vendor_part_id":
                pid = to_number(value)
                if isinstance(pid, int):
                    dev["vendor_part_id"] = pid
                    part_ids.add(pid)
            continue
        if set_port_state_field(port, key, value):
            pass
        elif key == "active_mtu":
            mtu = to_number(value.split()[0])
            if isinstance(mtu, int):
                port["active_mtu"] = mtu
        elif key == "active_width":
            w = _WIDTH.match(value)
            width = int(w.group(1)) if w else None
        elif key == "active_speed":
            s = _SPEED.match(value)
            speed = float(s.group(1)) if s else None
    close_port()
    if not devices and gids:
        return gid_facts(gids)  # only the GID table was pasted: its facts, and no claim about devices or ports
    if not devices:
        raise ParseError("no 'hca_id:' block found: this is not ibv_devinfo output")
    for pt in ports:
        pt.pop("implicit", None)
    facts = summarize(devices, ports)
    if not ports:  # no port line at all (a grep that kept none, a paste cut short): not shown, which is not none
        for name in ("ib.ports", "ib.active_ports", "ib.down_ports", "ib.link_layers", "ib.rates_gbps"):
            facts.pop(name, None)
    elif any("state" not in pt for pt in ports):  # a grep that kept link_layer, not state: how many are up is unknown
        for name in ("ib.active_ports", "ib.down_ports", "ib.rates_gbps"):
            facts.pop(name, None)
    facts["ib.vendor_part_ids"] = sorted(part_ids)
    if gids:  # ibv_devinfo -v on a port with a GID table
        facts.update(gid_facts(gids))
    return facts
