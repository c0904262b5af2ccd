"""Run records (dfl_bench/lifecycle/records.py) -> one flat pandas DataFrame, one row per record."""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from dfl_bench.lifecycle.records import METRIC_FIELDS, cell_hash, invalid
from dfl_bench.operators import KINDS

METRICS = METRIC_FIELDS
BASE_COLUMNS = (
    "experiment",
    "row",
    "seed",
    "profile",
    "status",
    "reason",
    *KINDS,
    "problem",
    "formulas",
    "w_dfl",
    "optimizer",
    "lr",
    "steps",
    *METRICS,
    "git_commit",
    "wall_time_s",
    "finished",
    "reused_from",
    "provenance",
    "configuration",
    "config",
    "path",
)


class RecordWarning(UserWarning):
    """A record file that could not be read (it is skipped, never changed)."""


def load_records(records_dir: str | Path) -> pd.DataFrame:
    """Every `*.json` record under `records_dir` (recursive) as one flat row; a file that is no
    whole, valid record (records.invalid) is skipped with a RecordWarning naming it. Old records
    with NaN metrics load as NaN."""
    rows = []
    for path in sorted(Path(records_dir).rglob("*.json")):
        if path.name.startswith("."):
            continue
        try:
            record = json.loads(path.read_text())
            why = invalid(record)
            if why is not None:
                raise ValueError(f"not a run record ({why})")
            rows.append(flatten(record, path))
        except (OSError, UnicodeDecodeError, ValueError, TypeError, AttributeError) as err:
            warnings.warn(f"skipping unreadable record {path}: {err}", RecordWarning, stacklevel=2)
    frame = pd.DataFrame(rows)
    extra = [c for c in frame.columns if c not in BASE_COLUMNS]
    frame = frame.reindex(columns=[*BASE_COLUMNS, *sorted(extra)])
    for column in (*METRICS, "steps", "wall_time_s", "w_dfl", "lr"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame


def flatten(record: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """One record as flat columns: operator names and `<kind>.<param>`, problem, metrics."""
    config = record["config"]
    problem = config.get("problem") or {}
    optimizer = config.get("optimizer") or {}
    row: dict[str, Any] = {
        "experiment": record.get("experiment") or config.get("experiment_name") or path.parent.name,
        "row": config.get("row", record.get("row")),
        "seed": record.get("seed", config.get("seed")),
        "profile": record.get("profile") or (config.get("profile") or {}).get("name"),
        "status": record.get("status"),
        "reason": record.get("reason"),
        "problem": problem.get("name"),
        "formulas": _text((problem.get("kb") or {}).get("formulas")),
        "w_dfl": problem.get("w_dfl"),
        "optimizer": optimizer.get("name"),
        "lr": optimizer.get("lr"),
        "steps": record.get("steps"),
        "git_commit": record.get("git_commit"),
        "wall_time_s": record.get("wall_time_s"),
        "finished": record.get("finished"),
        "reused_from": _text(record.get("reused_from")),
        "provenance": config.get("provenance") or record.get("provenance"),
        "configuration": cell_hash(config),
        "config": config,
        "path": str(path),
    }
    row.update({metric: record.get(metric) for metric in METRICS})
    for kind in KINDS:
        spec = config.get(kind) or {}
        row[kind] = spec.get("name")
        row.update({f"{kind}.{k}": v for k, v in spec.items() if k != "name"})
    return row


def _text(value: Any) -> str | None:
    """Lists and mappings as compact JSON text (hashable, printable); None stays None."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)
