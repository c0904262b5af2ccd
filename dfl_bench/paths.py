"""Where the repository, its Hydra configs and the caches are, and where a file set aside goes."""

from __future__ import annotations

import os
from pathlib import Path

from dfl_bench.untrusted import write_bytes

REPO_DIR = Path(__file__).resolve().parent.parent
CONFIG_DIR = str(REPO_DIR / "conf")
# $DFL_BENCH_CACHE values that turn every cache off (any case, spaces around ignored)
CACHE_OFF = ("off", "0", "false", "no", "none", "disabled")


def set_aside(path: Path, suffix: str) -> Path:
    """Move `path` to the first free `<name>.<suffix>`, `<name>.<suffix>.1`, ... and return it:
    an earlier file set aside (one a message said is kept) is never replaced."""
    n = 0
    while True:
        aside = path.with_name(f"{path.name}.{suffix}" + (f".{n}" if n else ""))
        n += 1
        try:
            os.link(path, aside, follow_symlinks=False)  # fails where `aside` exists, even racing
        except FileExistsError:
            continue
        except OSError:  # a filesystem without hard links: a free name, then a rename
            if os.path.lexists(aside):
                continue
            os.replace(path, aside)
            return aside
        os.unlink(path)
        return aside


def cache_setting_defect() -> str | None:
    """Why `$DFL_BENCH_CACHE` is no cache setting (a relative path: it would make a folder of
    that name wherever a command runs), or None."""
    where = os.environ.get("DFL_BENCH_CACHE", "").strip()
    if not where or where.lower() in CACHE_OFF or Path(where).expanduser().is_absolute():
        return None
    return (
        f"DFL_BENCH_CACHE={os.environ['DFL_BENCH_CACHE']!r} is neither an absolute folder nor one "
        f"of {list(CACHE_OFF)} (caches off)"
    )


def cache_root() -> Path | None:
    """The caches' folder: `$DFL_BENCH_CACHE`, else ~/.cache/dfl_bench; None when it is one of
    CACHE_OFF (nothing is cached then), a relative path (cache_setting_defect: refused before a
    job starts) or there is no home folder to keep it in.

    >>> os.environ["DFL_BENCH_CACHE"] = " Off "; cache_root() is None
    True
    >>> del os.environ["DFL_BENCH_CACHE"]
    """
    where = os.environ.get("DFL_BENCH_CACHE", "").strip()
    if where.lower() in CACHE_OFF or cache_setting_defect() is not None:
        return None
    try:
        return Path(where).expanduser() if where else Path.home() / ".cache" / "dfl_bench"
    except RuntimeError:
        return None


# Where libraries keep their caches and settings under the home folder (matplotlib, W&B): with a
# home that cannot be written (a cluster's read-only or shared home) each prints warnings, or
# pages of logging, at every run; they go to one temporary folder instead.
LIBRARY_HOME_VARIABLES = (
    "MPLCONFIGDIR",
    "WANDB_CACHE_DIR",
    "WANDB_CONFIG_DIR",
    "WANDB_DATA_DIR",
    "WANDB_DIR",
)


def home_writable() -> bool:
    """Whether a file can be made under the home folder's .cache."""
    try:
        folder = Path.home() / ".cache"
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".dfl_bench-write-test.{os.getpid()}"
        write_bytes(probe, b"")
        probe.unlink()
    except (OSError, RuntimeError, ValueError):  # ValueError: a link where the probe goes
        return False
    return True


def keep_library_caches_off_an_unwritable_home() -> str | None:
    """With a home folder that cannot be written, point each LIBRARY_HOME_VARIABLES the user has
    not set at one temporary folder (returned); else nothing (None)."""
    if home_writable():
        return None
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="dfl_bench-libraries-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    for name in LIBRARY_HOME_VARIABLES:
        os.environ.setdefault(name, folder)
    return folder
