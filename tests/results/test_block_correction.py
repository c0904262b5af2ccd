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
