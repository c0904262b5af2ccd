"""One process per job: an exclusive lock on `<checkpoint_dir>/<experiment>/<hash>.lock`.

Two identical jobs at once would share one checkpoint folder; the second is refused instead.
The lock is an flock, so it dies with its process (no stale locks after a crash).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class AlreadyRunning(RuntimeError):
    """Another process holds this job's lock."""


@contextmanager
def held(path: Path, holder: str) -> Iterator[None]:
    """Hold an exclusive flock on `path` for the block, writing `holder` into the file; raise
    BlockingIOError (its `holder`: what the file says) when another process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as err:
            err.holder = os.read(fd, 200).decode(errors="replace").strip() or "?"
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder.encode(), 0)
        yield
    finally:
        os.close(fd)


@contextmanager
def job_lock(path: Path) -> Iterator[None]:
    """Hold the lock at `path` for the block, or raise AlreadyRunning naming its holder."""
    try:
        with held(path, str(os.getpid())):
            yield
    except BlockingIOError as err:
        raise AlreadyRunning(
            f"this job is already running (pid {err.holder} holds {path}); "
            "wait for it, or stop it and rerun to resume"
        ) from None
