"""Seeds and machines: whether the machine a seed trained on moves a cell's final accuracy.

A cell's seeds may come from several CPUs (the seed plan's from other machines than the first
seeds), and a run's numbers are its machine's to the bit (commit_probe.machine). A seed's effect
is shared across cells, too: seed k draws one labelled split and one initialization in every
cell (`data.split_seed` = `seed`), so machines that trained different seeds differ by the seeds'
effects alone. Each run's accuracy is therefore taken less its seed's effect (an additive fit of
cell and seed over the runs), and each machine's runs are held against the other named machines'
runs of the same cells: one difference per cell, Student's interval over the cells, Holm over
the machines, TOST within the accuracy margin.

    >>> runs = pd.DataFrame({"configuration": list("aabb"), "seed": [0, 1, 0, 1],
    ...                      "accuracy": [95.0, 96.0, 93.0, 94.0]})
    >>> {k: round(v, 6) for k, v in seed_effects(runs).items()}
    {0: -0.5, 1: 0.5}
"""  # fmt: skip

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from campaign.report.claims import MARGINS
from campaign.report.claims.verdict_stats import PERMUTATIONS
from dfl_bench.results import stats
from dfl_bench.results.cells import collapse_threshold
from dfl_bench.results.paper import COLUMN_FIELDS

if TYPE_CHECKING:
    from dfl_bench.results.profile_results import Rendered

SWEEPS = 200  # alternating-means passes of the cell + seed fit (it converges in a few dozen)


def seed_effects(runs: pd.DataFrame) -> pd.Series:
    """Each seed's effect in accuracy points, shared by every cell: the least-squares fit of
    accuracy = cell mean + seed effect (alternating means), the effects centred on 0."""
    effect = pd.Series(0.0, index=sorted(runs["seed"].unique()))
    for _ in range(SWEEPS):
        cell_mean = (runs["accuracy"] - runs["seed"].map(effect)).groupby(runs["configuration"])
        rest = runs["accuracy"] - cell_mean.transform("mean")
        new = rest.groupby(runs["seed"]).mean()
        new -= new.mean()
        if (new - effect).abs().max() < 1e-12:
            return new
        effect = new
    return effect


def pooled_variance(runs: pd.DataFrame, effects: pd.Series | None = None) -> float:
    """The cells' pooled seed-to-seed variance of accuracy (points squared), of the runs less
    their seeds' `effects` where given (then with the degrees of freedom the effects take)."""
    accuracy = runs["accuracy"] - (runs["seed"].map(effects) if effects is not None else 0.0)
    cells = accuracy.groupby(runs["configuration"])
    dof = int((cells.count() - 1).sum()) - (len(effects) - 1 if effects is not None else 0)
    return float(((accuracy - cells.transform("mean")) ** 2).sum() / dof) if dof > 0 else 0.0


def shared_seed_p(runs: pd.DataFrame, seed: int = 0) -> float:
    """The permutation p-value of "a seed's effect is shared by the cells": the seeds' sum of
    squared mean deviations from their cells' means against PERMUTATIONS shuffles of the
    seed labels within each cell (a fixed generator, so a rendering is reproducible)."""
    ordered = runs.sort_values("configuration", kind="stable")
    cell = ordered["configuration"].astype("category").cat.codes.to_numpy()
    deviation = (
        ordered["accuracy"] - ordered.groupby("configuration")["accuracy"].transform("mean")
    ).to_numpy()
    labels = ordered["seed"].astype("category").cat.codes.to_numpy()

    def statistic(seeds: np.ndarray) -> float:
        counts = np.bincount(seeds)
        sums = np.bincount(seeds, weights=deviation)
        return float((sums[counts > 0] ** 2 / counts[counts > 0]).sum())

    observed = statistic(labels)
    rng = np.random.default_rng(seed)
    extreme = sum(
        statistic(labels[np.lexsort((rng.random(len(cell)), cell))]) >= observed - 1e-12
        for _ in range(PERMUTATIONS)
    )
    return (extreme + 1) / (PERMUTATIONS + 1)


def differences(runs: pd.DataFrame) -> dict[str, list[float]]:
    """Per machine, over the cells (configurations) with runs of it and of another named
    machine: the mean accuracy of its runs minus that of the others' runs."""
    out: dict[str, list[float]] = {}
    for _, cell in runs.groupby("configuration"):
        means = cell.groupby("machine")["accuracy"].agg(["sum", "count"])
        for machine in means.index:
            rest = means.drop(machine)
            if rest.empty:
                continue
            mine = means.at[machine, "sum"] / means.at[machine, "count"]
            out.setdefault(machine, []).append(mine - rest["sum"].sum() / rest["count"].sum())
    return out


def effect_lines(runs: pd.DataFrame) -> list[str]:
    """The write-up's line on `runs` (configuration, seed, accuracy, machine: None where
    unnamed): the seeds' effects, then each machine with runs in stats.MIN_SEEDS cells or more
    beside another machine's, its seed-adjusted difference to the others (and the raw one)."""
    if runs.empty:
        return []
    effects = seed_effects(runs)
    named = runs[runs["machine"].notna()]
    adjusted = named.assign(accuracy=named["accuracy"] - named["seed"].map(effects))
    raw = differences(named)
    found = {m: d for m, d in differences(adjusted).items() if len(d) >= stats.MIN_SEEDS}
    margin = MARGINS["accuracy"]
    seeds = ", ".join(f"{int(s)} {e:+.2f}" for s, e in effects.items())
    line = (
        "- Seeds and machines (final accuracy of the runs that did not collapse, the paper's "
        "tables): a seed's effect is shared by every cell (one labelled split and one "
        f"initialization per seed), in points from its cells' means: {seeds} (shared beyond "
        f"chance: permutation p = {shared_seed_p(runs):.4f}, seed labels shuffled within "
        f"cells); without them the cells' pooled seed-to-seed variance is "
        f"{pooled_variance(runs, effects):.3f} of {pooled_variance(runs):.3f} points squared, "
        "what a comparison paired by seed would leave"
    )
    if not found:
        return [f"{line}; no machine has runs in {stats.MIN_SEEDS} cells beside another's."]
    intervals = {m: stats.one_sample(d, 0.0, margin=margin) for m, d in sorted(found.items())}
    holm = [stats.holm([i.raw[k] for i in intervals.values()]) for k in range(3)]
    adjusted_p = list(zip(*holm, strict=True))
    parts = []
    for (machine, interval), p in zip(intervals.items(), adjusted_p, strict=True):
        decided = interval.adjusted_to(p, correction="Holm")
        before = stats.one_sample(raw[machine], 0.0).text()
        parts.append(
            f"{machine} {decided.text()} over {len(found[machine])} cells: {decided.word} "
            f"({decided.tost_text()}; with the seeds' effects left in: {before})"
        )
    return [
        f"{line}. Each machine's runs less their seeds' effects, minus the other named "
        "machines' runs of the same cells (Student's 95% interval over the cells, Holm over "
        f"the machines; {int(runs['machine'].isna().sum())} runs that name no machine left "
        "out): " + "; ".join(parts) + "."
    ]


def effects(r: Rendered) -> list[str]:
    """`effect_lines` over the ok runs of the paper's tables at `r.profile` that did not
    collapse, each configuration and seed once."""
    tables = [t.records for t in r.tables.values() if not t.paper.beyond and not t.records.empty]
    if not tables:
        return []
    frame = pd.concat(tables)
    floor = collapse_threshold(frame, r.profile)
    ok = frame[frame["status"] == "ok"].drop_duplicates(["configuration", "seed"])
    accuracy = pd.to_numeric(ok[COLUMN_FIELDS["accuracy"]], errors="coerce") * 100
    runs = ok.assign(accuracy=accuracy)
    kept = runs["accuracy"].notna() & (runs["accuracy"] >= floor if floor is not None else True)
    return effect_lines(runs.loc[kept, ["configuration", "seed", "accuracy", "machine"]])
