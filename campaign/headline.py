"""The paper's headline at its budget as a claim of a stated size (Section 10.2): `both` 98.0
against `sum9` 97.7 at `profile=paper`, "more knowledge increases performance", a gap of +0.3.
Its rule, declared with the headline plan (results/headline_plan/, before its runs) and read
here by the plan and the write-up alike: Welch's 95% interval of both - sum9 (final accuracy,
runs not collapsed) holds the claim when it lies above 0 and fails it when its upper end lies
below the paper's +0.3 (a smaller gap, shown), else inconclusive."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from campaign.power import difference_power, seeds_needed
from dfl_bench.results import stats

CELLS = {"best/both": "kb=both", "best/sum9": "kb=sum9"}  # the claim's cells, first minus second
PAPER = {"best/both": 98.0, "best/sum9": 97.7}  # Section 10.2's numbers (paper_numbers.yaml)
DECISION = {
    "claim": "both_above_sum9_at_paper_budget",
    "difference": "best/both - best/sum9, final test accuracy (points), runs not collapsed",
    "test": "Welch's 95% interval (stats.welch)",
    "gap": 0.3,
    "holds": "the interval lies above 0",
    "fails": "the interval's upper end lies below the paper's gap (+0.3)",
    "inconclusive": "otherwise",
}


def decide(both: Sequence[float], sum9: Sequence[float]) -> tuple[str, stats.Interval]:
    """The declared decision on the final accuracies (points, runs not collapsed) of the two
    cells: holds, fails or inconclusive, and Welch's interval of both - sum9.

    >>> decide([98.0, 98.1, 97.9, 98.05], [97.6, 97.7, 97.65, 97.75])[0]
    'holds'
    >>> decide([97.5, 97.6, 97.55, 97.5], [97.5, 97.55, 97.6, 97.5])[0]
    'fails'
    """
    interval = stats.welch(list(both), list(sum9))
    if interval.low > 0:
        return "holds", interval
    if interval.high < DECISION["gap"]:
        return "fails", interval
    return "inconclusive", interval


def power(both: Sequence[float], sum9: Sequence[float]) -> tuple[float, int | None]:
    """What the seeds had, on the spreads they show: the chance that Welch's test at 5% shows the
    paper's gap (+DECISION["gap"]) with these seed counts, and the seeds a cell would need for
    an 80% chance (`campaign.power.POWER`; None beyond 1,000). It changes nothing of the
    declared rule."""
    sd_a, sd_b = statistics.stdev(both), statistics.stdev(sum9)
    gap = DECISION["gap"]
    had = difference_power(sd_a, sd_b, gap, len(both), len(sum9))
    return had, seeds_needed(sd_a, sd_b, gap, None, equivalence=False, most=1000)
