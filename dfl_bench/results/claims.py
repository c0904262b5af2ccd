"""The paper's qualitative claims (Sections 10.1-10.4, appendix), each a check over the tables.

Each claim is written once: a name, the table it belongs to, the paper's sentence, and a function
of a `View` (the paper's numbers or ours) that returns whether it holds (None: within the noise)
and the numbers behind it. A claim whose cells are missing or undefined is "not measurable".

Every comparison of two cells uses their own noise (stats.py): on ours, Welch's 95% interval of
the difference over the two cells' seeds (a cell with fewer than 3 seeds decides nothing); on the
paper's numbers, single runs with the paper's only stated noise, its baseline std. "Beats",
"outperforms", "much better", "significantly" need the interval above 0; "on par", "as well as",
"similar" an interval that holds 0; an interval that holds 0 where a win is claimed is "within
noise". "Best" is the set of rows tied with the top one (the claim holds when the paper's choice
is in it). A correlation needs 8 cells (each configuration once, however many tables show it) and
is decided by Spearman's rho with a permutation p-value (p < 0.05), Pearson's r beside it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from dfl_bench.results import stats
from dfl_bench.results.agreement import pearson, spearman
from dfl_bench.results.noise import Noise
from dfl_bench.results.tables import Table

SAME = 0.5  # accuracy points: "around 97%"
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
    problems: Mapping[Cell, str]
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
    the tables of one profile; `default_run` is our seeds of the default configuration (the
    paper's: its A_log T_P cell)."""
    paper: dict[Key, float] = {}
    ours: dict[Key, float] = {}
    samples: dict[Key, tuple[float, ...]] = {}
    configurations: dict[Cell, str] = {}
    problems: dict[Cell, str] = {}
    for name, table in tables.items():
        for key, (cell, _) in table.pairs().items():
            if cell.problem:
                problems[(name, key)] = cell.problem
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
        View("paper", paper, paper_baseline, problems, layout, noise, {}, configurations,
             paper_default),
        View("ours", ours, baseline, problems, layout, None, samples, configurations,
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


def _exactly(above: Iterable, within: Iterable, want: Iterable) -> bool | None:
    """Whether the rows above the baseline are exactly `want`: None when the difference is rows
    within the noise."""
    above, within, want = set(above), set(within), set(want)
    if above == want:
        return True
    return None if above <= want <= above | within else False


def _corr(
    v: View, tables: Iterable[str], x: str, y: str, problem: str | None = None
) -> tuple[float, float, float, str]:
    """Pearson r, Spearman rho and its permutation p-value of two columns over the cells of the
    given tables (optionally one problem), each configuration once; NotMeasurable below
    stats.MIN_CELLS cells."""
    pairs, seen = [], set()
    for (exp, row, column), value in v.values.items():
        if exp not in tables or column != x:
            continue
        if problem is not None and v.problems.get((exp, row)) != problem:
            continue
        configuration = v.configurations.get((exp, row), f"{exp}/{row}")
        other = v.values.get((exp, row, y))
        if other is None or math.isnan(value) or math.isnan(other) or configuration in seen:
            continue
        if not v.decides(exp, row):
            continue
        seen.add(configuration)
        pairs.append((value, other))
    where = f" ({problem})" if problem else ""
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


def _margin_text(interval: stats.Interval) -> str:
    """`difference +0.42 [-0.10, +0.94] (Welch, n=3/3, df=3.9)`."""
    return f"difference {interval.text()} ({interval.how})"


BASE = ("baseline", "ce_pair")  # the supervised baseline's cell
SYM_S = ["godel_S", "product_S", "yager_p1_5_S", "yager_p2_S", "yager_p20_S"]
SYM_R = [row.replace("_S", "_R") for row in SYM_S]
MAIN = ("same_symmetric", "sum9_symmetric", "aggregation", "tnorms", "implications")


@claim(
    "s_beat_r_same",
    "same_symmetric",
    "10.1.1",
    "One general observation that can be made is that S-implications seem to work much better "
    "than R-implications.",
)
def _s_beat_r_same(v: View) -> tuple[bool | None, str]:
    wins, ties, parts = 0, 0, []
    for a, b in zip(SYM_S, SYM_R, strict=True):
        interval = v.interval(("same_symmetric", a), ("same_symmetric", b))
        wins, ties = wins + (interval.outcome > 0), ties + (interval.outcome == 0)
        parts.append(f"{a[:-2]} {interval.text()}")
    half = len(SYM_S) / 2
    holds = True if wins > half else None if wins + ties > half else False
    return holds, (
        f"S beats R beyond the noise in {wins} of {len(SYM_S)} t-norms ({ties} within it); "
        f"S - R: {', '.join(parts)}"
    )


@claim(
    "r_only_yager20_beats_baseline",
    "same_symmetric",
    "10.1.1",
    "The only configuration with R-implications that outperform the supervised baseline is "
    "T_Y, p=20.",
)
def _r_only_yager20(v: View) -> tuple[bool | None, str]:
    above, within, detail = _above(v, "same_symmetric", SYM_R)
    return _exactly(above, within, ["yager_p20_R"]), f"above: {above}; {detail}"


@claim(
    "yager20_s_similar_to_r",
    "same_symmetric",
    "10.1.1",
    "[T_Y, p=20 is the only R-implication configuration above the baseline,] but here the "
    "S-implication performs similar to it [within the seed noise].",
)
def _yager20_s_r(v: View) -> tuple[bool | None, str]:
    interval = v.interval(("same_symmetric", "yager_p20_S"), ("same_symmetric", "yager_p20_R"))
    return interval.outcome == 0, f"yager_p20 S - R: {_margin_text(interval)}"


@claim(
    "godel_on_par_with_baseline",
    "same_symmetric",
    "10.1.1",
    "The Gödel t-norm performs on par with the supervised baseline.",
)
def _godel_par(v: View) -> tuple[bool | None, str]:
    interval = v.interval(("same_symmetric", "godel_S"), BASE)
    x, base = v.get("same_symmetric", "godel_S"), v.baseline()
    return (
        interval.outcome == 0,
        f"godel_S {_f(x)} vs baseline {_f(base)}: {_margin_text(interval)}",
    )


@claim(
    "lukasiewicz_below_baseline",
    "same_symmetric",
    "10.1.1",
    "The Łukasiewicz t-norm performs worse than the supervised baseline.",
)
def _luk_below(v: View) -> tuple[bool | None, str]:
    interval = v.interval(("same_symmetric", "lukasiewicz"), BASE)
    x, base = v.get("same_symmetric", "lukasiewicz"), v.baseline()
    return _vs(
        -1, interval
    ), f"lukasiewicz {_f(x)} vs baseline {_f(base)}: {_margin_text(interval)}"


@claim(
    "lukasiewicz_cons_half",
    "same_symmetric",
    "10.1.1",
    "By the definition of I_LK, cons = 1/2 as the consequent and negated antecedent derivatives "
    "are equal.",
)
def _luk_half(v: View) -> tuple[bool | None, str]:
    x = v.get("same_symmetric", "lukasiewicz", "cons")
    return abs(x - 0.5) <= 0.01, f"cons {x:.3f}"


@claim(
    "lukasiewicz_cu_cons_below_random",
    "same_symmetric",
    "10.1.1",
    "cu_cons is very low with only 0.01, which is worse than random guessing [0.1].",
)
def _luk_cu_cons(v: View) -> tuple[bool | None, str]:
    x = v.get("same_symmetric", "lukasiewicz", "cu_cons")
    return x < 0.1, f"cu_cons {x:.2f} (random guessing: 0.1)"


@claim(
    "yager20_beats_baseline",
    "same_symmetric",
    "10.1.1",
    "For p=20 the top performance is quite a bit higher than the baseline [beyond the noise].",
)
def _yager20(v: View) -> tuple[bool | None, str]:
    interval = v.interval(("same_symmetric", "yager_p20_S"), BASE)
    x, base = v.get("same_symmetric", "yager_p20_S"), v.baseline()
    return _vs(1, interval), f"yager_p20_S {_f(x)} vs baseline {_f(base)}: {_margin_text(interval)}"


@claim(
    "yager2_below_lukasiewicz",
    "same_symmetric",
    "10.1.1",
    "For p=2, the results are even worse than the Łukasiewicz t-norm.",
)
def _yager2(v: View) -> tuple[bool | None, str]:
    interval = v.interval(("same_symmetric", "yager_p2_S"), ("same_symmetric", "lukasiewicz"))
    a, b = v.get("same_symmetric", "yager_p2_S"), v.get("same_symmetric", "lukasiewicz")
    return _vs(-1, interval), f"yager_p2_S {_f(a)} vs lukasiewicz {_f(b)}: {_margin_text(interval)}"


@claim(
    "yager15_vanishes",
    "same_symmetric",
    "10.1.1",
    "The derivative with p=1.5 simply vanishes throughout the whole run (no ratios).",
)
def _yager15(v: View) -> tuple[bool | None, str]:
    gone = [v.undefined("same_symmetric", row, "cons") for row in ("yager_p1_5_S", "yager_p1_5_R")]
    return all(gone), f"cons undefined (S, R): {gone}"


@claim(
    "product_best_same_symmetric",
    "same_symmetric",
    "10.1.1",
    "The product t-norm performs best.",
)
def _product_best(v: View) -> tuple[bool | None, str]:
    top, detail = _top(v, "same_symmetric", v.rows("same_symmetric"))
    return "product_S" in top, detail


@claim(
    "product_highest_cu_ratios",
    "same_symmetric",
    "10.1.1",
    "[The product t-norm] also has the highest values for cu_cons and cu_ant (S-implications).",
)
def _product_cu(v: View) -> tuple[bool | None, str]:
    rows = ["godel_S", "product_S", "lukasiewicz", "yager_p2_S", "yager_p20_S"]
    top_cons, a = _top(v, "same_symmetric", rows, "cu_cons")
    top_ant, b = _top(v, "same_symmetric", rows, "cu_ant")
    return "product_S" in top_cons and "product_S" in top_ant, f"{a}; {b}"


@claim(
    "nilpotent_like_baseline",
    "same_symmetric",
    "10.1.1",
    "The Nilpotent t-norm performs exactly like the supervised baseline since the derivative of "
    "the universal aggregator vanished during the complete training run.",
)
def _nilpotent(v: View) -> tuple[bool | None, str]:
    gone = v.undefined("same_symmetric", "nilpotent", "cons")
    interval = v.interval(("same_symmetric", "nilpotent"), BASE)
    x, base = v.get("same_symmetric", "nilpotent"), v.baseline()
    return gone and interval.outcome == 0, (
        f"cons undefined: {gone}; nilpotent {_f(x)} vs baseline {_f(base)}: "
        f"{_margin_text(interval)}"
    )


@claim(
    "sum9_only_product_yager20_beat_baseline",
    "sum9_symmetric",
    "10.1.2",
    "The only configurations that clearly outperform the supervised baseline are the product "
    "t-norm and the Yager t-norm with p=20.",
)
def _sum9_above(v: View) -> tuple[bool | None, str]:
    above, within, detail = _above(v, "sum9_symmetric", v.rows("sum9_symmetric"))
    return _exactly(above, within, ["product", "yager_p20"]), f"above: {above}; {detail}"


@claim(
    "sum9_product_best",
    "sum9_symmetric",
    "10.1.2",
    "... with the product t-norm being the most promising candidate.",
)
def _sum9_product(v: View) -> tuple[bool | None, str]:
    top, detail = _top(v, "sum9_symmetric", v.rows("sum9_symmetric"))
    return "product" in top, detail


@claim(
    "sum9_vanishing",
    "sum9_symmetric",
    "10.1.2",
    "In addition to the Nilpotent t-norm, the derivatives of the Łukasiewicz t-norm and Yager "
    "t-norm with p=2 vanish throughout the whole run.",
)
def _sum9_vanish(v: View) -> tuple[bool | None, str]:
    rows = ("nilpotent", "lukasiewicz", "yager_p2")
    gone = {row: v.undefined("sum9_symmetric", row, "cons") for row in rows}
    return all(gone.values()), f"cons undefined: {gone}"


SUM9_OF_SAME = {  # Table sum9_symmetric's rows and their Table mnist_symmetric S-implication rows
    "godel": "godel_S",
    "product": "product_S",
    "lukasiewicz": "lukasiewicz",
    "yager_p1_5": "yager_p1_5_S",
    "yager_p2": "yager_p2_S",
    "yager_p20": "yager_p20_S",
    "nilpotent": "nilpotent",
}
REFLECT_RHO = 0.5  # "closely reflect": rank correlation at least this


@claim(
    "sum9_reflects_same",
    "sum9_symmetric",
    "10.1.2",
    "These closely reflect the results for the same problem [the same best t-norm, and a "
    "Spearman rho of at least 0.5 between the sum9 and the same (S-implication) accuracies of "
    "the seven t-norms].",
)
def _sum9_reflects(v: View) -> tuple[bool | None, str]:
    sum9 = _cells(v, "sum9_symmetric", SUM9_OF_SAME)
    same = _cells(v, "same_symmetric", SUM9_OF_SAME.values())
    if len(sum9) < stats.MIN_CELLS:
        raise NotMeasurable(
            f"too few cells: {len(sum9)} t-norms (a correlation needs {stats.MIN_CELLS})"
        )
    rho = spearman(list(sum9.values()), list(same.values()))
    if rho is None:
        raise NotMeasurable("constant accuracies")
    top_sum9, _ = _top(v, "sum9_symmetric", SUM9_OF_SAME)
    top_same, _ = _top(v, "same_symmetric", SUM9_OF_SAME.values())
    shared = [row for row in top_sum9 if SUM9_OF_SAME[row] in top_same]
    return rho >= REFLECT_RHO and bool(shared), (
        f"rho {rho:+.2f} over {len(sum9)} t-norms; top sum9 {top_sum9}, top same {top_same}"
    )


FORALL_POOR = [
    "forall_minimum",
    "forall_nilpotent",
    "forall_yager_p1_5",
    "forall_yager_p2",
    "forall_yager_p20",
]


@claim(
    "log_product_best_forall",
    "aggregation",
    "10.2.1",
    "The log-product operator with w_DFL=10 is the best universal aggregator, with A_RMSE "
    "trailing behind it slightly.",
)
def _log_product(v: View) -> tuple[bool | None, str]:
    top, detail = _top(v, "aggregation", v.rows("aggregation", "forall_"))
    return "forall_log_product" in top and "forall_rmse" in top, detail


@claim(
    "other_gme_effective",
    "aggregation",
    "10.2.1",
    "Other generalized mean errors are also effective [A_GME p=1.5 and p=20 above the baseline].",
)
def _other_gme(v: View) -> tuple[bool | None, str]:
    rows = ["forall_gme_p1_5", "forall_gme_p20"]
    above, within, detail = _above(v, "aggregation", rows)
    return _exactly(above, within, rows), f"above: {above}; {detail}"


@claim(
    "poor_forall_aggregators",
    "aggregation",
    "10.2.1",
    "The single-passing aggregators (minimum and Nilpotent minimum aggregators) and aggregators "
    "that vanish on a large part of their domain (Yager-based and Nilpotent minimum) all perform "
    "poorly [below the baseline].",
)
def _poor_forall(v: View) -> tuple[bool | None, str]:
    holds, detail = _below(v, "aggregation", FORALL_POOR)
    return holds, detail


@claim(
    "yager_forall_high_cu",
    "aggregation",
    "10.2.1",
    "Curiously the Yager-based aggregators have very high cu_cons and cu_ant [above every other "
    "universal aggregator's median].",
)
def _yager_cu(v: View) -> tuple[bool | None, str]:
    yager = [r for r in v.rows("aggregation", "forall_yager")]
    others = [r for r in v.rows("aggregation", "forall_") if r not in yager]
    details, ok = [], True
    for column in ("cu_cons", "cu_ant"):
        ys = _cells(v, "aggregation", yager, column)
        rest = sorted(_cells(v, "aggregation", others, column).values())
        median = rest[len(rest) // 2] if len(rest) % 2 else sum(rest[len(rest) // 2 - 1 :][:2]) / 2
        ok = ok and min(ys.values()) > median
        details.append(f"{column}: Yager {_text(ys)} vs median of others {_f(median)}")
    return ok, "; ".join(details)


@claim(
    "gm_best_exists",
    "aggregation",
    "10.2.1",
    "The generalized means have the best result for existential aggregation, with p=1.5 "
    "performing best.",
)
def _gm_best(v: View) -> tuple[bool | None, str]:
    top, detail = _top(v, "aggregation", v.rows("aggregation", "exists_"))
    return "exists_gm_p1_5" in top, detail


@claim(
    "yager_exists_decent",
    "aggregation",
    "10.2.1",
    "Unlike with universal aggregation, the Yager existential aggregator is also a decent choice "
    "[above the baseline].",
)
def _yager_exists(v: View) -> tuple[bool | None, str]:
    rows = v.rows("aggregation", "exists_yager")
    if not rows:
        raise NotMeasurable("aggregation has no exists_yager rows")
    above, within, detail = _above(v, "aggregation", rows)
    return _exactly(above, within, rows), detail


@claim(
    "max_nilpotent_exists_only_somewhat",
    "aggregation",
    "10.2.1",
    "The maximum aggregator and Nilpotent maximum aggregator only somewhat outperform the "
    "supervised baseline [above it, below every generalized mean].",
)
def _max_exists(v: View) -> tuple[bool | None, str]:
    rows = ["exists_maximum", "exists_nilpotent"]
    above, within, detail = _above(v, "aggregation", rows)
    gm = v.rows("aggregation", "exists_gm")
    beaten = [
        (g, r)
        for g in gm
        for r in rows
        if v.interval(("aggregation", g), ("aggregation", r)).outcome < 0
    ]
    holds = False if beaten else _exactly(above, within, rows)
    return holds, f"{detail}; a generalized mean below them beyond the noise: {beaten or 'none'}"


@claim(
    "vanishing_tnorms_best",
    "tnorms",
    "10.2.2",
    "It is the operators that vanish on a large part of their domain that work best, namely "
    "Yager t-norms and the Nilpotent minimum [the best row is one of them or T_LK].",
)
def _vanishing_best(v: View) -> tuple[bool | None, str]:
    top, detail = _top(v, "tnorms", v.rows("tnorms"))
    return not {"godel", "product"} & set(top), detail


@claim(
    "godel_product_tnorms_poor",
    "tnorms",
    "10.2.2",
    "The product t-norm and Gödel t-norm ... seem to perform very poorly [below the baseline].",
)
def _godel_product_poor(v: View) -> tuple[bool | None, str]:
    return _below(v, "tnorms", ["godel", "product"])


@claim(
    "tnorms_low_cons_better",
    "tnorms",
    "10.2.2",
    "In this table, there is a clear relation where lower cons seem to perform better.",
)
def _low_cons(v: View) -> tuple[bool | None, str]:
    _, rho, p, detail = _corr(v, ("tnorms",), "cons", "accuracy")
    return _sign(rho, p, -1), detail


@claim(
    "reichenbach_yager_s_around_97",
    "implications",
    "10.2.3",
    "The Reichenbach implication and Yager S-implication work well, both having an accuracy "
    "around 97% [within 0.5].",
)
def _around_97(v: View) -> tuple[bool | None, str]:
    values = _cells(v, "implications", ["reichenbach", "yager_s_p1_5", "yager_s_p2", "yager_s_p20"])
    return all(abs(x - 97) <= SAME for x in values.values()), _text(values)


@claim(
    "kleene_dienes_yager_r_beat_baseline",
    "implications",
    "10.2.3",
    "The Kleene Dienes and Yager R-implications surpass the baseline as well.",
)
def _kd_yr(v: View) -> tuple[bool | None, str]:
    rows = ["kleene_dienes", "yager_r_p1_5", "yager_r_p2", "yager_r_p20"]
    above, within, detail = _above(v, "implications", rows)
    return _exactly(above, within, rows), detail


@claim(
    "sigmoidal_as_reichenbach",
    "implications",
    "10.2.3",
    "The sigmoidal-Reichenbach implication, which we run with s=9 and b=-1/2, performs as well "
    "as the normal Reichenbach implication.",
)
def _sigmoidal_as_rc(v: View) -> tuple[bool | None, str]:
    cells = ("implications", "sigmoidal_reichenbach"), ("implications", "reichenbach")
    interval = v.interval(*cells)
    a, b = v.get(*cells[0]), v.get(*cells[1])
    return interval.outcome == 0, (
        f"sigmoidal {_f(a)} vs reichenbach {_f(b)}: {_margin_text(interval)}"
    )


@claim(
    "godel_goguen_below_baseline",
    "implications",
    "10.2.3",
    "The Gödel implication and Goguen implication have worse performance than the supervised "
    "baseline.",
)
def _g_gg(v: View) -> tuple[bool | None, str]:
    return _below(v, "implications", ["godel", "goguen"])


@claim(
    "godel_worst_lukasiewicz_among_better",
    "implications",
    "10.2.3",
    "I_LK performs among the better [at or above the median] while I_G is the worst test "
    "implication.",
)
def _godel_worst(v: View) -> tuple[bool | None, str]:
    values = _cells(v, "implications", v.rows("implications"))
    bottom, detail = _top(v, "implications", v.rows("implications"), lowest=True)
    order = sorted(values, key=values.__getitem__)
    median = values[order[len(order) // 2]]
    upper = values["lukasiewicz"] >= median
    return "godel" in bottom and upper, f"median {_f(median)}; {detail}"


@claim(
    "s_beat_r_godel_product",
    "implications",
    "10.2.3",
    "S-implications tend to perform better than R-implications, in particular for the Gödel "
    "t-norm and the product t-norm [I_KD > I_G, I_RC > I_GG].",
)
def _s_beat_r_impl(v: View) -> tuple[bool | None, str]:
    outcomes = [
        v.interval(("implications", s), ("implications", r)).outcome
        for s, r in (("kleene_dienes", "godel"), ("reichenbach", "goguen"))
    ]
    values = _cells(v, "implications", ["kleene_dienes", "godel", "reichenbach", "goguen"])
    holds = True if min(outcomes) > 0 else False if min(outcomes) < 0 else None
    return holds, f"{_text(values)}; S above R beyond the noise: {outcomes}"


@claim(
    "sigmoidal_sgd_beats_sgd_implications",
    "sgd_implications",
    "10.2.4, App. sigmoidal",
    "[The sigmoidal-Reichenbach implication, s=9] is the best performing implication on the same "
    "problem when using the vanilla SGD optimizer, reaching 97.3% accuracy.",
)
def _sigmoidal_sgd(v: View) -> tuple[bool | None, str]:
    top, detail = _top(v, "sgd_implications", v.rows("sgd_implications"))
    interval = v.interval(("sigmoidal_s", "9"), ("sgd_implications", top[0]))
    s9 = v.get("sigmoidal_s", "9")
    return _vs(1, interval), (
        f"sigmoidal s=9 {_f(s9)} minus the best SGD implication {top[0]}: "
        f"{_margin_text(interval)}; {detail}"
    )


@claim(
    "sum9_sgd_beats_adam",
    "best",
    "10.2.4",
    "We also ran the sum9 problem on the vanilla SGD optimizer with the fixed configuration, "
    "which reaches 97.7% accuracy. This is significantly higher than with ADAM [Table tnorms, "
    "T_Y p=1.5, the same configuration with ADAM; beyond the noise].",
)
def _sum9_sgd(v: View) -> tuple[bool | None, str]:
    interval = v.interval(("best", "sum9"), ("tnorms", "yager_p1_5"))
    sgd, adam = v.get("best", "sum9"), v.get("tnorms", "yager_p1_5")
    return _vs(1, interval), f"SGD {_f(sgd)} vs ADAM {_f(adam)}: {_margin_text(interval)}"


@claim(
    "both_best_overall",
    "best",
    "10.2.4",
    "[Both knowledge bases] has the best accuracy we find in our experiments with 98.0%, and "
    "confirms that adding more background knowledge increases the final performance.",
)
def _both_best(v: View) -> tuple[bool | None, str]:
    both = v.get("best", "both")
    others = {
        (e, r): x
        for (e, r, c), x in v.values.items()
        if c == "accuracy" and (e, r) != ("best", "both") and not math.isnan(x)
    }
    nearest = max(others, key=others.__getitem__)
    interval = v.interval(("best", "both"), nearest)
    return interval.outcome >= 0, (
        f"both {_f(both)} minus the next best {'/'.join(nearest)} {_f(others[nearest])}: "
        f"{_margin_text(interval)}"
    )


@claim(
    "cu_ant_correlates_with_accuracy",
    "analysis",
    "10.3",
    "[The plot of cu_ant to accuracy] shows a positive correlation.",
)
def _cu_ant_acc(v: View) -> tuple[bool | None, str]:
    _, rho, p, detail = _corr(v, MAIN, "cu_ant", "accuracy")
    return _sign(rho, p, 1), detail + " (main-text tables)"


@claim(
    "cu_cons_same_slightly_positive",
    "analysis",
    "10.3",
    "Although there seems to be a slight positive correlation [of cu_cons to accuracy] for the "
    "same problem, it is not as pronounced [as cu_ant's].",
)
def _cu_cons_same(v: View) -> tuple[bool | None, str]:
    _, rho, p, detail = _corr(v, MAIN, "cu_cons", "accuracy", "same")
    _, rho_ant, _, detail_ant = _corr(v, MAIN, "cu_ant", "accuracy", "same")
    return 0 < rho < rho_ant, f"{detail}; {detail_ant}"


@claim(
    "cu_cons_sum9_negative",
    "analysis",
    "10.3",
    "For the sum9, this correlation [cu_cons to accuracy] is negative instead.",
)
def _cu_cons_sum9(v: View) -> tuple[bool | None, str]:
    _, rho, p, detail = _corr(v, MAIN, "cu_cons", "accuracy", "sum9")
    return _sign(rho, p, -1), detail


@claim(
    "cons_anticorrelates_with_cu",
    "analysis",
    "10.3",
    "We plot all experimental values of cons to the values of cu_cons and cu_ant. For both, "
    "there seems to be a negative correlation.",
)
def _cons_cu(v: View) -> tuple[bool | None, str]:
    _, rho1, p1, d1 = _corr(v, MAIN, "cons", "cu_cons")
    _, rho2, p2, d2 = _corr(v, MAIN, "cons", "cu_ant")
    signs = [_sign(rho1, p1, -1), _sign(rho2, p2, -1)]
    holds = False if False in signs else None if None in signs else True
    return holds, f"{d1}; {d2}"


PRODUCT_RMSE = ("symmetric_aggregators", "product_rmse")
PRODUCT_LOG = ("symmetric_aggregators", "product_log_product")
TNORMS_RMSE = ["godel", "lukasiewicz", "product", "yager_p2", "yager_p20", "nilpotent"]
SYMMETRIC_S = {"godel": "godel_S", "lukasiewicz": "lukasiewicz", "product": "product_S"}


@claim(
    "rmse_log_product_beat_symmetric",
    "symmetric_aggregators",
    "App. aggregators",
    "Nearly all configurations perform significantly better using these aggregators than when "
    "using their 'symmetric' aggregator [at least 3/4 of the cells beat Table mnist_symmetric "
    "beyond the noise].",
)
def _beat_symmetric(v: View) -> tuple[bool | None, str]:
    wins, total, parts = 0, 0, []
    for tnorm in TNORMS_RMSE:
        sym = SYMMETRIC_S.get(tnorm, f"{tnorm}_S" if "yager" in tnorm else tnorm)
        deltas = []
        for aggregator in ("log_product", "rmse"):
            cell = ("symmetric_aggregators", f"{tnorm}_{aggregator}")
            interval = v.interval(cell, ("same_symmetric", sym))
            wins, total = wins + (interval.outcome > 0), total + 1
            deltas.append(interval.text())
        parts.append(f"{tnorm} {' / '.join(deltas)}")
    return wins >= 0.75 * total, (
        f"{wins} of {total} cells beat the symmetric row beyond the noise; "
        f"log-product / RMSE minus symmetric: {', '.join(parts)}"
    )


@claim(
    "godel_lk_yager_beat_baseline_both",
    "symmetric_aggregators",
    "App. aggregators",
    "The Gödel, Łukasiewicz and Yager t-norms all outperform the baseline with both aggregators.",
)
def _glky(v: View) -> tuple[bool | None, str]:
    rows = [f"{t}_{a}" for t in TNORMS_RMSE[:2] + TNORMS_RMSE[3:5] for a in ("log_product", "rmse")]
    above, within, detail = _above(v, "symmetric_aggregators", rows)
    return _exactly(above, within, rows), detail


@claim(
    "product_worse_with_rmse",
    "symmetric_aggregators",
    "App. aggregators",
    "The product t-norm seems to do slightly worse with the RMSE aggregator than with the "
    "log-product aggregator.",
)
def _product_rmse(v: View) -> tuple[bool | None, str]:
    cells = (
        ("symmetric_aggregators", "product_rmse"),
        ("symmetric_aggregators", "product_log_product"),
    )
    interval = v.interval(*cells)
    return _vs(-1, interval), (
        f"RMSE {_f(v.get(*cells[0]))} vs log-product {_f(v.get(*cells[1]))}: "
        f"{_margin_text(interval)}"
    )


@claim(
    "product_rmse_higher_cons_lower_cu",
    "symmetric_aggregators",
    "App. aggregators",
    "cons is higher using this [RMSE] aggregator. However, the values of cu_cons and cu_ant are "
    "much lower than when using the log-product aggregator.",
)
def _product_rmse_ratios(v: View) -> tuple[bool | None, str]:
    cells = (
        ("symmetric_aggregators", "product_rmse"),
        ("symmetric_aggregators", "product_log_product"),
    )
    wanted = {"cons": 1, "cu_cons": -1, "cu_ant": -1}
    found = {c: _vs(want, v.interval(*cells, c)) for c, want in wanted.items()}
    holds = False if False in found.values() else None if None in found.values() else True
    parts = [f"{c} {v.interval(*cells, c).text()}" for c in wanted]
    return holds, f"RMSE minus log-product: {', '.join(parts)}"


@claim(
    "lukasiewicz_log_product_low_cu_cons",
    "symmetric_aggregators",
    "App. aggregators",
    "The Łukasiewicz t-norm has a particularly high accuracy of 96.9% with the log product and is "
    "on the level of the product t-norm. However, it has a very low value for cu_cons of 0.06.",
)
def _luk_log(v: View) -> tuple[bool | None, str]:
    luk, product = (
        ("symmetric_aggregators", "lukasiewicz_log_product"),
        ("symmetric_aggregators", "product_log_product"),
    )
    interval = v.interval(luk, product)
    cu = v.get(*luk, "cu_cons")
    return interval.outcome == 0 and cu < 0.1, (
        f"T_LK {_f(v.get(*luk))} vs T_P {_f(v.get(*product))}: {_margin_text(interval)}; "
        f"T_LK cu_cons {cu:.2f}"
    )


@claim(
    "lukasiewicz_only_higher_cu_cons_with_rmse",
    "symmetric_aggregators",
    "App. aggregators",
    "It is also the only configuration for which cu_cons is higher when using the RMSE aggregator "
    "than the log-product aggregator.",
)
def _luk_only(v: View) -> tuple[bool | None, str]:
    higher, within = [], []
    for tnorm in TNORMS_RMSE:
        cells = (
            ("symmetric_aggregators", f"{tnorm}_rmse"),
            (
                "symmetric_aggregators",
                f"{tnorm}_log_product",
            ),
        )
        outcome = v.interval(*cells, "cu_cons").outcome
        (higher if outcome > 0 else within if outcome == 0 else []).append(tnorm)
    return _exactly(higher, within, ["lukasiewicz"]), (
        f"cu_cons higher with RMSE beyond the noise: {higher}; within it: {within}"
    )


@claim(
    "s9_best_s",
    "sigmoidal_s",
    "App. sigmoidal",
    "The value of 9 gives the best results, with 97.3% accuracy.",
)
def _s9(v: View) -> tuple[bool | None, str]:
    top, detail = _top(v, "sigmoidal_s", v.rows("sigmoidal_s"))
    return "9" in top, detail


def _trend(v: View, experiment: str, column: str) -> tuple[float, float, str]:
    """Spearman rho of the swept value against a column and its permutation p-value
    (NotMeasurable below stats.MIN_CELLS values)."""
    rows = v.rows(experiment)
    xs, ys = [float(r) for r in rows], [v.get(experiment, r, column) for r in rows]
    if len(rows) < stats.MIN_CELLS:
        raise NotMeasurable(f"too few cells: {len(rows)} values (a trend needs {stats.MIN_CELLS})")
    rho = spearman(xs, ys)
    if rho is None:
        raise NotMeasurable(f"{len(rows)} values with {column}: constant")
    p = stats.spearman_p(xs, ys)
    return rho, p, f"rho(s, {column}) = {rho:+.2f} (p = {p:.3f}) over {len(rows)} values"


@claim(
    "s_increases_cons",
    "sigmoidal_s",
    "App. sigmoidal",
    "Increasing s seems to increase cons.",
)
def _s_cons(v: View) -> tuple[bool | None, str]:
    rho, p, detail = _trend(v, "sigmoidal_s", "cons")
    return _sign(rho, p, 1), detail


@claim(
    "s_decreases_cu",
    "sigmoidal_s",
    "App. sigmoidal",
    "Both cu_cons and cu_ant decrease when s increases.",
)
def _s_cu(v: View) -> tuple[bool | None, str]:
    r1, p1, d1 = _trend(v, "sigmoidal_s", "cu_cons")
    r2, p2, d2 = _trend(v, "sigmoidal_s", "cu_ant")
    signs = [_sign(r1, p1, -1), _sign(r2, p2, -1)]
    holds = False if False in signs else None if None in signs else True
    return holds, f"{d1}; {d2}"


@claim(
    "s_best_not_highest_cu",
    "sigmoidal_s",
    "App. sigmoidal",
    "The best parameter value clearly is not the one for which the values of cu_cons and cu_ant "
    "are highest, namely the Reichenbach implication itself [s -> 0].",
)
def _s_not_cu(v: View) -> tuple[bool | None, str]:
    rows = v.rows("sigmoidal_s")
    best, _ = _top(v, "sigmoidal_s", rows)
    cons, _ = _top(v, "sigmoidal_s", rows, "cu_cons")
    ant, _ = _top(v, "sigmoidal_s", rows, "cu_ant")
    smallest = min(rows, key=float)
    ok = smallest in cons and smallest in ant and smallest not in best
    return ok, (
        f"top accuracy s in {best}, top cu_cons s in {cons}, top cu_ant s in {ant} "
        "(each tied within the noise)"
    )


@claim(
    "b0_half_best",
    "sigmoidal_b0",
    "App. sigmoidal",
    "Clearly, -1/2 works best, having the highest accuracy and cu_cons.",
)
def _b0(v: View) -> tuple[bool | None, str]:
    rows = v.rows("sigmoidal_b0")
    best, d1 = _top(v, "sigmoidal_b0", rows)
    cons, d2 = _top(v, "sigmoidal_b0", rows, "cu_cons")
    return "-0.5" in best and "-0.5" in cons, f"{d1}; {d2}"


@claim(
    "removing_3_small_effect",
    "formulas",
    "App. formulas",
    "Removing the reflexivity formula (3) does not largely impact the performance [(1) & (2) "
    "within the noise of all formulas, the s=9 run of sigmoidal_s].",
)
def _no_3(v: View) -> tuple[bool | None, str]:
    interval = v.interval(("formulas", "f12"), ("sigmoidal_s", "9"))
    a, full = v.get("formulas", "f12"), v.get("sigmoidal_s", "9")
    return interval.outcome == 0, (
        f"(1)&(2) {_f(a)} vs all formulas {_f(full)}: {_margin_text(interval)}"
    )


@claim(
    "removing_1_biggest_drop",
    "formulas",
    "App. formulas",
    "The biggest drop in performance is by removing formula (1) that defines the same predicate.",
)
def _no_1(v: View) -> tuple[bool | None, str]:
    bottom, detail = _top(v, "formulas", ["f12", "f23", "f13"], lowest=True)
    return "f23" in bottom, detail


@claim(
    "only_1_beats_only_2",
    "formulas",
    "App. formulas",
    "Using only formula (1) gets slightly better performance than only using formula (2).",
)
def _f1_f2(v: View) -> tuple[bool | None, str]:
    interval = v.interval(("formulas", "f1"), ("formulas", "f2"))
    a, b = v.get("formulas", "f1"), v.get("formulas", "f2")
    return _vs(1, interval), f"(1) {_f(a)} vs (2) {_f(b)}: {_margin_text(interval)}"


@claim(
    "formula_1_antecedent_dominated",
    "formulas",
    "App. formulas",
    "Since 95% of the derivatives are with respect to the negated antecedent [cons of (1) <= 0.1], "
    "this formula contributes by finding additional counterexamples.",
)
def _f1_cons(v: View) -> tuple[bool | None, str]:
    x = v.get("formulas", "f1", "cons")
    return x <= FORMULA_1_CONS, f"cons of (1) alone {x:.2f} (the paper: 95% antecedent, <= 0.05)"


@claim(
    "only_3_best_single",
    "formulas",
    "App. formulas",
    "Just using the reflexivity formula (3) has the highest accuracy when used individually.",
)
def _f3(v: View) -> tuple[bool | None, str]:
    top, detail = _top(v, "formulas", ["f1", "f2", "f3"])
    return "f3" in top, detail


SYMMETRIC = {  # Section 10.1's fully symmetric configurations; T_P + I_RC is product_S / product
    "same_symmetric": [*SYM_S, *SYM_R, "lukasiewicz", "nilpotent"],
    "sum9_symmetric": list(SUM9_OF_SAME),
}
T_P_I_RC = {("same_symmetric", "product_S"), ("sum9_symmetric", "product")}


@claim(
    "only_symmetric_product_reichenbach",
    "conclusions",
    "10.4",
    "The only well performing fully symmetric option is the product t-norm with the Reichenbach "
    "implication [the only symmetric rows above the baseline beyond the noise are T_P + I_RC].",
)
def _only_tp_irc(v: View) -> tuple[bool | None, str]:
    well, within, parts = [], [], []
    for experiment, rows in SYMMETRIC.items():
        for row in rows:
            interval = v.interval((experiment, row), BASE)
            if interval.outcome > 0:
                well.append((experiment, row))
                parts.append(f"{experiment}/{row} {interval.text()}")
            elif interval.outcome == 0:
                within.append((experiment, row))
    others = set(well) - T_P_I_RC
    holds = False if others else True if well else None
    return holds, f"above the baseline beyond the noise: {', '.join(parts) or 'none'}"


INDIVIDUAL = {  # Section 10.2's factors: the table and its rows that vary one operator
    "universal aggregator": ("aggregation", "forall_"),
    "existential aggregator": ("aggregation", "exists_"),
    "t-norm": ("tnorms", ""),
    "implication": ("implications", ""),
}


@claim(
    "aggregators_most_important",
    "conclusions",
    "10.4",
    "If we are willing to forego symmetry, we find that the choice of the aggregators is the most "
    "important factor for performance [of Section 10.2's four factors, an aggregator has the "
    "largest share of choices that fall below the supervised baseline beyond the noise: a bad "
    "choice there costs most often].",
)
def _aggregators_matter(v: View) -> tuple[bool | None, str]:
    shares, ranges = {}, {}
    for factor, (experiment, prefix) in INDIVIDUAL.items():
        rows = v.rows(experiment, prefix)
        values = _cells(v, experiment, rows)
        below = [r for r in rows if v.interval((experiment, r), BASE).outcome < 0]
        shares[factor] = len(below) / len(rows)
        ranges[factor] = max(values.values()) - min(values.values())
    top = max(shares, key=shares.__getitem__)
    tied = [k for k, x in shares.items() if x == shares[top]]
    holds = all("aggregator" in k for k in tied) if len(tied) == 1 else None
    return holds, (
        "share of choices below the baseline: "
        + ", ".join(f"{k} {x:.2f}" for k, x in shares.items())
        + "; range (best - worst, not the measure: collapsed rows decide it, and the paper's "
        "own numbers fail it): " + ", ".join(f"{k} {x:.2f}" for k, x in ranges.items())
    )


@claim(
    "dfl_improves_on_baseline",
    "conclusions",
    "10.4",
    "DFL significantly improves on the supervised baseline [the default configuration, Section "
    "10.2's fixed operators, minus the baseline: its 95% interval is above 0].",
)
def _dfl_improves(v: View) -> tuple[bool | None, str]:
    run = v.default_run
    if run is None:
        raise NotMeasurable("default configuration missing")
    interval = v.against(run, BASE)
    return interval.outcome > 0, (
        f"default {_f(run.mean)} ({run.seeds}) vs baseline {_f(v.baseline())}: "
        f"{_margin_text(interval)}"
    )
