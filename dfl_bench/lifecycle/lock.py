"""One process per job: exclusive locks beside its record (`<records_dir>/<experiment>/
.<hash>.lock`) and beside its checkpoint folder (`<checkpoint_dir>/<experiment>/<hash>.lock`).

Two identical jobs at once would write one record or share one checkpoint folder (with other
checkpoint folders, or other records folders); the second is refused instead,
unless both are jobs of one sweep (two rows that resolve to one configuration, run by a parallel
launcher): then it waits for its twin and skips the job it finished. The lock is an flock, so it
dies with its process (no stale locks after a crash).
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from dfl_bench.untrusted import UntrustedFile, unlinked


class AlreadyRunning(RuntimeError):
    """Another process holds this job's lock, or the lock cannot be written (a full disk, a
    folder that cannot be written): the job does not start."""


@contextmanager
def held(path: Path, holder: str, wait: bool = False) -> Iterator[None]:
    """Hold an exclusive flock on `path` for the block, writing `holder` into the file; raise
    BlockingIOError (its `holder`: what the file says) when another process holds it, or with
    `wait` wait for it to let go."""
    try:
        unlinked(path)  # neither the lock nor its folder a link, which would write elsewhere
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)  # a link: refused
    except UntrustedFile as err:
        raise AlreadyRunning(f"cannot write its lock {path} ({err.why})") from None
    except OSError as err:
        why = "a symbolic link" if err.errno == errno.ELOOP else err.strerror or err
        raise AlreadyRunning(f"cannot write its lock {path} ({why})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError as err:
            err.holder = os.read(fd, 200).decode(errors="replace").strip() or "?"
            raise
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, holder.encode(), 0)
        except OSError as err:
            raise AlreadyRunning(f"cannot write its lock {path} ({err.strerror or err})") from None
        yield
    finally:
        os.close(fd)


@contextmanager
def job_lock(paths: Sequence[Path], sweep: str | None = None) -> Iterator[None]:
    """Hold the locks at `paths` (in their order) for the block, or raise AlreadyRunning naming
    a holder; a job of `sweep` (a multirun's folder) whose twin of the same sweep holds one
    waits for the twin."""
    with ExitStack() as held:
        for path in paths:
            held.enter_context(_one_lock(path, sweep))
        yield


@contextmanager
def _one_lock(path: Path, sweep: str | None) -> Iterator[None]:
    """Hold the lock at `path` (job_lock)."""
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
