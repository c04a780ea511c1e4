"""Suite-wide: the checked-trees cache (troubleshooter.diagnosis.engine, locations.cache_dir) goes to a private temporary
directory, not the user's cache directory; subprocesses and xdist workers inherit it."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

if not os.environ.get("TROUBLESHOOTER_CACHE_DIR"):
    _CACHE = tempfile.mkdtemp(prefix="ts-test-cache-")
    os.environ["TROUBLESHOOTER_CACHE_DIR"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)


# ------------------------------------------------------------------ /etc/nccl, shared by the tests that use it
ETC_NCCL_LOCK = os.path.join(tempfile.gettempdir(), "ts-tests-etc-nccl.lock")


@pytest.fixture
def etc_nccl_lock():
    """Held by every test that creates /etc/nccl or whose results depend on whether it exists: xdist runs tests
    side by side, and a container test that looked for /etc/nccl before another worker created it sees the file."""
    import fcntl

    with open(ETC_NCCL_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
