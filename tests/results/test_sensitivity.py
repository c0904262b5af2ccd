"""The sensitivity table's variations leave out what they name and nothing else, and the
verdicts that move are named with where they move to."""

from __future__ import annotations

import pandas as pd

from dfl_bench.results import sensitivity
from dfl_bench.results.claims import Verdict
from dfl_bench.results.tables import COLLAPSE_POINTS


def frame() -> pd.DataFrame:
    gpu = {"trainer": {"accelerator": "gpu"}}
    rows = [
        ("best", "sum9", 4, {}),
        ("best", "sum9", 5, {}),
        ("best", "both", 4, {}),
        ("tnorms", "product", 0, gpu),
        ("tnorms", "product", 1, {"trainer": {}}),
    ]
    return pd.DataFrame(rows, columns=["experiment", "row", "seed", "config"])


def test_each_variation_leaves_out_what_it_names_and_nothing_else():
    runs = frame()
    by_label = {label: (points, keep) for label, points, keep in sensitivity.variations()}
    assert [p for p, _ in by_label.values()] == [4.0, 6.0, 7.5, COLLAPSE_POINTS, COLLAPSE_POINTS]
    points, keep = by_label["without `best/sum9` seed 4"]
    kept = keep(runs)
    assert len(kept) == 4 and not ((kept["row"] == "sum9") & (kept["seed"] == 4)).any()
    gone = by_label["without the GPU-trained runs"][1](runs)
    assert list(gone["seed"]) == [4, 5, 4, 1]  # a config without an accelerator: the CPU
    assert len(by_label["collapse line 6 points under the baseline"][1](runs)) == len(runs)


def test_the_verdicts_that_move_are_named_with_their_new_status():
    mine = [("a", Verdict("holds", "")), ("b", Verdict("fails", ""))]
    other = {"a": Verdict("inconclusive", ""), "b": Verdict("fails", "")}
    assert sensitivity.moved(mine, other) == "1 of 2: `a` (holds → inconclusive)"
    assert sensitivity.moved(mine, {"a": mine[0][1], "b": mine[1][1]}) == "0 of 2"
