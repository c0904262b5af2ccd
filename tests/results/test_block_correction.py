"""A list that states above / below / equivalent for more than one comparison decides after
Benjamini-Hochberg within it."""

from __future__ import annotations

import pytest

from dfl_bench.results.cells import Ours
from dfl_bench.results.render_beyond import versus, versus_block
from dfl_bench.results.stats import BH, adjust_block, compare_runs

REFERENCE = (96.6, 96.8, 97.0)
MARGINAL = (97.1, 97.35, 97.5)  # +0.52 [+0.06, +0.97], raw p = 0.035: above alone
NULL = (96.7, 96.9, 96.8)  # raw p = 1.0: no difference


def ours(seeds: tuple[float, ...]) -> Ours:
    n = {"accuracy": len(seeds)}
    return Ours(len(seeds), 0, {}, {}, n, (None, None), (), (), (), values={"accuracy": seeds})


def test_a_difference_decided_alone_is_undone_by_the_block_it_sits_in():
    alone = versus(ours(MARGINAL), ours(REFERENCE))
    assert alone[1].endswith("above")
    (first, text), (_, second) = versus_block(
        [(ours(MARGINAL), ours(REFERENCE)), (ours(NULL), ours(REFERENCE))]
    )
    assert first.outcome == 0 and first.correction == BH
    assert first.adjusted[0] > 0.05 > first.raw[0]  # q = 2 * 0.035
    assert text.endswith("inconclusive") and "(not after Benjamini-Hochberg)" in text
    assert second.endswith("equivalent")  # TOST's p survives the block


def test_a_block_of_one_comparison_is_left_as_it_is():
    [(interval, text)] = versus_block([(ours(MARGINAL), ours(REFERENCE))])
    assert interval.adjusted is None and text.endswith("above")


def test_a_missing_comparison_keeps_its_place_and_does_not_count():
    a = compare_runs(MARGINAL, (), REFERENCE, ())
    adjusted = adjust_block([None, a, None])
    assert adjusted[0] is None and adjusted[2] is None
    assert adjusted[1].adjusted == pytest.approx(a.raw)  # one comparison: q = p


def test_welchs_and_students_intervals_are_scipys_t_quantile_to_the_bit():
    """The intervals take t's quantile from the ufunc stats.t.ppf calls (special.stdtrit): the
    same numbers, bit for bit, over many degrees of freedom; Fisher's test once per count."""
    import numpy as np
    from scipy import stats as sp

    from dfl_bench.results.stats import fisher, one_sample, welch

    rng = np.random.default_rng(0)
    for n_a, n_b in ((2, 2), (3, 5), (4, 10), (7, 3)):
        for _ in range(50):
            a, b = rng.normal(97, rng.uniform(0.01, 2), n_a), rng.normal(96, 0.3, n_b)
            i = welch(list(a), list(b))
            assert i.high == i.delta + float(sp.t.ppf(0.975, i.df)) * i.se
            j = one_sample(list(a), 96.0)
            assert j.high == j.delta + float(sp.t.ppf(0.975, n_a - 1)) * j.se
    fisher.cache_clear()
    assert fisher(0, 10, 6, 10) == float(sp.fisher_exact([[0, 10], [6, 4]])[1])
    fisher(0, 10, 6, 10)
    assert fisher.cache_info().hits == 1
