"""Suite-wide: the checked-trees cache (troubleshooter.diagnosis.engine, locations.cache_dir) goes to a private temporary
directory, not the user's cache directory; subprocesses and xdist workers inherit it."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

if not os.environ.get("TROUBLESHOOTER_CACHE_DIR"):
    _CACHE = tempfile.mkdtemp(prefix="ts-test-cache-")
    os.environ["TROUBLESHOOTER_CACHE_DIR"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)
