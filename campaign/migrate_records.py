"""This repository's committed records brought to today's form once, in place:
`python -m campaign.migrate_records DIR [DIR ...]` rewrites every record under each folder
through the framework's steps (dfl_bench/lifecycle/migrate.py); a record whose config hashes to
another name is written under it and the old file removed; a `reused_from` follows the record
it names. A record whose name its config, as written, does not hash to (today, nor under the hash
before the records' migration: migrate.hash_refusal) is edited or another run's: named on stderr
and left as it is. A record already in today's form is left byte for byte. Nothing is read as
code: a record is JSON read as a file from others (dfl_bench/untrusted.py, through
records.read_record), and no symbolic link is followed, so a path never leaves its folder.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dfl_bench.exits import EXIT_INVALID
from dfl_bench.lifecycle import records
from dfl_bench.lifecycle.migrate import hash_refusal, migrate_record


def own_records(root: Path) -> list[Path]:
    """The record files `<experiment>/<name>.json` that lie in `root` itself: no symbolic link
    is followed, neither a folder's nor a file's (a link would have the migration delete and
    write records elsewhere)."""
    return sorted(
        path
        for folder in root.iterdir()
        if folder.is_dir() and not folder.is_symlink()
        for path in folder.glob("*.json")
        if path.is_file() and not path.is_symlink()
    )


def migrate_folder(root: Path, left: list[Path] | None = None) -> list[tuple[Path, Path]]:
    """Every record under `root` (`<experiment>/<hash>.json`) in today's form, each under its
    config's hash; returns (old, new) for each file renamed. A ValueError before anything is
    written when a new name is taken by another record (or by two of the folder's records) or a
    record cannot be migrated; a file that is no record, or a record its name does not hash, is
    left as it is, named on stderr and appended to `left`."""
    left = [] if left is None else left
    todo: list[tuple[Path, Path, dict[str, Any]]] = []
    for path in own_records(root):
        record = records.read_record(path)
        if record is None:
            why = records.defect(path)
            print(f"[migrate] {path}: left as it is ({why})", file=sys.stderr)
            left.append(path)
            continue
        why = hash_refusal(record, path.stem)  # edited: renaming it moves another run's numbers
        if why is not None:
            print(f"[migrate] {path}: left as it is ({why})", file=sys.stderr)
            left.append(path)
            continue
        try:
            new = migrate_record(record)
        except ValueError as err:
            raise ValueError(f"{path}: {err}; nothing was migrated") from None
        target = path.with_name(f"{records.config_hash(new['config'])}.json")
        if new == record and target == path:
            continue
        if target != path and target.exists():
            raise ValueError(f"{path} would become {target}, which holds another record")
        twin = next((old for old, t, _ in todo if t == target), None)
        if twin is not None:  # two older forms of one run: neither may silently replace the other
            raise ValueError(f"{twin} and {path} would both become {target}; nothing was migrated")
        todo.append((path, target, new))
    renamed = {
        f"{old.parent.name}/{old.name}": f"{new.parent.name}/{new.name}"
        for old, new, _ in todo
        if old != new
    }
    for old, new, record in todo:
        records.write_record(new, record)
        if old != new:
            old.unlink()
    for path in own_records(root):  # a reused copy names its source's new place
        record = records.read_record(path)
        if record is not None and record.get("reused_from") in renamed:
            records.write_record(path, {**record, "reused_from": renamed[record["reused_from"]]})
    return [(old, new) for old, new, _ in todo if old != new]


def main(argv: Sequence[str] | None = None) -> int:
    """Migrate each folder; one line per folder; EXIT_INVALID when a folder is no folder, cannot
    be migrated, or had a file left as it is (each named on stderr), else 0."""
    parser = argparse.ArgumentParser(prog="python -m campaign.migrate_records")
    parser.add_argument("folders", nargs="+", type=Path, help="records folders (<experiment>/)")
    args = parser.parse_args(argv)
    left: list[Path] = []
    for folder in args.folders:
        if not folder.is_dir():
            print(f"[migrate] {folder} is no folder", file=sys.stderr)
            return EXIT_INVALID
        try:
            moved = migrate_folder(folder, left)
        except ValueError as err:
            print(f"[migrate] {err}", file=sys.stderr)
            return EXIT_INVALID
        print(f"[migrate] {folder}: {len(moved)} record(s) renamed to their config's hash")
    if left:
        print(f"[migrate] {len(left)} file(s) left as they were (named above)", file=sys.stderr)
        return EXIT_INVALID
    return 0


if __name__ == "__main__":
    sys.exit(main())
