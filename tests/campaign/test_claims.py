"""The comparison rules of the paper's claims: the compared order of a two-half table, the
best-of-evaluations accuracy, each cell's own noise behind the comparative words (Welch's interval
over its seeds; the paper's single runs with its stated std), ties as ties, correlations with a
permutation p-value and enough cells, and the claims coded from Sections 10.1-10.4 (exact small
cases; no training)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pytest

from campaign import power
from campaign.report import claims
from campaign.report.claims import framework, verdict_stats, verdicts
from campaign.report.paper_report import PaperReport, claims_markdown
from campaign.report.profile_verdicts import Decided, default_run
from dfl_bench.results import publish, render_paper, stats
from dfl_bench.results.load import load_records
from dfl_bench.results.paper import Noise
from tests.results.test_results import PAPER, REPO, write

SWAPPED = PAPER.tables["symmetric_aggregators"]


def build(*args) -> Decided:
    """`publish.build` with the paper's report: the claims decided on the profile's tables."""
    return publish.build(*args, PaperReport())


NOISE = Noise(0.4, "test")  # one run's seed std: two single runs differ beyond 1.11 points


def paper_verdicts(tmp_path) -> dict[str, claims.Verdict]:
    """Every claim on the paper's own numbers (one unrelated record so the frame loads)."""
    write(tmp_path, "tnorms", "g", row="godel")
    result = build(PAPER, load_records(tmp_path), "quick", [], REPO)
    return {item.name: on_paper for item, on_paper, _ in result.verdicts}


def view(values: dict, noise: Noise | None = NOISE, layout=None, **kwargs) -> claims.View:
    """A view over `{(experiment, row): accuracy}` (single runs with the seed std `noise`, as
    the paper's numbers) or, with `noise=None`, `{(experiment, row): [accuracy per seed]}` (as
    ours); the baseline at ("baseline", "ce_pair")."""
    if noise is None:
        samples = {(e, r, "accuracy"): tuple(xs) for (e, r), xs in values.items()}
        flat = {key: sum(xs) / len(xs) for key, xs in samples.items()}
        base = flat.get((*claims.BASE, "accuracy"))
        return claims.View("ours", flat, base, {}, layout or {}, None, samples, **kwargs)
    flat = {(e, r, "accuracy"): x for (e, r), x in values.items()}
    return claims.View("paper", flat, values.get(claims.BASE), {}, layout or {}, noise, **kwargs)


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


def test_the_swap_rests_on_a_row_printed_twice():
    """The half printed as RMSE repeats, for T_Y p=2, the log-product row I_Y p=2 (S) of the SGD
    implication table; T_G is equal in both halves, so it says nothing either way."""
    printed = {c.key: c.values for c in SWAPPED.cells()}
    sgd = {c.key: c.values for c in PAPER.tables["sgd_implications"].cells()}
    assert printed["yager_p2_rmse"] == sgd["yager_s_p2"] != printed["yager_p2_log_product"]
    assert printed["godel_rmse"]["cu_cons"] == printed["godel_log_product"]["cu_cons"]


def test_both_orders_agreement_is_computed_and_rendered(tmp_path):
    # our runs equal the paper's swapped halves: every cell agrees in that order only
    for cell, seed in ((c, s) for c in SWAPPED.compared().cells() for s in range(3)):
        acc, cons, cu_cons, cu_ant = (
            cell.values[c] for c in ("accuracy", "cons", "cu_cons", "cu_ant")
        )
        write(tmp_path, "symmetric_aggregators", cell.key, row=cell.key, accuracy=acc / 100,
              cons=cons, cu_cons=cu_cons, cu_ant=cu_ant, seed=seed)  # fmt: skip
    result = build(PAPER, load_records(tmp_path), "quick", ["symmetric_aggregators"], REPO)
    orders = result.orders["symmetric_aggregators"]
    assert orders["swapped"].accuracy_within == (12, 12)
    assert orders["swapped"].ratio_within == (36, 36)
    assert orders["header"].ratio_within[0] < 36
    assert result.agreements["symmetric_aggregators"] == orders["swapped"]
    text = render_paper.markdown(
        result.tables["symmetric_aggregators"],
        result.agreements["symmetric_aggregators"],
        orders,
    )
    assert "| swapped (compared) | +1.00 |" in text and "| header |" in text
    assert "caption names RMSE first" in text
    verdicts = {item.name: ours for item, _, ours in result.verdicts}
    assert verdicts["lukasiewicz_only_higher_cu_cons_with_rmse"].status == "holds"


def test_agreement_and_claims_use_the_final_accuracy(tmp_path):
    # final 20%, best 97%: Table tnorms' godel is 20.4 in the paper; the best is selected on
    # the test set and decides nothing
    write(tmp_path, "tnorms", "g", row="godel", accuracy=0.20, best=0.97)
    result = build(PAPER, load_records(tmp_path), "quick", ["tnorms"], REPO)
    ours = result.tables["tnorms"].ours()["godel"]
    assert ours.number("accuracy") == pytest.approx(20.0)
    assert render_paper.ours_value(ours, "accuracy") == "20.00 (best 97.00)"
    assert result.agreements["tnorms"].accuracy_within == (1, 1)


def test_welch_uses_each_sides_own_spread_and_ties_hold_zero():
    wide = stats.welch([90.0, 95.0, 100.0], [94.0, 94.1, 93.9])
    assert wide.delta == pytest.approx(1.0) and wide.outcome == 0  # one noisy cell: a tie
    tight = stats.welch([95.0, 95.1, 94.9], [94.0, 94.1, 93.9])
    assert tight.outcome == 1 and tight.low > 0
    # the interval of two samples of 3 with sd 0.1 each: t(0.975, df=4) * sqrt(2 * 0.01 / 3)
    assert tight.high - tight.delta == pytest.approx(2.7764 * math.sqrt(0.02 / 3), rel=1e-3)
    assert stats.welch([1.0, 2.0, 3.0], [3.0, 4.0, 5.0]).outcome == 0
    with pytest.raises(ValueError, match="two values per side"):
        stats.welch([1.0], [1.0, 2.0])


def test_default_run_keeps_each_seed_of_the_default_configuration_wherever_it_is(tmp_path):
    """The default configuration's runs are the records every table counts for it (here the
    aggregation table's forall_log_product, the same configuration), not whatever else the
    default folder holds (a stand-in of another configuration)."""
    for seed, final in enumerate((0.95, 0.97)):
        write(tmp_path, "aggregation", f"d{seed}", row="forall_log_product", seed=seed,
              accuracy=final, best=0.99)  # fmt: skip
    lr = {"optimizer": {"lr": 0.5}}
    write(tmp_path, "default", "other", seed=2, accuracy=0.10, extra_config=lr)  # another one
    run = default_run(load_records(tmp_path), "quick")
    assert (run.values, run.mean, run.seeds) == (
        (95.0, 97.0),
        pytest.approx(96.0),
        "n=2, seeds [0, 1]",
    )


def test_on_the_papers_numbers_a_small_win_is_inconclusive_and_on_par_needs_equivalence():
    base = {claims.BASE: 95.0}
    small = view({**base, ("same_symmetric", "yager_p20_S"): 95.07})
    assert check("yager20_beats_baseline", small).status == "inconclusive"  # 1.96 * 0.4 * √2
    big = view({**base, ("same_symmetric", "yager_p20_S"): 96.2})
    assert check("yager20_beats_baseline", big).status == "holds"
    lower = view({**base, ("same_symmetric", "yager_p20_S"): 93.5})
    assert check("yager20_beats_baseline", lower).status == "fails"
    # no difference shown (-0.7 is within 1.11) is no equivalence: 90% [-1.63, +0.23]
    tie = view({**base, ("same_symmetric", "godel_S"): 94.3})
    assert check("godel_on_par_with_baseline", tie).status == "inconclusive"
    # a smaller seed std shows it (TOST): 90% [-0.33, +0.13] inside +-0.5
    close = view({**base, ("same_symmetric", "godel_S"): 94.9}, Noise(0.1, "test"))
    verdict = check("godel_on_par_with_baseline", close)
    assert verdict.status == "holds" and "TOST 90% [-0.33, +0.13] vs +-0.5" in verdict.detail
    # a difference beyond the margin fails it: 90% [-2.43, -0.57]
    apart = view({**base, ("same_symmetric", "godel_S"): 93.5})
    assert check("godel_on_par_with_baseline", apart).status == "fails"


def test_on_ours_each_cell_needs_three_seeds_and_its_own_spread_decides():
    base = {claims.BASE: [95.0, 95.1, 94.9, 95.0, 95.0]}
    one = view({**base, ("same_symmetric", "yager_p20_S"): [97.0]}, noise=None)
    verdict = check("yager20_beats_baseline", one)
    assert verdict.status == "not measurable" and "has 1 seed(s) (< 3)" in verdict.detail
    steady = view({**base, ("same_symmetric", "yager_p20_S"): [95.8, 95.9, 95.7]}, noise=None)
    assert check("yager20_beats_baseline", steady).status == "holds"
    noisy = view({**base, ("same_symmetric", "yager_p20_S"): [97.8, 93.9, 95.7]}, noise=None)
    verdict = check("yager20_beats_baseline", noisy)
    assert verdict.status == "inconclusive" and "Welch, n=3/5" in verdict.detail


def test_best_needs_the_row_above_every_other_row():
    rows = {r: [95.0, 95.1, 94.9] for r in claims.SYM_S + claims.SYM_R}
    rows |= {"lukasiewicz": [94.0, 94.1, 93.9], "nilpotent": [94.0, 94.1, 93.9]}
    values = {("same_symmetric", r): xs for r, xs in rows.items()}
    values[("same_symmetric", "godel_S")] = [95.3, 95.2, 95.25]  # the top mean
    values[("same_symmetric", "product_S")] = [95.5, 94.6, 95.2]  # not shown different
    layout = {"same_symmetric": list(rows)}
    tied = check("product_best_same_symmetric", view(values, noise=None, layout=layout))
    assert tied.status == "inconclusive"  # in the top tie set is no win
    assert (
        "top tie set: godel_S, " in tied.detail and "P(product_S is the top row) = " in tied.detail
    )
    values[("same_symmetric", "product_S")] = [97.0, 97.1, 96.9]  # above every other row
    above = check("product_best_same_symmetric", view(values, noise=None, layout=layout))
    assert above.status == "holds" and "[Holm over 11 comparisons]" in above.detail
    values[("same_symmetric", "product_S")] = [94.0, 94.1, 93.9]  # beaten beyond the noise
    beaten = view(values, noise=None, layout=layout)
    assert check("product_best_same_symmetric", beaten).status == "fails"


def test_vanishing_tnorms_best_needs_the_top_vanishing_row_above_godel_and_product():
    rows = ["godel", "product", "lukasiewicz", "yager_p2", "nilpotent"]

    def verdict(product: list[float], collapsed: tuple[bool, ...] = ()) -> str:
        cells = {("tnorms", r): {"accuracy": _spread(96.0)} for r in rows[2:]}
        cells[("tnorms", "godel")] = {"accuracy": _spread(20.0)}
        cells[("tnorms", "product")] = {"accuracy": product}
        v = _ours_of(cells, {"tnorms": rows})
        v = replace(v, collapsed={("tnorms", "product", "accuracy"): collapsed})
        return check("vanishing_tnorms_best", v).status

    assert verdict(_spread(50.0)) == "holds"
    assert verdict([96.0, 97.5, 99.0]) == "inconclusive"  # product not shown different
    assert verdict(_spread(97.0)) == "fails"  # product above every vanishing row
    # a collapsed seed is no noise: product's other runs (97.0, 97.3, 97.1) are above 96
    assert verdict([97.0, 20.3, 97.3, 97.1], (False, True, False, False)) == "fails"
    # Welch over the mixture would have called it a tie
    assert stats.welch([97.0, 20.3, 97.3, 97.1], _spread(96.0)).outcome == 0


def test_clearly_not_the_best_s_needs_the_smallest_below_the_top_beyond_the_noise():
    rows = ["0.5", "1", "9"]

    def verdict(smallest: list[float], cu: float = 0.9) -> str:
        cells = {
            ("sigmoidal_s", "0.5"): {
                "accuracy": smallest,
                "cu_cons": _spread(cu),
                "cu_ant": _spread(cu),
            },
            ("sigmoidal_s", "1"): {"accuracy": _spread(96.0), "cu_cons": _spread(0.5)},
            ("sigmoidal_s", "9"): {"accuracy": _spread(97.0), "cu_cons": _spread(0.4)},
        }
        cells[("sigmoidal_s", "1")]["cu_ant"] = cells[("sigmoidal_s", "9")]["cu_ant"] = _spread(0.5)
        return check("s_best_not_highest_cu", _ours_of(cells, {"sigmoidal_s": rows})).status

    assert verdict(_spread(95.0)) == "holds"
    assert verdict([94.0, 96.5, 99.0]) == "inconclusive"  # tied with s=9
    assert verdict([95.0, 97.5, 100.0]) == "inconclusive"  # the top mean, tied with s=9
    assert verdict(_spread(98.0)) == "fails"  # the smallest s is the best beyond the noise
    assert verdict(_spread(95.0), cu=0.1) == "fails"  # its cu ratios are not the highest


def test_dfl_improves_needs_the_interval_above_zero_and_a_tie_is_within_noise():
    base = {claims.BASE: [95.0, 95.2, 94.8, 95.1, 94.9]}
    above = view(base, noise=None, default_run=claims.Sample((96.0, 96.2, 95.8), "n=3"))
    verdict = check("dfl_improves_on_baseline", above)
    assert verdict.status == "holds" and "Welch, n=3/5" in verdict.detail
    near = view(base, noise=None, default_run=claims.Sample((95.3, 94.5, 96.1), "n=3"))
    assert check("dfl_improves_on_baseline", near).status == "inconclusive"
    below = view(base, noise=None, default_run=claims.Sample((94.0, 94.2, 93.8), "n=3"))
    assert check("dfl_improves_on_baseline", below).status == "fails"
    few = view(base, noise=None, default_run=claims.Sample((96.0,), "n=1"))
    assert check("dfl_improves_on_baseline", few).status == "not measurable"
    assert check("dfl_improves_on_baseline", view(base, noise=None)).status == "not measurable"


def test_a_correlation_over_fewer_than_eight_cells_gives_no_verdict():
    cons = {("tnorms", r, "cons"): c for r, c in zip("abcdefg", range(7), strict=True)}
    acc = {("tnorms", r, "accuracy"): 90.0 - c for r, c in zip("abcdefg", range(7), strict=True)}
    seeds = {key: (x, x, x) for key, x in acc.items()}
    v = claims.View("ours", {**cons, **acc}, 95.0, {}, {}, None, seeds)
    verdict = check("tnorms_low_cons_better", v)
    assert verdict.status == "not measurable" and "too few cells: 7" in verdict.detail
    assert verdict_stats.spearman_p(range(10), range(10)) < 0.001
    assert verdict_stats.spearman_p([1, 2, 3, 4, 5, 6, 7, 8], [2, 1, 4, 3, 6, 5, 8, 7]) < 0.05


def test_a_run_shown_in_two_tables_counts_once_in_a_correlation():
    values, configurations = {}, {}
    for i in range(8):
        for table in ("same_symmetric", "tnorms"):  # every cell twice, one configuration
            values |= {(table, f"r{i}", "cu_ant"): i / 10, (table, f"r{i}", "accuracy"): 90.0 + i}
            configurations[(table, f"r{i}")] = f"config{i}"
    seeds = {key: (x, x, x) for key, x in values.items() if key[2] == "accuracy"}
    v = claims.View("ours", values, 95.0, {}, {}, None, seeds, configurations)
    verdict = check("cu_ant_correlates_with_accuracy", v)
    assert verdict.status == "holds" and "over 8 cells" in verdict.detail
    few = claims.View("ours", values, 95.0, {}, {}, None, {}, configurations)
    assert "too few cells: 0" in check("cu_ant_correlates_with_accuracy", few).detail


def test_new_claims_on_the_papers_numbers(tmp_path):
    verdicts = paper_verdicts(tmp_path)
    holds = {name for name, v in verdicts.items() if v.status == "holds"}
    assert "dfl_improves_on_baseline" in holds
    # held before Benjamini-Hochberg across the paper's claims only while a claim's p was the
    # largest of every decided test it read; on the tests that decide them they hold after it
    verdict = verdicts["aggregators_most_important"]
    assert verdict.status == "holds" and verdict.q < stats.FDR
    assert "before Benjamini-Hochberg" not in verdict.detail
    # "only T_P + I_RC": single runs cannot show the other 18 symmetric rows not above the
    # baseline (below, or equivalent within +-0.5 after Holm): not shown is no evidence
    only = verdicts["only_symmetric_product_reichenbach"]
    assert only.status == "inconclusive" and "undecided (neither shown to nor" in only.detail
    # single runs with the paper's seed std 0.204 cannot show equivalence within +-0.5 unless
    # the two printed numbers nearly agree: "similar" is inconclusive on its own numbers
    assert verdicts["yager20_s_similar_to_r"].status == "inconclusive"
    # A_GME p=20 (95.5) is within the paper's own noise of its baseline (95.18)
    assert verdicts["other_gme_effective"].status == "inconclusive"
    # 7 t-norms are too few cells for a correlation, whatever its sign
    assert verdicts["sum9_reflects_same"].status == "not measurable"
    assert "too few cells: 7 t-norms" in verdicts["sum9_reflects_same"].detail
    assert "[+0.55, +1.69]" in verdicts["dfl_improves_on_baseline"].detail  # 1.96 * 0.204 * √2
    # coded as the paper means it: the universal aggregator has the most choices below the
    # baseline; the range would be decided by the t-norms' collapsed rows (20%)
    detail = verdicts["aggregators_most_important"].detail
    assert "universal aggregator 0.60" in detail and "t-norm 76.70" in detail
    # "quite a bit higher": 95.6 vs 95.18 is within the paper's own noise
    assert verdicts["yager20_beats_baseline"].status == "inconclusive"
    # "significantly higher": 97.7 vs 97.0 is beyond it
    assert verdicts["sum9_sgd_beats_adam"].status == "holds"


def test_a_correlation_needs_its_permutation_p_value_not_only_its_sign(tmp_path):
    verdicts = paper_verdicts(tmp_path)
    # the paper's own cells: rho(cu_ant, accuracy) = +0.14 over 50 cells is no evidence
    ant = verdicts["cu_ant_correlates_with_accuracy"]
    assert ant.status == "inconclusive" and "+0.14 (p = 0.3" in ant.detail
    assert "r = -0.09 (r alone: the other sign)" in ant.detail
    cons = verdicts["cons_anticorrelates_with_cu"]
    assert cons.status == "holds" and "rho(cons, cu_cons) = -0.59 (p = 0.000)" in cons.detail


def test_only_product_reichenbach_needs_every_other_symmetric_row_shown_not_above():
    """Ours, 6 seeds a cell: with every other symmetric row shown equivalent to the baseline the
    claim holds; one row left undecided (a wide spread) makes it inconclusive, not holding;
    another row shown above makes it fail."""
    tight = [95.0, 95.02, 94.98, 95.01, 94.99, 95.0]
    values = {claims.BASE: tight, ("same_symmetric", "product_S"): [x + 2 for x in tight]}
    for experiment, rows in claims.SYMMETRIC.items():
        for row in rows:
            values.setdefault((experiment, row), list(tight))
    assert check("only_symmetric_product_reichenbach", view(values, None)).status == "holds"
    wide = dict(values)
    wide[("sum9_symmetric", "yager_p20")] = [93.0, 97.5, 94.0, 96.5, 95.5, 94.5]
    verdict = check("only_symmetric_product_reichenbach", view(wide, None))
    assert verdict.status == "inconclusive" and "undecided (neither" in verdict.detail
    assert "sum9_symmetric/yager_p20" in verdict.detail.split("undecided")[1]
    values[("sum9_symmetric", "yager_p20")] = [x + 2 for x in tight]
    verdict = check("only_symmetric_product_reichenbach", view(values, None))
    assert verdict.status == "fails" and "sum9_symmetric/yager_p20 +2.00 [" in verdict.detail


@pytest.mark.slow  # renders every table of the committed records at two profiles
def test_verdicts_show_long_beside_quick_once_its_records_land(tmp_path):
    from dfl_bench.results.__main__ import main

    records, out = tmp_path / "records", tmp_path / "out"
    for seed, best in enumerate((0.94, 0.95)):
        write(records, "baseline", f"b{seed}", row="ce_pair", seed=seed, accuracy=0.93, best=best)
    write(records, "tnorms", "g", row="godel", accuracy=0.5, best=0.97)
    assert main(["--records", str(records), "--out", str(out)], PaperReport()) == 0
    text = (out / "tables" / "verdicts.md").read_text()
    assert "|  | quick | long |" in text
    table = (out / "tables" / "tnorms.md").read_text()  # only the profiles it has records at
    assert "profile `quick`" in table and "profile `long`" not in table
    assert "| records (ok) | 1 (1) | no records yet |" in text
    assert (
        "| above the baseline beyond the noise | the baseline has 2 seed(s) | no records yet |"
    ) in text
    write(records, "tnorms", "gl", row="godel", profile="long", accuracy=0.5, best=0.80)
    assert main(["--records", str(records), "--out", str(out)], PaperReport()) == 0
    text = (out / "tables" / "verdicts.md").read_text()
    assert (
        "| accuracy range (final) | 50.00 (godel) .. 50.00 (godel) | 50.00 (godel) .. 50.00" in text
    )
    assert (
        "| `vanishing_tnorms_best` (10.2.2; paper: holds) | **not measurable**: "
        "tnorms/lukasiewicz accuracy missing | **not measurable**: tnorms/lukasiewicz accuracy "
        "missing |"
    ) in text
    assert "| `godel_product_tnorms_poor` (10.2.2; paper: " in text and (
        "tnorms/godel has 1 seed(s) (< 3): decides nothing" in text
    )


def test_a_table_beyond_the_paper_is_no_experiment_of_the_papers_claims(tmp_path):
    for seed in range(3):  # MNIST addition's sum accuracy: another task, higher than `both`
        write(tmp_path, "mnist_addition", "a", row="product_gm", seed=seed, accuracy=0.99)
        write(
            tmp_path, "best", "b", seed=seed, accuracy=0.97, extra_config={"kb": {"name": "both"}}
        )
        write(
            tmp_path, "best", "s", seed=seed, accuracy=0.95, extra_config={"kb": {"name": "sum9"}}
        )
        write(
            tmp_path, "sigmoidal_s", "s", seed=seed, accuracy=0.96,
            extra_config={"implication": {"s": 9.0}},
        )  # fmt: skip
    result = build(PAPER, load_records(tmp_path), "quick", [], REPO)
    (verdict,) = (ours for item, _, ours in result.verdicts if item.name == "both_best_overall")
    assert (
        "mnist_addition" not in verdict.detail and "both - sum9 difference +2.00" in verdict.detail
    )
    # sigmoidal_s's s=9 is sigmoidal_b0's b0=-0.5: one configuration fills both cells
    assert "above 3 of the 3 other cells" in verdict.detail and "both - same" in verdict.detail
    assert "P(both is the top cell) = 1.00 (bootstrap)" in verdict.detail
    assert verdict.status == "holds"


def _ours(cell: tuple[str, str], column: str, values: list[float]) -> claims.View:
    """Our view of one cell: three accuracies and `values` of `column` over the same seeds."""
    samples = {(*cell, "accuracy"): (95.0, 95.1, 95.2), (*cell, column): tuple(values)}
    flat = {key: sum(xs) / len(xs) for key, xs in samples.items()}
    return claims.View("ours", flat, None, {}, {}, None, samples)


def test_a_cell_against_a_number_the_paper_states_is_decided_by_its_own_seeds():
    f1, luk = ("formulas", "f1"), ("same_symmetric", "lukasiewicz")
    dominated = "formula_1_antecedent_dominated"
    # about 5%: equivalence with 0.05 within the ratio margin shown (TOST), or a difference
    # beyond it shown; no difference shown is no equivalence
    verdict = check(dominated, _ours(f1, "cons", [0.098, 0.082, 0.076]))
    assert verdict.status == "inconclusive"  # +0.035, its 90% interval reaching past 0.05
    assert "difference +0.035 [" in verdict.detail and "(t, n=3, df=2)" in verdict.detail
    assert check(dominated, _ours(f1, "cons", [0.12, 0.13, 0.125])).status == "fails"
    assert check(dominated, _ours(f1, "cons", [0.02, 0.09, 0.05])).status == "inconclusive"
    assert check(dominated, _ours(f1, "cons", [0.030, 0.040, 0.035])).status == "holds"
    below = "lukasiewicz_cu_cons_below_random"
    assert check(below, _ours(luk, "cu_cons", [0.05, 0.06, 0.07])).status == "holds"
    assert check(below, _ours(luk, "cu_cons", [0.05, 0.20, 0.10])).status == "inconclusive"
    assert check(below, _ours(luk, "cu_cons", [0.70, 0.80, 0.76])).status == "fails"
    assert check(below, _ours(luk, "cu_cons", [0.05, 0.06])).status == "not measurable"


def test_one_sample_interval_is_students_t_of_the_mean_minus_the_number():
    interval = stats.one_sample([1.0, 2.0, 3.0], 1.0)
    half = 4.302652729911275 * 1.0 / math.sqrt(3)  # t(0.975, 2) * sd / sqrt(n)
    assert interval.delta == pytest.approx(1.0)
    assert (interval.low, interval.high) == pytest.approx((1.0 - half, 1.0 + half))
    assert stats.one_sample([0.2, 0.2], 0.1).how == "t, n=2, no spread"
    with pytest.raises(ValueError, match="two values"):
        stats.one_sample([0.2], 0.1)


def test_nearly_all_beat_their_symmetric_row_counts_ties_as_undecided():
    """12 cells: 9 wins hold (3/4); 6 wins and 6 ties are within the noise (the ties could make
    the share); 6 wins, 2 ties and 4 losses fail (even winning every tie leaves 8 of 12)."""
    from campaign.report.claims.appendix import SYMMETRIC_S, TNORMS_RMSE

    def verdict(outcomes: list[int]) -> str:
        values = {}
        cells = [(t, a) for t in TNORMS_RMSE for a in ("log_product", "rmse")]
        for (tnorm, aggregator), outcome in zip(cells, outcomes, strict=True):
            sym = SYMMETRIC_S.get(tnorm, f"{tnorm}_S" if "yager" in tnorm else tnorm)
            values[("same_symmetric", sym)] = [95.0, 95.1, 94.9]
            shift = {1: 2.0, 0: 0.0, -1: -2.0}[outcome]
            values[("symmetric_aggregators", f"{tnorm}_{aggregator}")] = [
                95.0 + shift + d for d in (0.1, -0.1, 0.0)
            ]
        return check("rmse_log_product_beat_symmetric", view(values, noise=None)).status

    assert verdict([1] * 9 + [0] * 3) == "holds"
    assert verdict([1] * 6 + [0] * 6) == "inconclusive"
    assert verdict([1] * 6 + [0] * 2 + [-1] * 4) == "fails"


def _ours_of(cells: dict, layout: dict) -> claims.View:
    """Our view of `{(experiment, row): {column: [value per seed]}}` (accuracy 95 by default)."""
    samples = {}
    for (experiment, row), columns in cells.items():
        for column, xs in {"accuracy": [95.0, 95.1, 94.9], **columns}.items():
            samples[(experiment, row, column)] = tuple(xs)
    flat = {key: sum(xs) / len(xs) for key, xs in samples.items()}
    return claims.View("ours", flat, None, {}, layout, None, samples)


def _spread(centre: float) -> list[float]:
    return [centre - 0.01, centre, centre + 0.01]


def test_yager_aggregators_above_the_median_need_to_beat_more_than_half_beyond_the_noise():
    rows = ["forall_minimum", "forall_log_product", "forall_lukasiewicz", "forall_yager_p1_5"]
    rows += ["forall_yager_p2", "forall_yager_p20", "forall_gme_p1_5", "forall_rmse"]
    rows += ["forall_gme_p20", "forall_nilpotent"]  # 7 others: above the median = beat 4

    def verdict(yager_cu: list[float]) -> str:
        cells = {}
        for i, row in enumerate(rows):
            cu = yager_cu if "yager" in row else _spread(0.1 * (i + 1) / 2)
            cells[("aggregation", row)] = {"cu_cons": cu, "cu_ant": cu}
        return check("yager_forall_high_cu", _ours_of(cells, {"aggregation": rows})).status

    assert verdict(_spread(0.9)) == "holds"  # above all 7 others
    assert verdict(_spread(0.05)) == "fails"  # below all 7
    assert verdict([0.1, 0.4, 0.7]) == "inconclusive"  # tied with all 7


def test_among_the_better_allows_at_most_half_of_the_others_above_it():
    rows = ["kleene_dienes", "godel", "reichenbach", "lukasiewicz", "fodor"]  # 4 others

    def verdict(lukasiewicz: list[float]) -> str:
        accuracy = {"kleene_dienes": 96.0, "godel": 90.0, "reichenbach": 97.0, "fodor": 95.0}
        cells = {("implications", r): {"accuracy": _spread(x)} for r, x in accuracy.items()}
        cells[("implications", "lukasiewicz")] = {"accuracy": lukasiewicz}
        layout = {"implications": rows}
        return check("godel_worst_lukasiewicz_among_better", _ours_of(cells, layout)).status

    assert verdict(_spread(96.5)) == "holds"  # above godel, fodor and kleene_dienes
    assert verdict(_spread(94.0)) == "fails"  # three of the four others above it
    assert verdict([94.0, 96.0, 97.5]) == "inconclusive"


def test_around_97_needs_each_cell_shown_equivalent_to_97():
    rows = ["reichenbach", "yager_s_p1_5", "yager_s_p2", "yager_s_p20"]

    def verdict(last: list[float]) -> str:
        cells = {("implications", r): {"accuracy": _spread(97.1)} for r in rows[:-1]}
        cells[("implications", rows[-1])] = {"accuracy": last}
        v = _ours_of(cells, {"implications": rows})
        return check("reichenbach_yager_s_around_97", v).status

    assert verdict(_spread(96.8)) == "holds"
    assert verdict(_spread(96.0)) == "fails"  # [-1.03, -0.97]: beyond half a point
    assert verdict([95.0, 96.5, 97.0]) == "inconclusive"  # wide: no equivalence shown


def test_a_slight_positive_correlation_is_noise_until_its_p_value_decides_its_sign():
    def verdict(cu_cons: list[float]) -> claims.Verdict:
        values = {}
        for i, cu in enumerate(cu_cons):  # cu_ant rises with the accuracy: rho = +1
            values |= {("same_symmetric", f"r{i}", "accuracy"): 90.0 + i}
            values |= {("same_symmetric", f"r{i}", "cu_ant"): i / 10}
            values |= {("same_symmetric", f"r{i}", "cu_cons"): cu}
        kbs = {("same_symmetric", f"r{i}"): "same" for i in range(len(cu_cons))}
        seeds = {key: (x, x, x) for key, x in values.items() if key[2] == "accuracy"}
        v = claims.View("ours", values, 95.0, kbs, {}, None, seeds)
        return check("cu_cons_same_slightly_positive", v)

    shuffled = [0.1, 0.0, 0.3, 0.2, 0.5, 0.4, 0.7, 0.6, 0.9, 0.8]  # rho +0.94, p < 0.001
    assert verdict(shuffled).status == "holds"  # positive, weaker than cu_ant's +1
    assert verdict([0.5, 0.1, 0.9, 0.2, 0.8, 0.0, 0.3, 0.7, 0.4, 0.6]).status == "inconclusive"
    assert verdict([0.9 - x for x in shuffled]).status == "fails"  # negative, decided
    assert verdict([i / 10 for i in range(10)]).status == "fails"  # as strong as cu_ant's


def test_tost_shows_equivalence_only_when_the_90_interval_lies_inside_the_margin():
    same = stats.welch([97.0, 97.2, 97.1], [97.05, 96.9, 97.3], margin=0.5)
    low, high = same.interval90()
    assert -0.5 < low < high < 0.5 and same.equivalent and same.level_with() is True
    noisy = stats.welch([95.0, 96.0, 97.0], [96.0, 95.5, 96.5], margin=0.5)
    assert noisy.outcome == 0 and not noisy.equivalent and noisy.level_with() is None
    apart = stats.welch([96.0, 96.1, 95.9], [97.0, 97.1, 96.9], margin=0.5)
    assert apart.beyond and apart.level_with() is False


def test_tost_rarely_calls_a_true_half_point_difference_equivalent():
    """The referee's simulation: seed sd 0.3, n = 3 vs 5, a true difference of 0.5 points. An
    interval that holds 0 calls it "on par" most of the time; TOST at +-0.5 at most 5%."""
    rng = np.random.default_rng(0)
    tries, holds_zero, equivalent = 2000, 0, 0
    for _ in range(tries):
        interval = stats.welch(
            rng.normal(0.5, 0.3, 3).tolist(), rng.normal(0.0, 0.3, 5).tolist(), margin=0.5
        )
        holds_zero += interval.outcome == 0
        equivalent += interval.equivalent
    assert holds_zero / tries > 0.5 and equivalent / tries <= 0.05


def test_holm_within_a_claim_undoes_a_decision_that_one_comparison_alone_makes():
    base = [95.0, 95.1, 94.9, 95.0, 95.05]
    rows = ["kleene_dienes", "yager_r_p1_5", "yager_r_p2", "yager_r_p20"]
    slightly = [95.1, 95.2, 95.15]
    p = stats.welch(slightly, base).raw[0]
    assert 0.05 / 4 < p < 0.05  # above the baseline alone, not after Holm over four
    values = {claims.BASE: base} | {("implications", r): slightly for r in rows}
    verdict = check("kleene_dienes_yager_r_beat_baseline", view(values, noise=None))
    assert verdict.status == "inconclusive" and "[Holm over 4 comparisons]" in verdict.detail
    clear = {claims.BASE: base} | {("implications", r): [96.0, 96.1, 95.9] for r in rows}
    assert check("kleene_dienes_yager_r_beat_baseline", view(clear, noise=None)).status == "holds"


def test_benjamini_hochberg_across_claims_counts_the_inconclusive_ones():
    verdicts = [
        claims.Verdict("holds", "a", p=0.001),
        claims.Verdict("fails", "b", p=0.02),
        claims.Verdict("inconclusive", "c"),
        claims.Verdict("inconclusive", "d"),
        claims.Verdict("not measurable", "e"),
    ]
    adjusted = claims.across_claims(verdicts)
    # four tested claims: q = 0.004 for a, 0.02 * 4 / 2 = 0.04 for b
    assert [v.status for v in adjusted] == [
        "holds",
        "fails",
        "inconclusive",
        "inconclusive",
        "not measurable",
    ]
    assert adjusted[1].q == pytest.approx(0.04)
    verdicts.insert(3, claims.Verdict("inconclusive", "f"))  # five tested: b's q is 0.05
    adjusted = claims.across_claims(verdicts)
    assert adjusted[1].status == "inconclusive" and "fails before Benjamini-Hochberg" in (
        adjusted[1].detail
    )
    assert adjusted[0].status == "holds"


def test_a_collapsed_cell_is_compared_on_its_rate_and_its_other_runs():
    steady = [97.1, 97.3, 97.2, 97.15, 97.25]
    # every run of a collapsed cell is no mixture: Welch decides it
    assert stats.compare_runs([20.1, 11.3, 19.0], [True] * 3, steady, []).outcome == -1
    # many collapses decide by their rate (Fisher), even where the others are level
    many = stats.compare_runs(
        [20.0] * 8 + [97.2, 97.3], [True] * 8 + [False] * 2, steady * 2, [False] * 10
    )
    assert many.outcome == -1 and "collapsed 8 of 10 vs 0 of 10" in many.how
    assert not many.equivalent  # a cell with collapses is never shown equivalent


def test_the_seed_plan_asks_the_seeds_a_power_calculation_gives_each_undecided_comparison(
    tmp_path,
):
    from campaign import seed_plan

    for seed in range(3):  # (1) vs (2): +0.3 with sd 0.2 each, inconclusive at 3 seeds
        write(tmp_path, "formulas", "a", row="f1", profile="long", seed=seed,
              accuracy=(96.3 + (seed - 1) * 0.2) / 100)  # fmt: skip
        write(tmp_path, "formulas", "b", row="f2", profile="long", seed=seed,
              accuracy=(96.0 + (seed - 1) * 0.2) / 100)  # fmt: skip
    r = build(PAPER, load_records(tmp_path), "long", [], REPO)
    planned, _ = seed_plan.needs(r)
    (need,) = [n for n in planned if n.claim == "only_1_beats_only_2"]
    assert need.cells == ("formulas/f1", "formulas/f2") and need.have == (3, 3)
    want = power.seeds_needed(0.2, 0.2, 0.3, 0.5, False)
    assert need.test == "difference" and need.seeds == want and 3 < want <= power.MAX_SEEDS
    assert seed_plan.targets(planned) == {"formulas/f1": want, "formulas/f2": want}
    # equivalence is asked where it is the cheaper decision: +0.05 with sd 0.1
    assert power.seeds_needed(0.1, 0.1, 0.05, 0.5, True) == 2
    assert power.seeds_needed(0.1, 0.1, 0.05, 0.5, False) is None  # > MAX_SEEDS


def test_the_paired_view_compares_two_cells_over_their_common_seeds_only():
    """A seed's effect shared by two cells drops out of their per-seed differences: paired,
    a steady 0.5-point gap over seeds of spread 1 is a difference; unpaired (Welch) it is not.
    Seeds one cell lacks are left out; a collapsed run sends the pair back to the unpaired test."""
    a, b = ("x", "a"), ("x", "b")
    ids = {(*a, "accuracy"): (0, 1, 2, 7), (*b, "accuracy"): (2, 1, 0)}  # b in another order
    v = view({a: [97.0, 96.0, 95.5, 99.0], b: [95.1, 95.4, 96.5]}, noise=None, seed_ids=ids)
    assert v.interval(a, b).outcome == 0  # Welch over all four and three seeds
    paired = replace(v, paired=True).interval(a, b)
    assert (
        paired.outcome == 1
        and paired.how == "paired by seed, t, n=3, df=2, 96.17 vs 95.67 over them"
    )
    assert round(paired.delta, 6) == round((0.5 + 0.6 + 0.4) / 3, 6)
    collapsed = {(*a, "accuracy"): (False, False, False, True), (*b, "accuracy"): ()}
    fallback = replace(v, paired=True, collapsed=collapsed).interval(a, b)
    assert fallback.how.startswith("collapsed 1 of 4 vs 0 of 3")
    few = replace(v, paired=True, seed_ids={**ids, (*b, "accuracy"): (2, 5, 6)})
    assert few.interval(a, b).how.startswith("Welch")  # one common seed: not paired


def test_a_claims_table_adds_the_paired_verdict_only_where_it_differs_from_ours():
    def item(name):
        return claims.Claim(name, "tnorms", "10.2", "a sentence", lambda view: None)

    verdicts = [
        (item("a"), claims.Verdict("holds", "p"), claims.Verdict("holds", "+0.02 [-0.36, +0.40]")),
        (item("b"), claims.Verdict("holds", "p"), claims.Verdict("holds", "+0.53 [+0.12, +0.94]")),
    ]
    paired = {
        "a": claims.Verdict("inconclusive", "-0.06 [-0.51, +0.39] (paired by seed)"),
        "b": claims.Verdict("holds", "+0.58 [+0.10, +1.06] (paired by seed)"),
    }
    rows = claims_markdown(verdicts, paired).splitlines()[2:]
    assert rows[0].endswith(
        "**holds**: +0.02 [-0.36, +0.40]. Paired by seed (secondary, decides nothing): "
        "**inconclusive**: -0.06 [-0.51, +0.39] (paired by seed) |"
    )
    assert rows[1].endswith("**holds**: +0.53 [+0.12, +0.94] |")
    assert claims_markdown(verdicts) == claims_markdown(verdicts, {})


def _claim_of(check) -> framework.Claim:
    return framework.Claim("x", "e", "here", "a sentence", check)


@dataclass(frozen=True)
class _Family:
    """A view that only carries the claim's family (the claim below reads nothing else)."""

    family: framework.Family | None = None


WIN = stats.Interval(0.3, 0.05, 0.55, "t", se=0.125)  # p ~ 0.016: a comparison the claim wins
LOSS = stats.Interval(-1.0, -1.2, -0.8, "t", se=0.1)  # p ~ 1e-23: the one it loses


def test_a_failing_claims_p_is_that_of_the_comparison_that_makes_it_fail_not_of_a_win():
    def check(v):
        pairs = ((("win",), WIN), (("loss",), LOSS))
        outcomes = [v.family.track(key, interval).outcome for key, interval in pairs]
        return (False if -1 in outcomes else True if outcomes == [1, 1] else None), ""

    verdict = verdicts.evaluate(_claim_of(check), _Family())
    assert verdict.status == "fails"
    assert verdict.p == pytest.approx(stats.holm([WIN.raw[0], LOSS.raw[0]])[1])
    assert verdict.p < 1e-6  # not the win's (the largest decided p, the rule before)


def test_a_claim_that_fails_on_a_fact_has_p_zero_whatever_it_read():
    def check(v):
        assert v.family.track(("win",), WIN).outcome in (-1, 0, 1)  # read, not what decides
        return False, "a ratio is defined where the claim says it is not"

    verdict = verdicts.evaluate(_claim_of(check), _Family())
    assert (verdict.status, verdict.p) == ("fails", 0.0)


def test_a_claim_is_decided_in_one_pass_after_declaring_its_comparisons():
    """A branch that only a Holm decision opens is decided once, by Bonferroni over the
    family with it (no run until the comparisons stop changing), and the verdict says so."""
    weak = stats.Interval(0.3, 0.01, 0.59, "t", se=0.15)  # p ~ 0.045: decided alone, not by Holm
    runs = []

    def check(v):
        runs.append((id(v.family), len(v.family.raw)))
        first = v.family.track(("weak", 1), weak).outcome
        second = v.family.track(("weak", 2), weak).outcome
        if (first, second) == (0, 0):  # only once Holm has undone both: a third comparison
            third = v.family.track(("new",), LOSS).outcome
            return (False if third == -1 else None), ""
        return (True if (first, second) == (1, 1) else None), ""

    verdict = verdicts.evaluate(_claim_of(check), _Family())
    own = [n for family, n in runs if family == runs[0][0]]  # the rest: `decisive_level`'s p
    assert own == [0, 2]  # declared, then decided: two runs of its family, never a third
    assert verdict.status == "fails"
    assert "1 comparison(s) met only when deciding: Bonferroni over the 3" in verdict.detail
    new = dict(verdict.comparisons)[("new",)]
    assert new.outcome == -1 and new.raw == LOSS.raw


@pytest.mark.slow  # every claim on the committed records
def test_nilpotent_like_baseline_fails_on_its_fact_at_long():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        committed = load_records(REPO / "results" / "records")
    r = build(PAPER, committed, "long", [], REPO)
    verdicts = {item.name: ours for item, _, ours in r.verdicts}
    assert (verdicts["nilpotent_like_baseline"].status, verdicts["nilpotent_like_baseline"].p) == (
        "fails",
        0.0,
    )


def test_one_configuration_shows_one_n_and_one_value_in_every_table(tmp_path):
    """sigmoidal_s's s = 9 and sigmoidal_b0's b0 = -0.5 are one configuration: every record
    of it counts once in both tables, whichever folder it was written to."""
    for seed, accuracy in ((0, 0.95), (1, 0.96), (2, 0.97)):
        write(tmp_path, "sigmoidal_s", "s", seed=seed, accuracy=accuracy,
              extra_config={"implication": {"s": 9.0}})  # fmt: skip
    for seed, accuracy in ((3, 0.94), (4, 0.98)):
        write(tmp_path, "sigmoidal_b0", "b", seed=seed, accuracy=accuracy,
              extra_config={"implication": {"b0": -0.5}})  # fmt: skip
    frame = load_records(tmp_path)
    result = build(PAPER, frame, "quick", [], REPO)
    s9 = result.tables["sigmoidal_s"].ours()["9"]
    half = result.tables["sigmoidal_b0"].ours()["-0.5"]
    assert s9.n["accuracy"] == half.n["accuracy"] == 5
    assert s9.mean["accuracy"] == half.mean["accuracy"] == pytest.approx(96.0)
    assert sorted(s9.seed_ids["accuracy"]) == [0, 1, 2, 3, 4]


ABOVE = stats.welch([97.0, 97.1, 96.9, 97.05], [95.0, 95.1, 94.9, 95.05], margin=0.5)
SAME = stats.welch([95.0, 95.01, 94.99, 95.0], [95.0, 95.02, 94.98, 95.01], margin=0.5)
OPEN = stats.welch([96.0, 94.0, 95.5, 94.5], [95.0, 95.2, 94.8, 95.1], margin=0.5)


def test_only_x_needs_every_other_row_shown_not_to_have_the_property():
    """'Only x is above': holds with every other row shown below or equivalent; one row left
    undecided turns it inconclusive (absence of evidence is not evidence); another row shown
    above makes it fail, as does x shown equivalent."""
    from campaign.report.claims.deciding import only

    assert (ABOVE.outcome, SAME.equivalent, OPEN.outcome, OPEN.equivalent) == (1, True, 0, False)
    assert only({"x": ABOVE, "y": SAME}, ["x"])[0] is True
    verdict, detail = only({"x": ABOVE, "y": SAME, "z": OPEN}, ["x"])
    assert verdict is None and "undecided (neither shown to nor shown not to): z" in detail
    assert only({"x": ABOVE, "y": ABOVE}, ["x"])[0] is False
    assert only({"x": SAME, "y": SAME}, ["x"])[0] is False


def test_any_two_verdicts_that_read_one_comparison_differently_are_found():
    """Whatever the claims' verdicts: one claim's `above` and another's `inconclusive` (its
    larger family) on one comparison are two readings of it, named with the size
    of each family."""
    a, b, base = ("t", "a"), ("t", "b"), ("baseline", "ce_pair")
    one = framework.Verdict("holds", "", comparisons=((("interval", a, base, "accuracy"), ABOVE),))
    other = framework.Verdict("holds", "", comparisons=((("interval", base, a, "accuracy"), SAME),))
    apart = framework.Verdict("holds", "", comparisons=((("interval", b, base, "accuracy"), SAME),))
    found = verdicts.contradictions({"one": one, "other": other, "apart": apart})
    cells = "baseline/ce_pair - t/a (accuracy)"  # in sorted order, one's `above` flipped
    assert found == [f"`one` reads {cells} as below (of 1), `other` as equivalent (of 1)"]
    wide = framework.Verdict(
        "inconclusive", "",
        comparisons=((("interval", a, base, "accuracy"), OPEN),
                     (("interval", b, base, "accuracy"), SAME)),
    )  # fmt: skip
    assert verdicts.contradictions({"one": one, "wide": wide}) == [
        f"`one` reads {cells} as below (of 1), `wide` as inconclusive (of 2)"
    ]
    unmeasured = framework.Verdict("not measurable", "", comparisons=wide.comparisons)
    assert verdicts.contradictions({"one": one, "unmeasured": unmeasured}) == []
    assert verdicts.contradictions({"one": one, "same": one}) == []


def test_a_claim_that_holds_and_one_that_fails(tmp_path):
    rows = {
        "godel": 0.20,
        "product": 0.21,
        "lukasiewicz": 0.97,
        "yager_p1_5": 0.96,
        "yager_p2": 0.95,
        "yager_p20": 0.94,
        "nilpotent": 0.96,
    }
    for (row, acc), seed in ((item, seed) for item in rows.items() for seed in range(3)):
        write(tmp_path, "tnorms", row, row=row, accuracy=acc + seed / 1000, seed=seed)
    for seed in range(3):
        write(tmp_path, "baseline", "b", row="ce_pair", accuracy=0.95 + seed / 1000, seed=seed)
    result = build(PAPER, load_records(tmp_path), "quick", ["tnorms"], REPO)
    verdicts = {item.name: (p, o) for item, p, o in result.verdicts}
    assert verdicts["vanishing_tnorms_best"][1].status == "holds"
    assert "the top vanishing row lukasiewicz 97.10" in verdicts["vanishing_tnorms_best"][1].detail
    assert verdicts["godel_product_tnorms_poor"][1].status == "holds"
    assert verdicts["tnorms_low_cons_better"][1].status == "not measurable"  # cons constant
    assert verdicts["s_beat_r_same"][1].status == "not measurable"
    # the paper's own numbers: the T_LK cu_cons contradiction shows as a failing claim
    assert verdicts["lukasiewicz_cu_cons_below_random"][0].status == "fails"
    # the appendix text fits Table mnist_symmetric_rmse with its halves swapped (compared so):
    # RMSE is then lower, if only within the paper's own noise ("slightly worse"): inconclusive
    paper = verdicts["product_worse_with_rmse"][0]
    assert paper.status == "inconclusive" and "difference -0.30 [" in paper.detail


def test_claim_fails_on_ours(tmp_path):
    for seed in range(3):
        write(tmp_path, "formulas", "a", row="f1", accuracy=0.90 + seed / 1000, seed=seed)
        write(tmp_path, "formulas", "b", row="f2", accuracy=0.95 - seed / 1000, seed=seed)
    result = build(PAPER, load_records(tmp_path), "quick", ["formulas"], REPO)
    verdict = {item.name: o for item, _, o in result.verdicts}["only_1_beats_only_2"]
    assert verdict.status == "fails"
    assert verdict.detail.startswith("(1) 90.10 vs (2) 94.90: difference -4.80 [")


def test_every_claim_names_a_table_or_the_analysis():
    names = [c.name for c in claims.CLAIMS]
    assert len(names) == len(set(names))
    assert {c.experiment for c in claims.CLAIMS} <= set(PAPER.tables) | set(claims.SECTIONS)


def test_an_interval_inside_a_claim_says_when_holm_undoes_it():
    from tests.results.test_block_correction import MARGINAL, NULL, REFERENCE

    family = framework.Family()
    near = stats.compare_runs(MARGINAL, (), REFERENCE, ())
    far = stats.compare_runs(NULL, (), REFERENCE, ())
    family.track(("a",), near)
    family.track(("b",), far)
    family.adjust()
    shown = family.track(("a",), near)
    assert shown.correction == framework.HOLM and shown.outcome == 0
    assert shown.text() == near.text() + " (not after Holm)"
    assert family.track(("b",), far).text() == far.text()  # never decided: nothing to undo


def test_one_comparison_has_one_reading_the_largest_familys():
    """A claim reading one comparison alone (family of 1: above) and another reading it among
    many (Holm over 6: not decided) are decided at one reading, the larger family's, and the
    first says whose reading it took; a claim no other claim shares a comparison with is left
    as it was."""
    from campaign.report.claims.deciding import as_claimed

    base, a = ("baseline", "ce_pair"), ("t", "a")
    others = [("t", f"o{i}") for i in range(5)]
    values = {
        base: [95.0, 95.2, 94.8, 95.1],
        a: [95.6, 95.3, 95.9, 95.4],  # above the baseline alone (p 0.02), not after Holm over 6
        **{o: [95.0, 95.3, 94.9, 95.0] for o in others},
    }
    v = view(values, noise=None)

    def alone(w):
        return as_claimed(+1, w.interval(a, base)), "alone"

    def among(w):
        for cell in [a, *others]:
            w.interval(cell, base)
        return None, "among"

    def apart(w):
        return as_claimed(+1, w.interval(others[0], base)), "apart"

    items = [framework.Claim(n, "t", "", "", f) for n, f in
             (("alone", alone), ("among", among), ("apart", apart))]  # fmt: skip
    first = [verdicts.evaluate(item, v) for item in items]
    assert first[0].status == "holds"  # alone: above at a family of 1
    assert verdicts.contradictions({i.name: x for i, x in zip(items, first, strict=True)})
    once = verdicts.one_reading(v, items)
    assert once[0].status == "inconclusive"
    assert "read as `among` (of 6) reads it" in once[0].detail
    assert once[2] == first[2]  # nothing shared: as it was
    assert verdicts.contradictions({i.name: x for i, x in zip(items, once, strict=True)}) == []


def test_a_cell_beside_a_stated_number_needs_three_runs_that_did_not_collapse():
    """No above or below from fewer than three runs that count: a cell of four seeds, two of
    them collapsed, is not compared with a number the paper states (its two other runs lie far
    above it, which Student's t over two runs would call above)."""
    cell = ("tnorms", "product")
    v = view({cell: [97.0, 97.1, 20.0, 21.0]}, noise=None)
    v = replace(v, collapsed={(*cell, "accuracy"): (False, False, True, True)})
    assert stats.one_sample([97.0, 97.1], 90.0).outcome == 1  # what two runs would say
    with pytest.raises(framework.NotMeasurable, match="fewer than 3 runs not collapsed"):
        v.versus(cell, "accuracy", 90.0)
    three = replace(v, collapsed={(*cell, "accuracy"): (False, False, False, True)})
    three = replace(three, samples={(*cell, "accuracy"): (97.0, 97.1, 97.2, 20.0)})
    assert three.versus(cell, "accuracy", 90.0).word == "above"


def test_the_bootstrap_top_probability_reads_a_cells_seeds_in_any_order():
    """A cell's seeds come in the order their records were read (file names are hashes): the
    probability that a row is the top one depends on their values, not on that order."""
    samples = {"a": [95.1, 95.6, 94.8, 95.3], "b": [95.0, 95.4, 95.2], "c": [94.7, 95.9, 95.0]}
    shuffled = {name: list(reversed(values)) for name, values in samples.items()}
    chance = verdict_stats.top_probability(samples, "a")
    assert verdict_stats.top_probability(shuffled, "a") == chance
    assert 0.0 < chance < 1.0


def test_a_test_is_computed_once_for_each_distinct_arguments():
    """verdict_stats.memo: the claims read one comparison many times, computed once; arguments
    that are equal but other numbers (0.0 and -0.0, 1 and 1.0) are computed apart."""
    calls = []

    def double(*xs):
        calls.append(xs)
        return tuple(2 * x for x in xs)

    got = [verdict_stats.memo(double, *xs) for xs in ((1.5,), (1.5,), (0.0,), (-0.0,), (1,))]
    assert calls == [(1.5,), (0.0,), (-0.0,), (1,)]
    assert [repr(g) for g in got] == ["(3.0,)", "(3.0,)", "(0.0,)", "(-0.0,)", "(2,)"]
    samples = {("t", "a"): (97.0, 97.2, 97.1), ("t", "b"): (96.0, 97.9, 95.9)}
    first = verdict_stats.top_probability(samples, ("t", "a"))
    assert verdict_stats.top_probability(dict(samples), ("t", "a")) == first
    assert verdict_stats.top_probability(samples, ("t", "b")) == pytest.approx(1 - first)
