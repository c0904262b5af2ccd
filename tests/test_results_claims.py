"""The comparison rules of the results module: the compared order of a two-half table, the
best-of-evaluations accuracy, seed-noise margins of the comparative words, Spearman beside
Pearson, and the claims coded from Sections 10.1-10.4 (exact small cases; no training)."""

from __future__ import annotations

import math

import pytest

from dfl_bench.results import claims, render
from dfl_bench.results.load import load_records
from dfl_bench.results.noise import Noise, measured_noise
from dfl_bench.results.report import build, default_run
from tests.test_results import PAPER, REPO, write

SWAPPED = PAPER.tables["symmetric_aggregators"]
NOISE = Noise(0.4, "test")  # one run's seed std: two single runs differ beyond 1.13 points


def paper_verdicts(tmp_path) -> dict[str, claims.Verdict]:
    """Every claim on the paper's own numbers (one unrelated record so the frame loads)."""
    write(tmp_path, "tnorms", "g", row="godel")
    result = build(PAPER, load_records(tmp_path), "quick", [], REPO)
    return {item.name: on_paper for item, on_paper, _ in result.verdicts}


def view(values: dict, noise: Noise | None = NOISE, **kwargs) -> claims.View:
    """A view over `{(experiment, row): accuracy}` with the baseline at ("baseline", "ce_pair")."""
    flat = {(e, r, "accuracy"): x for (e, r), x in values.items()}
    base = values.get(claims.BASE)
    return claims.View("ours", flat, base, {}, {}, noise, **kwargs)


def check(name: str, v: claims.View) -> claims.Verdict:
    """One claim by name on a view."""
    return claims.evaluate(next(c for c in claims.CLAIMS if c.name == name), v)


def test_swapped_order_exchanges_the_halves_and_keeps_the_printed_table():
    header = {c.key: c.values["accuracy"] for c in SWAPPED.cells()}
    swapped = {c.key: c.values["accuracy"] for c in SWAPPED.compared().cells()}
    assert SWAPPED.order == "swapped" and "caption names RMSE first" in SWAPPED.order_reason
    assert (header["lukasiewicz_log_product"], header["lukasiewicz_rmse"]) == (96.6, 96.9)
    assert (swapped["lukasiewicz_log_product"], swapped["lukasiewicz_rmse"]) == (96.9, 96.6)
    assert SWAPPED.compared().cells()[0].group == SWAPPED.cells()[0].group  # configs stay put
    assert PAPER.tables["tnorms"].compared() == PAPER.tables["tnorms"]
    with pytest.raises(ValueError, match="two-half"):
        PAPER.tables["tnorms"].in_order("swapped")
    with pytest.raises(ValueError, match="order must be one of"):
        SWAPPED.in_order("sideways")


def test_both_orders_agreement_is_computed_and_rendered(tmp_path):
    # our runs equal the paper's swapped halves: every cell agrees in that order only
    for cell in SWAPPED.compared().cells():
        acc, cons, cu_cons, cu_ant = (
            cell.values[c] for c in ("accuracy", "cons", "cu_cons", "cu_ant")
        )
        write(tmp_path, "symmetric_aggregators", cell.key, row=cell.key, accuracy=acc / 100,
              cons=cons, cu_cons=cu_cons, cu_ant=cu_ant)  # fmt: skip
    result = build(PAPER, load_records(tmp_path), "quick", ["symmetric_aggregators"], REPO)
    orders = result.orders["symmetric_aggregators"]
    assert orders["swapped"].accuracy_within == (12, 12)
    assert orders["swapped"].ratio_within == (36, 36)
    assert orders["header"].ratio_within[0] < 36
    assert result.agreements["symmetric_aggregators"] == orders["swapped"]
    text = render.markdown(
        result.tables["symmetric_aggregators"],
        result.agreements["symmetric_aggregators"],
        [],
        orders,
    )
    assert "| swapped (compared) | +1.00 |" in text and "| header |" in text
    assert "caption names RMSE first" in text
    verdicts = {item.name: ours for item, _, ours in result.verdicts}
    assert verdicts["lukasiewicz_only_higher_cu_cons_with_rmse"].status == "holds"


def test_agreement_and_claims_use_the_best_accuracy(tmp_path):
    # final 10%, best 97%: Table tnorms' godel is 20.4 in the paper
    write(tmp_path, "tnorms", "g", row="godel", accuracy=0.10, best=0.97)
    result = build(PAPER, load_records(tmp_path), "quick", ["tnorms"], REPO)
    ours = result.tables["tnorms"].ours()["godel"]
    assert ours.number("accuracy") == pytest.approx(97.0)
    assert render.ours_value(ours, "accuracy") == "97.00 (final 10.00)"
    assert result.agreements["tnorms"].accuracy_within == (0, 1)


def test_measured_noise_pools_the_seed_spread_runs(tmp_path):
    for seed, best in enumerate((0.90, 0.92, 0.94)):  # variance 4 with 2 dof
        write(tmp_path, "baseline", f"b{seed}", row="ce_pair", seed=seed, accuracy=0.5, best=best)
    for seed, best in enumerate((0.95, 0.97)):  # variance 2 with 1 dof
        write(tmp_path, "default", f"d{seed}", seed=seed, accuracy=0.5, best=best)
    write(tmp_path, "tnorms", "t", row="godel", accuracy=0.1)  # not a seed-spread run
    frame = load_records(tmp_path)
    noise = measured_noise(frame, "quick")
    assert noise.sigma == pytest.approx(math.sqrt(10 / 3))
    assert noise.margin() == pytest.approx(2 * math.sqrt(2) * noise.sigma)
    assert noise.margin(5, 5) == pytest.approx(2 * math.sqrt(0.4) * noise.sigma)
    assert measured_noise(frame, "paper") is None
    run = default_run(frame, "quick")
    assert (run.mean, run.n, run.seeds) == (pytest.approx(96.0), 2, "n=2, seeds [0, 1]")


def test_a_small_win_is_not_quite_a_bit_higher_and_a_tie_is_on_par():
    base = {claims.BASE: 95.0}
    small = view({**base, ("same_symmetric", "yager_p20_S"): 95.07})
    assert check("yager20_beats_baseline", small).status == "fails"  # 0.07 < 2 * 0.4 * sqrt 2
    big = view({**base, ("same_symmetric", "yager_p20_S"): 96.2})
    assert check("yager20_beats_baseline", big).status == "holds"
    tie = view({**base, ("same_symmetric", "godel_S"): 94.3})  # -0.7 is within 1.13
    assert check("godel_on_par_with_baseline", tie).status == "holds"
    apart = view({**base, ("same_symmetric", "godel_S"): 93.5})
    assert check("godel_on_par_with_baseline", apart).status == "fails"
    quiet = view({**base, ("same_symmetric", "godel_S"): 94.3}, noise=None)
    assert check("godel_on_par_with_baseline", quiet).status == "not measurable"


def test_more_seeds_narrow_the_margin():
    values = {claims.BASE: 95.0, ("same_symmetric", "yager_p20_S"): 95.8}
    assert check("yager20_beats_baseline", view(values)).status == "fails"  # margin 1.13
    counts = {claims.BASE: 5, ("same_symmetric", "yager_p20_S"): 5}  # margin 0.51
    assert check("yager20_beats_baseline", view(values, counts=counts)).status == "holds"


def test_dfl_improves_needs_the_interval_above_zero():
    counts = {claims.BASE: 5}
    above = view({claims.BASE: 95.0}, counts=counts, default_run=claims.Sample(96.0, 5, "n=5"))
    verdict = check("dfl_improves_on_baseline", above)
    assert verdict.status == "holds" and "interval [+0.49, +1.51]" in verdict.detail
    near = view({claims.BASE: 95.0}, counts=counts, default_run=claims.Sample(95.3, 5, "n=5"))
    assert check("dfl_improves_on_baseline", near).status == "fails"
    assert check("dfl_improves_on_baseline", view({claims.BASE: 95.0})).status == ("not measurable")


def test_new_claims_on_the_papers_numbers(tmp_path):
    verdicts = paper_verdicts(tmp_path)
    holds = {name for name, v in verdicts.items() if v.status == "holds"}
    assert {
        "only_symmetric_product_reichenbach",
        "yager20_s_similar_to_r",
        "other_gme_effective",
        "sum9_reflects_same",
        "dfl_improves_on_baseline",
    } <= holds
    assert "rho +0.81 over 7 t-norms" in verdicts["sum9_reflects_same"].detail
    assert "interval [+0.54, +1.70]" in verdicts["dfl_improves_on_baseline"].detail
    # the t-norms' collapse on sum9 (20% accuracy) spans more than any aggregator
    assert verdicts["aggregators_most_important"].status == "fails"
    assert "t-norm 76.70" in verdicts["aggregators_most_important"].detail
    # "quite a bit higher": 95.6 vs 95.18 is within the paper's own noise (margin 0.58)
    assert verdicts["yager20_beats_baseline"].status == "fails"
    # "significantly higher": 97.7 vs 97.0 is beyond it
    assert verdicts["sum9_sgd_beats_adam"].status == "holds"


def test_spearman_decides_where_collapsed_rows_dominate_pearson(tmp_path):
    verdicts = paper_verdicts(tmp_path)
    sum9 = verdicts["cu_cons_sum9_negative"]
    assert sum9.status == "holds" and "r = +0.32 (r alone: the other sign)" in sum9.detail
    assert verdicts["cu_ant_correlates_with_accuracy"].status == "holds"


def test_a_well_performing_symmetric_row_other_than_product_fails_the_only_claim():
    values = {claims.BASE: 95.0, ("same_symmetric", "product_S"): 97.0}
    for experiment, rows in claims.SYMMETRIC.items():
        for row in rows:
            values.setdefault((experiment, row), 95.0)
    assert check("only_symmetric_product_reichenbach", view(values)).status == "holds"
    values[("sum9_symmetric", "yager_p20")] = 97.0
    verdict = check("only_symmetric_product_reichenbach", view(values))
    assert verdict.status == "fails" and "sum9_symmetric/yager_p20 +2.00" in verdict.detail


def test_verdicts_show_long_beside_quick_once_its_records_land(tmp_path):
    from dfl_bench.results.__main__ import main

    records, out = tmp_path / "records", tmp_path / "out"
    for seed, best in enumerate((0.94, 0.95)):
        write(records, "baseline", f"b{seed}", row="ce_pair", seed=seed, best=best)
    write(records, "tnorms", "g", row="godel", accuracy=0.5, best=0.97)
    assert main(["--records", str(records), "--out", str(out)]) == 0
    text = (out / "tables" / "verdicts.md").read_text()
    assert "|  | quick | long |" in text
    assert "| records (ok) | 1 (1) | no records yet |" in text
    assert "| above the baseline beyond the noise | godel +2.50 | no records yet |" in text
    write(records, "tnorms", "gl", row="godel", profile="long", accuracy=0.5, best=0.80)
    assert main(["--records", str(records), "--out", str(out)]) == 0
    text = (out / "tables" / "verdicts.md").read_text()
    assert (
        "| accuracy range (best) | 97.00 (godel) .. 97.00 (godel) | 80.00 (godel) .. 80.00" in text
    )
    assert (
        "| `vanishing_tnorms_best` (10.2.2; paper: holds) | **not measurable**: tnorms/product "
        "accuracy missing | **not measurable**: tnorms/product accuracy missing |"
    ) in text
