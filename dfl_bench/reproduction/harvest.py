"""Bring the finished runs of a background records folder (a seed-plan run from a frozen
checkout: `seed_plan run --repo <worktree> --records-dir <folder>`) into the committed one.

`python -m dfl_bench.reproduction.harvest --from <folder> [--records-dir results/records]` copies
each ok run record there that the records folder lacks to its own place (`<experiment>/<hash>
.json`), its records folder renamed to the one it lands in (config `records_dir` and the
`records_dir=` override; relative to the repository inside it), so a committed record names no
machine's folder (an absolute checkpoint folder, emptied at the run's end, is named as the
default one), in today's form (lifecycle/migrate.py: an older checkout may have written it).
Nothing is replaced: a record already there with other contents is named and kept. A record
that would still hold another absolute path stops the harvest before anything is written.
Exit status: 0 harvested (or nothing new), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dfl_bench.lifecycle import migrate, records
from dfl_bench.lifecycle.file_overrides import located, refusal
from dfl_bench.paths import REPO_DIR
from dfl_bench.results import cell_configs
from dfl_bench.untrusted import plain_name

OVERRIDE = "records_dir="


@dataclass(frozen=True)
class Harvest:
    """What a harvest did: records written, records kept (another record already there)."""

    new: list[Path]
    kept: list[Path]


CHECKPOINTS = "results/checkpoints"  # conf/config.yaml's checkpoint_dir


def moved(record: dict[str, Any], named: str) -> dict[str, Any]:
    """`record` with its records folder (config `records_dir`, the `records_dir=` override)
    named `named`, the folder it lands in, wherever it was written; and an absolute checkpoint
    folder (scratch space the run emptied at its end, not hashed) named as the default one."""
    out = json.loads(json.dumps(record))
    config = out.get("config") if isinstance(out.get("config"), dict) else {}
    renamed = {"records_dir": named}
    if os.path.isabs(str(config.get("checkpoint_dir", ""))):
        renamed["checkpoint_dir"] = CHECKPOINTS
    for key, value in renamed.items():
        if key in config:
            config[key] = value

    def renamed_override(override: Any) -> Any:
        key = override.split("=", 1)[0] if isinstance(override, str) else None
        return f"{key}={renamed[key]}" if key in renamed else override

    out["overrides"] = [renamed_override(o) for o in out.get("overrides") or []]
    return out


def absolute_paths(value: Any) -> list[str]:
    """Every text in `value` that is or holds (`key=/...`) an absolute path."""
    if isinstance(value, dict):
        return [p for v in value.values() for p in absolute_paths(v)]
    if isinstance(value, list):
        return [p for v in value for p in absolute_paths(v)]
    if isinstance(value, str) and (os.path.isabs(value) or "=/" in value):
        return [value]
    return []


def _without_hash(record: dict[str, Any]) -> dict[str, Any]:
    """`record` but its `config_hash` (its file's name says it)."""
    return {k: v for k, v in record.items() if k != "config_hash"}


def _unharvestable(
    out: dict[str, Any], trained_at: str, named: str, commit: str | None
) -> str | None:
    """Why the new record `out` (moved to `named`) may not be harvested, or None."""
    left = [p for p in absolute_paths(out) if p not in (named, f"{OVERRIDE}{named}")]
    unplain = [why for o in located(out.get("overrides") or []) if (why := refusal(o))]
    if unplain:
        return f"an override is no plain config override ({unplain[0]})"
    why = records.invalid(out)  # as migrated and moved (every text a printable line, ...)
    if why is not None:
        return f"not a whole run record ({why})"
    if left:
        return f"keeps the absolute path {left[0]}"
    if trained_at.endswith("-dirty"):
        return f"trained on a dirty tree ({trained_at})"
    if commit is not None and trained_at != commit:
        return f"trained at {trained_at}, not {commit}"
    return None


def harvest(source: Path, dest: Path, named: str, commit: str | None = None) -> Harvest:
    """Copy the ok records under `source` that `dest` lacks, their records folder `named`;
    ValueError (nothing written) when a file there is no whole record, or a new record would
    keep an absolute path, names a dirty tree or (given `commit`) another commit than the one
    the background run trained at."""
    todo: dict[Path, tuple[Path, dict[str, Any]]] = {}  # target -> (its source file, record)
    kept: list[Path] = []
    refused: list[str] = []
    for path in sorted(source.glob("*/*.json")):
        if path.parent.is_symlink() or (dest / path.parent.name).is_symlink():
            refused.append(f"{path.parent.name}: a symbolic link, not a folder of the records")
            continue
        if not plain_name(path.parent.name):
            refused.append(f"{path.parent.name!r}: no plain name for an experiment's folder")
            continue
        why = records.defect(path)
        if why is not None:
            refused.append(f"{path}: not a whole run record ({why})")
            continue
        record = records.read_record(path)
        if record is None or record.get("status") != "ok":
            continue
        today = migrate.migrate_record(record)  # an older checkout's record in today's form
        out = moved(today, named)
        target = dest / path.parent.name / f"{records.config_hash(today['config'])}.json"
        if target.exists():
            if records.read_record(target) != out:
                kept.append(target)
            continue
        if target in todo:
            twin, theirs = todo[target]
            if _without_hash(theirs) != _without_hash(out):
                refused.append(
                    f"{path} and {twin}: two records of one configuration and seed "
                    f"({target.name}); which one counts is not the harvest's to choose"
                )
            continue
        why = _unharvestable(out, str(record.get("git_commit")), named, commit)
        if why is not None:
            refused.append(f"{path}: {why}")
        else:
            todo[target] = (path, out)
    if refused:
        raise ValueError(
            f"{len(refused)} record(s) cannot be harvested, so nothing was harvested: "
            + "; ".join(refused[:3])
        )
    return Harvest([records.write_record(target, out) for target, (_, out) in todo.items()], kept)


def main(argv: Sequence[str] | None = None) -> int:
    """Harvest, print each new record and each kept one."""
    parser = argparse.ArgumentParser(prog="python -m dfl_bench.reproduction.harvest")
    parser.add_argument("--from", dest="source", type=Path, required=True)
    parser.add_argument("--records-dir", "--records", dest="records", type=Path)
    parser.add_argument("--commit", help="the full commit id every new record must name")
    args = parser.parse_args(argv)
    dest = args.records or REPO_DIR / cell_configs.RECORDS
    if not args.source.is_dir():
        parser.error(f"--from {args.source} is no folder")
    if args.source.resolve() == dest.resolve():
        parser.error(f"--from {args.source} is the records folder itself")
    inside = dest.resolve().is_relative_to(REPO_DIR)
    named = dest.resolve().relative_to(REPO_DIR).as_posix() if inside else str(dest)
    try:
        done = harvest(args.source, dest, named, args.commit)
    except ValueError as err:
        print(f"[harvest] error: {err}", file=sys.stderr)
        return 2
    for path in done.new:
        record = records.read_record(path) or {}
        print(f"[harvest] {path.relative_to(dest)}: {record.get('name')}")
    for path in done.kept:
        print(f"[harvest] kept {path}: another record is already there (not replaced)")
    print(f"[harvest] {len(done.new)} new record(s) in {dest}, {len(done.kept)} kept")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
