"""Where the repository, its Hydra configs and the caches are."""

from __future__ import annotations

import os
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
CONFIG_DIR = str(REPO_DIR / "conf")
CACHE_OFF = ("off", "0", "false", "no")  # $DFL_BENCH_CACHE values that turn every cache off


def cache_root() -> Path | None:
    """The caches' folder: `$DFL_BENCH_CACHE`, else ~/.cache/dfl_bench; None when it is one of
    CACHE_OFF (nothing is cached then) or there is no home folder to keep it in.

    >>> os.environ["DFL_BENCH_CACHE"] = "off"; cache_root() is None
    True
    >>> del os.environ["DFL_BENCH_CACHE"]
    """
    where = os.environ.get("DFL_BENCH_CACHE", "")
    if where.lower() in CACHE_OFF:
        return None
    try:
        return Path(where).expanduser() if where else Path.home() / ".cache" / "dfl_bench"
    except RuntimeError:
        return None
