"""The headless CLI: --version and --help on every verb; parse (auto kind, exact facts, unknown kinds,
garbled/empty/non-UTF-8 input as one line and exit 2, never a traceback); check on a bundle with --json and
--junit; capture then check; trees lint/graph; sources/facts/locate --json; sessions/export with no sessions;
diagnose without a TTY never hangs and says what it needs (exit 2)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from troubleshooter import __version__, cli
from tests.clihelp import main
from tests.corpus import strip_header
from tests.test_unwrap import terminal

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
PRACTICE = ROOT / "decision_trees" / "practice"
TURBOSTAT = DATA / "turbostat" / "client-jitter-line-fused-header-gfxwattramwatt.txt"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(d))
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG", str(tmp_path / "no-config.yaml"))
    monkeypatch.delenv("TROUBLESHOOTER_TREES", raising=False)
    return d


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The CLI in a fresh interpreter, stdin not a TTY (/dev/null), with the test's environment."""
    return subprocess.run([sys.executable, "-m", "troubleshooter", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, env=dict(os.environ), cwd=cwd or ROOT, timeout=120)




def bundle(case: str) -> Path:
    p = PRACTICE / case / "bundle"
    if not (p / "manifest.json").exists():
        pytest.skip(f"practice bundle {case} not built")
    return p


def _one_line_error(r: subprocess.CompletedProcess | tuple[int, str, str], name: str) -> None:
    rc, out, err = (r.returncode, r.stdout, r.stderr) if isinstance(r, subprocess.CompletedProcess) else r
    assert rc == 2, (rc, out, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("troubleshooter: ") and name in lines[0], lines[0]
    assert out == ""


# ---------------------------------------------------------------------------- version and help
def test_version(capsys: pytest.CaptureFixture) -> None:
    rc, out, _ = main(capsys, "--version")
    assert rc == 0 and out.strip() == f"troubleshooter {__version__}"


def _verbs() -> list[list[str]]:
    p, verbs = cli.build_parser()
    choices = p._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(choices) == verbs
    out = [[v] for v in choices]
    trees = choices["trees"]._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    out += [["trees", t] for t in trees]
    return out


def test_verb_module_map_is_what_the_modules_register() -> None:
    """main() builds only the named verb's module's parsers (cli.VERB_MODULE): the map must be what each module
    registers, and a verb's parser built alone must be the one built with every module."""
    import importlib

    seen = {}
    for mod in cli.VERB_MODULES:
        p, verbs = cli.build_parser((mod,))
        seen.update(dict.fromkeys(verbs, mod))
        importlib.import_module(mod)
    assert seen == cli.VERB_MODULE
    full, _ = cli.build_parser()
    for verb, mod in cli.VERB_MODULE.items():
        alone, _ = cli.build_parser((mod,))
        a = alone._subparsers._group_actions[0].choices[verb]  # type: ignore[union-attr]
        f = full._subparsers._group_actions[0].choices[verb]  # type: ignore[union-attr]
        assert a.format_help() == f.format_help(), verb


def test_help_on_every_verb(capsys: pytest.CaptureFixture) -> None:
    verbs = _verbs()
    names = {v[0] for v in verbs}
    assert {"check", "capture", "parse", "diagnose", "trees", "demo", "sessions", "export", "locate", "sources", "facts"} <= names
    rc, out, _ = main(capsys, "--help")
    assert rc == 0 and "usage: troubleshooter" in out
    for v in verbs:
        assert f" {v[0]} " in out or f"{{{v[0]}" in out or f",{v[0]}" in out or v[0] in out
    for v in verbs:
        rc, out, err = main(capsys, *v, "--help")
        assert rc == 0, (v, err)
        assert out.startswith(f"usage: troubleshooter {' '.join(v)}"), (v, out[:200])


def test_main_runs_twice_in_one_process(capsys: pytest.CaptureFixture) -> None:
    assert main(capsys, "locate", "--json")[0] == 0
    assert main(capsys, "locate", "--json")[0] == 0


# ---------------------------------------------------------------------------- parse
def test_parse_auto_kind_and_exact_facts(capsys: pytest.CaptureFixture) -> None:
    rc, out, err = main(capsys, "parse", str(TURBOSTAT), "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "turbostat" and doc["file"] == str(TURBOSTAT)
    f = doc["facts"]
    assert f["cpu.busy_mhz"] == 1562 and f["cpu.tsc_mhz"] == 2808 and f["cpu.busy_pct"] == 4.06
    assert f["cpu.turbostat_cpus"] == 6 and f["cpu.pkg_watt"] == 4.98
    assert f["cpu.turbostat_columns"][:3] == ["Core", "CPU", "Avg_MHz"]
    # naming the kind gives the same facts; the table view names the kind and a fact
    rc, out2, _ = main(capsys, "parse", "turbostat", str(TURBOSTAT), "--json")
    assert rc == 0 and json.loads(out2)["facts"] == f
    rc, table, _ = main(capsys, "parse", str(TURBOSTAT))
    assert rc == 0 and "turbostat" in table and "cpu.busy_mhz" in table


def test_parse_from_stdin() -> None:
    r = subprocess.run([sys.executable, "-m", "troubleshooter", "parse", "-", "--json"], input=TURBOSTAT.read_text(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["file"] == "<stdin>" and doc["kind"] == "turbostat" and doc["facts"]["cpu.busy_mhz"] == 1562


def test_parse_reads_a_paste_as_diagnose_does_when_the_tool_would_not_read_it(tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture) -> None:
    # the real turbostat capture as `docker logs -t` gives it back, inside a ticket's Markdown fence
    clean = json.loads(main(capsys, "parse", str(TURBOSTAT), "--json")[1])["facts"]
    text = strip_header(TURBOSTAT.read_text())
    p = tmp_path / "pasted.txt"
    p.write_text("```\n" + "".join(f"2026-12-04T10:00:00.{i:09d}Z {ln}\n" for i, ln in enumerate(text.splitlines()))
                 + "```\n")
    rc, out, err = main(capsys, "parse", str(p), "--json")
    assert rc == 0 and json.loads(out)["facts"] == clean and json.loads(out)["kind"] == "turbostat"
    assert err.startswith("read as pasted: ")
    rc, out, err = main(capsys, "parse", "turbostat", str(p), "--json")
    assert rc == 0 and json.loads(out)["facts"] == clean
    rc, out, err = main(capsys, "parse", str(TURBOSTAT), "--json")  # the tool's own output: no note
    assert rc == 0 and err == ""


def test_parse_joins_lines_a_terminal_wrapped(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # a real kernel log with Xid 145/149, copied from an 80-column terminal: each long line cut at exactly 80
    text = strip_header((DATA / "dmesg" / "gpud1174-gb200-nvlink-xid145-nonfatal-xid149-fatal.txt").read_text())
    (tmp_path / "clean.txt").write_text(text)
    clean = json.loads(main(capsys, "parse", str(tmp_path / "clean.txt"), "--json")[1])["facts"]
    p = tmp_path / "wrapped.txt"
    p.write_text(terminal(text))
    rc, out, err = main(capsys, "parse", str(p), "--json")
    assert rc == 0 and json.loads(out)["facts"] == clean
    assert err.startswith("read as pasted: ") and "a terminal's" in err


def test_parse_list_and_unknown_kind(capsys: pytest.CaptureFixture) -> None:
    rc, out, _ = main(capsys, "parse", "--list")
    assert rc == 0
    kinds = [line.split()[0] for line in out.splitlines() if line.strip()]
    assert "turbostat" in kinds and "nccl-tests" in kinds and "env" in kinds
    rc, out, err = main(capsys, "parse", "no-such-kind", str(TURBOSTAT))
    assert rc == 2 and out == ""
    assert "unknown kind 'no-such-kind'; known kinds:" in err and "turbostat" in err and "nccl-tests" in err


@pytest.mark.parametrize("content, kind", [
    (b"", None),
    (b"", "turbostat"),
    (b"asdf qwer\nzzz 1 2 3\n", None),
    (b"asdf qwer\nzzz 1 2 3\n", "turbostat"),
    (b"   \n\n\t\n", "nccl-tests"),
    (b"\x00\x01\x02 binary \x00 junk", "turbostat"),
    (b"\x00\x01\x02 binary \x00 junk", "nvidia-smi-q"),
])
def test_parse_garbled_or_empty_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture, content: bytes,
                                                   kind: str | None) -> None:
    p = tmp_path / "pasted output.txt"
    p.write_bytes(content)
    args = ["parse", *([kind] if kind else []), str(p)]
    _one_line_error(main(capsys, *args), str(p))


def test_parse_garbled_in_a_fresh_process(tmp_path: Path) -> None:
    p = tmp_path / "garbled.txt"
    p.write_bytes(b"asdf qwer\nzzz 1 2 3\n")
    _one_line_error(run("parse", str(p)), str(p))


def test_parse_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _one_line_error(main(capsys, "parse", str(tmp_path / "nope.txt")), "nope.txt")


def test_parse_non_utf8_does_not_crash(tmp_path: Path) -> None:
    raw = TURBOSTAT.read_bytes()
    # a latin-1 degree sign and stray bytes, as a terminal paste can produce
    p = tmp_path / "latin1.txt"
    p.write_bytes(b"\xb0C \xff\xfe\x80\n" + raw.replace(b"Avg_MHz", b"Avg_MHz", 1) + b"\n\xe9t\xe9\n")
    r = run("parse", str(p), "--json")
    assert "Traceback" not in r.stderr
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["facts"]["cpu.busy_mhz"] == 1562
    junk = tmp_path / "binary.bin"
    junk.write_bytes(bytes(range(256)) * 4)
    _one_line_error(run("parse", str(junk)), str(junk))

# ---------------------------------------------------------------------------- check and capture
def test_check_bundle_json_and_junit(tmp_path: Path) -> None:
    b = bundle("case4")
    junit = tmp_path / "report.xml"
    r = run("check", "--bundle", str(b), "--json", "--junit", str(junit))
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == "troubleshooter.check/1" and doc["target"]["kind"] == "bundle"
    checks = doc["checks"]
    assert checks and all({"id", "verdict"} <= set(c) for c in checks)
    assert r.returncode == (1 if any(c["verdict"] == "fail" for c in checks) else 0)
    assert doc["summary"] == {k: sum(c["verdict"] == k for c in checks) for k in ("pass", "warn", "fail", "n/a", "unknown")}
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuite"
    cases = root.findall("testcase")
    assert len(cases) == len(checks) == int(root.get("tests"))
    assert int(root.get("failures")) == doc["summary"]["fail"]
    assert int(root.get("skipped")) == doc["summary"]["unknown"] + doc["summary"]["n/a"]
    assert [c.get("name").split(":")[0] for c in cases] == [c["id"] for c in checks]


def test_check_on_a_node_without_rdma_says_not_applicable_not_pass(tmp_path: Path) -> None:
    """Issue 15: zero RDMA devices makes "a port is down or slow" not applicable, not ruled out. This machine
    (and CI's) has no RDMA device; on one that has, the live sweep judges the ports instead."""
    r = run("check", "--json", "--junit", str(tmp_path / "r.xml"))
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    by_id = {c["id"]: c for c in doc["checks"]}
    rdma = Path("/sys/class/infiniband")
    if rdma.is_dir() and any(rdma.iterdir()):
        assert by_id["ib-ports"]["verdict"] != "n/a"
        return
    for cid in ("ib-ports", "ib-devices"):
        assert by_id[cid]["verdict"] == "n/a", by_id[cid]
        assert "no RDMA device" in by_id[cid]["reason"]
    assert doc["summary"]["n/a"] >= 2
    skipped = {c.get("name").split(":")[0]: c.find("skipped") for c in ET.parse(tmp_path / "r.xml").getroot()}
    assert skipped["ib-ports"] is not None and skipped["ib-ports"].get("message").startswith("not applicable: ")
    text = run("check")
    assert re.search(r"N/A +Fabric ports active", text.stdout), text.stdout
    assert re.search(r"\d+ n/a", text.stdout)


def test_capture_to_a_directory_then_check_it(tmp_path: Path) -> None:
    out = tmp_path / "node.bundle"
    r = run("capture", "-o", str(out), "--json", "--note", "from the test")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["bundle"] == str(out) and info["sources"] > 10
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == "troubleshooter-bundle" and manifest["note"] == "from the test"
    assert len(manifest["evidence"]) == info["sources"]
    r = run("check", "--bundle", str(out), "--json")
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    assert doc["target"]["kind"] == "bundle" and doc["checks"]
    # capturing over an existing, non-empty directory is refused, not mixed
    r = run("capture", "-o", str(out))
    _one_line_error(r, str(out))


def test_check_bad_bundle_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _one_line_error(main(capsys, "check", "--bundle", str(tmp_path / "nope.tar.gz")), "nope.tar.gz")
    (tmp_path / "empty").mkdir()
    _one_line_error(main(capsys, "check", "--bundle", str(tmp_path / "empty")), "empty")


@pytest.mark.parametrize("option", ["--bundle", "--job", "--exec", "--nccl-log"])
def test_an_empty_place_is_refused_not_taken_for_here(option: str) -> None:
    # `check --bundle "$B"` with B unset ran the sweep on this machine and reported it as asked
    r = run("check", option, "", "--json")
    assert r.returncode == 2 and r.stdout == ""
    assert f"argument {option}: is empty" in r.stderr and "Traceback" not in r.stderr


# ---------------------------------------------------------------------------- trees
def test_trees_lint_is_clean(capsys: pytest.CaptureFixture) -> None:
    rc, out, err = main(capsys, "trees", "lint", "--json")
    assert json.loads(out) == {"problems": []}
    assert rc == 0


def test_trees_graph(capsys: pytest.CaptureFixture) -> None:
    rc, out, _ = main(capsys, "trees", "graph", "runtime-topology")
    assert rc == 0 and out.startswith("flowchart TD\n") and "compare" in out
    rc, out, _ = main(capsys, "trees", "graph", "runtime-topology", "--dot")
    assert rc == 0 and out.startswith('digraph "runtime-topology" {') and out.rstrip().endswith("}")
    rc, out, err = main(capsys, "trees", "graph", "no-such-tree")
    assert rc == 2 and "unknown tree 'no-such-tree'" in err


def test_trees_graph_labels_are_never_cut_mid_word(capsys: pytest.CaptureFixture) -> None:
    import re

    from troubleshooter.diagnosis.engine import Engine

    words = set()
    for t in Engine().trees.values():
        for node in t.nodes.values():
            for text in [node.get("title", ""), node.get("question", "")] + \
                    [b.get("because", "") for b in node.get("branches", [])] + \
                    [c.get("label", "") for c in node.get("choices", [])]:
                words.update(w.strip(",;:()'\"") for w in text.replace('"', "'").split())
    cut = 0
    for tid in ("cpu-power", "runtime-topology", "fabric", "moe-only-slowdown"):
        for fmt in ((), ("--dot",)):
            rc, out, _ = main(capsys, "trees", "graph", tid, *fmt)
            assert rc == 0
            for label in re.findall(r'\|([^|]*)\||label="([^"]*)"|\["([^"]*)"\]', out):
                text = next(x for x in label if x) if any(label) else ""
                if text.endswith("…"):
                    cut += 1
                    last = text[:-1].split()[-1].strip(",;:()'")
                    assert last in words, f"{tid}: label {text!r} cut mid-word ({last!r})"
    assert cut, "some labels are long enough to be cut"


def test_trees_list_json(capsys: pytest.CaptureFixture) -> None:
    rc, out, _ = main(capsys, "trees", "list", "--json")
    rows = json.loads(out)
    assert rc == 0 and {"host-ok-container-slow", "runtime-topology"} <= {r["id"] for r in rows}
    assert all(r["kind"] in ("entry", "subtree") for r in rows)


# ---------------------------------------------------------------------------- small verbs
def test_sources_and_facts_json(capsys: pytest.CaptureFixture) -> None:
    rc, out, _ = main(capsys, "sources", "--json")
    rows = json.loads(out)
    assert rc == 0 and isinstance(rows, list) and rows
    ids = {r["id"] for r in rows}
    assert {"turbostat", "env-self", "nccl-topo-file"} <= ids
    assert all(isinstance(r["argv"], list) and r["argv"] for r in rows)
    rc, out, _ = main(capsys, "facts", "--json")
    facts = json.loads(out)
    assert rc == 0 and isinstance(facts, list)
    assert {"cpu.busy_mhz", "nccl.topo_file.visible"} <= {f["name"] for f in facts}
    rc, out, _ = main(capsys, "facts", "nccl.topo_file.*", "--json")
    assert {f["name"] for f in json.loads(out)} and all(f["name"].startswith("nccl.topo_file.") for f in json.loads(out))


def test_locate_json(capsys: pytest.CaptureFixture, isolated: Path, tmp_path: Path) -> None:
    rc, out, _ = main(capsys, "locate", "--json")
    paths = json.loads(out)
    assert rc == 0
    assert set(paths) == {"trees", "config", "profiles (user)", "sessions", "exports", "pasted", "cache"}
    assert paths["pasted"] == str(isolated / "pasted")  # what was pasted into the app, private
    assert paths["sessions"] == str(isolated / "sessions") and paths["exports"] == str(isolated / "exports")
    assert paths["config"] == str(tmp_path / "no-config.yaml")
    assert Path(paths["trees"]).is_dir()


def test_sessions_and_export_with_no_sessions(capsys: pytest.CaptureFixture, isolated: Path) -> None:
    rc, out, err = main(capsys, "sessions")
    assert rc == 0 and out == "" and "no sessions yet" in err
    rc, out, _ = main(capsys, "sessions", "--json")
    assert rc == 0 and json.loads(out) == []
    rc, out, err = main(capsys, "export")
    assert rc == 2 and out == "" and err.strip() == f"troubleshooter: no sessions in {isolated / 'sessions'}"
    rc, out, err = main(capsys, "export", "20260101-nope", "--format", "json")
    assert rc == 2 and "no session '20260101-nope'" in err
    assert not isolated.exists()  # looking does not create anything


# ---------------------------------------------------------------------------- diagnose without a TTY
def test_diagnose_without_symptom_lists_them() -> None:
    r = run("diagnose", "--bundle", str(bundle("case4")))
    _one_line_error(r, "--symptom is required")
    for s in ("below-reference", "host-ok-container-slow", "moe-only-slowdown", "gap-at-scale"):
        assert s in r.stderr


def test_diagnose_question_without_answer_explores_both_answers_and_says_so() -> None:
    # no terminal, no --answer: it does not refuse; it walks every answer and states what it assumed
    r = run("diagnose", "--bundle", str(bundle("case1")), "--symptom", "moe-only-slowdown", "--json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert any(a.startswith("moe-only-slowdown.dense = ") for a in doc["assumed"])
    assert "smmu-cmdq-contention" in [c["cause"] for c in doc["conclusions"]]
    md = run("diagnose", "--bundle", str(bundle("case1")), "--symptom", "moe-only-slowdown", "--md").stdout
    assert "**Assumed:** moe-only-slowdown.dense = " in md
    # answered: it walks to the end and finds case 1's cause (exit 1: a root cause was found)
    r = run("diagnose", "--bundle", str(bundle("case1")), "--symptom", "moe-only-slowdown", "--answer", "dense=yes", "--json")
    assert r.returncode == 1, r.stderr
    assert "smmu-cmdq-contention" in [c["cause"] for c in json.loads(r.stdout)["conclusions"]]


def test_diagnose_bad_answers(capsys: pytest.CaptureFixture) -> None:
    b = str(bundle("case1"))
    _one_line_error(main(capsys, "diagnose", "--bundle", b, "--symptom", "moe-only-slowdown", "--answer", "dense"),
                    "--answer takes NODE=CHOICE")
    _one_line_error(main(capsys, "diagnose", "--bundle", b, "--symptom", "moe-only-slowdown", "--answer", "dense=maybe"),
                    "no choice 'maybe'")
    _one_line_error(main(capsys, "diagnose", "--bundle", b, "--symptom", "no-such-symptom"), "unknown tree 'no-such-symptom'")


@pytest.mark.parametrize("case", ["case4", "case2"])
@pytest.mark.parametrize("columns", ["80", "40"])
def test_plain_output_never_wraps_a_command(case, columns, monkeypatch):
    """Each line of every fix and verify command is printed on one line of its own, byte for byte as in --json
    (case 4's enroot fix wrapped at 80 columns pasted as two commands, the first writing an empty fstab)."""
    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.delenv("NO_COLOR", raising=False)
    plain = run("demo", case)
    doc = json.loads(run("demo", case, "--json").stdout)
    lines = plain.stdout.split("\n")
    commands = [fx["command"] for c in doc["conclusions"] for fx in c["fixes"]]
    commands += [c["verify"]["command"] for c in doc["conclusions"] if c.get("verify", {}).get("command")]
    assert commands and any(len(ln) > 80 for cmd in commands for ln in cmd.split("\n"))
    for cmd in commands:
        for ln in cmd.split("\n"):
            assert ln in lines, f"{ln!r} is not a line of the plain output"
    if case == "case4":
        assert ("printf '%s %s none x-create=file,bind,ro,nosuid\\n' /etc/nccl/topo.xml /etc/nccl/topo.xml"
                " | sudo tee /etc/enroot/mounts.d/50-nccl-topo.fstab") in lines


@pytest.mark.parametrize("verb", ["facts", "sources"])
def test_listings_fit_80_columns_and_json_is_whole(verb: str) -> None:
    """Issue 13: human listings fit the terminal (cut with a visible "…"); --json keeps every word."""
    r = run(verb)
    assert r.returncode == 0 and r.stdout.strip()
    assert max(len(line) for line in r.stdout.splitlines()) <= 80
    doc = json.loads(run(verb, "--json").stdout)
    assert not any(str(v).endswith("…") for row in doc for v in row.values())


def test_evidence_given_twice_reads_both_files(tmp_path) -> None:
    """`--evidence a --evidence b` is how people write it: the second flag must not drop the first file."""
    import subprocess
    import sys

    warn = tmp_path / "warn.txt"
    warn.write_text("g1:1:2 [0] transport/net_ib.cc:840 NCCL WARN NET/IB : Got completion with error 12, opcode 1, "
                    "len 1, vendor err 129\n")
    cmd = tmp_path / "cmd.txt"
    cmd.write_text("mpirun -np 8 -x NCCL_IB_GID_INDEX=3 ./all_reduce_perf -b 1M -e 1M\n")
    r = subprocess.run([sys.executable, "-m", "troubleshooter", "diagnose", "--evidence", str(warn), "--evidence",
                        str(cmd), "--json"], capture_output=True, text=True, timeout=120)
    import json

    d = json.loads(r.stdout)
    assert [c["cause"] for c in d["conclusions"]] == ["roce-mtu-mismatch"]


def test_an_evidence_run_without_a_symptom_does_not_call_the_training_slow() -> None:
    """A kernel log alone says nothing of speed: the heading and the ticket say no symptom was given."""
    import subprocess
    import sys

    log = "host:tests/data/dmesg/talos-hgx-a100-nvswitch-sxid-24007-severity1-ogkm1118.txt"
    run = [sys.executable, "-m", "troubleshooter", "diagnose", "--evidence", log, "--md"]
    r = subprocess.run(run, capture_output=True, text=True, timeout=120)
    assert r.stdout.startswith("## Pasted outputs: every check (no symptom given)\n"), r.stdout[:300]
    assert "- **Symptom:** none given, so the outputs were read against every check" in r.stdout
    assert "Slow training" not in r.stdout
    r = subprocess.run(run + ["--symptom", "below-reference"], capture_output=True, text=True, timeout=120)
    assert r.stdout.startswith("## Slow training: Below reference by N%, cause unknown\n"), r.stdout[:300]
    assert "**Symptom:**" not in r.stdout
