"""One process per job: an exclusive lock on `<checkpoint_dir>/<experiment>/<hash>.lock`.

Two identical jobs at once would share one checkpoint folder; the second is refused instead,
unless both are jobs of one sweep (two rows that resolve to one configuration, run by a parallel
launcher): then it waits for its twin and skips the job it finished. The lock is an flock, so it
dies with its process (no stale locks after a crash).
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class AlreadyRunning(RuntimeError):
    """Another process holds this job's lock."""


@contextmanager
def held(path: Path, holder: str, wait: bool = False) -> Iterator[None]:
    """Hold an exclusive flock on `path` for the block, writing `holder` into the file; raise
    BlockingIOError (its `holder`: what the file says) when another process holds it, or with
    `wait` wait for it to let go."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError as err:
            err.holder = os.read(fd, 200).decode(errors="replace").strip() or "?"
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder.encode(), 0)
        yield
    finally:
        os.close(fd)


@contextmanager
def job_lock(path: Path, sweep: str | None = None) -> Iterator[None]:
    """Hold the lock at `path` for the block, or raise AlreadyRunning naming its holder; a job of
    `sweep` (a multirun's folder) whose twin of the same sweep holds it waits for the twin."""
    mark = f" in sweep {sweep}" if sweep else None
    holder = f"{os.getpid()}{mark or ''}"
    try:
        lock = held(path, holder)
        lock.__enter__()
    except BlockingIOError as err:
        if mark is None or not err.holder.endswith(mark):
            raise AlreadyRunning(
                f"this job is already running (pid {err.holder} holds {path}); "
                "wait for it, or stop it and rerun to resume"
            ) from None
        print(
            f"[dfl_bench] the same configuration runs in this sweep (pid "
            f"{err.holder.split()[0]}): waiting for it, then skipping what it finished",
            file=sys.stderr,
            flush=True,
        )
        lock = held(path, holder, wait=True)
        lock.__enter__()
    try:
        yield
    finally:
        lock.__exit__(None, None, None)
