"""Bring the finished runs of a background records folder (a seed-plan run from a frozen
checkout: `seed_plan run --repo <worktree> --records-dir <folder>`) into the committed one.

`python -m dfl_bench.reproduction.harvest --from <folder> [--records-dir results/records]` copies
each finished run record there that the records folder lacks (ok; with `--diverged a,b`, also
those of experiments a and b that failed because training turned non-finite, records.diverged:
the seed's own outcome, which their rules count; another failure trains again) to
its own place (`<experiment>/<hash>.json`), its records folder renamed to the one it lands in
(config `records_dir` and the `records_dir=` override; relative to the repository inside it), so
a committed record names no machine's folder (an absolute checkpoint folder, emptied at the
run's end, is named as the default one), in today's form (lifecycle/migrate.py: an older
checkout may have written it).
Nothing is replaced: a record already there with other contents is named and kept. A record
that would still hold another absolute path, or whose config does not hash to its name
(migrate.hash_refusal: edited, or another run's), stops the harvest before anything is written.
Exit status: 0 harvested (or nothing new), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dfl_bench.lifecycle import migrate, records
from dfl_bench.lifecycle.file_overrides import located, refusal
from dfl_bench.lifecycle.hashing import numbers_as_floats
from dfl_bench.paths import CONFIG_DIR, REPO_DIR
from dfl_bench.results import cell_configs
from dfl_bench.untrusted import PLAIN_NAME, UntrustedFile, plain_name

OVERRIDE = "records_dir="


@dataclass(frozen=True)
class Harvest:
    """What a harvest did: records written, records kept (another record already there)."""

    new: list[Path]
    kept: list[Path]


CHECKPOINTS = "results/checkpoints"  # conf/config.yaml's checkpoint_dir


def moved(record: dict[str, Any], named: str) -> dict[str, Any]:
    """`record` with its records folder (config `records_dir`, the `records_dir=` override)
    named `named`, the folder it lands in, wherever it was written; and its checkpoint folder
    (scratch space the run emptied at its end, not hashed) named as the default one where the
    config or the override names an absolute one (records.portable makes the config's relative
    to the working folder, not the override's)."""
    out = json.loads(json.dumps(record))
    config = out.get("config") if isinstance(out.get("config"), dict) else {}
    renamed = {"records_dir": named}
    given = [str(o).split("=", 1)[-1] for o in out.get("overrides") or []
             if str(o).startswith("checkpoint_dir=")]  # fmt: skip
    if any(os.path.isabs(p) for p in (str(config.get("checkpoint_dir", "")), *given)):
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


def same_value(given: Any, held: Any) -> bool:
    """Whether an override's value is the value a config holds (1 and 1.0, '2' and 2 alike)."""

    def number(value: Any) -> float | None:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            return None
        try:
            return float(value)
        except ValueError:
            return None

    if number(given) is not None and number(held) is not None:
        return number(given) == number(held)
    return given == held


def _option(conf_dir: str, group: str, option: Any) -> tuple[bool, Any] | None:
    """A config group's option file under `conf_dir` (`<group>/<option>.yaml`): whether it is
    of the global package, and the `name` it gives its group; None where `option` is no plain
    name or there is no such readable file."""
    import yaml

    if not isinstance(option, str) or not PLAIN_NAME.fullmatch(option):
        return None
    if not all(PLAIN_NAME.fullmatch(part) for part in group.split("/")):
        return None
    path = Path(conf_dir, *group.split("/"), f"{option}.yaml")
    try:
        text = path.read_text()
        loaded = yaml.safe_load(text)
    except (OSError, UnicodeError, yaml.YAMLError):
        return None
    loaded = loaded if isinstance(loaded, dict) else {}
    is_global = any(line.split() == ["#", "@package", "_global_"] for line in text.splitlines())
    body = loaded.get(group.split("/")[-1]) if is_global else loaded
    name = body.get("name") if isinstance(body, dict) else None
    return is_global, name


def today(key: str) -> list[str]:
    """A dotted override key's place in today's config (a record's config is migrated, its
    overrides are as they were given: `problem.kb.scope` is `kb.scope`, the `problem` group
    `kb`)."""
    parts = key.split(".")
    for old, new in migrate.PROBLEM_TO_KB:
        if tuple(parts[: len(old)]) == old:
            return [*new, *parts[len(old) :]]
        if len(parts) == 1 and old == (key, "name"):  # the group itself
            return list(new[:-1])
    return parts


def unsaid(
    overrides: Sequence[Any],
    config: Any,
    conf_dir: str = CONFIG_DIR,
    skip: Sequence[str] = (),
) -> list[str]:
    """The overrides of a record (but those of a top-level key in `skip`) its `config` does not
    say it ran with, each as `key=value, the record's <what it holds>`: a key the config has no
    value at (`+optimizer.warmup=50` where it has no `optimizer.warmup`), a value other than the
    config's (a list or mapping, `kb.formulas=[1]`, as a record's JSON holds it), a group's
    option (`net=lenet`) whose file under `conf_dir` names it otherwise than the config's group
    does (its `name`). A group option with no such file, or no name, is let be; so are deletions
    and sweeps. Overrides that do not parse are left to `refusal`."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    config = config if isinstance(config, dict) else {}
    try:
        parsed = OverridesParser.create().parse_overrides([str(o) for o in overrides])
    except Exception:  # noqa: BLE001 - no override at all: refusal() names it
        return []
    differ = []
    for override in parsed:
        key = override.key_or_group
        parts = today(key.replace("/", "."))
        if override.is_delete() or override.is_sweep_override() or parts[0] in skip:
            continue
        held: Any = config
        for part in parts:
            held = held.get(part, KeyError) if isinstance(held, dict) else KeyError
        given = override.value()
        option = _option(conf_dir, key, given) if "." not in key else None
        if option is not None:  # a group's choice
            is_global, name = option
            if held is KeyError and is_global:
                continue  # a global option (an experiment) lives at no key of its group
            if held is KeyError:
                differ.append(f"{key}={shown(given)}, the record's config has no {key}")
            elif isinstance(held, dict) and "name" in held and name is not None:
                if not same_value(name, held["name"]):
                    differ.append(f"{key}={shown(given)}, the record's {shown(held['name'])}")
            continue
        if held is KeyError:
            differ.append(f"{key}={shown(given)}, the record's config has no {'.'.join(parts)}")
        elif isinstance(given, dict | list):  # a knowledge base's formulas (COLLECTIONS)
            if _as_json(given) != _as_json(held):
                differ.append(f"{key}={shown(given)}, the record's {shown(held)}")
        elif isinstance(held, dict | list):
            continue  # a group option with no file here to name it
        elif not same_value(given, held):
            differ.append(f"{key}={shown(given)}, the record's {shown(held)}")
    return differ


def _as_json(value: Any) -> Any:
    """`value` as a record's JSON holds it (mapping keys texts), its numbers as floats."""
    return numbers_as_floats(json.loads(json.dumps(value)))


def shown(value: Any) -> str:
    """`value` as printed: its text where every character is printable, else its ascii()."""
    text = str(value)
    return text if text.isprintable() else ascii(text)


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
    unsaid_by_config = unsaid(out.get("overrides") or [], out.get("config"))
    if unsaid_by_config:  # its overrides would train another configuration than it holds
        return f"its config does not say it ran with its overrides ({unsaid_by_config[0]})"
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


def _unreadable(path: Path, dest: Path) -> str | None:
    """Why the file `path` of a background folder is not read as a record for `dest`: its
    folder a link or no plain experiment name, or it no whole run record; else None."""
    if path.parent.is_symlink() or (dest / path.parent.name).is_symlink():
        return f"{path.parent.name}: a symbolic link, not a folder of the records"
    if not plain_name(path.parent.name):
        return f"{path.parent.name!r}: no plain name for an experiment's folder"
    why = records.defect(path)
    return None if why is None else f"{path}: not a whole run record ({why})"


def harvest(
    source: Path,
    dest: Path,
    named: str,
    commit: str | None = None,
    diverged: Collection[str] = (),
    dry: bool = False,
) -> Harvest:
    """Copy the finished records under `source` that `dest` lacks (ok; failed because training
    turned non-finite, records.diverged, in the experiments `diverged` names, whose rules count
    such a seed), their records folder `named` (`dry`: name them, write nothing); ValueError
    (nothing written) when a file there is no whole record, or a new record would keep an
    absolute path, names a dirty tree or (given `commit`) another commit than the one the
    background run trained at; ValueError naming how many were written where one of them cannot
    be (`write_all`)."""
    todo: dict[Path, tuple[Path, dict[str, Any]]] = {}  # target -> (its source file, record)
    kept: list[Path] = []
    refused: list[str] = []
    for path in sorted(source.glob("*/*.json")):
        why = _unreadable(path, dest)
        if why is not None:
            refused.append(why)
            continue
        record = records.read_record(path)
        counts = path.parent.name in diverged and record is not None and records.diverged(record)
        if record is None or not (record.get("status") == "ok" or counts):
            continue  # another failure (no final evaluation) trains again
        why = migrate.hash_refusal(record, path.stem)  # edited: another configuration's numbers
        if why is not None:
            refused.append(f"{path}: {why}")
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
    return Harvest(list(todo) if dry else write_all(todo), kept)


def write_all(todo: dict[Path, tuple[Path, dict[str, Any]]]) -> list[Path]:
    """Each new record written at its target, in order; ValueError naming the one that cannot
    be (a read-only folder, a full disk) and how many were written before it (those stay)."""
    new: list[Path] = []
    for target, (_, out) in todo.items():
        try:
            new.append(records.write_record(target, out))
        except (OSError, UntrustedFile) as err:
            raise ValueError(
                f"{err}; {len(new)} of the {len(todo)} new record(s) were harvested before it "
                "(kept: a rerun harvests the rest)"
            ) from None
    return new


def named_as(dest: Path) -> str:
    """How a harvested record names its records folder `dest`: relative to the repository inside
    it, else its own path."""
    inside = dest.resolve().is_relative_to(REPO_DIR)
    return dest.resolve().relative_to(REPO_DIR).as_posix() if inside else str(dest)


def main(argv: Sequence[str] | None = None) -> int:
    """Harvest, print each new record and each kept one."""
    parser = argparse.ArgumentParser(prog="python -m dfl_bench.reproduction.harvest")
    parser.add_argument("--from", dest="source", type=Path, required=True)
    parser.add_argument("--records-dir", "--records", dest="records", type=Path)
    parser.add_argument("--commit", help="the full commit id every new record must name")
    parser.add_argument(
        "--diverged", default="", help="experiments (a,b) whose diverged records it brings too"
    )
    parser.add_argument("--dry-run", action="store_true", help="name the records, write none")
    args = parser.parse_args(argv)
    dest = args.records or REPO_DIR / cell_configs.RECORDS
    if not args.source.is_dir():
        parser.error(f"--from {args.source} is no folder")
    if args.source.resolve() == dest.resolve():
        parser.error(f"--from {args.source} is the records folder itself")
    diverged = [e for e in args.diverged.split(",") if e]
    try:
        done = harvest(args.source, dest, named_as(dest), args.commit, diverged, args.dry_run)
    except ValueError as err:
        print(f"[harvest] error: {err}", file=sys.stderr)
        return 2
    for path in done.new:
        record = {} if args.dry_run else records.read_record(path) or {}
        print(f"[harvest] {path.relative_to(dest)}: {record.get('name', 'to harvest')}")
    for path in done.kept:
        print(f"[harvest] kept {path}: another record is already there (not replaced)")
    brought = "to harvest" if args.dry_run else "new record(s)"
    print(f"[harvest] {len(done.new)} {brought} in {dest}, {len(done.kept)} kept")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
