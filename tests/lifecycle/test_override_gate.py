"""The job's refusals of overrides beside a table's row, read without torch
(dfl_bench/lifecycle/override_gate.py, results/compare.py's --a-set/--b-set): the same line as
the job's own check for each override it refuses, and nothing for one a job trains."""

from __future__ import annotations

import pytest
from jobs import composed

from dfl_bench.lifecycle import train
from dfl_bench.lifecycle.override_gate import setting_refusal
from dfl_bench.lifecycle.resolve import resolved_config

SAME = ("same_symmetric", "product_S")
REFUSED = [
    (SAME, "kb.weights=5", "kb.weights must map formulas to weights (e.g. {1: 2.0}), got 5"),
    (SAME, "kb.weights={1:2.0,2:2.0,3:2.0}", "kb.weights={1: 2, 2: 2, 3: 2} is kb.w_dfl=20 "
     "kb.weights=null spelled another way; write that"),
    (SAME, "kb.weights={1:-1}", "kb.weights: the weight of same/1 must be a finite number >= 0, "
     "got -1"),
    (SAME, "kb.formulas=[3,1]", "kb.formulas=[3, 1] names a formula twice, out of order or not "
     "as 'same' numbers it: give [1, 3]"),
    (SAME, "kb.w_dfl=3", "kb.w_dfl=3 is refused: experiment 'same_symmetric' sets kb.w_dfl from "
     "its row (row=product_S); pick another row, or run without +experiment and set kb.w_dfl "
     "yourself"),
    (SAME, "families.product.w_dfl=3", "families.product.w_dfl=3 is refused: experiment "
     "'same_symmetric' declares its families (its rows read their values from it); pick another "
     "row (valid rows: ['godel_S', 'godel_R', 'product_S', 'product_R', 'lukasiewicz', "
     "'yager_p1_5_S', 'yager_p1_5_R', 'yager_p2_S', 'yager_p2_R', 'yager_p20_S', 'yager_p20_R', "
     "'nilpotent']), or run without +experiment and set the values yourself"),
    (SAME, "+optimizer.warmup=0", "+optimizer.warmup=0: optimizer.warmup=0 is what leaving "
     "optimizer.warmup out means (the same run under another hash, `~optimizer.warmup` where a "
     "yaml sets it); drop it"),
    (SAME, "optimizer.lr=abc", "optimizer.lr must be a number, got 'abc'"),
    (("mnist_addition", "product_sum"), "kb.w_dfl=2", "kb.w_dfl=2 is refused: task "
     "'mnist_addition' does not read kb, tconorm, implication, model (it would train the same "
     "numbers under another configuration); leave it out"),
]  # fmt: skip


@pytest.mark.parametrize(("cell", "override", "said"), REFUSED)
def test_a_setting_the_job_refuses_is_refused_in_the_jobs_line(tmp_path, cell, override, said):
    experiment, row = cell
    cfg, hydra_cfg = composed(tmp_path, f"+experiment={experiment}", f"row={row}", override)
    with pytest.raises(ValueError) as refused:
        train.checked(cfg, hydra_cfg.overrides.task)
    assert str(refused.value) == said
    config = None if override.startswith("families") else resolved_config(cfg)
    assert setting_refusal(experiment, row, [override], config) == said


def test_a_deletion_and_an_unparsed_override_are_refused_before_any_config():
    """`~kb.scope` trains the code's default (guards.check_deletions); an override Hydra cannot
    parse is one line too (the preflight's); neither needs a composed config."""
    assert setting_refusal(*SAME, ["~kb.scope"], None).startswith(
        "~kb.scope is refused: deleting kb.scope trains its code's default under another hash"
    )
    assert setting_refusal(None, None, ["kb.weights={1:x"], None).endswith(
        ": an override that does not parse (quote a value with characters other than letters, "
        "digits and _-+./: key='...')"
    )


def test_a_setting_a_job_trains_passes(tmp_path):
    for override in ("kb.scope=formula", "kb.weights={1:2.0}", "model.ntn_k=10"):
        cfg, hydra_cfg = composed(tmp_path, "+experiment=same_symmetric", "row=godel_R", override)
        assert train.checked(cfg, hydra_cfg.overrides.task).config["seed"] == 0
        config = resolved_config(cfg)
        assert setting_refusal("same_symmetric", "godel_R", [override], config) is None
