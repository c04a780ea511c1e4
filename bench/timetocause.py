"""Time to cause (issue 13): the installed app in a real terminal (tmux), launched as the README says, driven with
send-keys from the start screen to each seed case's fix, counting the keys pressed and the seconds from launch
until the fix command is on the screen.

    .venv/bin/python bench/timetocause.py            # the table (docs/benchmarks.md)
    .venv/bin/python bench/timetocause.py --json

The seconds are the machine's: start-up, the replayed probes and every repaint, with no reading time. A newcomer's
time is these seconds plus reading what each screen says; the keys are what they have to find.
tests/integration/test_time_to_cause.py runs the same scripts and holds them to the goal (<= 10 keys, < 3 min).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ENTRY = BIN / "troubleshooter"
MAX_KEYS = 10
MAX_SECONDS = 180.0

# Each case from the start screen: the keys a person presses, each with what the screen shows once it has been
# handled (the next thing to read), and the fix command's text that ends the run. The practice list is in
# cases.yaml order: case1..case4, healthy.
CASES: dict[str, dict] = {
    # w watches the expert walk (Enter on a case starts the quiz); a practice walk keeps its steps on screen at
    # the end, and r opens the results with the fix
    "case1": {"cause": "smmu-cmdq-contention",
              "steps": [("d", "Case 4"), ("w", "Does a dense model"), ("Enter", "done: "), ("r", "root cause")],
              "fix": "grep -E 'CONFIG_TEGRA241_CMDQV"},
    "case2": {"cause": "cores-shared-housekeeping (and 2 more)",
              "steps": [("d", "Case 4"), ("Down", "Case 4"), ("w", "done: "), ("r", "root cause")],
              "fix": "sudo virsh emulatorpin <domain>"},
    "case3": {"cause": "ib-qps-per-connection",
              "steps": [("d", "Case 4"), ("Down", "Case 4"), ("Down", "Case 4"), ("w", "single node"),
                        ("Enter", "done: "), ("r", "root cause")],
              "fix": "export NCCL_IB_QPS_PER_CONNECTION=4"},
    "case4": {"cause": "topo-not-in-container",
              "steps": [("d", "Case 4"), ("Down", "Case 4"), ("Down", "Case 4"), ("Down", "Case 4"),
                        ("w", "done: "), ("r", "root cause")],
              "fix": "export NCCL_TOPO_FILE=/etc/nccl/topo.xml"},
}


class Terminal:
    """One tmux server of its own (a private socket), one window of ``cols`` x ``rows``."""

    def __init__(self, workdir: Path, cols: int = 140, rows: int = 45) -> None:
        self.sock = str(workdir / "tmux.sock")
        self.cols, self.rows = cols, rows
        # COLUMNS / LINES from the caller (a test runner sets them) would override the pane's size in the app
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        self.env = dict(env, TROUBLESHOOTER_DATA_DIR=str(workdir / "data"),
                        TROUBLESHOOTER_CONFIG=str(workdir / "none.yaml"), TERM="xterm-256color")

    def start(self, args: str = "", name: str = "t") -> None:
        subprocess.run(["tmux", "-S", self.sock, "-f", "/dev/null", "new-session", "-d", "-s", name, "-x",
                        str(self.cols), "-y", str(self.rows), f"{ENTRY} {args}; sleep 600"],
                       check=True, env=self.env, cwd=ROOT, timeout=30)

    def key(self, key: str, name: str = "t") -> None:
        subprocess.run(["tmux", "-S", self.sock, "send-keys", "-t", name, key], check=True, timeout=30)

    def screen(self, name: str = "t") -> str:
        return subprocess.run(["tmux", "-S", self.sock, "capture-pane", "-p", "-t", name], capture_output=True,
                              text=True, timeout=30).stdout

    def wait_for(self, text: str, timeout: float = 60.0, name: str = "t") -> str:
        deadline = time.monotonic() + timeout
        while True:
            s = self.screen(name)
            if text in s:
                return s
            if time.monotonic() > deadline:
                raise TimeoutError(f"{text!r} did not appear within {timeout:g}s; the screen:\n{s}")
            time.sleep(0.05)

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.sock, "kill-server"], capture_output=True, timeout=30)


def walk(case: str, workdir: Path | None = None) -> dict:
    """Launch the app, play ``case``'s keys from the start screen, stop when its fix is on the screen."""
    spec = CASES[case]
    tmp = Path(workdir or tempfile.mkdtemp(prefix="ts-ttc-"))
    term = Terminal(tmp)
    t0 = time.monotonic()
    try:
        term.start()
        term.wait_for("What do you see?")
        first = time.monotonic() - t0
        keys = 0
        for key, then in spec["steps"]:
            term.key(key)
            keys += 1
            term.wait_for(then)
        screen = term.wait_for(spec["fix"])
        return {"case": case, "cause": spec["cause"], "keys": keys, "seconds": round(time.monotonic() - t0, 2),
                "first_frame_s": round(first, 2), "fix": spec["fix"], "screen": screen}
    finally:
        term.close()
        if workdir is None:
            shutil.rmtree(tmp, ignore_errors=True)


def table(rows: list[dict]) -> str:
    out = ["| case | cause reached | keys | seconds (launch to fix on screen) |", "|---|---|---:|---:|"]
    for r in rows:
        out.append(f"| {r['case']} | `{r['cause']}` | {r['keys']} | {r['seconds']:.1f} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args()
    if not shutil.which("tmux"):
        print("tmux is not installed (apt-get install tmux)", file=sys.stderr)
        return 2
    rows = [walk(c) for c in args.cases.split(",")]
    if args.json:
        print(json.dumps([{k: v for k, v in r.items() if k != "screen"} for r in rows], indent=2))
    else:
        print(table(rows))
    return 0 if all(r["keys"] <= MAX_KEYS and r["seconds"] < MAX_SECONDS for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
