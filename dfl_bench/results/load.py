"""Run records (dfl_bench/lifecycle/records.py) -> one flat pandas DataFrame, one row per record."""

from __future__ import annotations

import json
import math
import subprocess
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from dfl_bench.kinds import KINDS
from dfl_bench.lifecycle.migrate import migrate_config
from dfl_bench.lifecycle.records import METRIC_FIELDS, cell_hash, config_hash, invalid
from dfl_bench.schema import IDENTITY_FIELDS, TASK_FIELDS, split_seed_of
from dfl_bench.untrusted import UntrustedFile, read_json

METRICS = METRIC_FIELDS
BASE_COLUMNS = (
    *IDENTITY_FIELDS,
    "split_seed",
    *KINDS,
    "kb",
    "formulas",
    "w_dfl",
    "optimizer",
    "lr",
    "steps",
    *METRICS,
    *TASK_FIELDS,
    "git_commit",
    "wall_time_s",
    "machine",
    "finished",
    "reused_from",
    "provenance",
    "configuration",
    "run",
    "config",
    "path",
    "twin",
    "twin_why",
    "twin_accuracy",
)


class RecordWarning(UserWarning):
    """A record file that could not be read (it is skipped, never changed)."""


def load_records(records_dir: str | Path) -> pd.DataFrame:
    """Every run record under `records_dir` (recursive) as one flat row, each run (experiment,
    configuration, seed and split seed) counted once, from `<experiment>/<config-hash>.json`.
    A file that is no whole, valid record (records.invalid) is skipped with a RecordWarning
    naming it; copies and misnamed records are named in one RecordWarning and never counted.
    Old records with NaN metrics load as NaN."""
    root = Path(records_dir)
    rows = []
    for path in sorted(root.rglob("*.json")):
        if path.name.startswith("."):
            continue
        try:
            record = read_json(path, expect=object)  # `invalid` names another kind
            why = invalid(record)
            if why is not None:
                raise ValueError(f"not a run record ({why})")
            rows.append(flatten(record, path))
        except (OSError, UnicodeDecodeError, ValueError, TypeError, AttributeError) as err:
            why = err.why if isinstance(err, UntrustedFile) else err
            warnings.warn(f"skipping unreadable record {path}: {why}", RecordWarning, stacklevel=2)
    rows, aside = counted_once(rows, root)
    if aside:
        warnings.warn(
            f"{len(aside)} record file(s) not counted (a run counts once, from "
            f"<experiment>/<config-hash>.json under {root}): " + "; ".join(aside),
            RecordWarning,
            stacklevel=2,
        )
    frame = pd.DataFrame(rows)
    extra = [c for c in frame.columns if c not in BASE_COLUMNS]
    frame = frame.reindex(columns=[*BASE_COLUMNS, *sorted(extra)])
    for column in (*METRICS, *TASK_FIELDS, "steps", "wall_time_s", "w_dfl", "lr"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return twins(in_seed_order(frame))


def in_seed_order(frame: pd.DataFrame) -> pd.DataFrame:
    """The records by experiment, profile, row and seed (then file), not by file name: a cell's
    runs read in seed order whatever their files are called (a hash)."""
    named = ("experiment", "profile", "row")
    return frame.sort_values(
        ["experiment", "profile", "row", "seed", "path"],
        key=lambda column: column.astype(str) if column.name in named else column,
        na_position="last",
        kind="stable",
    ).reset_index(drop=True)


def twins(frame: pd.DataFrame) -> pd.DataFrame:
    """Each record keeps its own numbers; where a run (configuration, seed and split seed, at one
    profile) has several ok records that trained to different numbers (a GPU run of one seed is
    not deterministic; a record from elsewhere may claim anything), each of them names another
    in column `twin` (relative to the records folder), with that one's final accuracy
    (`twin_accuracy`) and why they may differ (`twin_why`), and a RecordWarning names them: a
    run counts once, with one record in every table (`pooled`): the one git added first
    (`twin_counted`; a rule no file's content can change; one commit's, and the untracked ones
    after the tracked, by their path), the others named."""
    frame = frame.assign(twin=None, twin_why=None, twin_accuracy=None, twin_counted=None)
    if frame.empty:
        return frame
    ok = frame[(frame["status"] == "ok") & frame["seed"].notna() & frame["reused_from"].isna()]
    for _, trained in ok.groupby(["configuration", "seed", "split_seed", "profile"]):
        numbers = trained[list(METRICS)].astype(float)
        if len(trained) < 2 or (numbers.nunique(dropna=False) <= 1).all():
            continue  # one run, or trained alike (a CPU run is deterministic)
        first = min(trained.index, key=lambda i: (git_added(trained.at[i, "path"]),
                                                  str(trained.at[i, "path"])))  # fmt: skip
        for index, row in trained.iterrows():
            other = trained.loc[first] if index != first else trained.drop(index).iloc[0]
            frame.at[index, "twin"] = f"{other['experiment']}/{other['run']}.json"
            frame.at[index, "twin_why"] = why_apart(other, row)
            frame.at[index, "twin_accuracy"] = other[METRICS[0]]
            frame.at[index, "twin_counted"] = index == first
        chosen = trained.at[first, "path"]
        warnings.warn(
            f"{', '.join(sorted(trained['path']))}: one configuration and seed trained to "
            f"different numbers ({frame.at[trained.index[0], 'twin_why']}); every table counts "
            f"{chosen} (the first git added) and names the other",
            RecordWarning,
            stacklevel=2,
        )
    return frame


def git_added(path: str | Path) -> float:
    """When git first added the file at `path` (seconds since the epoch), inf where git does
    not track it (or there is no git): the order of records no file's content can change."""
    path = Path(path).resolve()
    try:
        done = subprocess.run(
            ["git", "log", "--diff-filter=A", "--format=%at", "--", path.name],
            cwd=path.parent, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return math.inf
    stamps = [int(t) for t in done.stdout.split() if t.isdigit()]
    return float(min(stamps)) if done.returncode == 0 and stamps else math.inf


def pooled(frame: pd.DataFrame, configuration: str, profile: str, home: str) -> pd.DataFrame:
    """Every run (seed and split seed: CELL_ASIDE) of one configuration at `profile`, wherever
    it is shown (a table's own folder or another experiment's that trained it), once: the
    record in `home`'s folder first, then an ok one, then the first finished; reused copies
    only where no record trained that run. A run trained apart to other numbers counts in
    every table with one record, the one `twins` counts (the other named)."""
    runs = frame[(frame["configuration"] == configuration) & (frame["profile"] == profile)]
    if runs.empty:
        return runs
    order = runs.assign(
        _uncounted=runs.get("twin_counted", pd.Series(None, index=runs.index)).ne(True),
        _away=runs["experiment"] != home,
        _failed=runs["status"] != "ok",
        _copy=runs["reused_from"].notna(),
    ).sort_values(
        ["_uncounted", "_away", "_failed", "_copy", "finished", "path"], na_position="last"
    )
    kept = order.drop_duplicates(["seed", "split_seed"][: 1 + ("split_seed" in order)])
    kept = pd.concat([kept[kept["seed"].notna()], order[order["seed"].isna()]])
    return kept.drop(columns=["_uncounted", "_away", "_failed", "_copy"]).sort_index()


def uses_gpu(row: pd.Series) -> bool:
    """Whether a record's run trained on a GPU (its config's `trainer.accelerator`)."""
    config = row["config"] if isinstance(row["config"], dict) else {}
    return (config.get("trainer") or {}).get("accelerator") not in (None, "cpu")


def why_apart(first: pd.Series, other: pd.Series) -> str:
    """Why two runs of one configuration and seed may give different numbers: a GPU run is not
    deterministic; two CPU runs differ only in their code (commits) or machine.

    >>> row = pd.Series({"config": {}, "git_commit": "a", "machine": float("nan")})
    >>> why_apart(row, row)
    'two CPU runs of one commit and machine'
    """
    if uses_gpu(first) or uses_gpu(other):
        return "a GPU run of one seed is not deterministic"

    def named(value: Any) -> str:  # a record names its commit and machine in text, or none
        return value if isinstance(value, str) else "unknown"  # (None, or NaN in the frame)

    parts = [
        f"{name} {named(first[column])} vs {named(other[column])}"
        for name, column in (("commits", "git_commit"), ("machines", "machine"))
        if named(first[column]) != named(other[column])
    ]
    return (
        "two CPU runs, " + ", ".join(parts) if parts else "two CPU runs of one commit and machine"
    )


def counted_once(rows: list[dict[str, Any]], root: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows read from their own place (`<root>/<experiment>/<run>.json`, `run` the config
    hash with the seed), and one line for every other file: a copy of a counted run, or a record
    whose name or folder is not its content's (it would add a run no job wrote there)."""

    def own(row: dict[str, Any]) -> Path:
        return root / str(row["experiment"]) / f"{row['run']}.json"

    counted = {own(row) for row in rows if Path(row["path"]) == own(row)}
    aside = []
    for row in rows:
        path, place = Path(row["path"]), own(row)
        if path == place:
            continue
        where, name = place.relative_to(root).as_posix(), path.relative_to(root).as_posix()
        if migrate_config(row["config"]) != row["config"]:
            aside.append(
                f"{name} is in an older form, read as today's {where} (rewrite it there in "
                "today's form: lifecycle.migrate.migrate_record)"
            )
        elif place in counted:
            aside.append(f"{name} is a copy of {where}")
        else:
            aside.append(f"{name} holds the run of {where}, not at its place")
    return [row for row in rows if Path(row["path"]) == own(row)], aside


def flatten(record: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """One record as flat columns: operator names and `<kind>.<param>`, knowledge base, metrics."""
    config = record["config"]
    kb = config.get("kb") or {}
    optimizer = config.get("optimizer") or {}
    row: dict[str, Any] = {
        "experiment": record.get("experiment") or config.get("experiment_name") or path.parent.name,
        "row": config.get("row", record.get("row")),
        "seed": record.get("seed", config.get("seed")),
        "split_seed": split_seed_of(config),  # with the seed, a run of its cell
        "profile": record.get("profile") or (config.get("profile") or {}).get("name"),
        "status": record.get("status"),
        "reason": record.get("reason"),
        "kb": kb.get("name"),
        "formulas": _text(kb.get("formulas")),
        "w_dfl": kb.get("w_dfl"),
        "optimizer": optimizer.get("name"),
        "lr": optimizer.get("lr"),
        "steps": record.get("steps"),
        "git_commit": record.get("git_commit"),
        "wall_time_s": record.get("wall_time_s"),
        "machine": machine_name(record),
        "finished": record.get("finished"),
        "reused_from": _text(record.get("reused_from")),
        "provenance": config.get("provenance"),
        "configuration": cell_hash(config),
        "run": config_hash(config),
        "config": config,
        "path": str(path),
    }
    row.update({metric: record.get(metric) for metric in METRICS})
    row.update({field: record.get(field) for field in TASK_FIELDS})
    for kind in KINDS:
        spec = config.get(kind) or {}
        row[kind] = spec.get("name")
        row.update({f"{kind}.{k}": v for k, v in spec.items() if k != "name"})
    return row


def machine_name(record: Mapping[str, Any]) -> str | None:
    """The machine a record trained on, `AMD EPYC (AVX2)` or its GPU; None where the record
    does not name it (made before records did)."""
    machine = record.get("machine") or {}
    if machine.get("gpu"):
        return str(machine["gpu"])
    if machine.get("cpu"):
        return f"{machine['cpu']} ({machine.get('cpu_capability')})"
    return None


def _text(value: Any) -> str | None:
    """Lists and mappings as compact JSON text (hashable, printable); None stays None."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)
