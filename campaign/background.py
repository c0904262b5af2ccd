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
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dfl_bench.lifecycle import records
from dfl_bench.paths import REPO_DIR
from dfl_bench.untrusted import shown

ROOT = Path.home() / ".cache" / "dfl_bench"
TAIL = 4096  # the bytes of a log read for its last line
WIDE = 200  # the characters of that line shown


@dataclass(frozen=True)
class Folder:
    """One background folder: its path, commit, whether it trains now, the records a harvest
    would bring per experiment, and its log's last line."""

    path: Path
    commit: str
    running: bool
    new: dict[str, int]
    last: str


def running(lock: Path) -> bool:
    """Whether a process holds `lock` (the targets' `flock -n`): its stages train now."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def unharvested(folder: Path, committed: Path) -> dict[str, int]:
    """The finished records (ok or diverged) under `folder` whose place in `committed` is empty,
    per experiment."""
    found: Counter[str] = Counter()
    for path in sorted(folder.glob("*/*.json")):
        if path.parent.is_symlink() or (committed / path.parent.name / path.name).exists():
            continue
        record = records.read_record(path)
        if record is not None and (record.get("status") == "ok" or records.diverged(record)):
            found[path.parent.name] += 1
    return dict(found)


def last_line(folder: Path) -> str:
    """The last line of the newest log in `folder` (`*.log`), printable; `-` without one."""
    logs = sorted((p for p in folder.glob("*.log") if p.is_file() and not p.is_symlink()),
                  key=lambda p: p.stat().st_mtime)  # fmt: skip
    if not logs:
        return "-"
    with logs[-1].open("rb") as f:
        f.seek(max(0, logs[-1].stat().st_size - TAIL))
        lines = f.read().decode(errors="replace").splitlines()
    text = next((x.strip() for x in reversed(lines) if x.strip()), "-")
    text = " ".join(text.split())[:WIDE]
    return f"{logs[-1].name}: {text if text.isprintable() else ascii(text)}"


def folders(root: Path, committed: Path) -> list[Folder]:
    """Each folder under `root` that a frozen-checkout target made (a `commit` file and
    `records/`), by name."""
    out = []
    for path in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
        commit_file, kept = path / "commit", path / "records"
        if not (commit_file.is_file() and kept.is_dir()):
            continue
        commit = commit_file.read_text(errors="replace").strip()[:40]
        commit = commit if commit.isalnum() else ascii(commit)
        new = unharvested(kept, committed)
        out.append(Folder(path, commit, running(path / "run.lock"), new, last_line(path)))
    return out


def lines(found: Sequence[Folder]) -> list[str]:
    """Each folder's line, then the harvest command where it has records to bring."""
    out = []
    for f in found:
        n = sum(f.new.values())
        per = ", ".join(f"{e} {k}" for e, k in sorted(f.new.items()))
        state = "training" if f.running else "stopped"
        out.append(f"{shown(Path(f.path.name))} ({f.commit[:7]}, {state}): {n} record(s) to harvest"
                   + (f" ({per})" if per else "") + f"; {f.last}")  # fmt: skip
        if n:
            out.append(f"  make addition-harvest ADDITION_DIR={shown(f.path)} "
                       f"ADDITION_COMMIT={f.commit[:7]}")  # fmt: skip
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
