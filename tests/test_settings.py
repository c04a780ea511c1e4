"""Settings: typed defaults, a YAML file with every key, warnings (never fatal) that name the file for unknown
keys and bad values, TROUBLESHOOTER_<KEY> environment overrides, and documented() for the docs."""

from __future__ import annotations

from pathlib import Path

import pytest

from troubleshooter import locations, settings
from troubleshooter.settings import FIELDS, Settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for f in FIELDS:
        monkeypatch.delenv(f"TROUBLESHOOTER_{f.name.upper()}", raising=False)
    monkeypatch.setenv("TROUBLESHOOTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG", str(tmp_path / "absent.yaml"))


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "config.yaml"
    p.write_text(text)
    return p


def test_defaults_without_a_file(tmp_path: Path) -> None:
    s = settings.load()  # TROUBLESHOOTER_CONFIG names a file that does not exist
    assert s.warnings == []
    assert (s.theme, s.learn_mode, s.show_why, s.default_target, s.export_dir, s.redact_extra, s.profile, s.keymap) == \
        ("textual-dark", False, True, "", "", [], "", {})
    assert s.exports_path() == tmp_path / "data" / "exports"
    assert settings.load(tmp_path / "also-absent.yaml").warnings == []


def test_every_key_from_a_file(tmp_path: Path) -> None:
    p = _write(tmp_path, """
theme: textual-light
learn_mode: yes
show_why: false
default_target: "exec:docker exec trainer"
export_dir: ~/tickets
redact_extra: ["corp-[0-9]{6}", 'internal\\.example']
profile: h100
keymap: {walk.back: "left,b", app.quit: ctrl+q}
""")
    s = settings.load(p)
    assert s.warnings == []
    assert s.theme == "textual-light"
    assert s.learn_mode is True and s.show_why is False
    assert s.default_target == "exec:docker exec trainer"
    assert s.export_dir == "~/tickets" and s.exports_path() == Path("~/tickets").expanduser()
    assert s.redact_extra == ["corp-[0-9]{6}", "internal\\.example"]
    assert s.profile == "h100"
    assert s.keymap == {"walk.back": "left,b", "app.quit": "ctrl+q"}
    # every field of the model is set by this file: a new field must be added here too
    assert {f.name for f in FIELDS} == {"theme", "learn_mode", "show_why", "default_target", "export_dir", "redact_extra", "profile",
                                          "keymap"}


def test_config_found_through_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = _write(tmp_path, "theme: nord\n")
    monkeypatch.setenv("TROUBLESHOOTER_CONFIG", str(p))
    assert locations.config_file() == p
    assert settings.load().theme == "nord"


def test_unknown_key_warns_with_the_file_and_keeps_the_rest(tmp_path: Path) -> None:
    p = _write(tmp_path, "theme: nord\nthme: typo\n")
    s = settings.load(p)
    assert s.theme == "nord"
    assert len(s.warnings) == 1
    w = s.warnings[0]
    assert w.startswith(str(p)) and "unknown setting 'thme'" in w and "theme" in w  # names the known keys


@pytest.mark.parametrize("value", ["maybe", "2", "[1]"])
def test_bad_bool_warns_and_keeps_the_default(tmp_path: Path, value: str) -> None:
    p = _write(tmp_path, f"learn_mode: {value}\nshow_why: off\n")
    s = settings.load(p)
    assert s.learn_mode is False and s.show_why is False
    assert len(s.warnings) == 1
    assert s.warnings[0].startswith(f"{p}: learn_mode: expected true/false")


@pytest.mark.parametrize("text, fragment", [
    ("- a\n- b\n", "expected a mapping of settings"),
    ("theme: [unclosed\n", ""),
    ("a: &x 1\nb: *x\n", "not allowed"),
])
def test_broken_file_warns_and_uses_defaults(tmp_path: Path, text: str, fragment: str) -> None:
    p = _write(tmp_path, text)
    s = settings.load(p)
    assert s.theme == "textual-dark"
    assert len(s.warnings) == 1 and str(p) in s.warnings[0] and "defaults used" in s.warnings[0]
    assert fragment in s.warnings[0]


def test_empty_file_is_fine(tmp_path: Path) -> None:
    s = settings.load(_write(tmp_path, "# nothing yet\n"))
    assert s.warnings == [] and s.theme == "textual-dark"


def test_environment_overrides_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = _write(tmp_path, "theme: nord\nlearn_mode: false\nprofile: h100\n")
    monkeypatch.setenv("TROUBLESHOOTER_THEME", "textual-light")
    monkeypatch.setenv("TROUBLESHOOTER_LEARN_MODE", "1")
    monkeypatch.setenv("TROUBLESHOOTER_SHOW_WHY", "no")
    monkeypatch.setenv("TROUBLESHOOTER_REDACT_EXTRA", "corp-[0-9]+,secret-[a-z]+")
    monkeypatch.setenv("TROUBLESHOOTER_EXPORT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("TROUBLESHOOTER_KEYMAP", "walk.back=left,b; app.quit = ctrl+q")
    s = settings.load(p)
    assert s.warnings == []
    assert s.theme == "textual-light" and s.learn_mode is True and s.show_why is False
    assert s.redact_extra == ["corp-[0-9]+", "secret-[a-z]+"]
    assert s.exports_path() == tmp_path / "out"
    assert s.keymap == {"walk.back": "left,b", "app.quit": "ctrl+q"}
    assert s.profile == "h100"  # not overridden: the file's value stays


def test_bad_environment_bool_warns_with_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TROUBLESHOOTER_SHOW_WHY", "sometimes")
    s = settings.load(_write(tmp_path, "show_why: false\n"))
    assert s.show_why is False  # the file's value stands
    assert s.warnings == ["TROUBLESHOOTER_SHOW_WHY: show_why: expected true/false, got 'sometimes'"]


def test_documented_lists_every_field_with_its_doc() -> None:
    rows = settings.documented()
    assert [r[0] for r in rows] == [f.name for f in FIELDS]
    assert "warnings" not in [r[0] for r in rows]
    for name, default, doc in rows:
        assert doc.strip(), f"{name} has no docstring"
        assert default == repr(getattr(Settings(), name))
    docs = {r[0]: r[2] for r in rows}
    assert "NO_COLOR" in docs["theme"] and "regular expressions" in docs["redact_extra"]


def test_settings_doc_page_mentions_every_field() -> None:
    page = Path(__file__).resolve().parents[1] / "docs" / "settings.md"
    if not page.exists():
        pytest.skip("docs/settings.md not written")
    text = page.read_text()
    missing = [f.name for f in FIELDS if f.name not in text]
    assert not missing, f"docs/settings.md does not mention {missing}"
