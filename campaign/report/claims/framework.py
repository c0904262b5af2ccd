"""The claims' framework: a `View` of one profile's numbers (the paper's or ours), the
comparison rules (each cell's own noise), `claim` to register a check and `evaluate`.

Each claim is written once: a name, the table it belongs to, the paper's sentence, and a function
of a `View` (the paper's numbers or ours) that returns whether it holds (None: inconclusive) and
the numbers behind it. A claim whose cells are missing or undefined is "not measurable".

The rules are stated once, in words, by `verdict_report.rules()` (results/README.md and the tables'
index open with them) from the numbers declared in `stats` (levels, margins, seeds, FDR) and
here (the claim-specific margins below); this module applies them: every comparison of two cells
(or of a cell and a number the paper states) is above, below, equivalent (TOST within its
column's margin) or inconclusive, on each cell's own seeds (`stats.compare_runs`, collapse-aware)
or, on the paper's single runs, its stated noise; Holm within a claim (`Family`), then
Benjamini-Hochberg across claims (`across_claims`) on the p of the tests that decide each claim
(`decisive_level`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from campaign.report.claims import verdict_stats
from dfl_bench.results import stats
from dfl_bench.results.cells import BASELINE, Table
from dfl_bench.results.paper import Noise

MARGINS = stats.MARGINS
RANDOM_CU = 0.1  # cu_cons of random guessing among the 10 digits (Section 10.1.1)
PRINTED = 0.01  # the paper prints ratios to two decimals: closer printed values are a tie
SIGNIFICANT = 0.05  # a correlation's permutation p-value below this decides its sign
FORMULA_1_CONS = 0.05  # "95% of the derivatives are with respect to the negated antecedent"
# A claim of a stated size is on par within half of that size: cons 0.05 within +-0.025 (the
# ratio margin, 0.05, would let any cons from 0 to 0.10 be "95% antecedent").
FORMULA_1_MARGIN = FORMULA_1_CONS / 2
Key = tuple[str, str, str]  # (experiment, row, column)
Cell = tuple[str, str]  # (experiment, row)
Check = Callable[["View"], tuple[bool | None, str]]
SECTIONS = {  # claims over several tables, shown in the index: their `experiment` and title
    "analysis": "Claims of the analysis (Section 10.3, fig. analyze_measures)",
    "conclusions": "Claims of the conclusions (Section 10.4)",
}
VERDICTS = ("holds", "fails", "inconclusive", "not measurable")
INCONCLUSIVE = VERDICTS[2]
HOLM = "Holm"  # the correction within a claim


class NotMeasurable(Exception):
    """A claim needs a cell that is missing, failed, undefined or has too few seeds."""


@dataclass
class Family:
    """The comparisons one claim makes (by key, unadjusted), their Holm-adjusted p-values once
    known, and the p-value of each decided test the claim read (its verdict's evidence)."""

    raw: dict[tuple, stats.Interval] = field(default_factory=dict)
    adjusted: dict[tuple, tuple[float, float, float]] | None = None
    decided: list[float] = field(default_factory=list)
    correlations: list[float] = field(default_factory=list)  # the p of each decided correlation
    level: float = 1.0  # a comparison decides only at an adjusted p up to this (decisive_level)

    def adjust(self) -> None:
        """Holm within the family, each kind of test (difference, equivalence, beyond the
        margin) on its own."""
        keys = list(self.raw)
        columns = zip(*(self.raw[k].raw for k in keys), strict=True) if keys else ()
        adjusted = [stats.holm(list(ps)) for ps in columns]
        self.adjusted = {k: tuple(a[i] for a in adjusted) for i, k in enumerate(keys)}

    def track(self, key: tuple, interval: stats.Interval) -> stats.Interval:
        """The comparison as the claim sees it: recorded; decided by its adjusted p-values once
        the family is known (one met first now: Bonferroni over the family so far)."""
        self.raw.setdefault(key, interval)
        if self.adjusted is None:
            return interval
        m = len(self.raw)
        p = self.adjusted.get(key) or tuple(min(1.0, m * x) for x in interval.raw)
        p = tuple(x if x <= self.level else 1.0 for x in p)
        return interval.adjusted_to(p, self.decided.append, HOLM)


@dataclass(frozen=True)
class Sample:
    """Accuracies over seeds (which seeds, in words)."""

    values: tuple[float, ...]
    seeds: str

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values)


@dataclass(frozen=True)
class View:
    """The numbers one claim sees: the paper's or ours (accuracy in %, ratios in [0, 1])."""

    source: str
    values: Mapping[Key, float]  # means; nan = undefined ratio; absent = no cell
    baseline_accuracy: float | None
    kbs: Mapping[Cell, str]
    layout: Mapping[str, list[str]]  # experiment -> the paper's rows (what a claim quantifies over)
    noise: Noise | None = None  # the paper's view: one run per cell with this seed std
    samples: Mapping[Key, tuple[float, ...]] = field(default_factory=dict)  # ours: per seed
    configurations: Mapping[Cell, str] = field(default_factory=dict)  # a cell's configuration
    default_run: Sample | None = None  # Section 10.2's fixed operators, over its seeds
    collapsed: Mapping[Key, tuple[bool, ...]] = field(default_factory=dict)  # ours: per seed
    family: Family | None = None  # the comparisons of the claim being evaluated
    seed_ids: Mapping[Key, tuple[int, ...]] = field(default_factory=dict)  # ours: `samples`'
    paired: bool = False  # two cells compared over their common seeds (a secondary view)
    margins: Mapping[str, float] = field(default_factory=lambda: dict(MARGINS))  # TOST's

    def get(self, experiment: str, row: str, column: str = "accuracy") -> float:
        """A number, or NotMeasurable naming the cell (on ours also a cell of too few seeds)."""
        value = self.values.get((experiment, row, column))
        if value is None or math.isnan(value):
            state = "missing" if value is None else "undefined"
            raise NotMeasurable(f"{experiment}/{row} {column} {state}")
        self._enough_seeds(experiment, row)
        return value

    def undefined(self, experiment: str, row: str, column: str) -> bool:
        """Whether the cell exists with `column` undefined (NotMeasurable when there is no cell,
        or on ours a cell of too few seeds)."""
        if (experiment, row, "accuracy") not in self.values:
            raise NotMeasurable(f"{experiment}/{row} missing")
        self._enough_seeds(experiment, row)
        value = self.values.get((experiment, row, column))
        return value is None or math.isnan(value)

    def decides(self, experiment: str, row: str) -> bool:
        """Whether the cell may decide anything: a printed number of the paper, or a cell of
        ours with stats.MIN_SEEDS ok seeds or more."""
        if self.noise is not None:
            return True
        return len(self.samples.get((experiment, row, "accuracy"), ())) >= stats.MIN_SEEDS

    def _enough_seeds(self, experiment: str, row: str) -> None:
        """NotMeasurable for a cell of ours with too few seeds."""
        if not self.decides(experiment, row):
            n = len(self.samples.get((experiment, row, "accuracy"), ()))
            raise NotMeasurable(
                f"{experiment}/{row} has {n} seed(s) (< {stats.MIN_SEEDS}): decides nothing"
            )

    def baseline(self) -> float:
        """The supervised baseline's accuracy."""
        if self.baseline_accuracy is None:
            raise NotMeasurable("baseline missing")
        return self.baseline_accuracy

    def seeds(self, cell: Cell, column: str = "accuracy") -> tuple[float, ...]:
        """A cell's values of `column` over its seeds (NotMeasurable below stats.MIN_SEEDS)."""
        self.get(*cell, column)
        values = self.samples.get((*cell, column), ())
        if len(values) < stats.MIN_SEEDS:
            raise NotMeasurable(
                f"{cell[0]}/{cell[1]} has {column} in {len(values)} seed(s) "
                f"(< {stats.MIN_SEEDS}): decides nothing"
            )
        return values

    def collapses(self, cell: Cell, column: str = "accuracy") -> tuple[bool, ...]:
        """Which of a cell's seeds (of `column`) collapsed (ours; none on the paper's)."""
        flags = self.collapsed.get((*cell, column), ())
        return flags if len(flags) == len(self.samples.get((*cell, column), ())) else ()

    def _track(self, key: tuple, interval: stats.Interval) -> stats.Interval:
        return interval if self.family is None else self.family.track(key, interval)

    def interval(self, a: Cell, b: Cell, column: str = "accuracy") -> stats.Interval:
        """The difference a - b and its 95% interval, by the view's noise (module doc)."""
        margin = self.margins[column]
        if self.noise is None:
            raw = self._seeds_interval(a, b, column)
        else:
            delta = self.get(*a, column) - self.get(*b, column)
            if column == "accuracy":
                raw = verdict_stats.known_sigma(
                    delta, self.noise.sigma, source=self.noise.source, margin=margin
                )
            else:
                raw = stats.Interval(
                    delta, delta - PRINTED, delta + PRINTED, "printed precision", margin=margin
                )
        return self._track(("interval", a, b, column), raw)

    def _seeds_interval(self, a: Cell, b: Cell, column: str) -> stats.Interval:
        """Welch over the two cells' seeds; with collapsed runs, Fisher's exact test of the
        collapse rates and Welch over the other runs, Bonferroni-combined (module doc); the
        paired view: Student over the common seeds' differences, naming the cells' means there."""
        xa, xb = self.seeds(a, column), self.seeds(b, column)
        ca, cb = self.collapses(a, column), self.collapses(b, column)
        if self.paired and not any(ca) and not any(cb):
            common = self._common_seeds(a, b, column)
            if len(common) >= stats.MIN_SEEDS:
                pa, pb = [xa[i] for i, _ in common], [xb[j] for _, j in common]
                digits = 2 if column == "accuracy" else 3
                return verdict_stats.memo(stats.paired, pa, pb, self.margins[column], digits)
        return verdict_stats.memo(stats.compare_runs, xa, ca, xb, cb, self.margins[column])

    def _common_seeds(self, a: Cell, b: Cell, column: str) -> list[tuple[int, int]]:
        """The positions in a's and b's samples of the seeds both cells ran."""
        ia, ib = self.seed_ids.get((*a, column), ()), self.seed_ids.get((*b, column), ())
        where = {seed: j for j, seed in enumerate(ib)}
        return [(i, where[seed]) for i, seed in enumerate(ia) if seed in where]

    def versus(
        self, cell: Cell, column: str, reference: float, margin: float | None = None
    ) -> stats.Interval:
        """A cell's `column` minus a number the paper states (no noise of its own): on ours by
        the cell's own seeds (Student's t; its collapsed runs left out), on the paper's numbers
        by its seed std (accuracy) or their printed precision (ratios); the column's margin
        unless the claim's stated size gives its own (`margin`)."""
        margin = self.margins[column] if margin is None else margin
        if self.noise is None:
            kept = stats.kept_runs(self.seeds(cell, column), self.collapses(cell, column))
            if len(kept) < stats.MIN_SEEDS:  # no above or below from fewer runs that count
                raise NotMeasurable(
                    f"{cell[0]}/{cell[1]}: fewer than {stats.MIN_SEEDS} runs not collapsed"
                )
            raw = verdict_stats.memo(stats.one_sample, kept, reference, margin)
        else:
            delta = self.get(*cell, column) - reference
            if column == "accuracy":
                raw = verdict_stats.known_sigma(
                    delta, self.noise.sigma, 1, math.inf, self.noise.source, margin
                )
            else:
                raw = stats.Interval(
                    delta, delta - PRINTED, delta + PRINTED, "printed precision", margin=margin
                )
        return self._track(("versus", cell, column, reference), raw)

    def against(self, sample: Sample, b: Cell) -> stats.Interval:
        """A sample of runs (the default configuration) minus cell b, by the view's noise."""
        margin = self.margins["accuracy"]
        if self.noise is None:
            if len(sample.values) < stats.MIN_SEEDS:
                raise NotMeasurable(
                    f"the default configuration has {len(sample.values)} seed(s) "
                    f"(< {stats.MIN_SEEDS}): decides nothing"
                )
            raw = verdict_stats.memo(stats.welch, sample.values, self.seeds(b), margin)
        else:
            delta = sample.mean - self.get(*b)
            raw = verdict_stats.known_sigma(
                delta, self.noise.sigma, len(sample.values), 1, self.noise.source, margin
            )
        return self._track(("against", sample.seeds, b), raw)

    def evidence(self, p: float) -> None:
        """A decided test that is no comparison of cells (a correlation's p-value)."""
        if self.family is not None:
            self.family.decided.append(p)
            self.family.correlations.append(p)

    def top_probability(
        self, experiment: str, rows: Sequence[str], row: str, column: str, lowest: bool = False
    ) -> float:
        """The bootstrap probability that `row` is the top (bottom) row of `rows`."""
        cells = [(experiment, r) for r in rows]
        return self.top_cell_probability(cells, (experiment, row), column, lowest)

    def top_cell_probability(
        self, cells: Sequence[Cell], cell: Cell, column: str = "accuracy", lowest: bool = False
    ) -> float:
        """The bootstrap probability that `cell` is the top (bottom) one of `cells` (of any
        tables): ours by each cell's seeds, the paper's by its noise."""
        if self.noise is None:
            samples = {c: self.seeds(c, column) for c in cells}
            return verdict_stats.top_probability(samples, cell, lowest)
        samples = {c: (self.get(*c, column),) for c in cells}
        sigma = self.noise.sigma if column == "accuracy" else PRINTED
        return verdict_stats.top_probability(samples, cell, lowest, sigma)

    def rows(self, experiment: str, prefix: str = "") -> list[str]:
        """The paper's rows of an experiment, optionally those starting with `prefix`."""
        return [row for row in self.layout.get(experiment, []) if row.startswith(prefix)]


@dataclass(frozen=True)
class Claim:
    """One checkable statement of the paper."""

    name: str
    experiment: str
    where: str
    sentence: str
    check: Check


@dataclass(frozen=True)
class Verdict:
    """holds / fails / inconclusive / not measurable, with the numbers behind it; `p` the p of
    the tests that decide it (`decisive_level`; a correlation's claim: the largest p of the
    decided tests it rests on), `q` its Benjamini-Hochberg-adjusted value across claims
    (`across_claims`)."""

    status: str
    detail: str
    p: float | None = None
    q: float | None = None
    comparisons: tuple[tuple[tuple, stats.Interval], ...] = ()  # (key, Holm-adjusted), in order


CLAIMS: list[Claim] = []


def claim(name: str, experiment: str, where: str, sentence: str) -> Callable[[Check], Check]:
    """Register a check function as a claim."""

    def register(check: Check) -> Check:
        CLAIMS.append(Claim(name, experiment, where, " ".join(sentence.split()), check))
        return check

    return register


def views(
    tables: Mapping[str, Table],
    paper_baseline: float,
    noise: Noise,
    default_run: Sample | None,
    default_best: Sample | None = None,
) -> tuple[View, View, View, View]:
    """The paper's view (its numbers, its baseline std `noise`), ours (each cell's seeds, final
    accuracy), ours on the best-of-evaluations accuracy (what the verdicts would be on it) and
    ours paired by seed (two cells without collapsed runs over the seeds both ran, where they
    share stats.MIN_SEEDS or more: a secondary view, declared after the rules)
    over the paper's tables of one profile (a table beyond the paper is no experiment of its
    claims); `default_run` is our seeds of the default configuration (the paper's: its A_log
    T_P cell), `default_best` the same runs' best accuracies."""
    paper: dict[Key, float] = {}
    ours: dict[Key, float] = {}
    samples: dict[Key, tuple[float, ...]] = {}
    best: dict[Key, tuple[float, ...]] = {}
    collapsed: dict[Key, tuple[bool, ...]] = {}
    seed_ids: dict[Key, tuple[int, ...]] = {}
    configurations: dict[Cell, str] = {}
    kbs: dict[Cell, str] = {}
    tables = {name: table for name, table in tables.items() if not table.paper.beyond}
    for name, table in tables.items():
        for key, (cell, _) in table.pairs().items():
            if cell.kb:
                kbs[(name, key)] = cell.kb
            if any(v is not None for v in cell.values.values()):
                for column in cell.values:
                    number = cell.number(column)
                    paper[(name, key, column)] = math.nan if number is None else number
        for key, mine in table.ours().items():
            if mine.configuration is not None:
                configurations[(name, key)] = mine.configuration
            if mine.n_ok and (name, key, "accuracy") not in ours:
                for column, value in mine.mean.items():
                    ours[(name, key, column)] = math.nan if value is None else value
                    samples[(name, key, column)] = mine.values.get(column, ())
                    collapsed[(name, key, column)] = mine.collapsed.get(column, ())
                    seed_ids[(name, key, column)] = mine.seed_ids.get(column, ())
                best[(name, key, "accuracy")] = mine.best_values
    baseline = ours.get(("baseline", "ce_pair", "accuracy"))
    layout = {name: table.paper.keys() for name, table in tables.items()}
    fixed = paper.get(("aggregation", DEFAULT_CELL, "accuracy"))
    paper_default = None if fixed is None else Sample((fixed,), "one run (Table aggregation)")
    mine = View(
        "ours", ours, baseline, kbs, layout, None, samples, configurations, default_run, collapsed,
        seed_ids=seed_ids,
    )  # fmt: skip
    on_best = {k: (sum(x) / len(x) if x else math.nan) for k, x in best.items()}
    base_best = on_best.get((*BASE, "accuracy"))
    return (
        View("paper", paper, paper_baseline, kbs, layout, noise, {}, configurations,
             paper_default),
        mine,
        replace(mine, source="ours (best)", values={**ours, **on_best},
                samples={**samples, **best}, baseline_accuracy=base_best,
                default_run=default_best),
        replace(mine, source="ours (paired by seed)", paired=True),
    )  # fmt: skip


DEFAULT_CELL = "forall_log_product"  # Table aggregation's row of Section 10.2's fixed operators


BASE = BASELINE  # the supervised baseline's cell (results/cells.py: its runs set the collapse line)
SYM_S = ["godel_S", "product_S", "yager_p1_5_S", "yager_p2_S", "yager_p20_S"]
SYM_R = [row.replace("_S", "_R") for row in SYM_S]
