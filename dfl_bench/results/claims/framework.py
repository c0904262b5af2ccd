"""The claims' framework: a `View` of one profile's numbers (the paper's or ours), the
comparison rules (each cell's own noise), `claim` to register a check and `evaluate`.

Each claim is written once: a name, the table it belongs to, the paper's sentence, and a function
of a `View` (the paper's numbers or ours) that returns whether it holds (None: within the noise)
and the numbers behind it. A claim whose cells are missing or undefined is "not measurable".

Every comparison of two cells uses their own noise (stats.py): on ours, Welch's 95% interval of
the difference over the two cells' seeds (a cell with fewer than 3 seeds decides nothing); on the
paper's numbers, single runs with the paper's only stated noise, its baseline std. "Beats",
"outperforms", "much better", "significantly" need the interval above 0; "on par", "as well as",
"similar" an interval that holds 0; an interval that holds 0 where a win is claimed is "within
noise". A cell against a number the paper states (random guessing's 0.1, formula (1)'s 5%) is the
same rule on the interval of the cell's mean minus that number. "Best" is the set of rows tied
with the top one (the claim holds when the paper's choice is in it). A correlation needs 8 cells
(each configuration once, however many tables show it) and is decided by Spearman's rho with a
permutation p-value (p < 0.05), Pearson's r beside it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from dfl_bench.results import stats
from dfl_bench.results.agreement import pearson, spearman
from dfl_bench.results.noise import Noise
from dfl_bench.results.paper import load_paper
from dfl_bench.results.tables import Table

SAME = 0.5  # accuracy points: "around 97%"
RANDOM_CU = 0.1  # cu_cons of random guessing among the 10 digits (Section 10.1.1)
PRINTED = 0.01  # the paper prints ratios to two decimals: closer printed values are a tie
SIGNIFICANT = 0.05  # a correlation's permutation p-value below this decides its sign
FORMULA_1_CONS = 0.05  # "95% of the derivatives are with respect to the negated antecedent"
Key = tuple[str, str, str]  # (experiment, row, column)
Cell = tuple[str, str]  # (experiment, row)
Check = Callable[["View"], tuple[bool | None, str]]
SECTIONS = {  # claims over several tables, shown in the index: their `experiment` and title
    "analysis": "Claims of the analysis (Section 10.3, fig. analyze_measures)",
    "conclusions": "Claims of the conclusions (Section 10.4)",
}
STATUSES = ("holds", "fails", "within noise", "not measurable")


class NotMeasurable(Exception):
    """A claim needs a cell that is missing, failed, undefined or has too few seeds."""


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

    def interval(self, a: Cell, b: Cell, column: str = "accuracy") -> stats.Interval:
        """The difference a - b and its 95% interval, by the view's noise (module doc)."""
        if self.noise is None:
            return stats.welch(self.seeds(a, column), self.seeds(b, column))
        delta = self.get(*a, column) - self.get(*b, column)
        if column == "accuracy":
            return stats.known_sigma(delta, self.noise.sigma, source=self.noise.source)
        return stats.Interval(delta, delta - PRINTED, delta + PRINTED, "printed precision")

    def versus(self, cell: Cell, column: str, reference: float) -> stats.Interval:
        """A cell's `column` minus a number the paper states (no noise of its own): on ours by
        the cell's own seeds (Student's t), on the paper's numbers by its seed std (accuracy)
        or their printed precision (ratios)."""
        if self.noise is None:
            return stats.one_sample(self.seeds(cell, column), reference)
        delta = self.get(*cell, column) - reference
        if column == "accuracy":
            return stats.known_sigma(delta, self.noise.sigma, 1, math.inf, self.noise.source)
        return stats.Interval(delta, delta - PRINTED, delta + PRINTED, "printed precision")

    def against(self, sample: Sample, b: Cell) -> stats.Interval:
        """A sample of runs (the default configuration) minus cell b, by the view's noise."""
        if self.noise is None:
            if len(sample.values) < stats.MIN_SEEDS:
                raise NotMeasurable(
                    f"the default configuration has {len(sample.values)} seed(s) "
                    f"(< {stats.MIN_SEEDS}): decides nothing"
                )
            return stats.welch(sample.values, self.seeds(b))
        delta = sample.mean - self.get(*b)
        return stats.known_sigma(delta, self.noise.sigma, len(sample.values), 1, self.noise.source)

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
    """holds / fails / within noise / not measurable, with the numbers behind it."""

    status: str
    detail: str


CLAIMS: list[Claim] = []


def claim(name: str, experiment: str, where: str, sentence: str) -> Callable[[Check], Check]:
    """Register a check function as a claim."""

    def register(check: Check) -> Check:
        CLAIMS.append(Claim(name, experiment, where, " ".join(sentence.split()), check))
        return check

    return register


def evaluate(item: Claim, view: View) -> Verdict:
    """Run one claim on one view."""
    try:
        holds, detail = item.check(view)
    except NotMeasurable as err:
        return Verdict("not measurable", str(err))
    return Verdict({True: "holds", False: "fails", None: "within noise"}[holds], detail)


def views(
    tables: Mapping[str, Table], paper_baseline: float, noise: Noise, default_run: Sample | None
) -> tuple[View, View]:
    """The paper's view (its numbers, its baseline std `noise`) and ours (each cell's seeds) over
    the paper's tables of one profile (a table beyond the paper is no experiment of its claims);
    `default_run` is our seeds of the default configuration (the paper's: its A_log T_P cell)."""
    paper: dict[Key, float] = {}
    ours: dict[Key, float] = {}
    samples: dict[Key, tuple[float, ...]] = {}
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
    baseline = ours.get(("baseline", "ce_pair", "accuracy"))
    layout = {name: table.paper.keys() for name, table in tables.items()}
    fixed = paper.get(("aggregation", DEFAULT_CELL, "accuracy"))
    paper_default = None if fixed is None else Sample((fixed,), "one run (Table aggregation)")
    return (
        View("paper", paper, paper_baseline, kbs, layout, noise, {}, configurations,
             paper_default),
        View("ours", ours, baseline, kbs, layout, None, samples, configurations,
             default_run),
    )  # fmt: skip


DEFAULT_CELL = "forall_log_product"  # Table aggregation's row of Section 10.2's fixed operators


def _f(value: float) -> str:
    """A number as printed in the verdicts."""
    return f"{value:.2f}"


def _cells(v: View, experiment: str, rows: Iterable[str], column: str = "accuracy") -> dict:
    """{row: value} for the given rows (NotMeasurable when there are none)."""
    values = {row: v.get(experiment, row, column) for row in rows}
    if not values:
        raise NotMeasurable(f"{experiment} has no rows")
    return values


def _text(values: Mapping[str, float]) -> str:
    """`a 1.0, b 2.0`."""
    return ", ".join(f"{k} {_f(x)}" for k, x in values.items())


def _top(
    v: View, experiment: str, rows: Iterable[str], column: str = "accuracy", lowest: bool = False
) -> tuple[list[str], str]:
    """The rows tied with the top one (the bottom one when `lowest`): the top row first, then
    every row whose interval to it holds 0; and the detail."""
    values = _cells(v, experiment, rows, column)
    sign = -1 if lowest else 1
    top = max(values, key=lambda row: sign * values[row])
    tied = [top] + [
        row
        for row in values
        if row != top and v.interval((experiment, top), (experiment, row), column).outcome == 0
    ]
    word = "bottom" if lowest else "top"
    return tied, f"{word} {column}: {', '.join(tied)} (tied within the noise); {_text(values)}"


def _vs(want: int, interval: stats.Interval) -> bool | None:
    """A claimed direction (+1 above, -1 below) against an interval: True decided that way,
    False decided the other way, None within the noise."""
    return None if interval.outcome == 0 else interval.outcome == want


def _versus(
    v: View, want: int, a: Cell, b: Cell, names: tuple[str, str]
) -> tuple[bool | None, str]:
    """Cell a claimed above (+1), below (-1) or level with (0) cell b, by the interval of a - b:
    `_vs` for a direction, True only within the noise for level; the text names the two."""
    interval = v.interval(a, b)
    verdict = interval.outcome == 0 if want == 0 else _vs(want, interval)
    x, y = (v.baseline() if c == BASE else v.get(*c) for c in (a, b))
    return verdict, f"{names[0]} {_f(x)} vs {names[1]} {_f(y)}: {_margin_text(interval)}"


def _above(v: View, experiment: str, rows: Iterable[str]) -> tuple[list[str], list[str], str]:
    """The rows above the baseline beyond the noise, those within it, and the detail."""
    above, within, parts = [], [], []
    for row in rows:
        interval = v.interval((experiment, row), BASE)
        if interval.outcome > 0:
            above.append(row)
        elif interval.outcome == 0:
            within.append(row)
        parts.append(f"{row} {interval.text()}")
    return above, within, f"baseline {_f(v.baseline())}; minus the baseline: {', '.join(parts)}"


def _below(v: View, experiment: str, rows: list[str]) -> tuple[bool | None, str]:
    """Every row below the baseline beyond the noise (True), any above it (False), else None."""
    above, within, detail = _above(v, experiment, rows)
    below = [row for row in rows if row not in above and row not in within]
    return (False if above else True if len(below) == len(rows) else None), detail


def _share(wins: int, ties: int, need: float) -> bool | None:
    """Whether at least `need` comparisons are won beyond the noise: None while the ties could
    make or break it."""
    return True if wins >= need else False if wins + ties < need else None


def _tally(intervals: Iterable[stats.Interval]) -> tuple[int, int, int]:
    """How many intervals lie above 0, hold it and lie below it (wins, ties, losses)."""
    outcomes = [interval.outcome for interval in intervals]
    return outcomes.count(1), outcomes.count(0), outcomes.count(-1)


def _against_rows(
    v: View, experiment: str, row: str, others: Iterable[str], column: str = "accuracy"
) -> tuple[int, int, int]:
    """How many of `others` the row is above, tied with and below, by each pair's interval."""
    return _tally(v.interval((experiment, row), (experiment, o), column) for o in others)


def _all(verdicts: Iterable[bool | None]) -> bool | None:
    """Every part holds (True), one fails (False), else within the noise (None)."""
    verdicts = list(verdicts)
    return False if False in verdicts else None if None in verdicts else True


def _exactly(above: Iterable, within: Iterable, want: Iterable) -> bool | None:
    """Whether the rows above the baseline are exactly `want`: None when the difference is rows
    within the noise."""
    above, within, want = set(above), set(within), set(want)
    if above == want:
        return True
    return None if above <= want <= above | within else False


def _corr(
    v: View, tables: Iterable[str], x: str, y: str, kb: str | None = None
) -> tuple[float, float, float, str]:
    """Pearson r, Spearman rho and its permutation p-value of two columns over the cells of the
    given tables (optionally one knowledge base), each configuration once; NotMeasurable below
    stats.MIN_CELLS cells."""
    pairs, seen = [], set()
    for (exp, row, column), value in v.values.items():
        if exp not in tables or column != x:
            continue
        if kb is not None and v.kbs.get((exp, row)) != kb:
            continue
        configuration = v.configurations.get((exp, row), f"{exp}/{row}")
        other = v.values.get((exp, row, y))
        if other is None or math.isnan(value) or math.isnan(other) or configuration in seen:
            continue
        if not v.decides(exp, row):
            continue
        seen.add(configuration)
        pairs.append((value, other))
    where = f" ({kb})" if kb else ""
    if len(pairs) < stats.MIN_CELLS:
        raise NotMeasurable(
            f"too few cells: {len(pairs)} with {x} and {y}{where} (a correlation needs "
            f"{stats.MIN_CELLS})"
        )
    xs, ys = [a for a, _ in pairs], [b for _, b in pairs]
    r, rho = pearson(xs, ys), spearman(xs, ys)
    if r is None or rho is None:
        raise NotMeasurable(f"{len(pairs)} cells with {x} and {y}: constant")
    p = stats.spearman_p(xs, ys)
    flip = " (r alone: the other sign)" if (r > 0) != (rho > 0) else ""
    return (
        r,
        rho,
        p,
        (
            f"rho({x}, {y}) = {rho:+.2f} (p = {p:.3f}), r = {r:+.2f}{flip} over {len(pairs)} "
            f"cells{where}"
        ),
    )


def _sign(rho: float, p: float, want: int) -> bool | None:
    """A claimed sign of a correlation: decided when p < SIGNIFICANT, else None."""
    return None if p >= SIGNIFICANT else (rho > 0) == (want > 0)


def _ratio_margin(interval: stats.Interval) -> str:
    """`difference +0.035 [+0.008, +0.063] (t, n=3, df=2)`: a ratio's, to three decimals."""
    i = interval
    return f"difference {i.delta:+.3f} [{i.low:+.3f}, {i.high:+.3f}] ({i.how})"


def _margin_text(interval: stats.Interval) -> str:
    """`difference +0.42 [-0.10, +0.94] (Welch, n=3/3, df=3.9)`."""
    return f"difference {interval.text()} ({interval.how})"


BASE = ("baseline", "ce_pair")  # the supervised baseline's cell
SYM_S = ["godel_S", "product_S", "yager_p1_5_S", "yager_p2_S", "yager_p20_S"]
SYM_R = [row.replace("_S", "_R") for row in SYM_S]
MAIN = load_paper().main  # the main-text tables (paper_numbers.yaml's `main` flag)
