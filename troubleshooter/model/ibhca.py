"""``NCCL_IB_HCA``: which RDMA devices and ports a given value selects, exactly as NCCL decides it.

NCCL's documentation (env.rst, "NCCL_IB_HCA")::

    Define to be a list of prefixes to filter interfaces to be used by NCCL.
    Using the ^ symbol, NCCL will exclude interfaces starting with any prefix in that list of prefix.
    Specific ports can also be specified using ":".
    Examples:
    mlx5 : Use all ports of all cards starting with mlx5.
    mlx5_0:1,mlx5_1:1 : Use ports 1 of cards mlx5_0 and mlx5_1.
    ^mlx5_1:2 : Do not use port 2 of card mlx5_1.

and, for the ``=`` prefix (NCCL's parameter description, as quoted in NCCL-derived code)::

    An optional prefix ^ indicates the list is an exclude list. A second optional prefix = indicates
    that the tokens are exact names, otherwise by default NCCL would treat each token as a prefix.
    - =mlx5_0:1,mlx5_1:1 : Use ports 1 of cards mlx5_0 and mlx5_1.
    - ^=mlx5_1,mlx5_4 : Do not use cards mlx5_1 and mlx5_4.

NCCL's code (net_ib.cc, misc/utils.cc) does, for every device and port::

    searchNot = env[0] == '^'   (then skip it);  searchExact = env[0] == '='  (then skip it)
    list = the rest split on ',', each entry 'prefix[:port[:...]]', empty entries dropped,
           port = atoi(...) or -1 (any port) when absent or empty
    use the port  iff  matchIfList(dev, port, list, exact) XOR searchNot
    matchIfList: true for an empty list; else some entry whose name matches (exact: equal; otherwise
                 dev starts with it) and whose port is -1 or equal

Consequences this module reproduces (and :func:`explain` points out): the order is ``^=``, never
``=^``; tokens are not trimmed (``mlx5_0, mlx5_1`` selects nothing for `` mlx5_1``); ``mlx5_1`` as a
prefix also selects ``mlx5_10`` .. ``mlx5_17``; an empty value selects everything and a bare ``^``
excludes everything; when nothing is selected NCCL reports ``NET/IB : No device found.`` and falls back
to sockets.
"""

from __future__ import annotations

import dataclasses

PREFIX_MAX = 63  # NCCL copies each name into a char[64]


@dataclasses.dataclass(frozen=True)
class HcaSpec:
    exclude: bool
    exact: bool
    entries: tuple[tuple[str, int], ...]  # (name or prefix, port; -1 = any port)


def _atoi(s: str) -> int:
    """C atoi: leading blanks, optional sign, digits; 0 when there are none."""
    s = s.lstrip(" \t\n\r\f\v")
    sign = 1
    if s[:1] in ("+", "-"):
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    digits = ""
    for ch in s:
        if not ch.isdigit() or not ch.isascii():
            break
        digits += ch
    return sign * int(digits) if digits else 0


def parse_spec(spec: str | None) -> HcaSpec:
    """Split an NCCL_IB_HCA value the way NCCL does (None: the variable is not set)."""
    if spec is None:
        return HcaSpec(False, False, ())
    s = spec
    exclude = s.startswith("^")
    if exclude:
        s = s[1:]
    exact = s.startswith("=")
    if exact:
        s = s[1:]
    entries = []
    for entry in s.split(","):
        if not entry:
            continue
        parts = entry.split(":")
        name = parts[0]
        if not name:
            continue
        port = _atoi(parts[1]) if len(parts) > 1 and parts[1] != "" else -1
        entries.append((name[:PREFIX_MAX], port))
    return HcaSpec(exclude, exact, tuple(entries))


def _name_matches(dev: str, ref: str, exact: bool) -> bool:
    return dev == ref if exact else dev.startswith(ref)


def _in_list(dev: str, port: int, spec: HcaSpec) -> bool:
    if not spec.entries:
        return True
    return any(_name_matches(dev, name, spec.exact) and (p == -1 or p == port) for name, p in spec.entries)


def match_hca(spec: str | None, ports: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The (device, port) pairs among ``ports`` that NCCL would use with ``NCCL_IB_HCA=spec``, in order.

    ``spec`` None means the variable is unset: every port is used.

    >>> match_hca("mlx5_1", [("mlx5_0", 1), ("mlx5_1", 1), ("mlx5_10", 1)])
    [('mlx5_1', 1), ('mlx5_10', 1)]
    >>> match_hca("=mlx5_1", [("mlx5_0", 1), ("mlx5_1", 1), ("mlx5_10", 1)])
    [('mlx5_1', 1)]
    """
    parsed = parse_spec(spec)
    return [(dev, port) for dev, port in ports if _in_list(dev, int(port), parsed) != parsed.exclude]


def spec_problems(spec: str | None) -> list[str]:
    """Mistakes in the value itself, whatever devices are present (plain-language, one per kind).

    >>> spec_problems("^=mlx5_8,^=mlx5_14")
    ["'^=mlx5_14': '^' and '=' go once, before the whole list; inside it they are read as part of a device name, so this entry matches nothing"]
    >>> spec_problems("^=mlx5_8,mlx5_14")
    []
    """
    if spec is None:
        return []
    parsed = parse_spec(spec)
    problems = []
    if spec.startswith("=^"):
        problems.append("'=^' is read as exact names starting with '^' (nothing matches): NCCL expects '^=' to exclude exact names")
    for n, _ in parsed.entries:
        if n[:1] in ("^", "=") and not (spec.startswith("=^") and n == parsed.entries[0][0]):
            problems.append(f"'{n}': '^' and '=' go once, before the whole list; inside it they are read as part of "
                            "a device name, so this entry matches nothing")
    if any(n != n.strip() for n, _ in parsed.entries):
        problems.append("an entry has spaces around it: NCCL does not trim them, so it matches nothing")
    if any(p == 0 for _, p in parsed.entries):
        problems.append("a port number is 0 or not a number: ports start at 1, so that entry matches nothing")
    if parsed.exclude and not parsed.entries:
        problems.append("a bare '^' excludes every device")
    return problems


def explain(spec: str | None, ports: list[tuple[str, int]]) -> dict:
    """What ``NCCL_IB_HCA=spec`` does on these ports, with likely mistakes spelled out.

    Returns ``{"selected": [...], "excluded": [...], "unmatched_entries": [...], "problems": [...]}``:
    ``unmatched_entries`` are list entries that name no present device/port (a typo, a device that is
    not visible in this container), ``problems`` are plain-language warnings.
    """
    parsed = parse_spec(spec)
    selected = match_hca(spec, ports)
    excluded = [p for p in ports if p not in selected]
    unmatched = []
    for name, port in parsed.entries:
        if not any(_name_matches(d, name, parsed.exact) and (port == -1 or port == p) for d, p in ports):
            unmatched.append(name if port == -1 else f"{name}:{port}")
    problems = spec_problems(spec)
    if spec is not None:
        if not parsed.exact and not parsed.exclude:
            names = {d for d, _ in ports}
            for n, _ in parsed.entries:
                wider = sorted(d for d in names if d != n and d.startswith(n))
                if n in names and wider:
                    problems.append(f"'{n}' is a prefix: it also selects {', '.join(wider)}; use '={spec.lstrip('=')}' for exact names")
    if ports and not selected:
        problems.append("no device/port is selected: NCCL will report 'NET/IB : No device found.' and fall back to sockets")
    return {"selected": selected, "excluded": excluded, "unmatched_entries": unmatched, "problems": problems}
