"""Section 10.4: the conclusions, over several tables."""

from __future__ import annotations

from campaign.report.claims.deciding import (
    as_claimed,
    cell_values,
    difference_text,
    only,
    printed,
)
from campaign.report.claims.framework import (
    BASE,
    SYM_R,
    SYM_S,
    NotMeasurable,
    View,
    claim,
)
from campaign.report.claims.symmetric import SUM9_OF_SAME

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
    intervals = {
        (experiment, row): v.interval((experiment, row), BASE)
        for experiment, rows in SYMMETRIC.items()
        for row in rows
    }
    parts = [f"{e}/{r} {i.brief()}" for (e, r), i in intervals.items() if i.outcome > 0]
    holds, undecided = only(intervals, T_P_I_RC, one_option=True)
    return holds, (
        f"above the baseline beyond the noise: {', '.join(parts) or 'none'}; {undecided}"
    )


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
        values = cell_values(v, experiment, rows)
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
    return as_claimed(+1, interval), (
        f"default {printed(run.mean)} ({run.seeds}) vs baseline {printed(v.baseline())}: "
        f"{difference_text(interval)}"
    )
