"""The YAML document cache (yamlio.load(cached=True)): a hit gives exactly the uncached document, line numbers and
key types included; any change to the text is a miss; an error is never cached; a broken cache is ignored."""

from __future__ import annotations

import json

import pytest

from troubleshooter import locations, yamlio


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return (getattr(a, "line", None) == getattr(b, "line", None) and list(a) == list(b)
                and all(type(k) is type(k2) for k, k2 in zip(a, b)) and all(_same(a[k], b[k]) for k in a))
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b or (a != a and b != b)


@pytest.fixture()
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TROUBLESHOOTER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(yamlio, "_DOCS", None)
    return tmp_path / "cache" / "yaml-docs.json"


def test_every_shipped_yaml_file_is_the_same_through_the_cache(fresh_cache) -> None:
    files = sorted(locations.trees_dir().rglob("*.yaml"))
    assert len(files) > 10
    for p in files:
        plain = yamlio.load(p)
        first = yamlio.load(p, cached=True)  # a miss: parsed, stored
        yamlio._DOCS = None  # a new process: read back from the file
        second = yamlio.load(p, cached=True)
        assert _same(plain, first) and _same(plain, second), p
    assert fresh_cache.exists()
    xid = locations.trees_dir() / "xid.yaml"
    doc = yamlio.load(xid, cached=True)
    assert any(type(k) is int for k in doc["xids"])  # non-string keys come back as they were


def test_a_changed_file_is_a_miss_and_an_error_is_never_cached(fresh_cache, tmp_path) -> None:
    p = tmp_path / "p.yaml"
    p.write_text("a: 1\nb: [1, 2.5, true, null, '3']\n")
    assert yamlio.load(p, cached=True) == {"a": 1, "b": [1, 2.5, True, None, "3"]}
    p.write_text("a: 2\n")  # same size class, other text
    yamlio._DOCS = None
    assert yamlio.load(p, cached=True) == {"a": 2}
    p.write_text("a: [\n")
    with pytest.raises(yamlio.YamlError):
        yamlio.load(p, cached=True)
    yamlio._DOCS = None
    with pytest.raises(yamlio.YamlError):
        yamlio.load(p, cached=True)
    assert str(p) not in json.loads(fresh_cache.read_text())["docs"] or \
        json.loads(fresh_cache.read_text())["docs"][str(p)][0] != "a: [\n"
    p.write_text("a: &x 1\nb: *x\n")  # refused with or without the cache
    with pytest.raises(yamlio.YamlError):
        yamlio.load(p, cached=True)


def test_a_broken_or_foreign_cache_is_ignored(fresh_cache, tmp_path) -> None:
    p = tmp_path / "p.yaml"
    p.write_text("k: v\n")
    fresh_cache.parent.mkdir(parents=True)
    for junk in ("not json", json.dumps([1, 2]), json.dumps({"tag": "other", "docs": {str(p): ["k: v\n", {"k": "X"}]}}),
                 json.dumps({"tag": yamlio._cache_tag(), "docs": {str(p): ["k: v\n", {"k": "X"}]}})):
        fresh_cache.write_text(junk)
        yamlio._DOCS = None
        assert yamlio.load(p, cached=True) == {"k": "v"}, junk  # the last: a mapping without its line, refused
