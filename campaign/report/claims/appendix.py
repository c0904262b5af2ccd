"""The appendix: varying the aggregators, the sigmoidal implication's s and b0, the formulas."""

from __future__ import annotations

from campaign.report.claims import verdict_stats
from campaign.report.claims.deciding import (
    above_baseline,
    all_above,
    all_hold,
    as_claimed,
    claimed_order,
    claimed_sign,
    enough_wins,
    is_best,
    only,
    ratio_difference_text,
    tally,
)
from campaign.report.claims.framework import (
    FORMULA_1_CONS,
    FORMULA_1_MARGIN,
    SIGNIFICANT,
    NotMeasurable,
    View,
    claim,
)
from dfl_bench.results import stats
from dfl_bench.results.agreement import spearman
from dfl_bench.schema import CU_ANT, CU_CONS

TNORMS_RMSE = ["godel", "lukasiewicz", "product", "yager_p2", "yager_p20", "nilpotent"]
LOG_PRODUCT = [f"{tnorm}_log_product" for tnorm in TNORMS_RMSE]
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
    intervals, parts = [], []
    for tnorm in TNORMS_RMSE:
        sym = SYMMETRIC_S.get(tnorm, f"{tnorm}_S" if "yager" in tnorm else tnorm)
        pair = [
            v.interval(("symmetric_aggregators", f"{tnorm}_{aggregator}"), ("same_symmetric", sym))
            for aggregator in ("log_product", "rmse")
        ]
        intervals += pair
        parts.append(f"{tnorm} {' / '.join(i.brief() for i in pair)}")
    wins, ties, _ = tally(intervals)
    total = len(intervals)
    return enough_wins(wins, ties, 0.75 * total), (
        f"{wins} of {total} cells beat the symmetric row beyond the noise, {ties} within it; "
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
    above, within, detail = above_baseline(v, "symmetric_aggregators", rows)
    return all_above(above, within, rows), detail


@claim(
    "product_worse_with_rmse",
    "symmetric_aggregators",
    "App. aggregators",
    "The product t-norm seems to do slightly worse with the RMSE aggregator than with the "
    "log-product aggregator.",
)
def _product_rmse(v: View) -> tuple[bool | None, str]:
    rmse, log_product = (("symmetric_aggregators", f"product_{a}") for a in ("rmse", "log_product"))
    return claimed_order(v, -1, rmse, log_product, ("RMSE", "log-product"))


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
    wanted = {"cons": 1, CU_CONS: -1, CU_ANT: -1}
    found = {c: as_claimed(want, v.interval(*cells, c)) for c, want in wanted.items()}
    holds = False if False in found.values() else None if None in found.values() else True
    parts = [f"{c} {v.interval(*cells, c).brief()}" for c in wanted]
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
    level, text = claimed_order(v, 0, luk, product, ("T_LK", "T_P"))
    # "a very low value for cu_cons": below that of every other t-norm with the log product
    low, detail = is_best(v, "symmetric_aggregators", LOG_PRODUCT, luk[1], CU_CONS, lowest=True)
    return all_hold([level, low]), f"{text}; {detail}"


@claim(
    "lukasiewicz_only_higher_cu_cons_with_rmse",
    "symmetric_aggregators",
    "App. aggregators",
    "It is also the only configuration for which cu_cons is higher when using the RMSE aggregator "
    "than the log-product aggregator.",
)
def _luk_only(v: View) -> tuple[bool | None, str]:
    intervals = {
        tnorm: v.interval(
            ("symmetric_aggregators", f"{tnorm}_rmse"),
            ("symmetric_aggregators", f"{tnorm}_log_product"),
            CU_CONS,
        )
        for tnorm in TNORMS_RMSE
    }
    higher = [t for t, i in intervals.items() if i.outcome > 0]
    holds, undecided = only(intervals, ["lukasiewicz"])
    return holds, f"cu_cons higher with RMSE beyond the noise: {higher}; {undecided}"


@claim(
    "s9_best_s",
    "sigmoidal_s",
    "App. sigmoidal",
    "The value of 9 gives the best results, with 97.3% accuracy.",
)
def _s9(v: View) -> tuple[bool | None, str]:
    return is_best(v, "sigmoidal_s", v.rows("sigmoidal_s"), "9")


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
    p = verdict_stats.spearman_p(xs, ys)
    if p < SIGNIFICANT:
        v.evidence(p)
    return rho, p, f"rho(s, {column}) = {rho:+.2f} (p = {p:.3f}) over {len(rows)} values"


@claim(
    "s_increases_cons",
    "sigmoidal_s",
    "App. sigmoidal",
    "Increasing s seems to increase cons.",
)
def _s_cons(v: View) -> tuple[bool | None, str]:
    rho, p, detail = _trend(v, "sigmoidal_s", "cons")
    return claimed_sign(rho, p, 1), detail


@claim(
    "s_decreases_cu",
    "sigmoidal_s",
    "App. sigmoidal",
    "Both cu_cons and cu_ant decrease when s increases.",
)
def _s_cu(v: View) -> tuple[bool | None, str]:
    r1, p1, d1 = _trend(v, "sigmoidal_s", CU_CONS)
    r2, p2, d2 = _trend(v, "sigmoidal_s", CU_ANT)
    signs = [claimed_sign(r1, p1, -1), claimed_sign(r2, p2, -1)]
    return all_hold(signs), f"{d1}; {d2}"


@claim(
    "s_best_not_highest_cu",
    "sigmoidal_s",
    "App. sigmoidal",
    "The best parameter value clearly is not the one for which the values of cu_cons and cu_ant "
    "are highest, namely the Reichenbach implication itself [s -> 0].",
)
def _s_not_cu(v: View) -> tuple[bool | None, str]:
    rows = v.rows("sigmoidal_s")
    smallest = min(rows, key=float)
    best, d1 = is_best(v, "sigmoidal_s", rows, smallest)
    cons, d2 = is_best(v, "sigmoidal_s", rows, smallest, CU_CONS)
    ant, d3 = is_best(v, "sigmoidal_s", rows, smallest, CU_ANT)
    # "Clearly not the best": some row above it beyond the noise; the best row fails it.
    below = None if best is None else not best
    return all_hold([cons, ant, below]), f"{d1}; {d2}; {d3}"


@claim(
    "b0_half_best",
    "sigmoidal_b0",
    "App. sigmoidal",
    "Clearly, -1/2 works best, having the highest accuracy and cu_cons.",
)
def _b0(v: View) -> tuple[bool | None, str]:
    rows = v.rows("sigmoidal_b0")
    best, d1 = is_best(v, "sigmoidal_b0", rows, "-0.5")
    cons, d2 = is_best(v, "sigmoidal_b0", rows, "-0.5", CU_CONS)
    return all_hold([best, cons]), f"{d1}; {d2}"


@claim(
    "removing_3_small_effect",
    "formulas",
    "App. formulas",
    "Removing the reflexivity formula (3) does not largely impact the performance [(1) & (2) "
    "within the noise of all formulas, the s=9 run of sigmoidal_s].",
)
def _no_3(v: View) -> tuple[bool | None, str]:
    cells = ("formulas", "f12"), ("sigmoidal_s", "9")
    return claimed_order(v, 0, *cells, ("(1)&(2)", "all formulas"))


@claim(
    "removing_1_biggest_drop",
    "formulas",
    "App. formulas",
    "The biggest drop in performance is by removing formula (1) that defines the same predicate.",
)
def _no_1(v: View) -> tuple[bool | None, str]:
    return is_best(v, "formulas", ["f12", "f23", "f13"], "f23", lowest=True)


@claim(
    "only_1_beats_only_2",
    "formulas",
    "App. formulas",
    "Using only formula (1) gets slightly better performance than only using formula (2).",
)
def _f1_f2(v: View) -> tuple[bool | None, str]:
    return claimed_order(v, 1, ("formulas", "f1"), ("formulas", "f2"), ("(1)", "(2)"))


@claim(
    "formula_1_antecedent_dominated",
    "formulas",
    "App. formulas",
    "Since 95% of the derivatives are with respect to the negated antecedent [cons of (1) alone "
    "equivalent to 0.05 within half that size, +-0.025, TOST], this formula contributes by "
    "finding additional counterexamples.",
)
def _f1_cons(v: View) -> tuple[bool | None, str]:
    cell = ("formulas", "f1")
    interval = v.versus(cell, "cons", FORMULA_1_CONS, FORMULA_1_MARGIN)
    return interval.level_with(), (
        f"cons of (1) alone {v.get(*cell, 'cons'):.3f}, minus the paper's 0.05 (95% antecedent): "
        f"{ratio_difference_text(interval)}; TOST {interval.tost_text(3)}"
    )


@claim(
    "only_3_best_single",
    "formulas",
    "App. formulas",
    "Just using the reflexivity formula (3) has the highest accuracy when used individually.",
)
def _f3(v: View) -> tuple[bool | None, str]:
    return is_best(v, "formulas", ["f1", "f2", "f3"], "f3")
