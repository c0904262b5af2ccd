"""Records of one experiment and profile grouped into the paper's cells (mean, std, n)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd

from dfl_bench.lifecycle.records import CELL_ASIDE, cell_settings, without_code
from dfl_bench.results import probes
from dfl_bench.results.cell_configs import cell_config, cell_digest
from dfl_bench.results.load import pooled
from dfl_bench.results.paper import (
    COLUMN_FIELDS,
    COLUMNS,
    SELECTED_ACCURACY,
    PaperCell,
    PaperTable,
    cell_key,
    load_paper,
)
from dfl_bench.schema import GRADIENT_REACHED
from dfl_bench.tasks import PAPER_TASK

KEY_COLUMNS = {"kb.name": "kb"}
SEEDS = CELL_ASIDE  # a cell's runs differ in these only


@dataclass(frozen=True)
class Ours:
    """This reproduction's value of one cell: ok/failed counts, mean/std/n per column over seeds
    (accuracy: the final one), the best of the evaluations beside it (selected on the test set),
    and which runs collapsed (final accuracy below `collapse_below`)."""

    n_ok: int
    n_failed: int
    mean: dict[str, float | None]
    std: dict[str, float | None]
    n: dict[str, int]
    best: tuple[float | None, float | None]  # mean, std of the best evaluation's accuracy (%)
    commits: tuple[str, ...]
    reasons: tuple[str, ...]
    notes: tuple[str, ...]
    values: dict[str, tuple[float, ...]] = field(default_factory=dict)  # per column, per seed
    configuration: str | None = None  # the cell's config hash, seeds aside (one per cell)
    collapsed: dict[str, tuple[bool, ...]] = field(default_factory=dict)  # per column, per seed
    best_values: tuple[float, ...] = ()  # the best evaluation's accuracy per seed (%)
    seed_ids: dict[str, tuple[int, ...]] = field(default_factory=dict)  # per column: `values`'

    @property
    def n_collapsed(self) -> int:
        """How many of the ok runs collapsed."""
        return sum(self.collapsed.get("accuracy", ()))

    def number(self, column: str) -> float | None:
        """The mean of `column` (accuracy in %), None when missing, failed or undefined."""
        return self.mean[column]

    def undefined(self, column: str) -> bool:
        """Whether every ok run left `column` undefined (e.g. cu_ant under I_G)."""
        return self.n_ok > 0 and self.n[column] == 0


@dataclass(frozen=True)
class Variant:
    """Runs of a row in another configuration than the cell's: their records, the note saying
    how they differ, the settings that differ."""

    records: pd.DataFrame
    note: str
    differs: tuple[str, ...]


@dataclass(frozen=True)
class Row:
    """One printed row: its label and, per column group, the paper's cell and ours."""

    label: str
    cells: tuple[tuple[PaperCell | None, Ours | None], ...]
    extra: bool = False


@dataclass(frozen=True)
class Table:
    """One experiment at one profile, in the paper's layout (plus rows the paper does not print)."""

    paper: PaperTable
    profile: str
    rows: list[Row]
    records: pd.DataFrame
    mixed_commits: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Cells of several commits: whether those train the cell alike (commit_probe.verdict).
    probes: dict[str, bool | None] = field(default_factory=dict)

    def pairs(self) -> dict[str, tuple[PaperCell, Ours | None]]:
        """Each distinct config row once (a shared row fills two cells): paper cell and ours."""
        out: dict[str, tuple[PaperCell, Ours | None]] = {}
        for row in self.rows:
            for paper, ours in row.cells:
                if paper is not None and paper.key is not None:
                    out.setdefault(paper.key, (paper, ours))
        return out

    def own_records(self, key: str) -> pd.DataFrame:
        """The records of row `key`'s cell (its configuration), none for a row without one."""
        ours = self.ours().get(key)
        return self.records[self.records["configuration"] == (ours and ours.configuration)]

    def task(self, key: str) -> Any:
        """The task setting (config `task`) of row `key`'s records; None without records.
        Rows of two task settings (one digit, two) are not compared."""
        return task_of(self.own_records(key))

    def comparable(self, key: str, other: str) -> bool:
        """Whether rows `key` and `other` have one task setting (a row without records: yes)."""
        tasks = self.task(key), self.task(other)
        return None in tasks or tasks[0] == tasks[1]

    def ours(self) -> Mapping[str, Ours]:
        """Our cells by config row (extra rows included)."""
        return self._ours

    @cached_property
    def _ours(self) -> Mapping[str, Ours]:
        out: dict[str, Ours] = {}
        for row in self.rows:
            for paper, ours in row.cells:
                key = paper.key if paper is not None else row.label
                if ours is not None and key is not None:
                    out.setdefault(key, ours)
        return MappingProxyType(out)

    def commits(self) -> list[str]:
        """The git commits the table's records come from."""
        return sorted(self.records["git_commit"].dropna().astype(str).unique())


def record_keys(records: pd.DataFrame, paper: PaperTable) -> pd.Series:
    """The paper row of each record: its `row`, or the swept value (`implication.s`, ...)."""
    if paper.key is None:
        return pd.Series([paper.keys()[0]] * len(records), index=records.index, dtype=object)
    column = KEY_COLUMNS.get(paper.key, paper.key)
    if column not in records:
        return pd.Series([None] * len(records), index=records.index, dtype=object)
    return records[column].map(cell_key)


def build_table(
    paper: PaperTable,
    frame: pd.DataFrame,
    profile: str,
    repo: Path,
    collapse_below: float | None = None,
    grouped: Grouped | None = None,
) -> Table:
    """The experiment's records at `profile` in the paper's cells (`group_rows`; `grouped`: what
    it gave for these arguments, which no collapse line moves); a run whose final accuracy (%)
    is below `collapse_below` collapsed (COLLAPSE_POINTS under the baseline)."""
    records, groups, variants = grouped or group_rows(paper, frame, profile)
    floors = task_floors(paper, groups, collapse_below)
    cells_of = {
        key: summarize(group, collapse_below=floors(group)) for key, group in groups.items()
    }
    cells_of.update(
        {
            label: summarize(v.records, (v.note,), v.differs, floors(v.records))
            for label, v in variants.items()
        }
    )
    rows = [
        Row(label, tuple((cell, cells_of.get(cell.key)) for cell in cells))
        for label, cells in paper.rows
    ]
    known = set(paper.keys())
    for key in sorted(set(groups) - known - set(variants), key=_sort_key):
        rows.append(Row(key, ((None, cells_of[key]),), extra=True))
    rows += [Row(label, ((None, cells_of[label]),), extra=True) for label in variants]
    alike_at = {
        key: probes.verdict(repo, ours.configuration, ours.commits)
        for key, ours in cells_of.items()
        if len(ours.commits) > 1
    }
    mixed = {
        key: cells_of[key].commits
        for key, alike in alike_at.items()
        if alike is not True
        and probes.training_code_changed(cells_of[key].commits, repo) is not False
    }
    shown = pd.concat([records, *groups.values()]).drop_duplicates("path") if groups else records
    return Table(paper, profile, rows, shown, mixed_commits=mixed, probes=alike_at)


Grouped = tuple[pd.DataFrame, dict[str, pd.DataFrame], dict[str, Variant]]  # group_rows'


def group_rows(paper: PaperTable, frame: pd.DataFrame, profile: str) -> Grouped:
    """The experiment's records at `profile` (no other profile) and each row's runs: one
    configuration per cell (`configurations`), a declared row's every run of its configuration
    in any folder once (`pooled`: none where no record at `profile` has it), and its others."""
    records = frame[(frame["experiment"] == paper.experiment) & (frame["profile"] == profile)]
    keys = trained_rows(paper, profile, records, record_keys(records, paper))
    held = set(frame.loc[frame["profile"] == profile, "configuration"])
    groups: dict[str, pd.DataFrame] = {}
    variants: dict[str, Variant] = {}
    declared = set(paper.keys())
    for key in sorted({*keys.dropna().unique(), *declared}, key=_sort_key):
        own = records[keys == key]
        main, others = configurations(paper, profile, key, own) if len(own) else (own, {})
        digest = row_configuration(paper, profile, key) if key in declared else None
        if digest is not None:  # every run of the row's configuration, in any folder, once
            main = pooled(frame, digest, profile, paper.experiment) if digest in held else own[:0]
        if not main.empty:
            groups[key] = main
        groups.update({label: variant.records for label, variant in others.items()})
        variants.update(others)
    return records, groups, variants


def task_floors(
    paper: PaperTable, groups: dict[str, pd.DataFrame], paper_floor: float | None
) -> Callable[[pd.DataFrame], float | None]:
    """The collapse line of a cell's runs: the paper's task's (`paper_floor`, under the
    supervised baseline); another task's, COLLAPSE_POINTS under the mean final accuracy of the
    table's reference row of the same task setting (None without one: nothing collapses)."""
    references: dict[str, float] = {}
    for key in paper.references:
        group = groups.get(key)
        ok = None if group is None else group[group["status"] == "ok"]
        if ok is not None and not ok.empty:
            final = pd.to_numeric(ok[COLUMN_FIELDS["accuracy"]], errors="coerce").dropna() * 100
            if len(final):
                references.setdefault(_task_text(ok), float(final.mean()) - COLLAPSE_POINTS)

    def floor(records: pd.DataFrame) -> float | None:
        task = _task_text(records)
        return paper_floor if task is None else references.get(task)

    return floor


def task_of(records: pd.DataFrame) -> Any:
    """The task setting (config `task`) of a cell's records; None without records."""
    if records.empty:
        return None
    return without_code(records["config"].iloc[0])["task"]


def _task_text(records: pd.DataFrame) -> str | None:
    """The task setting of a cell's records as text; None for the paper's task (or none)."""
    task = task_of(records)
    return None if task in (None, PAPER_TASK) else json.dumps(task, sort_keys=True)


def trained_rows(
    paper: PaperTable, profile: str, records: pd.DataFrame, keys: pd.Series
) -> pd.Series:
    """Each record's row: the one whose configuration it trained (`row=product_sum
    task.digits=2` counts for the row that is that configuration), else its own."""
    if paper.key is None or records.empty:
        return keys
    expected = {
        key: digest
        for key in paper.keys()
        if (digest := row_configuration(paper, profile, key)) is not None
    }
    owners: dict[str, list[str]] = {}
    for key, digest in expected.items():
        owners.setdefault(digest, []).append(key)
    moved = [
        owners[digest][0]
        if expected.get(key) != digest and len(owners.get(digest, [])) == 1
        else key
        for key, digest in zip(keys, records["configuration"], strict=True)
    ]
    return pd.Series(moved, index=keys.index, dtype=object)


def row_configuration(paper: PaperTable, profile: str, key: str) -> str | None:
    """The config hash (seeds aside) row `key` trains at `profile` today; None when its config
    does not compose."""
    return cell_digest(paper.experiment, profile, paper.key, key)


def configurations(
    paper: PaperTable, profile: str, key: str, records: pd.DataFrame
) -> tuple[pd.DataFrame, dict[str, Variant]]:
    """One row's records split by configuration (the config hash, seeds aside): the cell's own
    (the experiment's configuration at `profile` today; the only one when that does not
    compose), and each other one by its label (`row, key=value`: how it differs), even when it
    is the row's only configuration; never averaged together."""
    expected = cell_config(paper.experiment, profile, paper.key, key)
    if expected is None and records["configuration"].nunique() <= 1:
        return records, {}  # no configuration to hold them to: the row's only one
    own = row_configuration(paper, profile, key)
    others: dict[str, Variant] = {}
    for digest, group in records[records["configuration"] != own].groupby("configuration"):
        diff = {} if expected is None else differences(expected, group["config"].iloc[0])
        shown = [f"{k}={v}" for k, v in list(diff.items())[:3]]
        shown += [f"+{len(diff) - 3} more"] if len(diff) > 3 else []
        text = ", ".join(shown) or f"config {digest}"
        note = f"another configuration than row `{key}` ({text}): not averaged with row `{key}`"
        others[f"{key}, {text}"] = Variant(group, note, tuple(diff))
    return records[records["configuration"] == own], others


def differences(expected: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Each hashed setting (dotted key, seeds and classes aside: `cell_hash`) where `config`
    differs from `expected`, with its value in `config`."""
    want, have = (_flat(cell_settings(c)) for c in (expected, config))
    keys = [k for k in sorted(want.keys() | have.keys()) if k not in SEEDS]
    return {k: have.get(k) for k in keys if want.get(k) != have.get(k)}


def _flat(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested config as dotted keys."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, dict) and value:
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


COLLAPSE_POINTS = 5.0  # a run collapsed: final accuracy this many points below the baseline's mean


def collapse_threshold(
    frame: pd.DataFrame, profile: str, points: float = COLLAPSE_POINTS
) -> float | None:
    """The final accuracy (%) below which a run of `profile` collapsed: `points` (the rule:
    COLLAPSE_POINTS) under the mean final accuracy of the supervised baseline's cell's ok runs
    at that profile (`row_runs`; None without them: nothing is called collapsed)."""
    runs = row_runs(frame, *BASELINE, profile)
    if runs.empty:
        return None
    ok = runs.loc[runs["status"] == "ok", COLUMN_FIELDS["accuracy"]]
    values = pd.to_numeric(ok, errors="coerce").dropna() * 100
    return float(values.mean()) - points if len(values) else None


def row_runs(frame: pd.DataFrame, experiment: str, row: str, profile: str) -> pd.DataFrame:
    """The runs of `experiment`'s row `row` at `profile` its table's cell counts: every run of
    the row's configuration (`row_configuration`), once a seed (`pooled`); none without one."""
    if frame.empty:
        return frame
    digest = row_configuration(load_paper().tables[experiment], profile, row)
    return frame.iloc[:0] if digest is None else pooled(frame, digest, profile, experiment)


BASELINE = ("baseline", "ce_pair")  # the supervised baseline's cell
# the record columns a cell's summary reads: each table column's, the best evaluation's
CELL_FIELDS = tuple(dict.fromkeys([*(COLUMN_FIELDS[c] for c in COLUMNS), SELECTED_ACCURACY]))


def summarize(
    records: pd.DataFrame,
    notes: tuple[str, ...] = (),
    overridden: tuple[str, ...] = (),
    collapse_below: float | None = None,
) -> Ours:
    """Mean, sample std and n of each column over the ok records (accuracy in %: the final
    one), the best evaluation's mean and std, each run's collapse (final accuracy below
    `collapse_below`), with `notes` before the provenance notes (but those of the `overridden`
    settings)."""
    ok = records.loc[records["status"] == "ok", list(CELL_FIELDS)]  # masks copy each column
    final = pd.to_numeric(ok[COLUMN_FIELDS["accuracy"]], errors="coerce") * 100
    fell = final < collapse_below if collapse_below is not None else final != final
    mean: dict[str, float | None] = {}
    std: dict[str, float | None] = {}
    n: dict[str, int] = {}
    seeds: dict[str, tuple[float, ...]] = {}
    collapsed: dict[str, tuple[bool, ...]] = {}
    seed_ids: dict[str, tuple[int, ...]] = {}
    for column in COLUMNS:
        values = pd.to_numeric(ok[COLUMN_FIELDS[column]], errors="coerce").dropna()
        collapsed[column] = tuple(bool(fell[i]) for i in values.index)
        seed_ids[column] = tuple(int(s) for s in records.loc[values.index, "seed"])
        values = values * 100 if column == "accuracy" else values
        n[column] = len(values)
        mean[column], std[column] = _mean_std(values)
        seeds[column] = tuple(float(x) for x in values)
    digests = records["configuration"].dropna().unique()
    best = pd.to_numeric(ok[SELECTED_ACCURACY], errors="coerce").dropna() * 100
    return Ours(
        n_ok=len(ok),
        n_failed=int((records["status"] == "failed").sum()),
        mean=mean,
        std=std,
        n=n,
        best=_mean_std(best),
        commits=tuple(sorted(records["git_commit"].dropna().astype(str).unique())),
        reasons=tuple(sorted(records["reason"].dropna().astype(str).unique())),
        notes=(*notes, *provenance_notes(records, overridden)),
        values=seeds,
        configuration=str(digests[0]) if len(digests) == 1 else None,
        collapsed=collapsed,
        best_values=tuple(float(x) for x in best),
        seed_ids=seed_ids,
    )


def _mean_std(values: pd.Series) -> tuple[float | None, float | None]:
    """Mean (None when empty) and sample std (None below two values)."""
    mean = float(values.mean()) if len(values) else None
    return mean, float(values.std(ddof=1)) if len(values) > 1 else None


def provenance_notes(records: pd.DataFrame, overridden: tuple[str, ...] = ()) -> list[str]:
    """Footnotes of a cell: settings not from the paper (config.provenance, but the
    `overridden` ones) and reused runs."""
    notes: dict[str, None] = {}
    for provenance in records["provenance"].dropna():
        if not isinstance(provenance, dict):
            continue
        for key, entry in sorted(provenance.items()):
            entry = entry if isinstance(entry, dict) else {"source": str(entry)}
            source = entry.get("source", "?")
            if source != "paper" and key not in overridden:
                note = entry.get("note") or ""
                notes[f"`{key}`: {source}" + (f" ({note})" if note else "")] = None
    for reused in records["reused_from"].dropna():
        notes[f"run reused from {reused} (identical configuration)"] = None
    columns = ["seed", "twin", "twin_accuracy", COLUMN_FIELDS["accuracy"], "twin_why"]
    for seed, twin, theirs, own, why in records.loc[records["twin"].notna(), columns].itertuples(
        index=False
    ):
        notes[
            f"seed {int(seed)} trained twice: counted with this table's own record (final "
            f"accuracy {100 * own:.2f}); {twin} holds another run of it ({100 * theirs:.2f}: "
            f"{why})"
        ] = None
    none = records.loc[records[GRADIENT_REACHED] == 0, "seed"].dropna().astype(int)
    if len(none):
        notes[
            f"no gradient reached the network in seed(s) {', '.join(map(str, sorted(none)))}"
            " (ADAM's moments were 0 at its end): the accuracy there is the untrained network's"
        ] = None
    where = devices(records)
    if set(where) - {CPU}:
        seeds = "; ".join(
            f"{device}: seed(s) {', '.join(map(str, s))}" for device, s in where.items()
        )
        mixed = " (two devices: they round floats differently, so the seeds differ in device too)"
        notes[f"trained on {seeds}" + (mixed if len(where) > 1 else "")] = None
    return list(notes)


CPU = "cpu"


def device_of(config: Any) -> str:
    """The device a record's run trained on (config `trainer.accelerator`; none: the CPU)."""
    trainer = config.get("trainer") if isinstance(config, dict) else None
    return str((trainer or {}).get("accelerator") or CPU)


def devices(records: pd.DataFrame) -> dict[str, list[int]]:
    """Where a cell's runs trained (config `trainer.accelerator`; records without one, the CPU),
    each device with its runs' seeds."""
    out: dict[str, list[int]] = {}
    for config, seed in zip(records["config"], records["seed"], strict=True):
        if not pd.isna(seed):
            out.setdefault(device_of(config), []).append(int(seed))
    return {device: sorted(seeds) for device, seeds in sorted(out.items())}


def _sort_key(key: str) -> tuple[int, float, str]:
    """Numbers in numeric order, then names."""
    try:
        return (0, float(key), "")
    except ValueError:
        return (1, math.nan, key)
