"""Section 10.1: the symmetric configurations (Tables mnist_symmetric, sum9_symmetric)."""

from __future__ import annotations

from campaign.report.claims.deciding import (
    all_hold,
    as_claimed,
    cell_values,
    claimed_order,
    difference_text,
    enough_wins,
    is_best,
    only_above_baseline,
    printed,
    ratio_difference_text,
    tally,
    tied_with_top,
)
from campaign.report.claims.framework import (
    BASE,
    RANDOM_CU,
    SYM_R,
    SYM_S,
    NotMeasurable,
    View,
    claim,
)
from dfl_bench.results import stats
from dfl_bench.results.agreement import spearman
from dfl_bench.schema import CU_ANT, CU_CONS


@claim(
    "s_beat_r_same",
    "same_symmetric",
    "10.1.1",
    "One general observation that can be made is that S-implications seem to work much better "
    "than R-implications.",
)
def _s_beat_r_same(v: View) -> tuple[bool | None, str]:
    intervals = {
        a[:-2]: v.interval(("same_symmetric", a), ("same_symmetric", b))
        for a, b in zip(SYM_S, SYM_R, strict=True)
    }
    parts = [f"{tnorm} {interval.brief()}" for tnorm, interval in intervals.items()]
    wins, ties, _ = tally(intervals.values())
    return enough_wins(wins, ties, len(SYM_S) // 2 + 1), (
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
    return only_above_baseline(v, "same_symmetric", SYM_R, ["yager_p20_R"])


@claim(
    "yager20_s_similar_to_r",
    "same_symmetric",
    "10.1.1",
    "[T_Y, p=20 is the only R-implication configuration above the baseline,] but here the "
    "S-implication performs similar to it [within the seed noise].",
)
def _yager20_s_r(v: View) -> tuple[bool | None, str]:
    interval = v.interval(("same_symmetric", "yager_p20_S"), ("same_symmetric", "yager_p20_R"))
    return interval.level_with(), (
        f"yager_p20 S - R: {difference_text(interval)}; TOST {interval.tost_text()}"
    )


@claim(
    "godel_on_par_with_baseline",
    "same_symmetric",
    "10.1.1",
    "The Gödel t-norm performs on par with the supervised baseline.",
)
def _godel_par(v: View) -> tuple[bool | None, str]:
    return claimed_order(v, 0, ("same_symmetric", "godel_S"), BASE, ("godel_S", "baseline"))


@claim(
    "lukasiewicz_below_baseline",
    "same_symmetric",
    "10.1.1",
    "The Łukasiewicz t-norm performs worse than the supervised baseline.",
)
def _luk_below(v: View) -> tuple[bool | None, str]:
    return claimed_order(
        v, -1, ("same_symmetric", "lukasiewicz"), BASE, ("lukasiewicz", "baseline")
    )


@claim(
    "lukasiewicz_cons_half",
    "same_symmetric",
    "10.1.1",
    "By the definition of I_LK, cons = 1/2 as the consequent and negated antecedent derivatives "
    "are equal.",
)
def _luk_half(v: View) -> tuple[bool | None, str]:
    cell = ("same_symmetric", "lukasiewicz")
    interval = v.versus(cell, "cons", 0.5)
    return interval.level_with(), (
        f"cons {v.get(*cell, 'cons'):.3f}, minus 1/2: {ratio_difference_text(interval)}; "
        f"TOST {interval.tost_text(3)}"
    )


@claim(
    "lukasiewicz_cu_cons_below_random",
    "same_symmetric",
    "10.1.1",
    "cu_cons is very low with only 0.01, which is worse than random guessing [0.1].",
)
def _luk_cu_cons(v: View) -> tuple[bool | None, str]:
    cell = ("same_symmetric", "lukasiewicz")
    interval = v.versus(cell, CU_CONS, RANDOM_CU)
    return as_claimed(-1, interval), (
        f"cu_cons {v.get(*cell, 'cu_cons'):.2f}, minus random guessing's {RANDOM_CU}: "
        f"{ratio_difference_text(interval)}"
    )


@claim(
    "yager20_beats_baseline",
    "same_symmetric",
    "10.1.1",
    "For p=20 the top performance is quite a bit higher than the baseline [beyond the noise].",
)
def _yager20(v: View) -> tuple[bool | None, str]:
    return claimed_order(v, 1, ("same_symmetric", "yager_p20_S"), BASE, ("yager_p20_S", "baseline"))


@claim(
    "yager2_below_lukasiewicz",
    "same_symmetric",
    "10.1.1",
    "For p=2, the results are even worse than the Łukasiewicz t-norm.",
)
def _yager2(v: View) -> tuple[bool | None, str]:
    cells = ("same_symmetric", "yager_p2_S"), ("same_symmetric", "lukasiewicz")
    return claimed_order(v, -1, *cells, ("yager_p2_S", "lukasiewicz"))


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
    return is_best(v, "same_symmetric", v.rows("same_symmetric"), "product_S")


@claim(
    "product_highest_cu_ratios",
    "same_symmetric",
    "10.1.1",
    "[The product t-norm] also has the highest values for cu_cons and cu_ant (S-implications).",
)
def _product_cu(v: View) -> tuple[bool | None, str]:
    rows = ["godel_S", "product_S", "lukasiewicz", "yager_p2_S", "yager_p20_S"]
    cons, a = is_best(v, "same_symmetric", rows, "product_S", CU_CONS)
    ant, b = is_best(v, "same_symmetric", rows, "product_S", CU_ANT)
    return all_hold([cons, ant]), f"{a}; {b}"


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
    return all_hold([gone, interval.level_with()]), (
        f"cons undefined: {gone}; nilpotent {printed(x)} vs baseline {printed(base)}: "
        f"{difference_text(interval)}; TOST {interval.tost_text()}"
    )


@claim(
    "sum9_only_product_yager20_beat_baseline",
    "sum9_symmetric",
    "10.1.2",
    "The only configurations that clearly outperform the supervised baseline are the product "
    "t-norm and the Yager t-norm with p=20.",
)
def _sum9_above(v: View) -> tuple[bool | None, str]:
    rows = v.rows("sum9_symmetric")
    return only_above_baseline(v, "sum9_symmetric", rows, ["product", "yager_p20"])


@claim(
    "sum9_product_best",
    "sum9_symmetric",
    "10.1.2",
    "... with the product t-norm being the most promising candidate.",
)
def _sum9_product(v: View) -> tuple[bool | None, str]:
    return is_best(v, "sum9_symmetric", v.rows("sum9_symmetric"), "product")


@claim(
    "sum9_vanishing",
    "sum9_symmetric",
    "10.1.2",
    "In addition to the Nilpotent t-norm, the derivatives of the Łukasiewicz t-norm and Yager "
    "t-norm with p=2 vanish throughout the whole run [measured over the records' window, the "
    "last metrics_tail of the run (10% at long): no derivative of either kind there].",
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
    sum9 = cell_values(v, "sum9_symmetric", SUM9_OF_SAME)
    same = cell_values(v, "same_symmetric", SUM9_OF_SAME.values())
    if len(sum9) < stats.MIN_CELLS:
        raise NotMeasurable(
            f"too few cells: {len(sum9)} t-norms (a correlation needs {stats.MIN_CELLS})"
        )
    rho = spearman(list(sum9.values()), list(same.values()))
    if rho is None:
        raise NotMeasurable("constant accuracies")
    top_sum9, _ = tied_with_top(v, "sum9_symmetric", SUM9_OF_SAME)
    top_same, _ = tied_with_top(v, "same_symmetric", SUM9_OF_SAME.values())
    shared = [row for row in top_sum9 if SUM9_OF_SAME[row] in top_same]
    return rho >= REFLECT_RHO and bool(shared), (
        f"rho {rho:+.2f} over {len(sum9)} t-norms; top sum9 {top_sum9}, top same {top_same}"
    )
