"""What rendering one profile gives (`publish.build`): its tables, agreements and verdicts, the
one value the write-up (`verdict_report`), the budget runs (`budget_runs`), the W&B tables and
the files (`publish`) read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dfl_bench.results import claims
    from dfl_bench.results.agreement import Agreement
    from dfl_bench.results.noise import Noise
    from dfl_bench.results.tables import Table


@dataclass(frozen=True)
class Rendered:
    """One profile's tables, agreements and claim verdicts."""

    profile: str
    tables: dict[str, Table]
    agreements: dict[str, Agreement]
    verdicts: list[tuple[claims.Claim, claims.Verdict, claims.Verdict]]  # after BH
    selected: tuple[str, ...]  # the tables whose files are (re)written; the index lists all
    orders: dict[str, dict[str, Agreement]]  # two-half tables compared out of header order
    noise: Noise  # the paper's (its cells are single runs); ours compare their own seeds
    on_best: dict[str, claims.Verdict]  # ours decided on the best-of-evaluations accuracy
    before_fdr: dict[str, claims.Verdict]  # ours before Benjamini-Hochberg across claims
    on_paired: dict[str, claims.Verdict]  # ours with two cells compared over their common seeds
    # ours under each variation of the sensitivity table (results/sensitivity.py; at the
    # profile the write-up decides at only): (its label, verdicts by claim name)
    sensitivity: tuple[tuple[str, dict[str, claims.Verdict]], ...] = ()
