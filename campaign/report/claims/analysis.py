"""Section 10.3: the analysis of the gradient measures over the main-text tables."""

from __future__ import annotations

from campaign.report.claims.deciding import (
    all_hold,
    claimed_sign,
    correlation,
)
from campaign.report.claims.framework import (
    View,
    claim,
)
from dfl_bench.results.paper import main_tables
from dfl_bench.schema import CU_ANT, CU_CONS


@claim(
    "cu_ant_correlates_with_accuracy",
    "analysis",
    "10.3",
    "[The plot of cu_ant to accuracy] shows a positive correlation.",
)
def _cu_ant_acc(v: View) -> tuple[bool | None, str]:
    _, rho, p, detail = correlation(v, main_tables(), CU_ANT, "accuracy")
    return claimed_sign(rho, p, 1), detail + " (main-text tables)"


@claim(
    "cu_cons_same_slightly_positive",
    "analysis",
    "10.3",
    "Although there seems to be a slight positive correlation [of cu_cons to accuracy] for the "
    "same problem, it is not as pronounced [as cu_ant's].",
)
def _cu_cons_same(v: View) -> tuple[bool | None, str]:
    _, rho, p, detail = correlation(v, main_tables(), CU_CONS, "accuracy", "same")
    _, rho_ant, _, detail_ant = correlation(v, main_tables(), CU_ANT, "accuracy", "same")
    positive = claimed_sign(rho, p, 1)  # a sign its permutation p-value does not decide is noise
    return positive and rho < rho_ant, f"{detail}; {detail_ant}"


@claim(
    "cu_cons_sum9_negative",
    "analysis",
    "10.3",
    "For the sum9, this correlation [cu_cons to accuracy] is negative instead.",
)
def _cu_cons_sum9(v: View) -> tuple[bool | None, str]:
    _, rho, p, detail = correlation(v, main_tables(), CU_CONS, "accuracy", "sum9")
    return claimed_sign(rho, p, -1), detail


@claim(
    "cons_anticorrelates_with_cu",
    "analysis",
    "10.3",
    "We plot all experimental values of cons to the values of cu_cons and cu_ant. For both, "
    "there seems to be a negative correlation.",
)
def _cons_cu(v: View) -> tuple[bool | None, str]:
    _, rho1, p1, d1 = correlation(v, main_tables(), "cons", CU_CONS)
    _, rho2, p2, d2 = correlation(v, main_tables(), "cons", CU_ANT)
    signs = [claimed_sign(rho1, p1, -1), claimed_sign(rho2, p2, -1)]
    return all_hold(signs), f"{d1}; {d2}"
