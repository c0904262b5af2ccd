"""The sensitivity table's variations leave out what they name and nothing else, and the
verdicts that move are named with where they move to."""

from __future__ import annotations

import pandas as pd

from campaign.report import sensitivity
from campaign.report.claims import Verdict
from dfl_bench.results.cells import COLLAPSE_POINTS


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


def test_each_variation_moves_one_choice_and_leaves_out_only_what_it_names():
    runs = frame()
    by_label = {v.label: v for v in sensitivity.variations()}
    assert [v.points for v in by_label.values()] == [4.0, 6.0, 7.5, *[COLLAPSE_POINTS] * 5]
    assert [v.margin for v in by_label.values()] == [0.5] * 5 + [0.25, 1.0, 0.5]
    assert [v.correction for v in by_label.values()][-2:] == ["Benjamini-Hochberg", "Holm"]
    kept = by_label["without `best/sum9` seed 4"].keep(runs)
    assert len(kept) == 4 and not ((kept["row"] == "sum9") & (kept["seed"] == 4)).any()
    gone = by_label["without the GPU-trained runs"].keep(runs)
    assert list(gone["seed"]) == [4, 5, 4, 1]  # a config without an accelerator: the CPU
    for label in (
        "collapse line 6 points under the baseline",
        "Holm across claims instead of Benjamini-Hochberg",
        "accuracy equivalence margin ±1 points",
    ):
        assert len(by_label[label].keep(runs)) == len(runs)


def test_holm_across_claims_is_stricter_than_benjamini_hochberg():
    from campaign.report.claims import across_claims

    decided = [Verdict("holds", "", p=0.02), Verdict("holds", "", p=0.03)]
    assert [v.status for v in across_claims(decided)] == ["holds", "holds"]  # q 0.03, 0.03
    holm = across_claims(decided, "Holm")  # 0.04, 0.04
    assert [v.status for v in holm] == ["holds", "holds"]
    three = [*decided, Verdict("holds", "", p=0.04)]
    assert [v.status for v in across_claims(three)] == ["holds"] * 3  # BH: 0.04 each
    assert [v.status for v in across_claims(three, "Holm")] == ["inconclusive"] * 3  # 0.06 ...
    assert "before Holm across claims" in across_claims(three, "Holm")[0].detail


def test_the_verdicts_that_move_are_named_with_their_new_status():
    mine = [("a", Verdict("holds", "")), ("b", Verdict("fails", ""))]
    other = {"a": Verdict("inconclusive", ""), "b": Verdict("fails", "")}
    assert sensitivity.moved(mine, other) == "1 of 2: `a` (holds → inconclusive)"
    assert sensitivity.moved(mine, {"a": mine[0][1], "b": mine[1][1]}) == "0 of 2"


def test_every_variation_gives_the_verdicts_of_its_own_records_built_alone(tmp_path, monkeypatch):
    """`table` reads the rule's own tables and reading (`decide`'s) for the variations that keep
    them, and groups the frame's rows once for the collapse lines: each variation's verdicts are
    those it gives built from its records alone, and only the variations that leave records out
    group rows again (the collapse lines and the others read what was made)."""
    from campaign.report.profile_verdicts import default_run
    from dfl_bench.results import cells, load_records, publish
    from tests.campaign.test_claims import build
    from tests.results.test_results import PAPER, REPO, write

    gpu = {"trainer": {"accelerator": "gpu"}}
    for seed, accuracy in enumerate((0.97, 0.965, 0.975)):
        write(tmp_path, "baseline", f"b{seed}", row="ce_pair", seed=seed, profile="long",
              accuracy=accuracy)  # fmt: skip
        for row, lower in (("product", 0.0), ("godel", 0.06), ("lukasiewicz", 0.04)):
            write(tmp_path, "tnorms", row, row=row, seed=seed, profile="long",
                  accuracy=accuracy - lower, extra_config=gpu if seed == 2 else None)  # fmt: skip
    write(tmp_path, "best", "s", seed=4, profile="long", accuracy=0.9,
          extra_config={"kb": {"name": "sum9"}})  # fmt: skip
    frame = load_records(tmp_path)
    alone = [
        (v.label, sensitivity.verdicts(PAPER, frame, "long", REPO, v, default_run))
        for v in sensitivity.variations()
    ]
    r = build(PAPER, frame, "long", [], REPO)
    assert repr(r.sensitivity) == repr(tuple(alone))
    assert len({repr(v) for _, v in alone}) > 1  # the variations move some verdict
    grouped, built = [], []
    monkeypatch.setattr(sensitivity, "group_rows", lambda *a: grouped.append(a[1]) or
                        cells.group_rows(*a))  # fmt: skip
    monkeypatch.setattr(sensitivity, "build_table", lambda *a: built.append(a) or
                        cells.build_table(*a))  # fmt: skip
    rule = (publish.build(PAPER, frame, "long", [], REPO).tables, list(r.before_fdr.values()))
    again = sensitivity.table(PAPER, frame, "long", REPO, default_run, rule)
    assert repr(again) == repr(r.sensitivity)
    assert {id(f) for f in grouped} == {id(frame)}  # grouped once, for the collapse lines
    assert len(built) == 5 * len(PAPER.tables)  # 3 collapse lines, 2 leave runs out; 0 others
    regrouped = [a[0].experiment for a in built if a[-1] is None]  # where runs were left out
    assert sorted(regrouped) == ["best", "tnorms"]  # best/sum9 seed 4; tnorms' GPU runs
