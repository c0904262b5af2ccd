"""A cache's folder as it is used, not as it was named: opened from the cache folder one folder
at a time by descriptor, each checked as opened (this user's own, writable by no other user:
untrusted.check_own) and the files read and written in the folder that was checked
(untrusted.read_json and writer given it), so that a folder moved or exchanged by another user
between a check and a read is never read; a cache folder another user may move (a folder above
it theirs, or writable by others without the sticky bit) is not used at all."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

from dfl_bench.untrusted import NotOwn, check_own, writer

_UP = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY  # passes a folder it may not list
_SAID: set[str] = set()  # what own_folder has said on stderr in this process


def _chain(path: Path, root: Path) -> list[Path]:
    """`root` and each folder below it down to `path` (which is at or under `root`), `path`
    last."""
    parts = Path(path).relative_to(root).parts
    return [Path(root), *(Path(root, *parts[: i + 1]) for i in range(len(parts)))]


def _fast(info: os.stat_result, place: Path) -> None:
    """NotOwn where the folder `place` above the cache (`info`, its stat) lets another user move
    what it holds: owned by another user than this one or root, or writable by its group or
    others without the sticky bit (as /tmp has: each user moves only their own)."""
    loose = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX
    if info.st_uid not in (os.geteuid(), 0) or loose:
        mode = f"{stat.filemode(info.st_mode)}, uid {info.st_uid}"
        raise NotOwn(place, f"(above the cache) lets other users move it ({mode})")


def _held_fast(fd: int, root: Path) -> None:
    """NotOwn where a folder above the open folder `root` (`fd`, walked up by "..") is not
    `_fast`."""
    place, below, here = Path(os.path.realpath(root)), os.fstat(fd), os.dup(fd)
    try:
        while True:
            up = os.open("..", _UP, dir_fd=here)
            os.close(here)
            here = up
            info, place = os.fstat(here), place.parent
            if (info.st_dev, info.st_ino) == (below.st_dev, below.st_ino):
                return  # "/", its own parent
            _fast(info, place)
            below = info
    finally:
        os.close(here)


def _made(root: Path) -> None:
    """The missing cache folder `root` made for this user only, with the folders above it, once
    the nearest existing folder above it and each above that are `_fast` (NotOwn before anything
    is made where one is not)."""
    above = next(p for p in Path(root).absolute().parents if p.exists())
    fd = os.open(above, _UP)
    try:
        _fast(os.fstat(fd), above)
        _held_fast(fd, above)
    finally:
        os.close(fd)
    Path(root).mkdir(mode=0o700, parents=True, exist_ok=True)


def _open_root(root: Path, make: bool) -> int:
    """The cache folder `root` open (followed where it is a link; `_made` where missing and
    `make`), `check_own` and `_held_fast`."""
    if make and not Path(root).exists():
        _made(root)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        check_own(root, os.fstat(fd))
        _held_fast(fd, root)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_below(above: int, place: Path, make: bool) -> int:
    """The folder `place` open, opened by its name in the open folder `above` (closed here)
    following no link (NotOwn for one or for no folder), made for this user only where missing
    and `make`, and `check_own`."""
    try:
        if make:
            with contextlib.suppress(FileExistsError):
                os.mkdir(place.name, 0o700, dir_fd=above)
        fd = os.open(place.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=above)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):
            raise NotOwn(place, "is a symbolic link or no folder (not followed)") from None
        raise
    finally:
        os.close(above)
    try:
        check_own(place, os.fstat(fd))
    except NotOwn:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def own_folder(folder: Path, root: Path, make: bool = False) -> Iterator[int]:
    """The open folder `folder`, at or under the cache folder `root`, that a cache reads and
    writes its files in (untrusted.read_json and writer given it): `root` open (`_open_root`),
    then each folder below opened in the one above (`_open_below`), so what is checked is what
    is used. NotOwn from these or from the block is said once per reason on stderr and raised
    (a cache is used only where no other user could have written it); FileNotFoundError where a
    folder is missing and not `make`."""
    try:
        fd = _open_root(root, make)
        for place in _chain(folder, root)[1:]:
            fd = _open_below(fd, place, make)
        try:
            yield fd
        finally:
            os.close(fd)
    except NotOwn as err:
        why = f"{err.path} {err.why}"
        if why not in _SAID:
            _SAID.add(why)
            print(
                f"[cache] not used: {why}; a cache is read only where no other user could have "
                "written or moved it (remove it, or set DFL_BENCH_CACHE elsewhere, to cache again)",
                file=sys.stderr,
            )
        raise


def keep(path: Path, text: str, root: Path) -> None:
    """`text` written at `path` under the cache folder `root`, in its folder as `own_folder`
    opens it (each missing made for this user only), put in place whole (untrusted.writer: its
    file writable by this user only whatever the umask); OSError or UntrustedFile (NotOwn too)
    where it cannot be."""
    with own_folder(path.parent, root, make=True) as at, writer(path, within=at) as out:
        out.write(text)
