"""The sensitivity table (declared as such: it decides nothing): which verdicts on ours move
when one choice behind them moves — the collapse line (cells.COLLAPSE_POINTS) at other
heights, one low run of the headline's cells left out, the GPU-trained runs left out, the
accuracy's equivalence margin at other widths, Holm instead of Benjamini-Hochberg across
claims. The verdicts of each variation are decided as the rules decide ours (Holm within a
claim, Benjamini-Hochberg across claims) but for the one choice it moves, on the same records
less what it leaves out."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from campaign.report import claims
from dfl_bench.results.cells import (
    COLLAPSE_POINTS,
    CPU,
    Grouped,
    Table,
    build_table,
    collapse_threshold,
    device_of,
    group_rows,
    row_configuration,
)
from dfl_bench.results.paper import Paper, paper_noise

COLLAPSE_LINES = (4.0, 6.0, 7.5)  # points under the baseline's mean, beside the rule's
ACCURACY_MARGINS = (0.25, 1.0)  # TOST margins of the accuracy (points), beside the rule's 0.5
# The rule's own tables (the frame's at COLLAPSE_POINTS) and ours read on them, uncorrected.
Rule = tuple[Mapping[str, Table], Sequence[claims.Verdict]]
LOW_RUN = ("best", "sum9", 4)  # experiment, row, seed: 92.43 at long, the headline cell's lowest


@dataclass(frozen=True)
class Variation:
    """One variation: its label and the one choice it moves (the rest as the rules say)."""

    label: str
    points: float = COLLAPSE_POINTS  # the collapse line, points under the baseline's mean
    keep: Callable[[pd.DataFrame], pd.DataFrame] = lambda frame: frame  # the records it keeps
    margin: float = claims.MARGINS["accuracy"]  # the accuracy's equivalence margin
    correction: str = "Benjamini-Hochberg"  # across claims


def variations() -> list[Variation]:
    """Each variation: its label, its collapse line (points) and what it keeps of the frame."""

    def without_low_run(frame: pd.DataFrame) -> pd.DataFrame:
        experiment, row, seed = LOW_RUN
        low = (frame["experiment"] == experiment) & (frame["row"] == row)
        return frame[~(low & (frame["seed"] == seed))]

    def without_gpu(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[[device_of(config) == CPU for config in frame["config"]]]

    experiment, row, seed = LOW_RUN
    return [
        *(Variation(f"collapse line {p:g} points under the baseline", p) for p in COLLAPSE_LINES),
        Variation(f"without `{experiment}/{row}` seed {seed}", keep=without_low_run),
        Variation("without the GPU-trained runs", keep=without_gpu),
        *(
            Variation(f"accuracy equivalence margin ±{m:g} points", margin=m)
            for m in ACCURACY_MARGINS
        ),
        Variation("Holm across claims instead of Benjamini-Hochberg", correction="Holm"),
    ]


def verdicts(
    paper: Paper,
    frame: pd.DataFrame,
    profile: str,
    repo: Path,
    variation: Variation,
    default_run: Callable[[pd.DataFrame, str], claims.Sample | None],
    rule: Rule | None = None,
    grouped: dict[str, Grouped] | None = None,
) -> dict[str, claims.Verdict]:
    """Ours at `profile` from `frame` (what `variation` keeps of it) under `variation`, by claim
    name, after the correction across claims. `rule`: the rule's own tables of `frame` and ours
    read on them before the correction (`decide`'s), which a variation that keeps every record
    and the rule's collapse line reads rather than builds again; `grouped`: the rows of each
    table of `frame` (cells.group_rows), which a variation reads for each table whose records it
    keeps (`untouched`)."""
    kept = variation.keep(frame)
    as_rule = rule is not None and kept is frame and variation.points == COLLAPSE_POINTS
    if as_rule and variation.margin == claims.MARGINS["accuracy"]:
        raw = rule[1]  # the rule's own reading: only the correction across claims moves
    else:
        if as_rule:
            tables = rule[0]
        else:
            below = collapse_threshold(kept, profile, variation.points)
            rows = untouched(paper, frame, kept, profile, grouped)
            tables = {
                name: build_table(table.compared(), kept, profile, repo, below, rows.get(name))
                for name, table in paper.tables.items()
            }
        noise = paper_noise(paper.baseline_std)
        ours = claims.views(tables, paper.baseline, noise, default_run(kept, profile))[1]
        ours = replace(ours, margins={**ours.margins, "accuracy": variation.margin})
        raw = claims.one_reading(ours, claims.CLAIMS)
    decided = claims.across_claims(raw, variation.correction)
    return {item.name: v for item, v in zip(claims.CLAIMS, decided, strict=True)}


def untouched(
    paper: Paper,
    frame: pd.DataFrame,
    kept: pd.DataFrame,
    profile: str,
    grouped: dict[str, Grouped] | None,
) -> dict[str, Grouped]:
    """The rows of `frame`'s tables (`grouped`) that `kept` (rows of `frame`) groups alike: those
    of each table none of whose records at `profile` it leaves out, neither the table's own nor
    a run of a configuration one of its rows counts (`pooled`)."""
    lost = frame.loc[frame.index.difference(kept.index)]
    lost = lost[lost["profile"] == profile]
    out = {}
    for name, rows in (grouped or {}).items():
        table = paper.tables[name]
        counted = {row_configuration(table, profile, key) for key in table.keys()}
        mine = lost["experiment"] == table.experiment
        if not (mine | lost["configuration"].isin(counted)).any():
            out[name] = rows
    return out


def table(
    paper: Paper,
    frame: pd.DataFrame,
    profile: str,
    repo: Path,
    default_run: Callable[[pd.DataFrame, str], claims.Sample | None],
    rule: Rule | None = None,
) -> tuple[tuple[str, dict[str, claims.Verdict]], ...]:
    """Every variation's verdicts at `profile`, in the order `variations` declares them (`rule`:
    as `verdicts` reads it), the rows of `frame`'s tables grouped once for them all."""
    grouped = {
        name: group_rows(table.compared(), frame, profile) for name, table in paper.tables.items()
    }
    return tuple(
        (v.label, verdicts(paper, frame, profile, repo, v, default_run, rule, grouped))
        for v in variations()
    )


def moved(mine: Sequence[tuple[str, claims.Verdict]], other: dict[str, claims.Verdict]) -> str:
    """`n of m`: the claims (name, verdict on ours) whose status differs in `other`, by name
    with the status they move to."""
    changed = [
        f"`{name}` ({verdict.status} → {other[name].status})"
        for name, verdict in mine
        if other[name].status != verdict.status
    ]
    return f"{len(changed)} of {len(mine)}" + (f": {', '.join(changed)}" if changed else "")
