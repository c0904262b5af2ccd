"""Seed noise of the accuracy (Section 10's baseline 95.18 ± 0.204): the margins that decide the
paper's comparative words ("much better", "on par") and the interval of a difference of means."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from dfl_bench.results.paper import RECORD_FIELDS
from dfl_bench.results.plan import SPREAD

Z = 2.0  # standard errors: a difference beyond Z * its standard error is not seed noise (~95%)


@dataclass(frozen=True)
class Noise:
    """The seed standard deviation of one run's accuracy (points) and where it comes from."""

    sigma: float
    source: str

    def stderr(self, n_a: int = 1, n_b: int = 1) -> float:
        """Standard error of the difference of two means over n_a and n_b seeds."""
        return self.sigma * math.sqrt(1 / n_a + 1 / n_b)

    def margin(self, n_a: int = 1, n_b: int = 1) -> float:
        """Z standard errors of a difference: beyond it a win is "much better", within it a tie."""
        return Z * self.stderr(n_a, n_b)


def paper_noise(baseline_std: float) -> Noise:
    """The paper's own seed spread: its supervised baseline's std (Section 10)."""
    return Noise(baseline_std, f"the paper's baseline std {baseline_std:g}")


def measured_noise(frame: pd.DataFrame, profile: str) -> Noise | None:
    """The pooled sample std of the best accuracy over the seeds of each seed-spread run (the
    baseline and the default configuration) at `profile`; None without two seeds of one run."""
    if frame.empty:
        return None
    runs = frame[
        frame["experiment"].isin(SPREAD) & (frame["profile"] == profile) & (frame["status"] == "ok")
    ]
    squares, dof, parts = 0.0, 0, []
    for (experiment, row), group in runs.groupby(["experiment", "row"], dropna=False):
        values = pd.to_numeric(group[RECORD_FIELDS["accuracy"]], errors="coerce").dropna() * 100
        if len(values) < 2:
            continue
        squares += float(values.var(ddof=1)) * (len(values) - 1)
        dof += len(values) - 1
        parts.append(f"{experiment}" + ("" if pd.isna(row) else f"/{row}") + f" n={len(values)}")
    if dof == 0:
        return None
    sigma = math.sqrt(squares / dof)
    return Noise(sigma, f"pooled seed std {sigma:.2f} of {', '.join(parts)} ({profile})")
