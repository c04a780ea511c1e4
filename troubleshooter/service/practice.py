"""Practice cases: the four reference cases and a healthy node, as replayable bundles.

Each case lives in ``decision_trees/practice/<case>/``:

- ``outputs/<source-id>.txt``: the plain output of one source on the job's side (the command the source's
  argv runs, in the tool's exact format), adapted from a real output in ``tests/data``; ``outputs/host/``
  holds the host side where the case has one (case 4). Each file starts with ``#%`` provenance lines (which
  real file it was adapted from, what was changed); they are stripped when the bundle is built.
- ``bundle/``: the bundle built from those outputs (format: :mod:`troubleshooter.probe.bundle`), which
  ``troubleshooter demo <case>`` and the tree tests (``bundle: practice/<case>/bundle``) replay.

``decision_trees/practice/cases.yaml`` lists the cases: id, title, symptom (entry tree), profile, answers
to the tree's questions, the causes expected, the intro (the symptom as the SRE first sees it: it never names
the cause), the story (the whole case, for the debrief) and the bundle path.

Rebuild every bundle after editing an output (the bundles are committed; a test checks they are up to
date)::

    python -m troubleshooter.service.practice build            # every case
    python -m troubleshooter.service.practice build case2      # one case

Bundles are deterministic: fixed timestamps, no host name, evidence in source-id order, so a rebuild of
unchanged outputs gives byte-identical files.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from troubleshooter.probe import bundle
from troubleshooter import locations, sources, yamlio
from troubleshooter.model.evidence import Evidence, Status
from troubleshooter.sources.base import Params

# A fixed capture time (the reference cases' publication date), so rebuilt bundles are byte-identical.
CAPTURED_AT = 1785369600.0  # 2026-07-30T00:00:00Z
CREATED_AT = "2026-07-30T00:00:00Z"


def practice_dir() -> Path:
    return locations.trees_dir() / "practice"


def load_cases() -> list[dict[str, Any]]:
    """The practice cases of ``decision_trees/practice/cases.yaml`` (empty when the file is missing)."""
    p = practice_dir() / "cases.yaml"
    if not p.exists():
        return []
    data = yamlio.load(p)
    return [dict(c) for c in (data.get("cases", []) if isinstance(data, dict) else [])]


class PracticeError(ValueError):
    """An unknown practice case (its message lists the known ones)."""


def practice_case(case_id: str) -> dict[str, Any]:
    cases = load_cases()
    for c in cases:
        if c["id"] == case_id:
            return c
    raise PracticeError(f"unknown practice case {case_id!r}; cases: {', '.join(c['id'] for c in cases)}")


def case_intro(case: dict[str, Any]) -> str:
    """What the trainee is told before the walk: the symptom as an SRE first sees it, never the cause (the
    ``story``, which names it, is for the debrief)."""
    return str(case.get("intro") or "").strip()


def missed(case: dict[str, Any], found: list[str], answers: list[tuple[str, str]]) -> str:
    """On a practice walk that ends without the case's root causes: what went differently and how to find
    them (Markdown), so a wrong answer ends in a lesson, not in "no root cause". "" when every cause was found."""
    expect = [str(c) for c in case.get("expect") or []]
    lost = [c for c in expect if c not in found]
    if not lost:
        return ""
    given = {node.rsplit(".", 1)[-1]: choice for node, choice in answers}
    wanted = {str(k): str(v) for k, v in (case.get("answers") or {}).items()}
    differ = [f"`{k}`: you answered {given[k]!r}, the case's team answered {v!r}"
              for k, v in wanted.items() if k in given and given[k] != v]
    lines = [f"**Practice: this path did not reach {len(lost)} of the case's {len(expect)} root "
             f"cause{'s' if len(expect) != 1 else ''}.**", ""]
    if differ:
        lines += ["An answer sent the walk elsewhere:", ""] + [f"- {d}" for d in differ] + [
            "", "Press **b** to go back to the question and take the other branch."]
    else:
        lines += ["The walk could not settle them from this capture."]
    lines += ["", "Or practise the case as a quiz (enter on the practice list): you choose each probe and "
              "are shown the expert's choice and why, then a debrief with the cause and its fix.", ""]
    return "\n".join(lines)


def practice_bundle_path(case: dict[str, Any]) -> Path:
    return practice_dir() / case["bundle"]


def strip_header(raw: bytes) -> bytes:
    """Drop the leading ``#%`` provenance lines and the blank line after them (as tests/corpus.py does)."""
    lines = raw.split(b"\n")
    i = 0
    while i < len(lines) and lines[i].startswith(b"#%"):
        i += 1
    if i and i < len(lines) and not lines[i].strip():
        i += 1
    return b"\n".join(lines[i:])


def _evidence(path: Path, side_label: str, params: Params) -> Evidence:
    registry = sources.load_all()
    sid = path.stem
    if sid not in registry:
        raise ValueError(f"{path}: no source {sid!r} (file names are source ids; see `troubleshooter sources`)")
    out = strip_header(path.read_bytes())
    return Evidence(source_id=sid, status=Status.OK, stdout=out, stderr=b"", rc=0, duration_s=0.0,
                    started_at=CAPTURED_AT, stdout_bytes=len(out), argv=registry[sid].render_argv(params),
                    target=side_label)


def _case_for(case_dir: Path) -> dict[str, Any]:
    for c in load_cases():
        if Path(c.get("bundle", "")).parts[:1] == (case_dir.name,):
            return c
    return {"id": case_dir.name}


def build_bundle(case_dir: str | Path, dest: str | Path | None = None) -> Path:
    """Build ``<case_dir>/bundle`` (or ``dest``) from ``<case_dir>/outputs``, replacing it. Returns its path."""
    case_dir = Path(case_dir)
    outputs = case_dir / "outputs"
    if not outputs.is_dir():
        raise FileNotFoundError(f"{outputs}: no outputs directory")
    case = _case_for(case_dir)
    extra = {k: v for k, v in (case.get("params") or {}).items() if k != "pid"}
    pid = (case.get("params") or {}).get("pid")
    params = Params(pid=pid, extra=extra)
    targets = case.get("targets") or {}
    sides: dict[str, tuple[dict[str, Any], list[Evidence]]] = {}
    for side, folder in (("target", outputs), ("host", outputs / "host")):
        files = sorted(folder.glob("*.txt")) if folder.is_dir() else []
        if not files:
            continue
        desc = dict(targets.get(side) or {"kind": "practice", "label": f"{case['id']} ({side})"})
        sides[side] = (desc, [_evidence(f, desc.get("label", side), params) for f in files])
    if "target" not in sides:
        raise FileNotFoundError(f"{outputs}: no <source-id>.txt files")
    manifest, files = bundle.build_manifest(sides, params={"pid": pid, **extra} if pid else extra,
                                            note=f"practice case {case['id']}: built by `python -m troubleshooter.service.practice build` "
                                                 f"from {case_dir.name}/outputs (adapted real outputs; see their #% headers)")
    manifest["created_at"] = CREATED_AT
    manifest["host"] = "practice"
    dest = Path(dest) if dest is not None else case_dir / "bundle"
    if dest.exists():
        shutil.rmtree(dest)
    return bundle.write(dest, manifest, files)


def build_all() -> list[Path]:
    out = []
    for c in load_cases():
        case_dir = practice_dir() / Path(c["bundle"]).parent
        out.append(build_bundle(case_dir))
    return out


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] != "build":
        print("usage: python -m troubleshooter.service.practice build [CASE...]", file=sys.stderr)
        return 2
    wanted = set(args[1:])
    cases = load_cases()
    unknown = wanted - {c["id"] for c in cases}
    if unknown:
        print(f"unknown case(s): {', '.join(sorted(unknown))}; cases: {', '.join(c['id'] for c in cases)}", file=sys.stderr)
        return 2
    for c in cases:
        if wanted and c["id"] not in wanted:
            continue
        p = build_bundle(practice_dir() / Path(c["bundle"]).parent)
        print(f"{c['id']}: {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
