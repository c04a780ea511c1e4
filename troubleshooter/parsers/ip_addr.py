"""Network interfaces as ``ip addr`` (also ``ip link``, ``ip -br addr``) and ``ifconfig`` print them.

Real sample (a GPU node with three IPoIB ports down and Docker's bridge; tests/data/ip-addr)::

    2: enp97s0f0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP group default qlen 1000
        link/ether e8:61:1f:5c:9b:8c brd ff:ff:ff:ff:ff:ff
        inet 10.30.23.25/24 brd 10.30.23.255 scope global enp97s0f0
    4: ibp16s0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 4092 qdisc mq state DOWN group default qlen 256
        link/infiniband 00:00:01:46:fe:80:00:00:00:00:00:00:58:a2:e1:03:00:44:0a:88 brd 00:ff:ff:ff:ff:12:40:1b:...
    7: docker0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc noqueue state DOWN group default
        inet 172.17.0.1/16 brd 172.17.255.255 scope global docker0

and ``ifconfig`` (net-tools 2.x: ``ib0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 2044`` /
``inet 10.66.80.44  netmask ...`` / ``infiniband 80:00:...  txqueuelen 256  (InfiniBand)``; net-tools 1.60:
``eth0      Link encap:Ethernet  HWaddr ...`` / ``inet addr:10.0.0.1``).

What it means: NCCL's bootstrap and socket transport need an interface with an address the other ranks can
reach. A container in its own network namespace may have only ``lo`` (``--network none``), or only Docker's
bridge; a host lists docker0, br-*, veth*, virbr* bridges next to the real NICs, and NCCL picks among all of
them unless NCCL_SOCKET_IFNAME narrows the choice. IPoIB interfaces (``link/infiniband``) show that IB ports exist.
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("net.interfaces", "list", "", "every interface: {name, state (UP, DOWN, UNKNOWN), mtu, link (ether, infiniband, loopback, none), kind (loopback, bridge, veth, virtual, infiniband, ethernet), ipv4: [addr/len], ipv6: [addr/len]}"),
    ("net.interface_names", "list", "", "interface names in the order listed (altnames not included)"),
    ("net.ipv4_interfaces", "list", "", "interfaces other than loopback that are up (or state unknown) and hold an IPv4 address"),
    ("net.routable_candidates", "list", "", "of those, the ones that are not container bridges or veth pairs (docker0, br-*, virbr*, cni*, veth*): where NCCL's sockets should go"),
    ("net.bridge_interfaces", "list", "", "container and VM bridges and veth pairs listed (docker0, br-*, virbr*, cni*, flannel*, cali*, veth*)"),
    ("net.ipoib_interfaces", "list", "", "IP-over-InfiniBand interfaces (link/infiniband)"),
    ("net.no_routable_interface", "bool", "", "no interface but loopback holds an IPv4 address and is up: NCCL has nothing to bootstrap over"),
]

_IP_HEAD = re.compile(r"^(\d+):\s+([^\s:@]+)(?:@[^\s:]+)?:\s+<([^>]*)>(.*)$")
_IP_LINK = re.compile(r"^\s+link/(\w+)")
_IP_INET = re.compile(r"^\s+inet\s+(\d+\.\d+\.\d+\.\d+(?:/\d+)?)")
_IP_INET6 = re.compile(r"^\s+inet6\s+([0-9a-fA-F:]+(?:/\d+)?)")
_IP_ALT = re.compile(r"^\s+altname\s+(\S+)")
_BRIEF = re.compile(r"^([A-Za-z][\w.\-]*)(?:@\S+)?\s+(UP|DOWN|UNKNOWN|LOWERLAYERDOWN|DORMANT|NOTPRESENT)\b\s*(.*)$")
_IFC_HEAD = re.compile(r"^([A-Za-z][\w.\-:]*): flags=\d+<([^>]*)>\s+mtu (\d+)")
_IFC_OLD_HEAD = re.compile(r"^([A-Za-z][\w.\-:]*)\s+Link encap:\s*(\w+(?: \w+)?)")
_IFC_INET = re.compile(r"^\s+inet (?:addr:)?(\d+\.\d+\.\d+\.\d+)")
_IFC_INET6 = re.compile(r"^\s+inet6 (?:addr:\s*)?([0-9a-fA-F:]+(?:/\d+)?)")
_IFC_LINK = re.compile(r"^\s+(ether|infiniband|loop|unspec)\s|\((Ethernet|InfiniBand|Local Loopback|UNSPEC)\)")
_IFC_OLD_FLAGS = re.compile(r"^\s+((?:UP|BROADCAST|RUNNING|MULTICAST|LOOPBACK|NOARP|POINTOPOINT)(?: \w+)*)\s+MTU:(\d+)")
_BRIDGE = re.compile(r"^(docker\d*|br-[0-9a-f]+|virbr\d*|cni\d*|flannel[.\w]*|cali\w*|veth\w*|kube-bridge|weave|cbr\d*)$")


def _kind(name: str, link: str | None) -> str:
    if link == "loopback" or name == "lo":
        return "loopback"
    if link == "infiniband":
        return "infiniband"
    if name.startswith("veth"):
        return "veth"
    if _BRIDGE.match(name):
        return "bridge"
    if name.startswith(("ifb", "dummy", "tun", "tap", "vxlan", "gre", "sit", "ip6tnl", "tunl", "wg")):
        return "virtual"
    return "ethernet"


def _detect(text: str) -> float:
    head = text[:262144]
    lines = head.split("\n", 4000)[:4000]
    ip = sum(1 for ln in lines if ln[:1].isdigit() and _IP_HEAD.match(ln))
    if ip and any(_IP_LINK.match(ln) for ln in lines):
        return 0.9
    ifc = sum(1 for ln in lines if "flags=" in ln and _IFC_HEAD.match(ln)) + \
        sum(1 for ln in lines if "Link encap" in ln and _IFC_OLD_HEAD.match(ln))
    if ifc:
        return 0.9
    brief = [ln for ln in lines if ln.strip() and _BRIEF.match(ln)]
    if len(brief) >= 2 and any(ln.startswith("lo ") for ln in brief):
        return 0.75
    return 0.0


@parser(
    "ip-addr",
    detect=_detect,
    summary="network interfaces: ip addr / ip link / ip -br addr / ifconfig",
    facts=FACTS,
    command="ip addr",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "ip addr or ifconfig output")
    ifs: dict[str, dict[str, Any]] = {}
    cur: dict[str, Any] | None = None

    def start(name: str, state: str | None, mtu: int | None, link: str | None) -> dict[str, Any]:
        name = name.rstrip(":")
        if name in ifs:  # a second listing of the same interface (ip addr, then ip -br addr): fill the gaps
            d = ifs[name]
            d["state"] = d.get("state") or state
            return d
        d = {"name": name, "state": state, "mtu": mtu, "link": link, "ipv4": [], "ipv6": []}
        ifs[name] = d
        return d

    for raw in text.split("\n"):
        line = raw.rstrip()
        if not line.strip() or line.startswith("Infiniband hardware address can be incorrect"):
            continue  # ifconfig prints that warning at column 0 inside an interface's block
        m = _IP_HEAD.match(line)
        if m:
            flags = m.group(3).split(",")
            rest = m.group(4)
            st = re.search(r"\bstate (\w+)", rest)
            mtu = re.search(r"\bmtu (\d+)", rest)
            state = st.group(1) if st else ("UP" if "UP" in flags else "DOWN")
            cur = start(m.group(2), state, int(mtu.group(1)) if mtu else None, None)
            continue
        m = _IFC_HEAD.match(line)
        if m:
            flags = m.group(2).split(",")
            cur = start(m.group(1), "UP" if "UP" in flags and "RUNNING" in flags else "DOWN", int(m.group(3)), None)
            if "LOOPBACK" in flags:
                cur["link"] = "loopback"
            continue
        m = _IFC_OLD_HEAD.match(line)
        if m:
            enc = m.group(2).lower()
            link = "loopback" if "loopback" in enc else "infiniband" if "infiniband" in enc else "ether" \
                if "ethernet" in enc else None
            cur = start(m.group(1), None, None, link)
            continue
        if cur is not None and line[:1].isspace():
            lm = _IP_LINK.match(line)
            if lm:
                cur["link"] = lm.group(1)
                continue
            im = _IP_INET.match(line) or _IFC_INET.match(line)
            if im:
                if im.group(1) not in cur["ipv4"]:
                    cur["ipv4"].append(im.group(1))
                continue
            i6 = _IP_INET6.match(line) or _IFC_INET6.match(line)
            if i6:
                if i6.group(1) not in cur["ipv6"]:
                    cur["ipv6"].append(i6.group(1))
                continue
            fm = _IFC_OLD_FLAGS.match(line)
            if fm:
                words = fm.group(1).split()
                cur["state"] = "UP" if "UP" in words and "RUNNING" in words else "DOWN"
                cur["mtu"] = int(fm.group(2))
                continue
            km = _IFC_LINK.search(line)
            if km and cur["link"] is None:
                word = (km.group(1) or km.group(2) or "").lower()
                cur["link"] = {"loop": "loopback", "local loopback": "loopback", "ethernet": "ether"}.get(word, word)
            continue
        m = _BRIEF.match(line)
        if m and not line[:1].isspace():
            cur = None
            d = start(m.group(1), m.group(2), None, None)
            for a in m.group(3).split():
                if re.fullmatch(r"\d+\.\d+\.\d+\.\d+(?:/\d+)?", a) and a not in d["ipv4"]:
                    d["ipv4"].append(a)
                elif ":" in a and re.fullmatch(r"[0-9a-fA-F:]+(?:/\d+)?", a) and a not in d["ipv6"]:
                    d["ipv6"].append(a)
            continue
        if not line[:1].isspace():
            cur = None  # a prompt, prose or another tool's line ends the interface being read
    if not ifs:
        raise ParseError("no interface found (expected `ip addr` lines like '2: eth0: <...> mtu 1500 ...', "
                         "`ip -br addr` rows or `ifconfig` blocks)")
    out = []
    for d in ifs.values():
        d["kind"] = _kind(d["name"], d["link"])
        out.append(d)
    v4 = [d["name"] for d in out if d["kind"] != "loopback" and d["ipv4"] and d["state"] in ("UP", "UNKNOWN", None)]
    return {
        "net.interfaces": out,
        "net.interface_names": [d["name"] for d in out],
        "net.ipv4_interfaces": v4,
        "net.routable_candidates": [n for n in v4 if ifs[n]["kind"] not in ("bridge", "veth")],
        "net.bridge_interfaces": [d["name"] for d in out if d["kind"] in ("bridge", "veth")],
        "net.ipoib_interfaces": [d["name"] for d in out if d["kind"] == "infiniband"],
        "net.no_routable_interface": not v4,
    }
