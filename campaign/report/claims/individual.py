"""Section 10.2: the individual operators (Tables aggregation, tnorms, implications, the
S-implication experiments with SGD, the best configurations)."""

from __future__ import annotations

import math

from campaign.report.claims.deciding import (
    above_baseline,
    against_rows,
    all_above,
    all_below_baseline,
    all_hold,
    as_claimed,
    cell_values,
    claimed_order,
    claimed_sign,
    correlation,
    difference_text,
    enough_wins,
    is_best,
    printed,
    values_text,
)
from campaign.report.claims.framework import (
    NotMeasurable,
    View,
    claim,
)
from dfl_bench.schema import CU_ANT, CU_CONS

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
    rows = [r for r in v.rows("aggregation", "forall_") if r != "forall_rmse"]
    best, detail = is_best(v, "aggregation", rows, "forall_log_product")
    trailing = v.interval(("aggregation", "forall_rmse"), ("aggregation", "forall_log_product"))
    # "A_RMSE trailing behind it": not above the log product beyond the noise
    return all_hold([best, trailing.outcome <= 0]), (
        f"{detail}; forall_rmse minus forall_log_product: {difference_text(trailing)}"
    )


@claim(
    "other_gme_effective",
    "aggregation",
    "10.2.1",
    "Other generalized mean errors are also effective [A_GME p=1.5 and p=20 above the baseline].",
)
def _other_gme(v: View) -> tuple[bool | None, str]:
    rows = ["forall_gme_p1_5", "forall_gme_p20"]
    above, within, detail = above_baseline(v, "aggregation", rows)
    return all_above(above, within, rows), f"above: {above}; {detail}"


@claim(
    "poor_forall_aggregators",
    "aggregation",
    "10.2.1",
    "The single-passing aggregators (minimum and Nilpotent minimum aggregators) and aggregators "
    "that vanish on a large part of their domain (Yager-based and Nilpotent minimum) all perform "
    "poorly [below the baseline].",
)
def _poor_forall(v: View) -> tuple[bool | None, str]:
    holds, detail = all_below_baseline(v, "aggregation", FORALL_POOR)
    return holds, detail


@claim(
    "yager_forall_high_cu",
    "aggregation",
    "10.2.1",
    "Curiously the Yager-based aggregators have very high cu_cons and cu_ant [each above the "
    "median of the other universal aggregators: above more than half of them beyond the noise].",
)
def _yager_cu(v: View) -> tuple[bool | None, str]:
    yager = [r for r in v.rows("aggregation", "forall_yager")]
    others = [r for r in v.rows("aggregation", "forall_") if r not in yager]
    verdicts, details = [], []
    for column in (CU_CONS, CU_ANT):
        counts = []
        for row in yager:
            wins, ties, losses = against_rows(v, "aggregation", row, others, column)
            verdicts.append(enough_wins(wins, ties, len(others) // 2 + 1))
            counts.append(f"{row} {v.get('aggregation', row, column):.2f} ({wins}/{ties}/{losses})")
        details.append(f"{column}: {', '.join(counts)}")
    return all_hold(verdicts), (
        f"above/tied with/below the {len(others)} other universal aggregators: "
        + "; ".join(details)
    )


@claim(
    "gm_best_exists",
    "aggregation",
    "10.2.1",
    "The generalized means have the best result for existential aggregation, with p=1.5 "
    "performing best.",
)
def _gm_best(v: View) -> tuple[bool | None, str]:
    return is_best(v, "aggregation", v.rows("aggregation", "exists_"), "exists_gm_p1_5")


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
    above, within, detail = above_baseline(v, "aggregation", rows)
    return all_above(above, within, rows), detail


@claim(
    "max_nilpotent_exists_only_somewhat",
    "aggregation",
    "10.2.1",
    "The maximum aggregator and Nilpotent maximum aggregator only somewhat outperform the "
    "supervised baseline [above it, below every generalized mean].",
)
def _max_exists(v: View) -> tuple[bool | None, str]:
    rows = ["exists_maximum", "exists_nilpotent"]
    above, within, detail = above_baseline(v, "aggregation", rows)
    gm = v.rows("aggregation", "exists_gm")
    outcomes = {
        (g, r): v.interval(("aggregation", g), ("aggregation", r)).outcome for g in gm for r in rows
    }  # > 0: the generalized mean above the row
    beaten = [pair for pair, outcome in outcomes.items() if outcome < 0]
    open_ = [pair for pair, outcome in outcomes.items() if outcome == 0]
    base = all_above(above, within, rows)
    if beaten or base is False:
        holds = False
    else:  # both halves shown: above the baseline and below every generalized mean
        holds = True if base and not open_ and outcomes else None
    return holds, (
        f"{detail}; a generalized mean below them beyond the noise: {beaten or 'none'}; "
        f"below a generalized mean not shown: {open_ or 'none'}"
    )


@claim(
    "vanishing_tnorms_best",
    "tnorms",
    "10.2.2",
    "It is the operators that vanish on a large part of their domain that work best, namely "
    "Yager t-norms and the Nilpotent minimum [the top one of them, or T_LK, above T_G and T_P].",
)
def _vanishing_best(v: View) -> tuple[bool | None, str]:
    rows = v.rows("tnorms")
    vanishing = cell_values(v, "tnorms", [r for r in rows if r not in NON_VANISHING])
    top = max(vanishing, key=vanishing.__getitem__)
    intervals = {o: v.interval(("tnorms", top), ("tnorms", o)) for o in NON_VANISHING}
    outcomes = [i.outcome for i in intervals.values()]
    verdict = False if -1 in outcomes else True if all(x == 1 for x in outcomes) else None
    return verdict, (
        f"the top vanishing row {top} {printed(vanishing[top])} minus "
        + ", ".join(f"{o} {difference_text(i)}" for o, i in intervals.items())
    )


NON_VANISHING = ("godel", "product")  # the t-norms whose derivatives do not vanish (10.2.2)


@claim(
    "godel_product_tnorms_poor",
    "tnorms",
    "10.2.2",
    "The product t-norm and Gödel t-norm ... seem to perform very poorly [below the baseline].",
)
def _godel_product_poor(v: View) -> tuple[bool | None, str]:
    return all_below_baseline(v, "tnorms", ["godel", "product"])


@claim(
    "tnorms_low_cons_better",
    "tnorms",
    "10.2.2",
    "In this table, there is a clear relation where lower cons seem to perform better.",
)
def _low_cons(v: View) -> tuple[bool | None, str]:
    _, rho, p, detail = correlation(v, ("tnorms",), "cons", "accuracy")
    return claimed_sign(rho, p, -1), detail


@claim(
    "reichenbach_yager_s_around_97",
    "implications",
    "10.2.3",
    "The Reichenbach implication and Yager S-implication work well, both having an accuracy "
    "around 97% [each cell equivalent to 97 within the accuracy margin, TOST].",
)
def _around_97(v: View) -> tuple[bool | None, str]:
    rows = ["reichenbach", "yager_s_p1_5", "yager_s_p2", "yager_s_p20"]
    intervals = {row: v.versus(("implications", row), "accuracy", 97.0) for row in rows}
    return all_hold(i.level_with() for i in intervals.values()), "minus 97: " + ", ".join(
        f"{r} {i.brief()} (TOST {i.tost_text()})" for r, i in intervals.items()
    )


@claim(
    "kleene_dienes_yager_r_beat_baseline",
    "implications",
    "10.2.3",
    "The Kleene Dienes and Yager R-implications surpass the baseline as well.",
)
def _kd_yr(v: View) -> tuple[bool | None, str]:
    rows = ["kleene_dienes", "yager_r_p1_5", "yager_r_p2", "yager_r_p20"]
    above, within, detail = above_baseline(v, "implications", rows)
    return all_above(above, within, rows), detail


@claim(
    "sigmoidal_as_reichenbach",
    "implications",
    "10.2.3",
    "The sigmoidal-Reichenbach implication, which we run with s=9 and b=-1/2, performs as well "
    "as the normal Reichenbach implication.",
)
def _sigmoidal_as_rc(v: View) -> tuple[bool | None, str]:
    cells = ("implications", "sigmoidal_reichenbach"), ("implications", "reichenbach")
    return claimed_order(v, 0, *cells, ("sigmoidal", "reichenbach"))


@claim(
    "godel_goguen_below_baseline",
    "implications",
    "10.2.3",
    "The Gödel implication and Goguen implication have worse performance than the supervised "
    "baseline.",
)
def _g_gg(v: View) -> tuple[bool | None, str]:
    return all_below_baseline(v, "implications", ["godel", "goguen"])


@claim(
    "godel_worst_lukasiewicz_among_better",
    "implications",
    "10.2.3",
    "I_LK performs among the better [not below half of the others beyond the noise] while I_G "
    "is the worst test implication.",
)
def _godel_worst(v: View) -> tuple[bool | None, str]:
    rows = v.rows("implications")
    worst, detail = is_best(v, "implications", rows, "godel", lowest=True)
    others = [r for r in rows if r != "lukasiewicz"]
    wins, ties, losses = against_rows(v, "implications", "lukasiewicz", others)
    # Among the better: at most half of the others above it, so above at least the rest.
    upper = enough_wins(wins, ties, len(others) - len(others) // 2)
    return all_hold([worst, upper]), (
        f"lukasiewicz above/tied with/below the {len(others)} others: {wins}/{ties}/{losses}; "
        f"{detail}"
    )


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
    values = cell_values(v, "implications", ["kleene_dienes", "godel", "reichenbach", "goguen"])
    holds = True if min(outcomes) > 0 else False if min(outcomes) < 0 else None
    return holds, f"{values_text(values)}; S above R beyond the noise: {outcomes}"


@claim(
    "sigmoidal_sgd_beats_sgd_implications",
    "sgd_implications",
    "10.2.4, App. sigmoidal",
    "[The sigmoidal-Reichenbach implication, s=9] is the best performing implication on the same "
    "problem when using the vanilla SGD optimizer, reaching 97.3% accuracy.",
)
def _sigmoidal_sgd(v: View) -> tuple[bool | None, str]:
    rows = v.rows("sgd_implications")
    intervals = {r: v.interval(("sigmoidal_s", "9"), ("sgd_implications", r)) for r in rows}
    outcomes = [i.outcome for i in intervals.values()]
    verdict = False if -1 in outcomes else True if all(x == 1 for x in outcomes) else None
    return verdict, (
        f"sigmoidal s=9 {printed(v.get('sigmoidal_s', '9'))} minus each SGD implication: "
        + ", ".join(f"{r} {i.brief()}" for r, i in intervals.items())
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
    return claimed_order(v, 1, ("best", "sum9"), ("tnorms", "yager_p1_5"), ("SGD", "ADAM"))


@claim(
    "both_best_overall",
    "best",
    "10.2.4",
    "[Both knowledge bases] has the best accuracy we find in our experiments with 98.0%, and "
    "confirms that adding more background knowledge increases the final performance.",
)
def _both_best(v: View) -> tuple[bool | None, str]:
    both = ("best", "both")
    own = v.configurations.get(both)
    others = sorted(
        (e, r)
        for (e, r, c), x in v.values.items()
        if c == "accuracy"
        and (e, r) != both
        and not math.isnan(x)
        and v.decides(e, r)
        and (own is None or v.configurations.get((e, r)) != own)
    )
    intervals = {cell: v.interval(both, cell) for cell in others}
    outcomes = {cell: i.outcome for cell, i in intervals.items()}
    beaten = [f"{e}/{r} {intervals[(e, r)].brief()}" for (e, r), x in outcomes.items() if x < 0]
    tied = [f"{e}/{r}" for (e, r), x in outcomes.items() if x == 0]
    best = False if beaten else True if not tied else None
    chance = v.top_cell_probability([both, *others], both)
    # "More background knowledge increases the final performance": above each single KB's run
    # of the same operators and optimizer (sum9: best/sum9; same: sigmoidal_s s=9).
    more = {name: v.interval(both, cell) for name, cell in MORE_KNOWLEDGE.items()}
    knowledge = all_hold(as_claimed(1, i) for i in more.values())
    return all_hold([best, knowledge]), (
        f"both {printed(v.get(*both))} above {len(others) - len(tied) - len(beaten)} of the "
        f"{len(others)} other cells, not shown different from {len(tied)}"
        f"{' (' + ', '.join(tied) + ')' if tied else ''}, below {len(beaten)}"
        f"{': ' + ', '.join(beaten) if beaten else ''}; P(both is the top cell) = {chance:.2f} "
        "(bootstrap); more knowledge: "
        + ", ".join(f"both - {k} {difference_text(i)}" for k, i in more.items())
    )


MORE_KNOWLEDGE = {"sum9": ("best", "sum9"), "same": ("sigmoidal_s", "9")}
