"""The paper's qualitative claims (Sections 10.1-10.3, appendix), each a check over the tables.

Each claim is written once: a name, the table it belongs to, the paper's sentence, and a function
of a `View` (the paper's numbers or ours) that returns whether it holds and the numbers behind it.
A claim whose cells are missing or undefined is "not measurable". "Beats the baseline" means more
than BASELINE_MARGIN points above it (the paper prints the 95.18% baseline as 95.2). The comparative
words ("much better", "significantly", "quite a bit", "on par", "as well as") are decided by the
view's seed noise (noise.py): a win beyond two standard errors of the difference, a tie within them
(the paper's view: its baseline std; ours: the seed spread measured at the profile). A correlation
is decided by Spearman's rho, Pearson's r printed beside it (Section 10.3's cells include collapsed
rows near 20% accuracy that dominate r); the detail says where r alone would decide otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from dfl_bench.results.agreement import pearson, spearman
from dfl_bench.results.noise import Noise, Z
from dfl_bench.results.tables import Table

BASELINE_MARGIN = 0.1  # accuracy points
SAME = 0.5  # accuracy points: "around 97%"
Key = tuple[str, str, str]  # (experiment, row, column)
SECTIONS = {  # claims over several tables, shown in the index: their `experiment` and title
    "analysis": "Claims of the analysis (Section 10.3, fig. analyze_measures)",
    "conclusions": "Claims of the conclusions (Section 10.4)",
}


class NotMeasurable(Exception):
    """A claim needs a cell that is missing, failed or undefined."""


@dataclass(frozen=True)
class View:
    """The numbers one claim sees: the paper's or ours (accuracy in %, ratios in [0, 1])."""

    source: str
    values: Mapping[Key, float]  # nan = undefined ratio; absent = no cell
    baseline_accuracy: float | None
    problems: Mapping[tuple[str, str], str]
    layout: Mapping[str, list[str]]  # experiment -> the paper's rows (what a claim quantifies over)
    noise: Noise | None = None
    counts: Mapping[tuple[str, str], int] = field(default_factory=dict)  # seeds per cell (else 1)
    default_run: Sample | None = None  # Section 10.2's fixed operators, over its seeds

    def get(self, experiment: str, row: str, column: str = "accuracy") -> float:
        """A number, or NotMeasurable naming the cell."""
        value = self.values.get((experiment, row, column))
        if value is None or math.isnan(value):
            state = "missing" if value is None else "undefined"
            raise NotMeasurable(f"{experiment}/{row} {column} {state}")
        return value

    def undefined(self, experiment: str, row: str, column: str) -> bool:
        """Whether the cell exists with `column` undefined (NotMeasurable when there is no cell)."""
        if (experiment, row, "accuracy") not in self.values:
            raise NotMeasurable(f"{experiment}/{row} missing")
        value = self.values.get((experiment, row, column))
        return value is None or math.isnan(value)

    def baseline(self) -> float:
        """The supervised baseline's accuracy."""
        if self.baseline_accuracy is None:
            raise NotMeasurable("baseline missing")
        return self.baseline_accuracy

    def n(self, experiment: str, row: str) -> int:
        """The seeds behind a cell's mean (1 for a printed number)."""
        return self.counts.get((experiment, row), 1)

    def margin(self, a: tuple[str, str], b: tuple[str, str]) -> float:
        """Z standard errors of the difference of two cells' accuracies (the seed noise)."""
        if self.noise is None:
            raise NotMeasurable("no seed spread at this profile (needs 2 seeds of a spread run)")
        return self.noise.margin(self.n(*a), self.n(*b))

    def rows(self, experiment: str, prefix: str = "") -> list[str]:
        """The paper's rows of an experiment, optionally those starting with `prefix`."""
        return [row for row in self.layout.get(experiment, []) if row.startswith(prefix)]


@dataclass(frozen=True)
class Sample:
    """A mean accuracy over seeds (which seeds, in words)."""

    mean: float
    n: int
    seeds: str


@dataclass(frozen=True)
class Claim:
    """One checkable statement of the paper."""

    name: str
    experiment: str
    where: str
    sentence: str
    check: Callable[[View], tuple[bool, str]]


@dataclass(frozen=True)
class Verdict:
    """holds / fails / not measurable, with the numbers behind it."""

    status: str
    detail: str


CLAIMS: list[Claim] = []


def claim(name: str, experiment: str, where: str, sentence: str):
    """Register a check function as a claim."""

    def register(check: Callable[[View], tuple[bool, str]]) -> Callable[[View], tuple[bool, str]]:
        CLAIMS.append(Claim(name, experiment, where, " ".join(sentence.split()), check))
        return check

    return register


def evaluate(item: Claim, view: View) -> Verdict:
    """Run one claim on one view."""
    try:
        holds, detail = item.check(view)
    except NotMeasurable as err:
        return Verdict("not measurable", str(err))
    return Verdict("holds" if holds else "fails", detail)


def views(
    tables: Mapping[str, Table],
    paper_baseline: float,
    noise: tuple[Noise, Noise | None],
    default_run: Sample | None,
) -> tuple[View, View]:
    """The paper's view and ours over the tables of one profile; `noise` is the paper's and
    ours, `default_run` our seeds of the default configuration (the paper: its A_log T_P cell)."""
    paper: dict[Key, float] = {}
    ours: dict[Key, float] = {}
    counts: dict[tuple[str, str], int] = {}
    problems: dict[tuple[str, str], str] = {}
    for name, table in tables.items():
        for key, (cell, mine) in table.pairs().items():
            if cell.problem:
                problems[(name, key)] = cell.problem
            if any(v is not None for v in cell.values.values()):
                for column in cell.values:
                    number = cell.number(column)
                    paper[(name, key, column)] = math.nan if number is None else number
            if mine is not None and mine.n_ok:
                for column, value in mine.mean.items():
                    ours[(name, key, column)] = math.nan if value is None else value
        for key, mine in table.ours().items():
            counts[(name, key)] = mine.n["accuracy"]
            if mine.n_ok and (name, key, "accuracy") not in ours:
                for column, value in mine.mean.items():
                    ours[(name, key, column)] = math.nan if value is None else value
    baseline = ours.get(("baseline", "ce_pair", "accuracy"))
    layout = {name: table.paper.keys() for name, table in tables.items()}
    fixed = paper.get(("aggregation", DEFAULT_CELL, "accuracy"))
    paper_default = None if fixed is None else Sample(fixed, 1, "one run (Table aggregation)")
    return (
        View("paper", paper, paper_baseline, problems, layout, noise[0], {}, paper_default),
        View("ours", ours, baseline, problems, layout, noise[1], counts, default_run),
    )


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


def _argmax(v: View, experiment: str, rows: Iterable[str], column: str = "accuracy") -> tuple:
    """(best row, detail text) over the given rows."""
    values = _cells(v, experiment, rows, column)
    best = max(values, key=values.__getitem__)
    return best, f"{column}: {_text(values)}"


def _above(v: View, experiment: str, rows: Iterable[str]) -> tuple[list[str], str]:
    """The rows that beat the baseline by more than BASELINE_MARGIN, and the detail."""
    values = _cells(v, experiment, rows)
    base = v.baseline()
    above = [row for row, x in values.items() if x > base + BASELINE_MARGIN]
    return above, f"baseline {_f(base)}; {_text(values)}"


def _corr(
    v: View, tables: Iterable[str], x: str, y: str, problem: str | None = None
) -> tuple[float, float, str]:
    """Pearson r and Spearman rho of two columns over the cells of the given tables (optionally
    one problem)."""
    pairs = []
    for (exp, row, column), value in v.values.items():
        if exp not in tables or column != x:
            continue
        if problem is not None and v.problems.get((exp, row)) != problem:
            continue
        other = v.values.get((exp, row, y))
        if other is not None and not math.isnan(value) and not math.isnan(other):
            pairs.append((value, other))
    xs, ys = [a for a, _ in pairs], [b for _, b in pairs]
    r, rho = pearson(xs, ys), spearman(xs, ys)
    if r is None or rho is None:
        raise NotMeasurable(f"{len(pairs)} cells with {x} and {y} (need 3, not constant)")
    where = f" ({problem})" if problem else ""
    flip = " (r alone: the other sign)" if (r > 0) != (rho > 0) else ""
    return r, rho, f"rho({x}, {y}) = {rho:+.2f}, r = {r:+.2f}{flip} over {len(pairs)} cells{where}"


def _win(v: View, a: tuple[str, str], b: tuple[str, str]) -> tuple[bool, float, float]:
    """Whether cell a's accuracy beats cell b's beyond the seed noise; the difference, margin."""
    margin = v.margin(a, b)
    delta = v.get(*a) - v.get(*b)
    return delta > margin, delta, margin


def _tie(v: View, a: tuple[str, str], b: tuple[str, str]) -> tuple[bool, float, float]:
    """Whether two cells' accuracies are within the seed noise; the difference, margin."""
    margin = v.margin(a, b)
    delta = v.get(*a) - v.get(*b)
    return abs(delta) <= margin, delta, margin


def _margin_text(delta: float, margin: float) -> str:
    """`difference +0.42 (noise margin 0.58)`."""
    return f"difference {delta:+.2f} (noise margin {margin:.2f})"


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
def _s_beat_r_same(v: View) -> tuple[bool, str]:
    wins, parts = 0, []
    for a, b in zip(SYM_S, SYM_R, strict=True):
        win, delta, margin = _win(v, ("same_symmetric", a), ("same_symmetric", b))
        wins += win
        parts.append(f"{a[:-2]} {delta:+.2f}")
    margin = v.margin(("same_symmetric", SYM_S[0]), ("same_symmetric", SYM_R[0]))
    return wins > len(SYM_S) / 2, (
        f"S beats R beyond the noise (margin {margin:.2f}) in {wins} of {len(SYM_S)} t-norms; "
        f"S - R: {', '.join(parts)}"
    )


@claim(
    "r_only_yager20_beats_baseline",
    "same_symmetric",
    "10.1.1",
    "The only configuration with R-implications that outperform the supervised baseline is "
    "T_Y, p=20.",
)
def _r_only_yager20(v: View) -> tuple[bool, str]:
    above, detail = _above(v, "same_symmetric", SYM_R)
    return above == ["yager_p20_R"], f"above: {above}; {detail}"


@claim(
    "yager20_s_similar_to_r",
    "same_symmetric",
    "10.1.1",
    "[T_Y, p=20 is the only R-implication configuration above the baseline,] but here the "
    "S-implication performs similar to it [within the seed noise].",
)
def _yager20_s_r(v: View) -> tuple[bool, str]:
    tie, delta, margin = _tie(
        v, ("same_symmetric", "yager_p20_S"), ("same_symmetric", "yager_p20_R")
    )
    return tie, f"yager_p20 S - R: {_margin_text(delta, margin)}"


@claim(
    "godel_on_par_with_baseline",
    "same_symmetric",
    "10.1.1",
    "The Gödel t-norm performs on par with the supervised baseline.",
)
def _godel_par(v: View) -> tuple[bool, str]:
    tie, delta, margin = _tie(v, ("same_symmetric", "godel_S"), BASE)
    x, base = v.get("same_symmetric", "godel_S"), v.baseline()
    return tie, f"godel_S {_f(x)} vs baseline {_f(base)}: {_margin_text(delta, margin)}"


@claim(
    "lukasiewicz_below_baseline",
    "same_symmetric",
    "10.1.1",
    "The Łukasiewicz t-norm performs worse than the supervised baseline.",
)
def _luk_below(v: View) -> tuple[bool, str]:
    x, base = v.get("same_symmetric", "lukasiewicz"), v.baseline()
    return x < base, f"lukasiewicz {_f(x)} vs baseline {_f(base)}"


@claim(
    "lukasiewicz_cons_half",
    "same_symmetric",
    "10.1.1",
    "By the definition of I_LK, cons = 1/2 as the consequent and negated antecedent derivatives "
    "are equal.",
)
def _luk_half(v: View) -> tuple[bool, str]:
    x = v.get("same_symmetric", "lukasiewicz", "cons")
    return abs(x - 0.5) <= 0.01, f"cons {x:.3f}"


@claim(
    "lukasiewicz_cu_cons_below_random",
    "same_symmetric",
    "10.1.1",
    "cu_cons is very low with only 0.01, which is worse than random guessing [0.1].",
)
def _luk_cu_cons(v: View) -> tuple[bool, str]:
    x = v.get("same_symmetric", "lukasiewicz", "cu_cons")
    return x < 0.1, f"cu_cons {x:.2f} (random guessing: 0.1)"


@claim(
    "yager20_beats_baseline",
    "same_symmetric",
    "10.1.1",
    "For p=20 the top performance is quite a bit higher than the baseline [beyond the noise].",
)
def _yager20(v: View) -> tuple[bool, str]:
    win, delta, margin = _win(v, ("same_symmetric", "yager_p20_S"), BASE)
    x, base = v.get("same_symmetric", "yager_p20_S"), v.baseline()
    return win, f"yager_p20_S {_f(x)} vs baseline {_f(base)}: {_margin_text(delta, margin)}"


@claim(
    "yager2_below_lukasiewicz",
    "same_symmetric",
    "10.1.1",
    "For p=2, the results are even worse than the Łukasiewicz t-norm.",
)
def _yager2(v: View) -> tuple[bool, str]:
    a, b = v.get("same_symmetric", "yager_p2_S"), v.get("same_symmetric", "lukasiewicz")
    return a < b, f"yager_p2_S {_f(a)} vs lukasiewicz {_f(b)}"


@claim(
    "yager15_vanishes",
    "same_symmetric",
    "10.1.1",
    "The derivative with p=1.5 simply vanishes throughout the whole run (no ratios).",
)
def _yager15(v: View) -> tuple[bool, str]:
    gone = [v.undefined("same_symmetric", row, "cons") for row in ("yager_p1_5_S", "yager_p1_5_R")]
    return all(gone), f"cons undefined (S, R): {gone}"


@claim(
    "product_best_same_symmetric",
    "same_symmetric",
    "10.1.1",
    "The product t-norm performs best.",
)
def _product_best(v: View) -> tuple[bool, str]:
    best, detail = _argmax(v, "same_symmetric", v.rows("same_symmetric"))
    return best == "product_S", f"best {best}; {detail}"


@claim(
    "product_highest_cu_ratios",
    "same_symmetric",
    "10.1.1",
    "[The product t-norm] also has the highest values for cu_cons and cu_ant (S-implications).",
)
def _product_cu(v: View) -> tuple[bool, str]:
    rows = ["godel_S", "product_S", "lukasiewicz", "yager_p2_S", "yager_p20_S"]
    best_cons, a = _argmax(v, "same_symmetric", rows, "cu_cons")
    best_ant, b = _argmax(v, "same_symmetric", rows, "cu_ant")
    return best_cons == best_ant == "product_S", f"{a}; {b}"


@claim(
    "nilpotent_like_baseline",
    "same_symmetric",
    "10.1.1",
    "The Nilpotent t-norm performs exactly like the supervised baseline since the derivative of "
    "the universal aggregator vanished during the complete training run.",
)
def _nilpotent(v: View) -> tuple[bool, str]:
    gone = v.undefined("same_symmetric", "nilpotent", "cons")
    tie, delta, margin = _tie(v, ("same_symmetric", "nilpotent"), BASE)
    x, base = v.get("same_symmetric", "nilpotent"), v.baseline()
    return gone and tie, (
        f"cons undefined: {gone}; nilpotent {_f(x)} vs baseline {_f(base)}: "
        f"{_margin_text(delta, margin)}"
    )


@claim(
    "sum9_only_product_yager20_beat_baseline",
    "sum9_symmetric",
    "10.1.2",
    "The only configurations that clearly outperform the supervised baseline are the product "
    "t-norm and the Yager t-norm with p=20.",
)
def _sum9_above(v: View) -> tuple[bool, str]:
    above, detail = _above(v, "sum9_symmetric", v.rows("sum9_symmetric"))
    return sorted(above) == ["product", "yager_p20"], f"above: {above}; {detail}"


@claim(
    "sum9_product_best",
    "sum9_symmetric",
    "10.1.2",
    "... with the product t-norm being the most promising candidate.",
)
def _sum9_product(v: View) -> tuple[bool, str]:
    best, detail = _argmax(v, "sum9_symmetric", v.rows("sum9_symmetric"))
    return best == "product", f"best {best}; {detail}"


@claim(
    "sum9_vanishing",
    "sum9_symmetric",
    "10.1.2",
    "In addition to the Nilpotent t-norm, the derivatives of the Łukasiewicz t-norm and Yager "
    "t-norm with p=2 vanish throughout the whole run.",
)
def _sum9_vanish(v: View) -> tuple[bool, str]:
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
def _sum9_reflects(v: View) -> tuple[bool, str]:
    sum9 = _cells(v, "sum9_symmetric", SUM9_OF_SAME)
    same = _cells(v, "same_symmetric", SUM9_OF_SAME.values())
    rho = spearman(list(sum9.values()), list(same.values()))
    if rho is None:
        raise NotMeasurable("constant accuracies")
    best_sum9 = max(sum9, key=sum9.__getitem__)
    best_same = max(same, key=same.__getitem__)
    ok = rho >= REFLECT_RHO and SUM9_OF_SAME[best_sum9] == best_same
    return (
        ok,
        f"rho {rho:+.2f} over {len(sum9)} t-norms; best sum9 {best_sum9}, best same {best_same}",
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
def _log_product(v: View) -> tuple[bool, str]:
    values = _cells(v, "aggregation", v.rows("aggregation", "forall_"))
    order = sorted(values, key=values.__getitem__, reverse=True)
    return order[:2] == [
        "forall_log_product",
        "forall_rmse",
    ], f"order: {_text({k: values[k] for k in order})}"


@claim(
    "other_gme_effective",
    "aggregation",
    "10.2.1",
    "Other generalized mean errors are also effective [A_GME p=1.5 and p=20 above the baseline].",
)
def _other_gme(v: View) -> tuple[bool, str]:
    rows = ["forall_gme_p1_5", "forall_gme_p20"]
    above, detail = _above(v, "aggregation", rows)
    return above == rows, f"above: {above}; {detail}"


@claim(
    "poor_forall_aggregators",
    "aggregation",
    "10.2.1",
    "The single-passing aggregators (minimum and Nilpotent minimum aggregators) and aggregators "
    "that vanish on a large part of their domain (Yager-based and Nilpotent minimum) all perform "
    "poorly [below the baseline].",
)
def _poor_forall(v: View) -> tuple[bool, str]:
    above, detail = _above(v, "aggregation", FORALL_POOR)
    return not above, f"above baseline: {above}; {detail}"


@claim(
    "yager_forall_high_cu",
    "aggregation",
    "10.2.1",
    "Curiously the Yager-based aggregators have very high cu_cons and cu_ant [above every other "
    "universal aggregator's median].",
)
def _yager_cu(v: View) -> tuple[bool, str]:
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
def _gm_best(v: View) -> tuple[bool, str]:
    best, detail = _argmax(v, "aggregation", v.rows("aggregation", "exists_"))
    return best == "exists_gm_p1_5", f"best {best}; {detail}"


@claim(
    "yager_exists_decent",
    "aggregation",
    "10.2.1",
    "Unlike with universal aggregation, the Yager existential aggregator is also a decent choice "
    "[above the baseline].",
)
def _yager_exists(v: View) -> tuple[bool, str]:
    rows = v.rows("aggregation", "exists_yager")
    above, detail = _above(v, "aggregation", rows)
    return bool(rows) and sorted(above) == sorted(rows), detail


@claim(
    "max_nilpotent_exists_only_somewhat",
    "aggregation",
    "10.2.1",
    "The maximum aggregator and Nilpotent maximum aggregator only somewhat outperform the "
    "supervised baseline [above it, below every generalized mean].",
)
def _max_exists(v: View) -> tuple[bool, str]:
    rows = ["exists_maximum", "exists_nilpotent"]
    above, detail = _above(v, "aggregation", rows)
    gm = _cells(v, "aggregation", v.rows("aggregation", "exists_gm"))
    ok = sorted(above) == rows and max(_cells(v, "aggregation", rows).values()) < min(gm.values())
    return ok, f"{detail}; generalized means {_text(gm)}"


@claim(
    "vanishing_tnorms_best",
    "tnorms",
    "10.2.2",
    "It is the operators that vanish on a large part of their domain that work best, namely "
    "Yager t-norms and the Nilpotent minimum [the best row is one of them or T_LK].",
)
def _vanishing_best(v: View) -> tuple[bool, str]:
    best, detail = _argmax(v, "tnorms", v.rows("tnorms"))
    return best not in ("godel", "product"), f"best {best}; {detail}"


@claim(
    "godel_product_tnorms_poor",
    "tnorms",
    "10.2.2",
    "The product t-norm and Gödel t-norm ... seem to perform very poorly [below the baseline].",
)
def _godel_product_poor(v: View) -> tuple[bool, str]:
    values = _cells(v, "tnorms", ["godel", "product"])
    base = v.baseline()
    return max(values.values()) < base, f"baseline {_f(base)}; {_text(values)}"


@claim(
    "tnorms_low_cons_better",
    "tnorms",
    "10.2.2",
    "In this table, there is a clear relation where lower cons seem to perform better.",
)
def _low_cons(v: View) -> tuple[bool, str]:
    _, rho, detail = _corr(v, ("tnorms",), "cons", "accuracy")
    return rho < 0, detail


@claim(
    "reichenbach_yager_s_around_97",
    "implications",
    "10.2.3",
    "The Reichenbach implication and Yager S-implication work well, both having an accuracy "
    "around 97% [within 0.5].",
)
def _around_97(v: View) -> tuple[bool, str]:
    values = _cells(v, "implications", ["reichenbach", "yager_s_p1_5", "yager_s_p2", "yager_s_p20"])
    return all(abs(x - 97) <= SAME for x in values.values()), _text(values)


@claim(
    "kleene_dienes_yager_r_beat_baseline",
    "implications",
    "10.2.3",
    "The Kleene Dienes and Yager R-implications surpass the baseline as well.",
)
def _kd_yr(v: View) -> tuple[bool, str]:
    rows = ["kleene_dienes", "yager_r_p1_5", "yager_r_p2", "yager_r_p20"]
    above, detail = _above(v, "implications", rows)
    return sorted(above) == sorted(rows), detail


@claim(
    "sigmoidal_as_reichenbach",
    "implications",
    "10.2.3",
    "The sigmoidal-Reichenbach implication, which we run with s=9 and b=-1/2, performs as well "
    "as the normal Reichenbach implication.",
)
def _sigmoidal_as_rc(v: View) -> tuple[bool, str]:
    cells = ("implications", "sigmoidal_reichenbach"), ("implications", "reichenbach")
    tie, delta, margin = _tie(v, *cells)
    a, b = v.get(*cells[0]), v.get(*cells[1])
    return tie, f"sigmoidal {_f(a)} vs reichenbach {_f(b)}: {_margin_text(delta, margin)}"


@claim(
    "godel_goguen_below_baseline",
    "implications",
    "10.2.3",
    "The Gödel implication and Goguen implication have worse performance than the supervised "
    "baseline.",
)
def _g_gg(v: View) -> tuple[bool, str]:
    values = _cells(v, "implications", ["godel", "goguen"])
    base = v.baseline()
    return max(values.values()) < base, f"baseline {_f(base)}; {_text(values)}"


@claim(
    "godel_worst_lukasiewicz_among_better",
    "implications",
    "10.2.3",
    "I_LK performs among the better [at or above the median] while I_G is the worst test "
    "implication.",
)
def _godel_worst(v: View) -> tuple[bool, str]:
    values = _cells(v, "implications", v.rows("implications"))
    order = sorted(values, key=values.__getitem__)
    median = values[order[len(order) // 2]]
    upper = values["lukasiewicz"] >= median
    detail = f"median {_f(median)}; ascending: {_text({k: values[k] for k in order})}"
    return order[0] == "godel" and upper, detail


@claim(
    "s_beat_r_godel_product",
    "implications",
    "10.2.3",
    "S-implications tend to perform better than R-implications, in particular for the Gödel "
    "t-norm and the product t-norm [I_KD > I_G, I_RC > I_GG].",
)
def _s_beat_r_impl(v: View) -> tuple[bool, str]:
    values = _cells(v, "implications", ["kleene_dienes", "godel", "reichenbach", "goguen"])
    ok = values["kleene_dienes"] > values["godel"] and values["reichenbach"] > values["goguen"]
    return ok, _text(values)


@claim(
    "sigmoidal_sgd_beats_sgd_implications",
    "sgd_implications",
    "10.2.4, App. sigmoidal",
    "[The sigmoidal-Reichenbach implication, s=9] is the best performing implication on the same "
    "problem when using the vanilla SGD optimizer, reaching 97.3% accuracy.",
)
def _sigmoidal_sgd(v: View) -> tuple[bool, str]:
    s9 = v.get("sigmoidal_s", "9")
    best, detail = _argmax(v, "sgd_implications", v.rows("sgd_implications"))
    other = v.get("sgd_implications", best)
    return s9 > other, f"sigmoidal s=9 {_f(s9)} vs best SGD implication {best} {_f(other)}"


@claim(
    "sum9_sgd_beats_adam",
    "best",
    "10.2.4",
    "We also ran the sum9 problem on the vanilla SGD optimizer with the fixed configuration, "
    "which reaches 97.7% accuracy. This is significantly higher than with ADAM [Table tnorms, "
    "T_Y p=1.5, the same configuration with ADAM; beyond the noise].",
)
def _sum9_sgd(v: View) -> tuple[bool, str]:
    win, delta, margin = _win(v, ("best", "sum9"), ("tnorms", "yager_p1_5"))
    sgd, adam = v.get("best", "sum9"), v.get("tnorms", "yager_p1_5")
    return win, f"SGD {_f(sgd)} vs ADAM {_f(adam)}: {_margin_text(delta, margin)}"


@claim(
    "both_best_overall",
    "best",
    "10.2.4",
    "[Both knowledge bases] has the best accuracy we find in our experiments with 98.0%, and "
    "confirms that adding more background knowledge increases the final performance.",
)
def _both_best(v: View) -> tuple[bool, str]:
    both = v.get("best", "both")
    others = {
        f"{e}/{r}": x
        for (e, r, c), x in v.values.items()
        if c == "accuracy" and (e, r) != ("best", "both") and not math.isnan(x)
    }
    best = max(others, key=others.__getitem__)
    return both > others[best], f"both {_f(both)} vs next best {best} {_f(others[best])}"


@claim(
    "cu_ant_correlates_with_accuracy",
    "analysis",
    "10.3",
    "[The plot of cu_ant to accuracy] shows a positive correlation.",
)
def _cu_ant_acc(v: View) -> tuple[bool, str]:
    _, rho, detail = _corr(v, MAIN, "cu_ant", "accuracy")
    return rho > 0, detail + " (main-text tables)"


@claim(
    "cu_cons_same_slightly_positive",
    "analysis",
    "10.3",
    "Although there seems to be a slight positive correlation [of cu_cons to accuracy] for the "
    "same problem, it is not as pronounced [as cu_ant's].",
)
def _cu_cons_same(v: View) -> tuple[bool, str]:
    _, rho, detail = _corr(v, MAIN, "cu_cons", "accuracy", "same")
    _, rho_ant, detail_ant = _corr(v, MAIN, "cu_ant", "accuracy", "same")
    return 0 < rho < rho_ant, f"{detail}; {detail_ant}"


@claim(
    "cu_cons_sum9_negative",
    "analysis",
    "10.3",
    "For the sum9, this correlation [cu_cons to accuracy] is negative instead.",
)
def _cu_cons_sum9(v: View) -> tuple[bool, str]:
    _, rho, detail = _corr(v, MAIN, "cu_cons", "accuracy", "sum9")
    return rho < 0, detail


@claim(
    "cons_anticorrelates_with_cu",
    "analysis",
    "10.3",
    "We plot all experimental values of cons to the values of cu_cons and cu_ant. For both, "
    "there seems to be a negative correlation.",
)
def _cons_cu(v: View) -> tuple[bool, str]:
    _, rho1, d1 = _corr(v, MAIN, "cons", "cu_cons")
    _, rho2, d2 = _corr(v, MAIN, "cons", "cu_ant")
    return rho1 < 0 and rho2 < 0, f"{d1}; {d2}"


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
def _beat_symmetric(v: View) -> tuple[bool, str]:
    wins, total, parts = 0, 0, []
    for tnorm in TNORMS_RMSE:
        sym = SYMMETRIC_S.get(tnorm, f"{tnorm}_S" if "yager" in tnorm else tnorm)
        deltas = []
        for aggregator in ("log_product", "rmse"):
            cell = ("symmetric_aggregators", f"{tnorm}_{aggregator}")
            win, delta, margin = _win(v, cell, ("same_symmetric", sym))
            wins, total = wins + win, total + 1
            deltas.append(f"{delta:+.2f}")
        parts.append(f"{tnorm} {'/'.join(deltas)}")
    return wins >= 0.75 * total, (
        f"{wins} of {total} cells beat the symmetric row beyond the noise (margin {margin:.2f}); "
        f"log-product/RMSE - symmetric: {', '.join(parts)}"
    )


@claim(
    "godel_lk_yager_beat_baseline_both",
    "symmetric_aggregators",
    "App. aggregators",
    "The Gödel, Łukasiewicz and Yager t-norms all outperform the baseline with both aggregators.",
)
def _glky(v: View) -> tuple[bool, str]:
    rows = [f"{t}_{a}" for t in TNORMS_RMSE[:2] + TNORMS_RMSE[3:5] for a in ("log_product", "rmse")]
    above, detail = _above(v, "symmetric_aggregators", rows)
    return sorted(above) == sorted(rows), detail


@claim(
    "product_worse_with_rmse",
    "symmetric_aggregators",
    "App. aggregators",
    "The product t-norm seems to do slightly worse with the RMSE aggregator than with the "
    "log-product aggregator.",
)
def _product_rmse(v: View) -> tuple[bool, str]:
    a, b = (
        v.get("symmetric_aggregators", "product_rmse"),
        v.get("symmetric_aggregators", "product_log_product"),
    )
    return a < b, f"RMSE {_f(a)} vs log-product {_f(b)}"


@claim(
    "product_rmse_higher_cons_lower_cu",
    "symmetric_aggregators",
    "App. aggregators",
    "cons is higher using this [RMSE] aggregator. However, the values of cu_cons and cu_ant are "
    "much lower than when using the log-product aggregator.",
)
def _product_rmse_ratios(v: View) -> tuple[bool, str]:
    rmse = {
        c: v.get("symmetric_aggregators", "product_rmse", c) for c in ("cons", "cu_cons", "cu_ant")
    }
    log = {c: v.get("symmetric_aggregators", "product_log_product", c) for c in rmse}
    ok = (
        rmse["cons"] > log["cons"]
        and rmse["cu_cons"] < log["cu_cons"]
        and rmse["cu_ant"] < log["cu_ant"]
    )
    return ok, f"RMSE {_text(rmse)}; log-product {_text(log)}"


@claim(
    "lukasiewicz_log_product_low_cu_cons",
    "symmetric_aggregators",
    "App. aggregators",
    "The Łukasiewicz t-norm has a particularly high accuracy of 96.9% with the log product and is "
    "on the level of the product t-norm. However, it has a very low value for cu_cons of 0.06.",
)
def _luk_log(v: View) -> tuple[bool, str]:
    luk, product = (
        ("symmetric_aggregators", "lukasiewicz_log_product"),
        ("symmetric_aggregators", "product_log_product"),
    )
    tie, delta, margin = _tie(v, luk, product)
    cu = v.get(*luk, "cu_cons")
    return tie and cu < 0.1, (
        f"T_LK {_f(v.get(*luk))} vs T_P {_f(v.get(*product))}: {_margin_text(delta, margin)}; "
        f"T_LK cu_cons {cu:.2f}"
    )


@claim(
    "lukasiewicz_only_higher_cu_cons_with_rmse",
    "symmetric_aggregators",
    "App. aggregators",
    "It is also the only configuration for which cu_cons is higher when using the RMSE aggregator "
    "than the log-product aggregator.",
)
def _luk_only(v: View) -> tuple[bool, str]:
    higher = []
    for tnorm in TNORMS_RMSE:
        rmse = v.get("symmetric_aggregators", f"{tnorm}_rmse", "cu_cons")
        log = v.get("symmetric_aggregators", f"{tnorm}_log_product", "cu_cons")
        if rmse > log:
            higher.append(tnorm)
    return higher == ["lukasiewicz"], f"cu_cons higher with RMSE: {higher}"


@claim(
    "s9_best_s",
    "sigmoidal_s",
    "App. sigmoidal",
    "The value of 9 gives the best results, with 97.3% accuracy.",
)
def _s9(v: View) -> tuple[bool, str]:
    best, detail = _argmax(v, "sigmoidal_s", v.rows("sigmoidal_s"))
    return best == "9", f"best s={best}; {detail}"


def _trend(v: View, experiment: str, column: str) -> tuple[float, str]:
    """Spearman rho of the swept value against a column."""
    rows = v.rows(experiment)
    rho = spearman([float(r) for r in rows], [v.get(experiment, r, column) for r in rows])
    if rho is None:
        raise NotMeasurable(f"{len(rows)} values with {column}")
    return rho, f"rho(s, {column}) = {rho:+.2f} over {len(rows)} values"


@claim(
    "s_increases_cons",
    "sigmoidal_s",
    "App. sigmoidal",
    "Increasing s seems to increase cons.",
)
def _s_cons(v: View) -> tuple[bool, str]:
    rho, detail = _trend(v, "sigmoidal_s", "cons")
    return rho > 0, detail


@claim(
    "s_decreases_cu",
    "sigmoidal_s",
    "App. sigmoidal",
    "Both cu_cons and cu_ant decrease when s increases.",
)
def _s_cu(v: View) -> tuple[bool, str]:
    r1, d1 = _trend(v, "sigmoidal_s", "cu_cons")
    r2, d2 = _trend(v, "sigmoidal_s", "cu_ant")
    return r1 < 0 and r2 < 0, f"{d1}; {d2}"


@claim(
    "s_best_not_highest_cu",
    "sigmoidal_s",
    "App. sigmoidal",
    "The best parameter value clearly is not the one for which the values of cu_cons and cu_ant "
    "are highest, namely the Reichenbach implication itself [s -> 0].",
)
def _s_not_cu(v: View) -> tuple[bool, str]:
    rows = v.rows("sigmoidal_s")
    best, d0 = _argmax(v, "sigmoidal_s", rows)
    cons, _ = _argmax(v, "sigmoidal_s", rows, "cu_cons")
    ant, _ = _argmax(v, "sigmoidal_s", rows, "cu_ant")
    smallest = min(rows, key=float)
    ok = cons == ant == smallest != best
    return ok, f"best accuracy s={best}, highest cu_cons s={cons}, cu_ant s={ant}"


@claim(
    "b0_half_best",
    "sigmoidal_b0",
    "App. sigmoidal",
    "Clearly, -1/2 works best, having the highest accuracy and cu_cons.",
)
def _b0(v: View) -> tuple[bool, str]:
    rows = v.rows("sigmoidal_b0")
    best, d1 = _argmax(v, "sigmoidal_b0", rows)
    cons, d2 = _argmax(v, "sigmoidal_b0", rows, "cu_cons")
    return best == cons == "-0.5", f"best accuracy b0={best}, cu_cons b0={cons}; {d1}"


@claim(
    "removing_3_small_effect",
    "formulas",
    "App. formulas",
    "Removing the reflexivity formula (3) does not largely impact the performance [(1) & (2) "
    "within the noise of all formulas, the s=9 run of sigmoidal_s].",
)
def _no_3(v: View) -> tuple[bool, str]:
    tie, delta, margin = _tie(v, ("formulas", "f12"), ("sigmoidal_s", "9"))
    a, full = v.get("formulas", "f12"), v.get("sigmoidal_s", "9")
    return tie, f"(1)&(2) {_f(a)} vs all formulas {_f(full)}: {_margin_text(delta, margin)}"


@claim(
    "removing_1_biggest_drop",
    "formulas",
    "App. formulas",
    "The biggest drop in performance is by removing formula (1) that defines the same predicate.",
)
def _no_1(v: View) -> tuple[bool, str]:
    values = _cells(v, "formulas", ["f12", "f23", "f13"])
    return min(values, key=values.__getitem__) == "f23", _text(values)


@claim(
    "only_1_beats_only_2",
    "formulas",
    "App. formulas",
    "Using only formula (1) gets slightly better performance than only using formula (2).",
)
def _f1_f2(v: View) -> tuple[bool, str]:
    a, b = v.get("formulas", "f1"), v.get("formulas", "f2")
    return a > b, f"(1) {_f(a)} vs (2) {_f(b)}"


@claim(
    "formula_1_antecedent_dominated",
    "formulas",
    "App. formulas",
    "Since 95% of the derivatives are with respect to the negated antecedent [cons of (1) <= 0.1], "
    "this formula contributes by finding additional counterexamples.",
)
def _f1_cons(v: View) -> tuple[bool, str]:
    x = v.get("formulas", "f1", "cons")
    return x <= 0.1, f"cons of (1) alone {x:.2f}"


@claim(
    "only_3_best_single",
    "formulas",
    "App. formulas",
    "Just using the reflexivity formula (3) has the highest accuracy when used individually.",
)
def _f3(v: View) -> tuple[bool, str]:
    best, detail = _argmax(v, "formulas", ["f1", "f2", "f3"])
    return best == "f3", f"best {best}; {detail}"


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
def _only_tp_irc(v: View) -> tuple[bool, str]:
    well, parts = [], []
    for experiment, rows in SYMMETRIC.items():
        for row in rows:
            win, delta, margin = _win(v, (experiment, row), BASE)
            if win:
                well.append((experiment, row))
                parts.append(f"{experiment}/{row} {delta:+.2f}")
    ok = bool(well) and set(well) <= T_P_I_RC
    return ok, f"above the baseline beyond the noise: {', '.join(parts) or 'none'}"


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
    "important factor for performance [an aggregator's accuracy range (best - worst row) in "
    "Section 10.2 is the largest of the four factors].",
)
def _aggregators_matter(v: View) -> tuple[bool, str]:
    spans = {}
    for factor, (experiment, prefix) in INDIVIDUAL.items():
        values = _cells(v, experiment, v.rows(experiment, prefix)).values()
        spans[factor] = max(values) - min(values)
    top = max(spans, key=spans.__getitem__)
    return "aggregator" in top, "range: " + ", ".join(f"{k} {x:.2f}" for k, x in spans.items())


@claim(
    "dfl_improves_on_baseline",
    "conclusions",
    "10.4",
    "DFL significantly improves on the supervised baseline [the default configuration, Section "
    "10.2's fixed operators, minus the baseline: the interval of two standard errors is above 0].",
)
def _dfl_improves(v: View) -> tuple[bool, str]:
    run = v.default_run
    if run is None:
        raise NotMeasurable("default configuration missing")
    if v.noise is None:
        raise NotMeasurable("no seed spread at this profile")
    n_base = v.n(*BASE)
    delta = run.mean - v.baseline()
    half = Z * v.noise.stderr(run.n, n_base)
    return delta - half > 0, (
        f"default {_f(run.mean)} ({run.seeds}) vs baseline {_f(v.baseline())} (n={n_base}): "
        f"difference {delta:+.2f}, interval [{delta - half:+.2f}, {delta + half:+.2f}] "
        f"(σ: {v.noise.source})"
    )
