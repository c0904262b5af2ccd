"""Where the background campaigns stand: each folder the frozen-checkout targets train in (make
ceiling-search, recipe-search, collapse-search, addition-finals, ...: `<folder>/commit`,
`run.lock`, `records/`, a log, under ~/.cache/dfl_bench), with its commit, whether it trains now
(its lock held), the finished records the committed folder lacks (what a harvest brings: ok, or
diverged, records.diverged), the last line of its log and the command that harvests it.

`python -m campaign.background [--root DIR] [--records-dir results/records]` (make background).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import shlex
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from campaign.collapse_search import EXPERIMENT as COLLAPSE
from campaign.final_nets import EXPERIMENT as FINALS
from campaign.recipe_search import EXPERIMENTS as SEARCHES
from dfl_bench.paths import REPO_DIR
from dfl_bench.reproduction import harvest
from dfl_bench.untrusted import UntrustedFile, read_bytes, shown

ROOT = Path.home() / ".cache" / "dfl_bench"
TAIL = 4096  # the bytes of a log read for its last line
WIDE = 200  # the characters of that line shown
COMMIT = re.compile(r"[0-9a-f]{7,40}")
DIVERGED = (FINALS, COLLAPSE, *SEARCHES)  # make addition-harvest's HARVEST_DIVERGED


@dataclass(frozen=True)
class Folder:
    """One background folder: its path, commit (None: no commit id there), whether it trains
    now, the records a harvest would bring per experiment (or why it would refuse) and its log's
    last line."""

    path: Path
    commit: str | None
    running: bool
    new: dict[str, int]
    refused: str | None
    last: str


def running(lock: Path) -> bool:
    """Whether a process holds `lock` (the targets' `flock -n`): its stages train now."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def commit_of(folder: Path) -> str | None:
    """The commit id in `folder`/commit (a plain file), None where it holds none."""
    try:
        text = read_bytes(folder / "commit").decode(errors="replace").strip()
    except (OSError, UntrustedFile):
        return None
    return text if COMMIT.fullmatch(text) else None


def to_harvest(folder: Path, committed: Path, commit: str) -> tuple[dict[str, int], str | None]:
    """What `make addition-harvest` would bring from `folder`/records into `committed` (the
    harvest's own selection, a dry run), per experiment; or why it would bring nothing."""
    try:
        found = harvest.harvest(folder / "records", committed, harvest.named_as(committed),
                                commit, DIVERGED, dry=True)  # fmt: skip
    except ValueError as err:
        return {}, " ".join(str(err).split())
    return dict(Counter(path.parent.name for path in found.new)), None


def last_line(folder: Path) -> str:
    """The last line of the newest log in `folder` (`*.log`), printable; `-` without one."""
    logs = sorted((p for p in folder.glob("*.log") if p.is_file() and not p.is_symlink()),
                  key=lambda p: p.stat().st_mtime)  # fmt: skip
    if not logs:
        return "-"
    with logs[-1].open("rb") as f:
        f.seek(max(0, logs[-1].stat().st_size - TAIL))
        tail = f.read().decode(errors="replace").splitlines()
    text = " ".join(next((x for x in reversed(tail) if x.strip()), "-").split())[:WIDE]
    return f"{printable(logs[-1].name)}: {printable(text)}"


def folders(root: Path, committed: Path) -> list[Folder]:
    """Each folder under `root` that a frozen-checkout target made (a `commit` file and
    `records/`), by name."""
    out = []
    for path in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
        if not ((path / "commit").exists() and (path / "records").is_dir()):
            continue
        commit = commit_of(path)
        new, refused = to_harvest(path, committed, commit) if commit else ({}, "no commit id")
        out.append(Folder(path, commit, running(path / "run.lock"), new, refused, last_line(path)))
    return out


def printable(text: str) -> str:
    """`text` as printed: itself where every character is printable, else its ascii()."""
    return text if text.isprintable() else ascii(text)


def lines(found: Sequence[Folder]) -> list[str]:
    """Each folder's line, then the harvest command where it has records to bring."""
    out = []
    for f in found:
        n = sum(f.new.values())
        per = ", ".join(f"{e} {k}" for e, k in sorted(f.new.items()))
        state = "training" if f.running else "stopped"
        refused = f"cannot be harvested: {printable(f.refused[:WIDE])}" if f.refused else None
        status = refused or f"{n} record(s) to harvest"
        head = f"{printable(shown(Path(f.path.name)))} ({(f.commit or '?')[:7]}, {state})"
        out.append(f"{head}: {status}" + (f" ({per})" if per else "") + f"; {f.last}")
        if n:
            place = printable(shlex.quote(str(f.path)))
            out.append(f"  make addition-harvest ADDITION_DIR={place} ADDITION_COMMIT={f.commit}")
    return out or ["no background folder"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m campaign.background")
    parser.add_argument("--root", type=Path, default=ROOT, help="where the folders are")
    parser.add_argument("--records-dir", type=Path, default=REPO_DIR / "results" / "records")
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        parser.error(f"--root {args.root} is no folder")
    print("\n".join(lines(folders(args.root, args.records_dir))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
