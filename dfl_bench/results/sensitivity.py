"""The sensitivity table (declared as such: it decides nothing): which verdicts on ours move
when one choice behind them moves — the collapse line (tables.COLLAPSE_POINTS) at other
heights, one low run of the headline's cells left out, the GPU-trained runs left out. The
verdicts of each variation are decided as the rules decide ours (Holm within a claim,
Benjamini-Hochberg across claims), on the same records less what it leaves out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from dfl_bench.results import claims
from dfl_bench.results.noise import paper_noise
from dfl_bench.results.paper import Paper
from dfl_bench.results.tables import (
    COLLAPSE_POINTS,
    CPU,
    build_table,
    collapse_threshold,
    device_of,
)

COLLAPSE_LINES = (4.0, 6.0, 7.5)  # points under the baseline's mean, beside the rule's
LOW_RUN = ("best", "sum9", 4)  # experiment, row, seed: 92.43 at long, the headline cell's lowest
Variation = tuple[str, float, Callable[[pd.DataFrame], pd.DataFrame]]


def variations() -> list[Variation]:
    """Each variation: its label, its collapse line (points) and what it keeps of the frame."""

    def keep_all(frame: pd.DataFrame) -> pd.DataFrame:
        return frame

    def without_low_run(frame: pd.DataFrame) -> pd.DataFrame:
        experiment, row, seed = LOW_RUN
        low = (frame["experiment"] == experiment) & (frame["row"] == row)
        return frame[~(low & (frame["seed"] == seed))]

    def without_gpu(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[[device_of(config) == CPU for config in frame["config"]]]

    experiment, row, seed = LOW_RUN
    return [
        *((f"collapse line {p:g} points under the baseline", p, keep_all) for p in COLLAPSE_LINES),
        (f"without `{experiment}/{row}` seed {seed}", COLLAPSE_POINTS, without_low_run),
        ("without the GPU-trained runs", COLLAPSE_POINTS, without_gpu),
    ]


def verdicts(
    paper: Paper,
    frame: pd.DataFrame,
    profile: str,
    repo: Path,
    points: float,
    default_run: Callable[[pd.DataFrame, str], claims.Sample | None],
) -> dict[str, claims.Verdict]:
    """Ours at `profile` from `frame` with the collapse line `points` under the baseline, by
    claim name, after Benjamini-Hochberg across claims."""
    below = collapse_threshold(frame, profile, points)
    tables = {
        name: build_table(table.compared(), frame, profile, repo, below)
        for name, table in paper.tables.items()
    }
    noise = paper_noise(paper.baseline_std)
    ours = claims.views(tables, paper.baseline, noise, default_run(frame, profile))[1]
    decided = claims.across_claims([claims.evaluate(item, ours) for item in claims.CLAIMS])
    return {item.name: v for item, v in zip(claims.CLAIMS, decided, strict=True)}


def table(
    paper: Paper,
    frame: pd.DataFrame,
    profile: str,
    repo: Path,
    default_run: Callable[[pd.DataFrame, str], claims.Sample | None],
) -> tuple[tuple[str, dict[str, claims.Verdict]], ...]:
    """Every variation's verdicts at `profile`, in the order `variations` declares them."""
    return tuple(
        (label, verdicts(paper, keep(frame), profile, repo, points, default_run))
        for label, points, keep in variations()
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
