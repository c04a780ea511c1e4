"""A read-only HOME (issue 12, item 4): the app's walks go on, unrecorded, with a message naming the
directory, instead of every walk stopping at "cannot start"."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from troubleshooter.service.practice import practice_case
from troubleshooter.tui.screens.walk import WalkScreen

from .conftest import make_app, settle


@pytest.mark.asyncio
async def test_read_only_home_does_not_block_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"  # the conftest's TROUBLESHOOTER_DATA_DIR
    real = os.mkdir

    def mkdir(path, *args, **kwargs):
        if str(path).startswith(str(data)):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir)
    app = make_app("healthy")
    notes: list[str] = []
    real_notify = app.notify

    def notify(message, *args, **kwargs):
        notes.append(str(message))
        return real_notify(message, *args, **kwargs)

    monkeypatch.setattr(app, "notify", notify)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        app.start_walk(practice_case("healthy")["symptom"])
        await settle(app, pilot)
        assert isinstance(app.screen, WalkScreen), app.screen
        assert app.guide.session is None and app.guide.walk is not None
        assert any(str(data / "sessions") in n and "not recorded" in n and "Read-only" in n for n in notes), notes
