"""gdb-backtrace parser: the signal gdb stopped on and the backtrace's frames, on real captures (exact values)."""

from __future__ import annotations

import pytest

from tests.corpus import load
from troubleshooter import parsers


def test_a_bus_error_in_nccls_shared_memory_functions_with_the_library_on_the_wrapped_line():
    text = load("gdb-backtrace/jaxtoolbox183-sigbus-ncclshmopen-proxy-service.txt")
    assert parsers.detect(text) == "gdb-backtrace"
    assert parsers.run("gdb-backtrace", text) == {
        "gdb.signal_name": "SIGBUS", "gdb.signal": "Bus error",
        "gdb.frames": ["ncclShmOpen", "ncclProxyService", "start_thread", "clone"],
        "gdb.frame_libraries": ["xla_extension.so"]}


def test_the_stop_and_a_later_bt_between_a_threads_other_posts():
    f = parsers.run("gdb-backtrace", load("gdb-backtrace/monero-lmdb-sigbus-mdb-rpage-get.txt"))
    assert f["gdb.signal_name"] == "SIGBUS"
    assert f["gdb.frames"] == ["mdb_rpage_get", "mdb_page_get.isra", "mdb_page_search_root", "mdb_page_search",
                               "mdb_cursor_set", "mdb_cursor_get"]
    assert "gdb.frame_libraries" not in f


def test_text_without_a_stop_or_a_frame_is_refused():
    with pytest.raises(parsers.ParseError):
        parsers.run("gdb-backtrace", "(gdb) info threads\nNo threads.\n")
