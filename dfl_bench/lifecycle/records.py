"""Run records: one JSON per job at `<records_dir>/<experiment>/<config-hash>.json`.

The top-level fields in RECORD_FIELDS are a contract with the results module; a record is
written atomically (tmp file + os.replace) so a crashed job never leaves half a record.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dfl_bench.checks import MAX_SEED
from dfl_bench.lifecycle.file_overrides import unsettable
from dfl_bench.lifecycle.hashing import (  # noqa: F401  (read through here too)
    cell_hash,
    cell_settings,
    config_hash,
    hashed_config,
    numbers_as_floats,
    without_code,
    without_targets,
)
from dfl_bench.lifecycle.record_config import config_refusal
from dfl_bench.lifecycle.record_fields import (  # noqa: F401  (read through here too)
    MAX_TEXT,
    PATH_FIELDS,
    inside,
    one_line,
    unfit,
    unprintable_keys,
)
from dfl_bench.paths import set_aside
from dfl_bench.schema import (  # noqa: F401  (the record's fields, read through here too)
    BEST_TEST_ACCURACY,
    CELL_ASIDE,
    CODE_KEYS,
    HASHED_AS,
    METRIC_FIELDS,
    NONFINITE,
    NOT_HASHED,
    PATH_KEYS,
    RECORD_FIELDS,
    STATUSES,
    SUMMARY_FIELDS,
    TEST_ACCURACY,
    UNIT_FIELDS,
    VALIDATION_ACCURACY,
)
from dfl_bench.untrusted import UntrustedFile, plain_name, read_json, unlinked, writer


def record_path(records_dir: str | Path, experiment: str, digest: str) -> Path:
    """`<records_dir>/<experiment>/<digest>.json`."""
    return Path(records_dir) / experiment / f"{digest}.json"


def defect(path: str | Path) -> str | None:
    """Why the file at `path` is not a whole, valid run record; None when it is one or there is
    no file (asking prints nothing: the writer names what it replaces)."""
    try:
        record = read_json(path, expect=object)  # `invalid` names a value of another kind
    except FileNotFoundError:
        return None
    except UntrustedFile as err:
        return err.why
    except OSError as err:
        return f"unreadable ({err.strerror})"
    return invalid(record, Path(path))


def invalid(record: Any, path: Path | None = None) -> str | None:
    """Why `record` is not a whole run record (every RECORD_FIELDS, a known status, a config, a
    test accuracy when ok, every text in it a printable line, only fields the schema names,
    each of FIELDS' kind: a name no path, no path or path override leaving its folder, a stack
    of jobs' keys; its config and overrides what a job takes (record_config), each override a
    plain one of the configuration (`override_refusal`), its profile its config's, its config's
    seed and experiment; at `path`: its config hash, its experiment its folder's, and a
    `reused_from` not naming itself)."""
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not a run record"
    missing = [k for k in RECORD_FIELDS if k not in record]
    if missing:
        return f"lacks the fields {missing}"
    if record["status"] not in STATUSES:
        return f"status {record['status']!r} is not one of {list(STATUSES)}"
    if not isinstance(record["config"], dict):
        return "its config is not a mapping"
    measured = [record.get(key) for key in (TEST_ACCURACY, VALIDATION_ACCURACY)]
    if record["status"] == "ok" and not any(
        isinstance(a, int | float) and not isinstance(a, bool) and math.isfinite(a)
        for a in measured
    ):
        return "status ok without a test (or validation) accuracy"
    accuracy = record[TEST_ACCURACY]
    share = _unshared(record)
    if share is not None:
        return share
    profile = record["config"].get("profile") or {}
    if not isinstance(profile, dict) or not isinstance(record.get("profile") or "", str):
        return "its profile is no budget (config.profile a mapping, profile its name)"
    unprintable = next(unprintable_keys(record), None)
    if unprintable is not None:
        return f"its {unprintable!r} is no printable line of text"
    overrides = record.get("overrides") or []
    why = unfit(record) or config_refusal(record["config"], overrides)  # the key's own words first
    why = why or override_refusal(overrides)
    if why is not None:
        return why
    budget = profile.get("max_steps")
    steps = record["steps"]
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 0):
        return f"steps {steps!r} is not a whole number of steps"
    if record["status"] == "ok" and budget is not None and steps != budget:
        return f"status ok after {steps} steps, not its profile's {budget}"
    wall = record["wall_time_s"]
    if wall is not None and (
        isinstance(wall, bool) or not isinstance(wall, int | float) or not 0 <= wall < math.inf
    ):
        return f"wall_time_s {wall!r} is not a time in seconds"
    where = record.get("machine")
    if where is not None and not (
        isinstance(where, dict) and all(isinstance(v, str | None) for v in where.values())
    ):
        return f"machine {where!r} is no machine (a mapping of names, as records.machine writes)"
    best = record.get(BEST_TEST_ACCURACY)
    if record["status"] == "ok" and None not in (best, accuracy) and not best >= accuracy:
        return f"{BEST_TEST_ACCURACY} {best!r} lies below its final test accuracy {accuracy!r}"
    return _identity(record, path)


def override_refusal(overrides: Sequence[str]) -> str | None:
    """Why one of a record's `overrides` (texts: FIELDS) sets no config value, as one read from
    a file is judged (file_overrides.unsettable: a Hydra setting, a flag, an interpolation or
    escape), in one line naming it, or None; a path's `..` is FIELDS' (`inside`)."""
    for override in overrides:
        why = unsettable(override)
        if why is not None:
            return (
                f"overrides {override!r:.80} sets no config value ({why}): a record's "
                "overrides are key=value settings of the configuration"
            )
    return None


def _unshared(record: dict[str, Any]) -> str | None:
    """Why one of `record`'s UNIT_FIELDS is no share in [0, 1] (nan or absent allowed), or None."""
    for key in UNIT_FIELDS:
        value = record.get(key)
        if isinstance(value, bool) or (value is not None and not isinstance(value, int | float)):
            return f"{key} {value!r} is not a number"
        if value is not None and not math.isnan(value) and not 0 <= value <= 1:
            return f"{key} {value!r} lies outside [0, 1] (a share, never a percent)"
    return None


def _identity(record: dict[str, Any], path: Path | None) -> str | None:
    """Why `record`'s seed, profile, experiment, hash or source do not name it, or None."""
    seed = record["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        return f"seed {seed!r} is not a seed (an integer in [0, {MAX_SEED}], as a job's)"
    experiment = record.get("experiment")
    if experiment is not None and not plain_name(experiment):
        return f"experiment {experiment!r:.80} is no experiment's name (a plain one: a folder)"
    if record["config"].get("seed", seed) != seed:
        return f"seed {seed!r} is not its config's seed {record['config'].get('seed')!r}"
    named = (record.get("profile"), (record["config"].get("profile") or {}).get("name"))
    if None not in named and named[0] != named[1]:  # its table's and its budget's
        return f"profile {named[0]!r:.80} is not its config's {named[1]!r:.80}"
    own = record["config"].get("experiment_name")
    if None not in (experiment, own) and experiment != own:  # its folder's and its job's
        return f"experiment {experiment!r:.80} is not its config's experiment_name {own!r:.80}"
    if path is not None:
        if record.get("config_hash", path.stem) != path.stem:
            return f"says config hash {record['config_hash']}, not its file name {path.name}"
        if experiment is not None and experiment != path.parent.name:
            return f"says experiment {experiment!r}, not its folder {path.parent.name!r}"
        if record.get("reused_from") == f"{path.parent.name}/{path.name}":
            return "reused_from names itself, so no record says it was trained"
    return None


def read_record(path: str | Path) -> dict[str, Any] | None:
    """The whole, valid record at `path`, or None when there is none (`defect` says why)."""
    if defect(path) is not None:
        return None
    try:
        return read_json(path)
    except (FileNotFoundError, UntrustedFile):
        return None


def holds_own(record: Mapping[str, Any], path: str | Path) -> bool:
    """Whether `record`'s config hashes to `path`'s file name (a file name is no proof: a record
    copied or planted under another configuration's hash names a run that this one is not)."""
    config = record.get("config")
    return isinstance(config, Mapping) and config_hash(config) == Path(path).stem


def diverged(record: Mapping[str, Any]) -> bool:
    """Whether `record` failed because its training turned non-finite (its reason begins with
    NONFINITE): the seed's own outcome, which a rerun repeats; not an interruption."""
    reason = record.get("reason")
    failed = record.get("status") == "failed"
    return failed and isinstance(reason, str) and reason.startswith(NONFINITE)


def is_done(path: str | Path) -> bool:
    """Whether the record at `path` is a whole, valid record of an ok job whose config hashes to
    its file name (a rerun skips it)."""
    record = read_record(path)
    return record is not None and record.get("status") == "ok" and holds_own(record, path)


def find_done(records_dir: str | Path, path: str | Path) -> Path | None:
    """An ok record that really trained (no `reused_from`) in another experiment's folder whose
    file name and config both hash to `path`'s name."""
    path = Path(path)
    for other in sorted(Path(records_dir).glob(f"*/{path.name}")):
        linked = other.parent.is_symlink()  # a folder that is a link holds no run of this folder
        record = read_record(other) if other.parent != path.parent and not linked else None
        if (
            record
            and record["status"] == "ok"
            and not record.get("reused_from")
            and holds_own(record, path)  # its config, not only its name
        ):
            return other
    return None


def reuse_done(records_dir: str | Path, path: str | Path, **job: Any) -> dict[str, Any] | None:
    """If another experiment already trained this configuration, write a copy of its record for
    this job at `path` and return it (the job need not train); else None: its results, the job's
    identity (`job`: experiment, name, row, config, overrides) and `reused_from` (the trained
    record's path under records_dir)."""
    source = find_done(records_dir, path)
    if source is None:
        return None
    relative = source.relative_to(records_dir).as_posix()
    record = {**(read_record(source) or {}), **job, "reused_from": relative}
    write_record(path, record)
    return record


class RecordNotWritten(OSError):
    """A finished job's record could not be written (its checkpoint is kept: a rerun writes it)."""


def write_record(path: str | Path, record: Mapping[str, Any]) -> Path:
    """Write `record` as JSON atomically (`untrusted.writer`: a temporary, then os.replace); a file
    at `path` that is no valid record, or a record of another configuration than `record`'s, is
    kept beside it as `<name>.invalid` (`.invalid.1`, ... where one is: paths.set_aside), and
    named."""
    missing = [k for k in RECORD_FIELDS if k not in record]
    if missing:
        raise ValueError(f"run record lacks the contract fields {missing}")
    if record["status"] not in STATUSES:
        raise ValueError(f"record status {record['status']!r} is not one of {list(STATUSES)}")
    path = unlinked(Path(path))  # a linked folder or file would write elsewhere
    path.parent.mkdir(parents=True, exist_ok=True)
    why = defect(path)
    if why is None:
        why = _another_configuration(path, record)
    if why is not None:
        aside = set_aside(path, "invalid")  # `.invalid`, else `.invalid.1`, ...: none replaced
        print(f"[dfl_bench] {path} was not a run record ({why}); kept as {aside}", file=sys.stderr)
    with writer(path) as f:  # a temporary put in place whole (a full disk: NotWritten)
        json.dump(strict(record), f, indent=2, sort_keys=True, allow_nan=False)
        f.write("\n")
    return path


def _another_configuration(path: Path, record: Mapping[str, Any]) -> str | None:
    """Why the valid record at `path` is of another configuration than `record` (its config
    hashes elsewhere: replacing it would lose that run), or None (also when there is none)."""
    try:
        old = read_json(path)
    except (OSError, UntrustedFile):
        return None
    ours = record.get("config")
    theirs = old.get("config") if isinstance(old, Mapping) else None
    if not (isinstance(ours, Mapping) and isinstance(theirs, Mapping)):
        return None
    if config_hash(theirs) == config_hash(ours):
        return None
    return f"its config hashes to {config_hash(theirs)}: another configuration's run"


def strict(value: Any) -> Any:
    """`value` with every NaN or infinite float replaced by None (strict JSON, RFC 8259)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict(v) for v in value]
    return value


def portable(record: Mapping[str, Any], bases: Sequence[str | Path]) -> dict[str, Any]:
    """`record` with its machine paths (PATH_FIELDS) relative to the first of `bases` that
    holds them, so a committed record names no home folder; paths elsewhere stay absolute; a
    path with a `..` part (and an override setting one) is first resolved from the first base,
    where the job ran (the record's reader refuses a path leaving its folder: `inside`)."""
    out = json.loads(json.dumps(record, default=str))
    for field in PATH_FIELDS:
        *parents, key = field.split(".")
        node = out
        for parent in parents:
            node = node.get(parent) if isinstance(node, dict) else None
        if isinstance(node, dict) and isinstance(node.get(key), str):
            node[key] = _relative(node[key], bases)
    if isinstance(out.get("overrides"), list):
        out["overrides"] = [_portable_override(o, bases) for o in out["overrides"]]
    return out


QUOTES = "'\""  # around an override's value (Hydra's quoting)


def _portable_override(override: Any, bases: Sequence[str | Path]) -> Any:
    """`override`, but one setting a path (PATH_KEYS) with a `..` part resolved (`_relative`)."""
    setting, _, given = override.partition("=") if isinstance(override, str) else ("", "", "")
    if setting.lstrip("+~") not in PATH_KEYS or inside(given):
        return override
    return f"{setting}={_relative(given.strip(QUOTES), bases)}"


def _relative(path: str, bases: Sequence[str | Path]) -> str:
    """`path` relative to the first base that contains it, else unchanged; one with a `..` part
    is first resolved, from the first base where it is relative."""
    if not inside(path) and bases:
        path = str(Path(bases[0], path).resolve())
    if not os.path.isabs(path):
        return path
    for base in bases:
        resolved = Path(base).resolve()
        if Path(path).resolve().is_relative_to(resolved):
            return str(Path(path).resolve().relative_to(resolved))
    return path


def make_record(
    *,
    status: str,
    reason: str | None,
    config: Mapping[str, Any],
    summary: Mapping[str, Any],
    **extra: Any,
) -> dict[str, Any]:
    """Assemble a record: the contract fields (metrics from `summary`, None when absent) + extra."""
    record: dict[str, Any] = {k: summary.get(k) for k in SUMMARY_FIELDS}
    record.update(summary)
    record.update(
        status=status,
        reason=None if reason is None else one_line(reason),  # its reader's: `invalid`
        config=dict(config),
        seed=config.get("seed"),
        profile=config.get("profile", {}).get("name"),
    )
    record.update(extra)
    for key in RECORD_FIELDS:
        record.setdefault(key, None)
    return record
