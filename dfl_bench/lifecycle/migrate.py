"""Records of an older form brought to today's, once: `python -m dfl_bench.lifecycle.migrate DIR
[DIR ...]` rewrites every record under each folder in place (a record whose config hash moves is
written under its new name and the old file removed; a `reused_from` follows the record it
names). A harvest migrates the records a frozen older checkout trained the same way.

Each step is a pure function of a record's config (CONFIG_STEPS) or of the record (RECORD_STEPS)
that says what trained and what it measured, oldest first;
a record already in today's form is left byte for byte. Nothing is read as code: a record is
JSON, a path never leaves its folder.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dfl_bench.exits import EXIT_INVALID
from dfl_bench.lifecycle import records
from dfl_bench.schema import (
    BEST_TEST_ACCURACY,
    BEST_VALIDATION_ACCURACY,
    DIGIT_ACCURACY,
    TEST_ACCURACY,
    VALIDATION_ACCURACY,
)


def budget_optimizer(config: dict[str, Any]) -> dict[str, Any]:
    """A budget's optimizer settings (`profile.optimizer`, which replaced `optimizer`'s at train
    time) into `optimizer`: the rate and schedule the run trained with."""
    profile = config.get("profile")
    if not isinstance(profile, Mapping) or "optimizer" not in profile:
        return config
    profile = dict(profile)
    overlay = profile.pop("optimizer") or {}
    return {
        **config,
        "profile": profile,
        "optimizer": {**(config.get("optimizer") or {}), **overlay},
    }


def validation_named(record: dict[str, Any]) -> dict[str, Any]:
    """A run evaluated on a held-out validation split instead of the test split (before a run
    evaluated both): its accuracies there named `validation_*`, its test accuracies None (it
    measured none)."""
    task = record["config"].get("task") or {}
    if not task.get("validation") or VALIDATION_ACCURACY in record:
        return record
    return {
        **record,
        VALIDATION_ACCURACY: record.get(TEST_ACCURACY),
        BEST_VALIDATION_ACCURACY: record.get(BEST_TEST_ACCURACY),
        "validation_digit_accuracy": record.get(DIGIT_ACCURACY),
        TEST_ACCURACY: None,
        BEST_TEST_ACCURACY: None,
        "sum_accuracy": None,
        DIGIT_ACCURACY: None,
    }


CONFIG_STEPS: tuple[Callable[[dict[str, Any]], dict[str, Any]], ...] = (budget_optimizer,)
RECORD_STEPS: tuple[Callable[[dict[str, Any]], dict[str, Any]], ...] = (validation_named,)


def migrate_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """`config` (a record's, of any age) in today's form."""
    out = dict(config)
    for step in CONFIG_STEPS:
        out = step(out)
    return out


def migrate_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """`record` in today's form: its config (its `config_hash` that config's) and its fields."""
    out = dict(record)
    config = migrate_config(record["config"])
    if config != record["config"]:
        out["config"] = config
        if "config_hash" in out:
            out["config_hash"] = records.config_hash(config)
    for step in RECORD_STEPS:
        out = step(out)
    return out


def migrate_folder(root: Path) -> list[tuple[Path, Path]]:
    """Every record under `root` (`<experiment>/<hash>.json`) in today's form, each under its
    config's hash; returns (old, new) for each file renamed. A ValueError before anything is
    written when a new name is taken by another record."""
    todo: list[tuple[Path, Path, dict[str, Any]]] = []
    for path in sorted(root.glob("*/*.json")):
        record = records.read_record(path)
        if record is None:
            continue
        new = migrate_record(record)
        if new == record:
            continue
        target = path.with_name(f"{records.config_hash(new['config'])}.json")
        if target != path and target.exists():
            raise ValueError(f"{path} would become {target}, which holds another record")
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
    for path in sorted(root.glob("*/*.json")):  # a reused copy names its source's new place
        record = records.read_record(path)
        if record is not None and record.get("reused_from") in renamed:
            records.write_record(path, {**record, "reused_from": renamed[record["reused_from"]]})
    return [(old, new) for old, new, _ in todo if old != new]


def main(argv: Sequence[str] | None = None) -> int:
    """Migrate each folder; one line per folder."""
    parser = argparse.ArgumentParser(prog="python -m dfl_bench.lifecycle.migrate")
    parser.add_argument("folders", nargs="+", type=Path, help="records folders (<experiment>/)")
    args = parser.parse_args(argv)
    for folder in args.folders:
        if not folder.is_dir():
            print(f"[migrate] {folder} is no folder", file=sys.stderr)
            return EXIT_INVALID
        try:
            moved = migrate_folder(folder)
        except ValueError as err:
            print(f"[migrate] {err}", file=sys.stderr)
            return EXIT_INVALID
        print(f"[migrate] {folder}: {len(moved)} record(s) renamed to their config's hash")
    return 0


if __name__ == "__main__":
    sys.exit(main())
