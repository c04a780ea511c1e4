"""Nothing secret and nothing hostile leaves through any verb or format (issue 12, items 1 and 2).

Planted: two captures (case 4's bundle, copied) whose environments hold a Hugging Face token, an AWS secret
key, a JSON ``"api_key"``, an Azure ``AccountKey=``, ``curl -u user:pass``, ``sshpass -p``, a ``*_PWD``
variable, and values with escape sequences (OSC 52 that sets the clipboard, ESC [2J, the C1 CSI \\x9b) and
Rich markup; the target's label carries a token, OSC 52, markup and C1 too. Every verb and format runs
through the real CLI (``cli.main``): check (text, --json, --junit), compare A B (text, --json), compare
--host, diagnose (text, --md, --json), parse (text, --json), export (md, json, -o), fanout --bundles (text,
--json). Each output holds no secret value and no raw ESC or C1 byte; JSON parses, JUnit XML parses.
Positive controls (--no-redact, the raw bundle) show that the secrets really flow to where they are checked.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from troubleshooter import cli

ROOT = Path(__file__).resolve().parents[1]
CASE4 = ROOT / "decision_trees" / "practice" / "case4" / "bundle"

OSC52 = "\x1b]52;c;ZWNobyBwd25lZAo=\x1b\\"
CLEAR = "\x1b[2J"
CSI_C1 = "\x9b31m"
MARKUP = "[bold red]boom[/bold red]"


def _env(tag: str) -> dict[str, str]:
    return {
        "HF_TOKEN": f"hf_{tag}bCdEfGhIjKlMnOpQrStUvWxYz0123",
        "AWS_SECRET_ACCESS_KEY": f"wJalrXUtnFEMI/K7MDENG/bPxRfiCY{tag}EXAMPLEKEY",
        "APP_CONFIG": '{"api_key": "ApiKey%sValue42"}' % tag,
        "AZURE_STORAGE": f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=AzKey{tag}0123456789abcdef==;"
                         "EndpointSuffix=core.windows.net",
        "SYNC_CMD": f"curl -u alice:CurlPass{tag}123 https://files.example.com/x",
        "COPY_CMD": f"sshpass -p SshPass{tag}123 scp a host:b",
        "FOO_PWD": f"FooPwd{tag}12345",
        "NCCL_TOPO_FILE": f"/x{OSC52}",
        "NCCL_DEBUG_FILE": f"/tmp/{CLEAR}{CSI_C1}{MARKUP}",
    }


def _secrets(tag: str) -> list[str]:
    e = _env(tag)
    return [e["HF_TOKEN"], e["AWS_SECRET_ACCESS_KEY"], f"ApiKey{tag}Value42", f"AzKey{tag}0123456789abcdef==",
            f"CurlPass{tag}123", f"SshPass{tag}123", e["FOO_PWD"]]


SECRETS = _secrets("A") + _secrets("B") + _secrets("C")


def leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def raw_controls(text: str) -> list[str]:
    """ESC, C1 and the other C0 controls a terminal acts on (newline and tab are text)."""
    return sorted(set(re.findall("[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)))


def assert_clean(what: str, *texts: str) -> None:
    for t in texts:
        assert not leaks(t), f"{what}: secrets leaked: {leaks(t)}"
        assert not raw_controls(t), f"{what}: raw control characters {raw_controls(t)!r}"


def _label(tag: str) -> str:
    return f"exec: docker exec -e HF_TOKEN={_env(tag)['HF_TOKEN']} t {OSC52} {MARKUP}\x9b2J"


def _build(dst: Path, tag: str) -> Path:
    if not (CASE4 / "manifest.json").exists():
        pytest.skip("practice case4 bundle not built")
    shutil.copytree(CASE4, dst)
    man = json.loads((dst / "manifest.json").read_text())
    for side in ("host", "target"):
        p = dst / "evidence" / side / "env-self.out"
        planted = b"\0".join(f"{k}={v}".encode() for k, v in _env(tag).items())
        env = p.read_bytes().rstrip(b"\0") + b"\0" + planted + b"\0"
        p.write_bytes(env)
        for rec in man["evidence"]:
            if rec["source"] == "env-self" and rec.get("side") == side:
                rec["stdout_bytes"] = len(env)
    man["targets"]["target"]["label"] = _label(tag)
    (dst / "manifest.json").write_text(json.dumps(man, indent=2))
    return dst


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    d = tmp_path_factory.mktemp("leaks")
    nodes = d / "nodes"
    nodes.mkdir()
    a = _build(nodes / "nodeA.bundle", "A")
    b = _build(nodes / "nodeB.bundle", "B")
    return a, b, nodes


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG", str(tmp_path / "no-config.yaml"))
    monkeypatch.delenv("TROUBLESHOOTER_TREES", raising=False)
    monkeypatch.delenv("TROUBLESHOOTER_REDACT_EXTRA", raising=False)


def run(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    try:
        rc = cli.main(list(args))
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return rc, out, err


def test_the_planted_bundle_really_holds_the_secrets(bundles) -> None:
    """Control: the secrets and escapes are in the capture (and --no-redact brings them to the output)."""
    a, _, _ = bundles
    raw = (a / "evidence" / "target" / "env-self.out").read_bytes().decode()
    assert all(s in raw for s in _secrets("A")) and OSC52 in raw and CLEAR in raw


# ---------------------------------------------------------------------------------------------- check
@pytest.mark.parametrize("fmt", ["text", "--json", "--junit"])
def test_check(bundles, fmt: str, tmp_path: Path, capsys) -> None:
    a, _, _ = bundles
    args = ["check", "--bundle", str(a)]
    junit = tmp_path / "report.xml"
    if fmt == "--json":
        args.append("--json")
    elif fmt == "--junit":
        args += ["--junit", str(junit)]
    rc, out, err = run(capsys, *args)
    assert rc in (0, 1), err
    assert_clean(f"check {fmt}", out, err)
    if fmt == "--json":
        doc = json.loads(out)
        assert "HF_TOKEN=[REDACTED]" in doc["target"]["label"]
        assert OSC52 in doc["target"]["label"]  # escape sequences stay in JSON strings, escaped by json.dumps
    if fmt == "--junit":
        xml = junit.read_bytes()
        ET.fromstring(xml)  # valid XML whatever the facts hold
        assert_clean("junit", xml.decode())
    if fmt == "text":
        assert "HF_TOKEN" in out or "checks" in out or "PASS" in out or "FAIL" in out


def test_check_live_with_a_secret_in_the_exec_prefix(capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The issue's repros: a token in --exec, and NCCL_TOPO_FILE holding OSC 52, on the live node."""
    monkeypatch.setenv("NCCL_TOPO_FILE", f"/x{OSC52}")
    hf = _env("C")["HF_TOKEN"]
    prefix = f"env HF_TOKEN={hf} FOO_PWD={_env('C')['FOO_PWD']} NCCL_DEBUG_FILE=/tmp/{CLEAR}"
    for fmt in ([], ["--json"], ["--junit", str(tmp_path / "j.xml")]):
        rc, out, err = run(capsys, "check", "--exec", prefix, *fmt)
        assert rc in (0, 1, 2), err
        assert_clean(f"check --exec {fmt}", out, err)
        if fmt and fmt[0] == "--json":
            assert "[REDACTED]" in json.loads(out)["target"]["label"]
    ET.fromstring((tmp_path / "j.xml").read_bytes())
    rc, out, err = run(capsys, "check")
    assert_clean("check (local, OSC 52 in NCCL_TOPO_FILE)", out, err)
    assert "\\x1b]52" in out  # shown, escaped


# ---------------------------------------------------------------------------------------------- compare
@pytest.mark.parametrize("fmt", ["text", "--json"])
def test_compare_bundles(bundles, fmt: str, capsys) -> None:
    a, b, _ = bundles
    rc, out, err = run(capsys, "compare", str(a), str(b), *([fmt] if fmt != "text" else []))
    assert rc in (0, 1), err
    assert_clean(f"compare {fmt}", out, err)
    assert "HF_TOKEN" in out and "[REDACTED]" in out  # the difference is reported, its values are not
    if fmt == "--json":
        json.loads(out)


@pytest.mark.parametrize("fmt", ["text", "--json"])
def test_compare_host(fmt: str, capsys) -> None:
    e = _env("C")
    prefix = f"env HF_TOKEN={e['HF_TOKEN']} FOO_PWD={e['FOO_PWD']} APP_CONFIG={e['APP_CONFIG']!r} X=/{CLEAR}{CSI_C1}"
    rc, out, err = run(capsys, "compare", "--host", "--all-env", "--exec", prefix, *([fmt] if fmt != "text" else []))
    assert rc in (0, 1, 2), err
    assert_clean(f"compare --host {fmt}", out, err)
    if fmt == "--json":
        json.loads(out)
    assert "FOO_PWD" in out  # the variable is compared


# ---------------------------------------------------------------------------------------------- diagnose
@pytest.mark.parametrize("fmt", ["text", "--md", "--json"])
def test_diagnose(bundles, fmt: str, capsys) -> None:
    a, _, _ = bundles
    args = ["diagnose", "--bundle", str(a), "--symptom", "host-ok-container-slow"] + ([fmt] if fmt != "text" else [])
    rc, out, err = run(capsys, *args)
    assert rc in (0, 1), err
    assert_clean(f"diagnose {fmt}", out, err)
    assert "HF_TOKEN" in out  # the target line is there, redacted
    if fmt == "--json":
        json.loads(out)
    rc, raw, _ = run(capsys, *args, "--no-redact")
    assert _env("A")["HF_TOKEN"] in raw  # control: the token really reaches the output unless redacted
    assert not raw_controls(raw) or fmt == "--json"  # --no-redact keeps secrets, never escape sequences


# ---------------------------------------------------------------------------------------------- parse
@pytest.mark.parametrize("fmt", ["text", "--json"])
def test_parse(bundles, fmt: str, capsys) -> None:
    a, _, _ = bundles
    rc, out, err = run(capsys, "parse", "env", str(a / "evidence" / "target" / "env-self.out"),
                       *([fmt] if fmt != "text" else []))
    assert rc == 0, err
    assert_clean(f"parse {fmt}", out, err)
    assert "env.var.HF_TOKEN" in out
    if fmt == "--json":
        facts = json.loads(out)["facts"]
        assert facts["env.var.NCCL_TOPO_FILE"] == f"/x{OSC52}"  # JSON keeps the raw value, as an escaped string


# ---------------------------------------------------------------------------------------------- export
def test_export(bundles, tmp_path: Path, capsys) -> None:
    from troubleshooter.service.guide import Guide, TargetSpec

    a, _, _ = bundles
    g = Guide.for_target(TargetSpec(bundle=str(a)))
    g.begin("host-ok-container-slow", session_dir=tmp_path / "data" / "sessions")
    for _ in range(50):
        g.run_to_question()
        cur = g.current()
        if cur is None:
            break
        g.answer(cur[2].get("assume") or cur[2]["choices"][0]["id"])
    for fmt in ("md", "json"):
        rc, out, err = run(capsys, "export", g.session.id, "--format", fmt)
        assert rc == 0, err
        assert_clean(f"export {fmt}", out, err)
        if fmt == "json":
            assert json.loads(out)["session"] == g.session.id
        dst = tmp_path / f"ticket.{fmt}"
        rc, out, err = run(capsys, "export", g.session.id, "--format", fmt, "-o", str(dst))
        assert rc == 0, err
        assert_clean(f"export -o {fmt}", out, err, dst.read_text())
    # the app's own exports (Guide.export): md, json, bundle
    for fmt in ("md", "json"):
        assert_clean(f"guide export {fmt}", g.export(fmt, tmp_path / "exports").read_text())
    import tarfile

    with tarfile.open(g.export("bundle", tmp_path / "exports")) as tar:  # raw bytes stay (data), secrets go
        members = {m.name: tar.extractfile(m).read().decode("utf-8", "replace") for m in tar if m.isfile()}
    env = next(v for k, v in members.items() if k.endswith("target/env-self.out"))
    assert "HF_TOKEN=[REDACTED]" in env and "FOO_PWD=[REDACTED]" in env and '"api_key": "[REDACTED]"' in env
    for name, text in members.items():
        assert not leaks(text), f"exported bundle {name}: {leaks(text)}"


# ---------------------------------------------------------------------------------------------- fanout
@pytest.mark.parametrize("fmt", ["text", "--json"])
def test_fanout_bundles(bundles, fmt: str, capsys) -> None:
    _, _, nodes = bundles
    rc, out, err = run(capsys, "fanout", "--bundles", str(nodes), "--all", *([fmt] if fmt != "text" else []))
    assert rc in (0, 1), err
    assert_clean(f"fanout {fmt}", out, err)
    assert "env.var.HF_TOKEN" in out  # the nodes differ there, the values are not shown
    if fmt == "--json":
        json.loads(out)


# ---------------------------------------------------------------------------------------------- settings
def test_a_config_that_does_not_parse_is_said_not_silently_dropped(bundles, tmp_path: Path, capsys, monkeypatch) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text("redact_extra: ['corp-[0-9]{6}'\nprofile: [\n")
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG", str(cfg))
    rc, out, err = run(capsys, "locate")
    assert rc == 0 and "config" in out
    assert "config.yaml" in err and "redact_extra" in err, err


def test_redact_extra_from_the_config_applies_to_every_output(bundles, tmp_path: Path, capsys, monkeypatch) -> None:
    a, b, _ = bundles
    cfg = tmp_path / "config.yaml"
    cfg.write_text("redact_extra: ['acct']\n")
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG", str(cfg))
    rc, out, err = run(capsys, "compare", str(a), str(b))
    assert rc in (0, 1) and "warning" not in err, err
    assert "acct" not in out and "AccountName=[RED" in out
    rc, out, err = run(capsys, "compare", str(a), str(b), "--json")
    assert rc in (0, 1), err
    assert "acct" not in out and "AccountName=[REDACTED]" in out


# ---------------------------------------------------------------------------------------------- the app
def _screen_text(app) -> str:
    """What every widget of the current screen draws (its strips' text), header included."""
    from textual.geometry import Region

    parts = []
    for w in app.screen.query("*"):
        if not w.display or not w.region:
            continue
        try:
            strips = w.render_lines(Region(0, 0, w.region.width, w.region.height))
        except Exception:  # noqa: BLE001 - a container without lines of its own
            continue
        parts.extend(s.text for s in strips)
    return "\n".join(parts)


@pytest.mark.asyncio
async def test_the_app_shows_hostile_labels_and_facts_escaped(bundles, tmp_path: Path) -> None:
    from troubleshooter.service.guide import TargetSpec
    from troubleshooter.settings import Settings
    from troubleshooter.tui.app import TroubleshooterApp
    from troubleshooter.tui.screens.results import ResultsScreen

    a, _, _ = bundles
    app = TroubleshooterApp(TargetSpec(bundle=str(a)), settings=Settings())
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(5):
            await pilot.pause()
            await app.workers.wait_for_complete()
        assert not raw_controls(app.sub_title) and "\\x1b]52" in app.sub_title
        start_text = _screen_text(app)
        assert "\\x1b]52" in start_text  # the context lines show the label, escaped
        assert not raw_controls(start_text)
        app.start_walk("host-ok-container-slow")
        for _ in range(5):
            await pilot.pause()
            await app.workers.wait_for_complete()
        assert isinstance(app.screen, ResultsScreen) or app.guide.walk is not None
        assert not raw_controls(app.sub_title)
        assert not raw_controls(_screen_text(app))
        app.show_error("cannot open", f"/x{OSC52} {MARKUP}")
        await pilot.pause()
        shown = _screen_text(app)
        assert not raw_controls(shown) and MARKUP in shown  # markup in data shown as text, not applied


# ---------------------------------------------------------------------------------------------- by construction
def test_the_verbs_print_only_through_the_emitter() -> None:
    """No print(), no Rich Console of their own, no sys.stdout/sys.stderr in troubleshooter/cli/: a new verb
    that printed around the emitter would skip redaction and escaping."""
    import ast

    bad = []
    for path in sorted((ROOT / "troubleshooter" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print", "Console"):
                bad.append(f"{path.name}:{node.lineno}: {node.func.id}()")
            if (isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr")
                    and isinstance(node.value, ast.Name) and node.value.id == "sys"):
                bad.append(f"{path.name}:{node.lineno}: sys.{node.attr}")
            if isinstance(node, ast.ImportFrom) and node.module == "rich.console":
                bad.append(f"{path.name}:{node.lineno}: from rich.console import")
    assert not bad, "print through troubleshooter.output.emit (common.emitter(args)): " + ", ".join(bad)


def test_junit_is_valid_xml_whatever_the_facts_hold() -> None:
    from troubleshooter.diagnosis.checks import CheckResult
    from troubleshooter.output.report import junit_xml

    nasty = f"NUL\x00 ESC{OSC52} C1\x9b2J DEL\x7f surrogate\udcff bad\ufffe end"
    results = [CheckResult(id=f"c{v}", area="gpu\x1b[2J", title=f"title {nasty}", verdict=v, reason=nasty,
                           values={"x": nasty}, evidence={}) for v in ("pass", "fail", "unknown")]
    root = ET.fromstring(junit_xml(results))
    text = ET.tostring(root, encoding="unicode")
    assert "\\x1b]52" in text and "\\x00" in text and not raw_controls(text)


@pytest.mark.parametrize("args", [["facts", "--json"], ["sources", "--json"], ["trees", "list", "--json"],
                                  ["check", "--bundle", str(CASE4), "--json"],
                                  ["diagnose", "--bundle", str(CASE4), "--symptom", "host-ok-container-slow", "--json"]],
                         ids=["facts", "sources", "trees", "check", "diagnose"])
def test_nothing_is_masked_where_there_is_no_secret(args: list[str], capsys) -> None:
    """The other side: the tool's own documents (fact docs, a practice capture) lose nothing to redaction."""
    rc, out, err = run(capsys, *args)
    assert rc in (0, 1), err
    assert "[REDACTED]" not in out
