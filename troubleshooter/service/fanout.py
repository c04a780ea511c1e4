"""Fan out: the node-side step of ``troubleshooter fanout`` (each node writes its bundle's facts next to it).

``troubleshooter.probe.fanout`` runs one srun step over the job's nodes; each task captures a bundle and then
runs ``python -m troubleshooter.service.fanout --facts BUNDLE`` so that the comparison reads small files.
"""

from __future__ import annotations

import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m troubleshooter.service.fanout --facts BUNDLE``: the node-side step that writes the facts sidecar."""
    import argparse

    from troubleshooter.diagnosis import compare

    p = argparse.ArgumentParser(prog="python -m troubleshooter.service.fanout")
    p.add_argument("--facts", metavar="BUNDLE", required=True, help="write BUNDLE's facts next to it (<node>.facts.json)")
    args = p.parse_args(argv)
    try:
        print(compare.write_sidecar(args.facts))
    except Exception as exc:  # the bundle is what matters; the sidecar is an optimisation
        print(f"troubleshooter.service.fanout: {args.facts}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
