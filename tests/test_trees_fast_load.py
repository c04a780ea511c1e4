"""Loading the decision trees fast, with the same outcome (docs/benchmarks.md, start-up):

- engine._conforms answers "does jsonschema find no error?" for TREE_SCHEMA without importing jsonschema: checked
  against jsonschema on the shipped trees and on documents mutated to break each keyword;
- the checked-trees cache (locations.cache_dir()/trees.json) gives the same trees, is missed by any change to a
  tree file, ignores a cache it cannot read or write, and never holds a set of trees with an error.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from troubleshooter.diagnosis import engine as eng
from troubleshooter import locations, yamlio


def _docs() -> list[Any]:
    return [yamlio.load(p) for p in eng.tree_files()]


def _jsonschema_ok(doc: Any) -> bool:
    return not list(jsonschema.Draft202012Validator(eng.TREE_SCHEMA).iter_errors(doc))


def test_conforms_covers_every_keyword_of_the_schema() -> None:
    assert eng._schema_keywords(eng.TREE_SCHEMA) <= eng._SCHEMA_KEYWORDS


def test_shipped_trees_conform() -> None:
    docs = _docs()
    assert len(docs) >= 10
    for doc in docs:
        assert eng._conforms(doc, eng.TREE_SCHEMA) and _jsonschema_ok(doc)


_VALUES = [None, True, False, 0, 1, -1, 1.0, 1.5, "", "x", "Bad Id", "ask", "entry", [], ["x"], [1], {}, {"kind": "end"},
           {"id": "a", "label": "b", "next": "c"}, {"title": "t", "command": "c"}, {1: "x"}]


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, prefix + (i,))
    return out


def _mutated(doc: Any, path: tuple, op: str, value: Any) -> Any:
    doc = copy.deepcopy(doc)
    if not path:
        return value if op == "set" else doc
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if op == "set":
        parent[last] = value
    elif op == "delete":
        del parent[last]
    elif op == "extra" and isinstance(parent[last], dict):
        parent[last]["unexpected"] = value
    elif op == "extra-int-key" and isinstance(parent[last], dict):
        parent[last][7] = value
    return doc


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_conforms_agrees_with_jsonschema_on_mutated_trees(data) -> None:
    docs = _docs()
    doc = data.draw(st.sampled_from(docs))
    paths = _paths(doc)
    path = data.draw(st.sampled_from(paths))
    op = data.draw(st.sampled_from(["set", "delete", "extra", "extra-int-key"]))
    value = data.draw(st.sampled_from(_VALUES))
    bad = _mutated(doc, path, op, value)
    assert eng._conforms(bad, eng.TREE_SCHEMA) == _jsonschema_ok(bad)


def test_conforms_edge_values() -> None:
    doc = _docs()[0]
    for version, ok in ((1, True), (1.0, True), (0, False), (True, False), ("1", False), (2.5, False)):
        d = copy.deepcopy(doc)
        d["version"] = version
        assert eng._conforms(d, eng.TREE_SCHEMA) == _jsonschema_ok(d) == ok, version
    for tid, ok in (("a-1", True), ("-a", False), ("A", False), ("a b", False), ("a\n", True)):
        d = copy.deepcopy(doc)
        d["id"] = tid
        assert eng._conforms(d, eng.TREE_SCHEMA) == _jsonschema_ok(d) == ok, tid


# ---------------------------------------------------------------------------- the cache
def _same(a: dict[str, eng.Tree], b: dict[str, eng.Tree]) -> None:
    assert list(a) == list(b)

    def deep(u: Any, v: Any) -> None:
        assert type(u) is type(v)
        if isinstance(u, dict):
            assert getattr(u, "line", None) == getattr(v, "line", None)
            assert list(u) == list(v)
            for k in u:
                deep(u[k], v[k])
        elif isinstance(u, list):
            assert len(u) == len(v)
            for x, y in zip(u, v):
                deep(x, y)
        else:
            assert u == v

    for k in a:
        assert dataclasses.astuple(a[k]) == dataclasses.astuple(b[k])
        deep(a[k].nodes, b[k].nodes)
        deep(a[k].hypotheses, b[k].hypotheses)


@pytest.fixture()
def trees_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    src = locations.trees_dir()
    d = tmp_path / "trees"
    d.mkdir()
    for p in src.glob("*.yaml"):
        (d / p.name).write_bytes(p.read_bytes())
    monkeypatch.setenv("TROUBLESHOOTER_TREES", str(d))
    monkeypatch.setenv("TROUBLESHOOTER_CACHE_DIR", str(tmp_path / "cache"))
    return d


def test_cache_hit_gives_the_same_trees(trees_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = Path(os.environ["TROUBLESHOOTER_CACHE_DIR"]) / "trees.json"
    first = eng.load_trees()
    assert cache.exists()

    def no_parse(path):  # a hit reads no YAML
        raise AssertionError(f"parsed {path}")

    monkeypatch.setattr(eng.cache, "_load_doc", no_parse)
    _same(first, eng.load_trees())


def test_cache_missed_when_a_tree_changes(trees_copy: Path) -> None:
    eng.load_trees()
    p = trees_copy / "uniformly-slow.yaml"
    text = p.read_text()
    assert "title: " in text
    p.write_text(text.replace("title: ", "title: Changed ", 1))
    st_before = p.stat()
    trees = eng.load_trees()
    assert trees["uniformly-slow"].title.startswith("Changed ")
    os.utime(p, ns=(st_before.st_atime_ns, st_before.st_mtime_ns))  # same size and mtime, other bytes
    p.write_text(text.replace("title: ", "title: Xhanged ", 1))
    os.utime(p, ns=(st_before.st_atime_ns, st_before.st_mtime_ns))
    assert eng.load_trees()["uniformly-slow"].title.startswith("Xhanged ")


def test_broken_tree_is_reported_even_after_a_cached_load(trees_copy: Path) -> None:
    eng.load_trees()
    p = trees_copy / "uniformly-slow.yaml"
    p.write_text(p.read_text() + "\nbogus_key: 1\n")
    with pytest.raises(eng.TreeError, match="bogus_key"):
        eng.load_trees()
    with pytest.raises(eng.TreeError, match="bogus_key"):  # and never cached
        eng.load_trees()


def test_unreadable_or_garbage_cache_is_ignored(trees_copy: Path) -> None:
    first = eng.load_trees()
    cache = Path(os.environ["TROUBLESHOOTER_CACHE_DIR"]) / "trees.json"
    for garbage in ("", "{", "[1,2,3]", json.dumps(["troubleshooter-trees-cache/1", "k", [[1, 2]]]), "\x00" * 10):
        cache.write_text(garbage)
        _same(first, eng.load_trees())
    raw = json.loads(cache.read_text())
    raw[2][0][1].pop("\x00line")  # a mapping without its line: not decodable, ignored
    cache.write_text(json.dumps(raw))
    _same(first, eng.load_trees())


def test_unwritable_cache_dir_is_ignored(trees_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("TROUBLESHOOTER_CACHE_DIR", str(blocker / "cache"))  # below a file: mkdir fails
    first = eng.load_trees()
    _same(first, eng.load_trees())


def test_custom_directory_is_not_cached(trees_copy: Path, tmp_path: Path) -> None:
    eng.load_trees(trees_copy)
    assert not (Path(os.environ["TROUBLESHOOTER_CACHE_DIR"]) / "trees.json").exists()


def test_document_json_cannot_carry_is_not_cached(trees_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import datetime

    doc = yamlio.LineDict({"a": [yamlio.LineDict({"b": 1})]})
    doc.line = 1
    doc["a"][0].line = 2
    assert json.loads(json.dumps(eng._encode_doc(doc)), object_hook=eng._decode_mapping) == doc
    for bad in (datetime.date(2024, 1, 1), {1, 2}, b"x", (1,)):
        doc["a"][0]["b"] = bad
        with pytest.raises(TypeError):
            eng._encode_doc(doc)
    doc["a"][0]["b"] = 1
    doc[7] = "int key"
    with pytest.raises(TypeError):
        eng._encode_doc(doc)

    # a condition is free-form (type object): a date in one is valid, JSON would not give it back: not cached
    real = eng._load_doc

    def with_date(path):
        d = real(path)
        d["nodes"][d["start"]]["stamp"] = datetime.date(2024, 1, 1)
        return d

    monkeypatch.setattr(eng.cache, "_load_doc", with_date)
    trees = eng.load_trees()
    assert all(t.nodes[t.start]["stamp"] == datetime.date(2024, 1, 1) for t in trees.values())
    assert not (Path(os.environ["TROUBLESHOOTER_CACHE_DIR"]) / "trees.json").exists()
