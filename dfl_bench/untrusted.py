"""The one reader of JSON files from others (run records, plans, probe files, harvested folders):
no symbolic link followed, bounded size and nesting (checked before parsing, so a 200,000-deep
file is one line, not a RecursionError), UTF-8 text, valid JSON (no NaN or infinity, no number
a float cannot hold: every reader compares numbers as floats), the kind of value the reader
expects; anything else one `UntrustedFile` error (a ValueError) naming the file and why. Nothing
read here runs: it is data until a caller checks its fields (`read_text` reads a text file, a
rendering's old output, the same way). It is also the one writer (`writer`, `write_text`,
`write_bytes`): no file is written through a symbolic or a hard link, and a whole file is put
at its name only once written whole (outputs.py, in front of it, lets a command's --out replace
only a file of its own). A cache is read only where no other user could have
written it (cache_place: `own_folder`, `keep`; `check_own`).

    >>> nesting("[[{}]]"), nesting('["[[[[", {}]')
    (3, 2)
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import math
import os
import re
import secrets
import stat
import sys
from pathlib import Path
from typing import IO, Any

# A name that becomes a folder or file name (an experiment's records folder, a row's label, a
# profile in a figure's name): no separator, no "." or "..", nothing that leaves its folder.
PLAIN_NAME = re.compile(r"[A-Za-z0-9_=+,-][A-Za-z0-9_=+,.-]*")
MAX_NAME = 100  # characters (a file name may have 255 bytes; a lock or a W&B run adds to it)
MAX_BYTES = 64 * 2**20  # the largest file read (a probe file of every cell is a few MB)
MAX_NESTING = 64  # a record nests 5 deep; nothing of ours nests more than 10
NAME_BYTES = 255  # the longest file name Linux's file systems hold (NAME_MAX)


def plain_name(value: Any) -> bool:
    """Whether `value` is a text that may name a file or folder: a PLAIN_NAME of at most
    MAX_NAME characters.

    >>> plain_name("yager_p1_5"), plain_name("../up"), plain_name("a" * 101), plain_name(3)
    (True, False, False, False)
    """
    return isinstance(value, str) and len(value) <= MAX_NAME and bool(PLAIN_NAME.fullmatch(value))


def shown(path: Path) -> str:
    """`path` as a message names it: each name longer than a file name may be (NAME_BYTES) cut
    to its first 40 characters and its length.

    >>> shown(Path("/tmp", "p" * 300 + ".json"))
    '/tmp/pppppppppppppppppppppppppppppppppppppppp...(305 characters)'
    """
    long = "{}...({} characters)"
    cut = (p if len(p.encode()) <= NAME_BYTES else long.format(p[:40], len(p)) for p in path.parts)
    return str(Path(*cut))


class UntrustedFile(ValueError):
    """A file from others that is no file of the kind asked for: `path: why` (`shown`)."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{shown(Path(path))}: {why}")
        self.path, self.why = path, why


def nesting(text: str) -> int:
    """The deepest nesting of `[` and `{` in JSON `text`, strings skipped: one pass, no
    recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


class _TwiceKey(ValueError):
    """A JSON object gives one key twice (json keeps the last silently)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict, or _TwiceKey naming a key given twice."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _TwiceKey(key)
        out[key] = value
    return out


class _NoNumber(ValueError):
    """A JSON number no reader can use as one: NaN or an infinity (no JSON token, RFC 8259), or
    one beyond a float's range (float() overflows on it)."""


def _finite_float(text: str) -> float:
    """A JSON number with a fraction or an exponent as a float, or _NoNumber (1e400 is inf)."""
    value = float(text)
    if not math.isfinite(value):
        raise _NoNumber(f"the number {text:.40} is beyond a float's range")
    return value


def _float_sized_int(text: str) -> int:
    """A JSON integer as an int, or _NoNumber where no float holds it (beyond about 1.8e308)."""
    value = int(text)
    if abs(value) > sys.float_info.max:
        raise _NoNumber(f"the integer of {len(text.lstrip('-'))} digits is beyond a float's range")
    return value


def _no_constant(name: str) -> Any:
    """_NoNumber for NaN, Infinity and -Infinity, which Python's json reads and JSON has not."""
    raise _NoNumber(f"{name} is no JSON number (RFC 8259 has no non-finite numbers)")


def _plain_bytes(path: Path, within: int | None = None) -> bytes:
    """The bytes of the plain file at `path`, opened without following a link or waiting on a
    pipe (a FIFO named `*.json` would hang its reader), at most MAX_BYTES; UntrustedFile for
    anything else (a folder too), FileNotFoundError where there is nothing. `within`: a cache
    folder's descriptor (cache_place.own_folder), where `path.name` is opened, `check_own`."""
    if within is None and _is_link(path):
        raise UntrustedFile(path, "a symbolic link (not followed)")
    try:
        fd = os.open(_at(path, within), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=within)
    except OSError as err:
        if err.errno != errno.ELOOP:
            raise
        if within is not None:
            raise NotOwn(path, LINKED) from None
        raise UntrustedFile(path, "a symbolic link (not followed)") from None
    try:  # what was opened is what is checked and read
        info = os.fstat(fd)
        if within is not None:
            check_own(path, info)
        if stat.S_ISDIR(info.st_mode):
            raise UntrustedFile(path, "a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise UntrustedFile(path, "not a plain file (a pipe, a device or a socket)")
        if info.st_size > MAX_BYTES:
            raise UntrustedFile(path, f"{info.st_size:,} bytes, more than the {MAX_BYTES:,} read")
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        return handle.read(MAX_BYTES + 1)


def _at(path: Path, within: int | None) -> Path | str:
    """What names `path` for a call given the descriptor `within` of its folder (`dir_fd`): its
    name there, or `path` itself where there is none."""
    return path if within is None else path.name


def read_json(
    path: str | Path, expect: type | tuple[type, ...] = dict, within: int | None = None
) -> Any:
    """The JSON value in the file at `path` (in the cache folder `within`: `_plain_bytes`), of
    type `expect`; `UntrustedFile` otherwise (FileNotFoundError where there is no file)."""
    path = Path(path)
    data = _plain_bytes(path, within)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        why = f"not JSON (not UTF-8 text: {err.reason} at byte {err.start})"
        raise UntrustedFile(path, why) from None
    if nesting(text) > MAX_NESTING:
        raise UntrustedFile(path, f"nested deeper than {MAX_NESTING} levels")
    try:
        value = json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_float=_finite_float,
            parse_int=_float_sized_int,
            parse_constant=_no_constant,
        )
    except json.JSONDecodeError as err:
        raise UntrustedFile(path, f"not JSON ({err.msg} at line {err.lineno})") from None
    except _NoNumber as err:
        raise UntrustedFile(path, f"not JSON ({err})") from None
    except _TwiceKey as err:
        why = f"gives the key {err.args[0]!r} twice (which one holds?)"
        raise UntrustedFile(path, why) from None
    except ValueError as err:  # a number json cannot read (an integer of over 4,300 digits)
        raise UntrustedFile(path, f"not JSON ({str(err).split(';')[0]})") from None
    if not isinstance(value, expect):
        wanted = " or ".join(
            t.__name__ for t in (expect if isinstance(expect, tuple) else (expect,))
        )
        raise UntrustedFile(path, f"holds a {type(value).__name__}, not a {wanted}")
    return value


def read_text(path: str | Path) -> str:
    """The UTF-8 text of the plain file at `path` (`_plain_bytes`), as a rendering reads its
    old output before replacing it; `UntrustedFile` otherwise (FileNotFoundError where there is
    no file)."""
    path = Path(path)
    try:
        return _plain_bytes(path).decode("utf-8")
    except UnicodeDecodeError as err:
        raise UntrustedFile(path, f"not UTF-8 text ({err.reason} at byte {err.start})") from None


def read_bytes(path: str | Path) -> bytes:
    """The bytes of the plain file at `path` (`_plain_bytes`), as outputs.replaceable reads a
    file before replacing it; `UntrustedFile` otherwise (FileNotFoundError where there is none)."""
    return _plain_bytes(Path(path))


def unlinked(path: str | Path) -> Path:
    """`path` where a rendering may write: neither it nor its folder a symbolic link (a link a
    records folder or a pull request brings would write elsewhere); UntrustedFile otherwise."""
    path = Path(path)
    for place in (path.parent, path):
        if _is_link(place):
            raise UntrustedFile(place, "a symbolic link (nothing is written through one)")
    return path


def _is_link(place: Path) -> bool:
    """Whether `place` is a symbolic link (Path.is_symlink); UntrustedFile where its name is
    longer than this system allows (ENAMETOOLONG, which is_symlink raises)."""
    try:
        return place.is_symlink()
    except OSError as err:
        if err.errno != errno.ENAMETOOLONG:
            raise
        why = f"a name longer than this system allows ({err.strerror})"
        raise UntrustedFile(place, why) from None


def out_folder(folder: str | Path, *names: str) -> Path:
    """`folder`, made where it is missing, to write the files `names` in: neither it nor any of
    them a symbolic link (UntrustedFile before anything is made: a dangling link is no folder to
    make either; UntrustedFile too where it cannot be made, a read-only place)."""
    folder = Path(folder)
    for name in names:
        unlinked(folder / name)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UntrustedFile(folder, f"no folder can be made there ({err.strerror})") from None
    return folder


def _open(path: Path, flags: int, within: int | None = None) -> int:
    """os.open(path, flags) (its name in the folder `within`: `_at`), a symbolic link one
    UntrustedFile line."""
    try:
        return os.open(_at(path, within), flags, 0o644, dir_fd=within)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UntrustedFile(path, "a symbolic link (nothing is written through one)") from None
        raise


class NotWritten(UntrustedFile, OSError):
    """A file `writer` could not write whole (a full disk, a size limit, a folder at its name):
    `path: not written (why)`; the file at its name is as it was."""

    def __init__(self, path: Path, err: OSError) -> None:
        super().__init__(path, f"not written ({err.strerror or err}); the file there is as it was")
        self.strerror = err.strerror  # what a caller quoting an OSError's reason quotes


class _Replacing:
    """A file `writer` opened in "w": written at a fresh temporary beside `_target`, which a
    close after a whole write puts at the target's name (flushed, fsynced, os.replace: the name
    holds the old file or the new one, never a part) and any failure removes (NotWritten)."""

    _target: Path
    _temporary: Path
    _within: int | None  # the descriptor of the folder both are named in (`_at`), if any

    def close(self) -> None:
        """Put the written file at its name, or remove it and raise NotWritten."""
        if self.closed:
            return
        try:
            self.flush()
            os.fsync(self.fileno())
            super().close()
            names = _at(self._temporary, self._within), _at(self._target, self._within)
            os.replace(*names, src_dir_fd=self._within, dst_dir_fd=self._within)
        except BaseException as err:  # an interrupt too leaves no temporary
            self._discard()
            if isinstance(err, OSError):
                raise NotWritten(self._target, err) from None
            raise

    def _discard(self) -> None:
        """Close and remove the temporary (the target untouched)."""
        with contextlib.suppress(OSError, ValueError):
            super().close()
        with contextlib.suppress(OSError):
            os.unlink(_at(self._temporary, self._within), dir_fd=self._within)

    def __exit__(self, kind: type[BaseException] | None, err: Any, trace: Any) -> None:
        """A block that ended without an error closes (`close`); else the temporary goes, and an
        OSError becomes NotWritten naming the target."""
        if kind is None:
            return self.close()
        self._discard()
        if isinstance(err, OSError) and not isinstance(err, NotWritten):
            raise NotWritten(self._target, err) from None
        return None

    def __del__(self) -> None:
        """A file dropped unclosed (an error before its block) is never put in place."""
        if not self.closed:
            self._discard()


class _ReplacingBytes(_Replacing, io.BufferedWriter):
    """`_Replacing` for bytes."""


class _ReplacingText(_Replacing, io.TextIOWrapper):
    """`_Replacing` for text (UTF-8)."""


def _replacing(path: Path, binary: bool, within: int | None) -> IO[Any]:
    """A `_Replacing` file for `path` (in the folder `within`: `_at`), open at a temporary of a
    fresh name in its folder (made with O_EXCL and O_NOFOLLOW: nothing there before is written
    or followed)."""
    if within is None and path.is_dir():
        raise UntrustedFile(path, "a folder, not a file")
    temporary = path.with_name(f".{path.name[:MAX_NAME]}.{secrets.token_hex(8)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        raw = io.FileIO(_open(temporary, flags, within), "w")
    except OSError as err:  # no temporary can be made there (a read-only folder, a full disk)
        raise NotWritten(path, err) from None
    if binary:
        out: Any = _ReplacingBytes(raw)
    else:
        out = _ReplacingText(io.BufferedWriter(raw), "utf-8")
        out.mode = "w"  # as open() names a text file's mode (a buffer's is its raw file's)
    out._target, out._temporary, out._within = path, temporary, within
    return out


def writer(path: str | Path, mode: str = "w", within: int | None = None) -> IO[Any]:
    """The one way a file is written: `path` (`unlinked`; or by its name in the open folder
    `within`, cache_place.own_folder's) opened for writing, "b" for bytes, following no link
    even if one appears meanwhile. "w" writes the whole file at a temporary that the close puts
    at its name (`_Replacing`: a write cut off leaves the old file; a hard link's other name
    keeps its file). "a" appends in place, as a log grows (read while its process runs, kept if
    it is killed), and is refused for a file with another name too (a hard link). A caller
    hands the open file to what writes (json.dump, savefig, np.savez, to_csv, tarfile), best in
    a `with` block."""
    path = unlinked(path) if within is None else Path(path)
    if mode in ("w", "wb"):
        return _replacing(path, mode == "wb", within)
    if mode not in ("a", "ab"):
        raise ValueError(f"writer opens a file to write ('w', 'a', with 'b'), not {mode!r}")
    fd = _open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_APPEND, within)
    if os.fstat(fd).st_nlink > 1:
        os.close(fd)
        raise UntrustedFile(path, "a hard link (nothing is added to another name's file)")
    return os.fdopen(fd, mode) if mode == "ab" else os.fdopen(fd, mode, encoding="utf-8")


def write_text(path: str | Path, text: str) -> Path:
    """Write `text` at `path` (`writer`)."""
    with writer(path) as out:
        out.write(text)
    return Path(path)


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write `data` at `path` (`writer`)."""
    with writer(path, "wb") as out:
        out.write(data)
    return Path(path)


LINKED = "is a symbolic link or no folder or plain file"


class NotOwn(UntrustedFile):
    """A place of a cache that another user could have written or moved: `path why`
    (cache_place.own_folder says it once on stderr; the value is computed, nothing kept)."""


def check_own(place: Path, info: os.stat_result) -> None:
    """NotOwn where `place`, of status `info` (an fstat of it open), may be another user's
    doing: no folder or plain file, owned by another user than this one or root, or writable by
    its group or others."""
    if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
        raise NotOwn(place, LINKED)
    if info.st_uid not in (os.geteuid(), 0):
        raise NotOwn(place, f"is owned by another user (uid {info.st_uid})")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise NotOwn(place, f"is writable by its group or others ({stat.filemode(info.st_mode)})")
