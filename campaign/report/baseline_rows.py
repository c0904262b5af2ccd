"""Each row of a table against the supervised baseline (the verdicts file's "above / below the
baseline beyond the noise" lines): collapse-aware Welch over both cells' seeds
(`stats.compare_runs`), decided after Benjamini-Hochberg within the table (`stats.adjust_block`);
rows with fewer than `stats.MIN_SEEDS` seeds are set aside, not compared."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dfl_bench.results import stats
from dfl_bench.results.cells import Ours


@dataclass(frozen=True)
class AgainstBaseline:
    """The rows compared with the baseline (each with its block-adjusted interval, in order) and
    those set aside with too few seeds; `missing` says why nothing was compared, if so."""

    compared: tuple[tuple[str, stats.Interval], ...] = ()
    few: tuple[str, ...] = ()
    missing: str | None = None

    def beyond(self, sign: int) -> list[str]:
        """The rows beyond the noise above (sign 1) or below (-1), with difference and interval."""
        return [f"{key} {i.brief()}" for key, i in self.compared if i.outcome == sign]


def against_baseline(ours: Mapping[str, Ours], base: Ours | None) -> AgainstBaseline:
    """Every row of `ours` against the baseline cell `base` (module doc)."""
    if base is None or not base.n_ok:
        return AgainstBaseline(missing="no baseline")
    if base.n["accuracy"] < stats.MIN_SEEDS:
        return AgainstBaseline(missing=f"the baseline has {base.n['accuracy']} seed(s)")
    few = tuple(key for key, o in ours.items() if o.n["accuracy"] < stats.MIN_SEEDS)
    keys = [key for key in ours if key not in few]
    intervals = stats.adjust_block(
        [
            stats.compare_runs(
                ours[key].values["accuracy"],
                ours[key].collapsed.get("accuracy", ()),
                base.values["accuracy"],
                base.collapsed.get("accuracy", ()),
            )
            for key in keys
        ]
    )
    return AgainstBaseline(tuple(zip(keys, intervals, strict=True)), few)
