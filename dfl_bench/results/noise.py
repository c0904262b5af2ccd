"""The paper's only stated seed noise (Section 10's baseline 95.18 ± 0.204): how its single-run
numbers are compared (our cells are compared by their own seeds: stats.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass

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
