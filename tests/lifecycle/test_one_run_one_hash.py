"""One run, one configuration hash: a job refuses, before it trains, a second spelling of a run
that its config hash would count as another cell (weights with a factor that kb.w_dfl takes, a
value that a run without a DFL loss does not read, a key its composition has left out), and a
run record's check refuses the same config (one rule for both: kb_formulas.check_no_factor,
composed.check_idle, composed.check_complete)."""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path

import pytest
import warm_cli
from jobs import composed, refused_on_cli, smoke_overrides

from dfl_bench.lifecycle import records, train
from dfl_bench.lifecycle.composed import composed_value

REPO = Path(__file__).resolve().parents[2]
FORMULAS = REPO / "results/records/formulas/00e405d5662423dd.json"  # same [1, 3], w_dfl 10
CE_ONLY = REPO / "results/records/baseline/00ef509e0a018ab9.json"  # kb=ce_only
CE_PAIR = REPO / "results/records/baseline/0e3d690e3bec15a0.json"  # same at w_dfl 0
SUM9 = REPO / "results/records/aggregation/04e41a6fb2c534a3.json"  # kb=sum9


def checked(tmp: Path, *overrides: str) -> str:
    """The config hash of the job of `overrides`, checked as it is before it trains."""
    built = train.checked(composed(tmp, *overrides)[0], overrides)
    return records.config_hash(built.config)


def spoiled(path: Path, **values) -> dict:
    """The committed record at `path` with `values` (`group__key` or `group`) in its config."""
    record = copy.deepcopy(json.loads(path.read_text()))
    for dotted, value in values.items():
        group, _, key = dotted.partition("__")
        if key:
            record["config"][group][key] = value
        else:
            record["config"][group] = value
    record["config_hash"] = records.config_hash(record["config"])
    return record


def test_weights_with_a_factor_are_refused_naming_their_one_spelling_in_a_job(tmp_path):
    with pytest.raises(ValueError) as refused:
        checked(tmp_path, "kb.weights={1:2,2:2,3:4}")
    assert str(refused.value) == (
        "kb.weights={1: 2, 2: 2, 3: 4} is kb.w_dfl=20 kb.weights={3: 2} spelled another way; "
        "write that"
    )
    checked(tmp_path, "kb.w_dfl=20", "kb.weights={3:2}")  # that spelling trains


def test_weights_with_a_factor_are_no_record_and_their_one_spelling_is():
    config = {"kb__formulas": None}
    scaled = spoiled(FORMULAS, **config, kb__weights={"1": 2, "2": 2, "3": 4})
    assert records.invalid(scaled) == (
        "kb.weights={'1': 2, '2': 2, '3': 4} is kb.w_dfl=20 kb.weights={'3': 2} spelled another "
        "way; write that"
    )
    assert (
        records.invalid(spoiled(FORMULAS, **config, kb__w_dfl=20.0, kb__weights={"3": 2})) is None
    )


# A run without a DFL loss (kb=ce_only: no NTN head; kb.w_dfl=0: CE and the pair loss) and a key
# it does not read at another value than the composed one.
NOT_READ = [
    (("+experiment=baseline", "tnorm=product"), "tnorm"),
    (("+experiment=baseline", "implication=godel"), "implication"),
    (("+experiment=baseline", "forall=minimum"), "forall"),
    (("+experiment=baseline", "kb.scope=formula"), "kb.scope"),
    (("+experiment=baseline", "row=ce_only", "kb.w_dfl=5"), "kb.w_dfl"),
    (("kb=ce_only", "tconorm.p=2"), "tconorm"),
    (("kb=ce_only", "exists=maximum"), "exists"),
    (("kb=ce_only", "model.ntn_k=10"), "model.ntn_k"),
    (("kb=ce_only", "model.ntn_bias=true"), "model.ntn_bias"),
    (("kb=ce_only", "kb.scale=sum"), "kb.scale"),
    (("kb=ce_only", "kb.weights={1:2}"), "kb.weights"),
    (("kb=ce_pair", "kb.formulas=[1,2]"), "kb.formulas"),
    (("kb=same", "kb.w_dfl=0", "tnorm=product"), "tnorm"),
]


@pytest.mark.parametrize(("overrides", "key"), NOT_READ)
def test_a_value_a_run_without_a_dfl_loss_does_not_read_is_refused_in_a_job(
    tmp_path, overrides, key
):
    with pytest.raises(ValueError, match=rf"^{re.escape(key)}=.* is not read without a DFL loss"):
        checked(tmp_path, *overrides)


def test_what_a_run_without_a_dfl_loss_reads_or_composes_passes(tmp_path):
    baseline = checked(tmp_path, "+experiment=baseline")
    assert checked(tmp_path, "+experiment=baseline", "tnorm.p=1.5") == baseline  # as composed
    assert checked(tmp_path, "kb=same", "kb.w_dfl=0") == baseline
    checked(tmp_path, "+experiment=baseline", "model.ntn_k=10")  # the pair loss's NTN head
    checked(tmp_path, "+experiment=baseline", "row=ce_only")
    checked(tmp_path, "kb=same", "kb.w_dfl=5", "tnorm=product")  # a DFL loss reads them


def test_a_value_a_run_without_a_dfl_loss_does_not_read_is_refused_on_the_command_line(
    tmp_path,
):
    env = {**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "disabled"}
    args = [*smoke_overrides(tmp_path), f"hydra.run.dir={tmp_path / 'out'}"]
    done = warm_cli.run([*args, "kb=ce_only", "implication=godel"], tmp_path, env, timeout=600)
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.startswith(
        "[dfl_bench] invalid configuration: implication={'name': 'godel'} is not read without a "
        "DFL loss (kb=ce_only: cross-entropy alone): leave it as composed, "
    )
    assert done.stderr.count("\n") == 1 and not (tmp_path / "records").exists()


@pytest.mark.parametrize(
    ("path", "values", "key"),
    [
        (CE_ONLY, {"tnorm": {"name": "product"}}, "tnorm"),
        (CE_ONLY, {"kb__w_dfl": 5.0}, "kb.w_dfl"),
        (CE_ONLY, {"model__ntn_k": 10}, "model.ntn_k"),
        (CE_ONLY, {"kb__weights": {"1": 2}}, "kb.weights"),
        (CE_PAIR, {"kb__scope": "formula"}, "kb.scope"),
        (CE_PAIR, {"implication": {"name": "godel"}}, "implication"),
    ],
)
def test_a_record_without_a_dfl_loss_holding_a_value_it_does_not_read_is_no_record(
    path, values, key
):
    found = records.invalid(spoiled(path, **values))
    assert found is not None and found.startswith(f"{key}=")
    assert "is not read without a DFL loss" in found and "\n" not in found


def test_the_committed_runs_without_a_dfl_loss_hold_the_composed_values():
    assert records.invalid(json.loads(CE_ONLY.read_text())) is None
    assert records.invalid(json.loads(CE_PAIR.read_text())) is None
    assert records.invalid(spoiled(CE_PAIR, model__ntn_k=10)) is None  # its NTN head reads it
    config = json.loads(CE_ONLY.read_text())["config"]
    assert config["tnorm"] == composed_value(config, "tnorm")


@pytest.mark.parametrize(
    "dotted",
    ["kb.scope", "kb.weights", "optimizer.lr", "optimizer.momentum", "implication.s",
     "profile.metrics_tail", "augment.shift", "data.split_seed", "tnorm.p", "debug.nan_at_step"],
)  # fmt: skip
def test_a_record_whose_config_lacks_a_key_its_composition_has_is_no_record(dotted):
    record = json.loads(FORMULAS.read_text())
    group, key = dotted.split(".")
    del record["config"][group][key]
    record["config_hash"] = records.config_hash(record["config"])
    found = records.invalid(record)
    assert found is not None and found.startswith(f"{dotted} is missing: every configuration")


def test_a_record_whose_config_lacks_a_group_is_no_record():
    record = json.loads(FORMULAS.read_text())
    del record["config"]["exists"]
    assert records.invalid(record) == "exists is missing: every job's configuration has it"


def test_a_record_of_an_older_form_lacks_only_what_its_migration_gives_it():
    """Keys added after records were made (migrate.added_keys) are not missing from one."""
    record = json.loads(FORMULAS.read_text())
    del record["config"]["net"], record["config"]["augment"], record["config"]["tnorm"]["eps"]
    assert records.invalid(record) is None


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        (("~kb", "+kb={name:same,w_dfl:10.0}"), "kb.formulas"),
        (("~optimizer", "+optimizer={name:adam,lr:0.001}"), "optimizer.fused"),
        (("~net", "+net={_target_:dfl_bench.tasks.mnist.nets.BnWide,name:bn_wide,width:16}"),
         "net.embedding"),
    ],
)  # fmt: skip
def test_a_group_replaced_without_a_key_its_option_has_is_refused_in_a_job(
    tmp_path, overrides, key
):
    with pytest.raises(ValueError, match=rf"^{re.escape(key)} is missing: every configuration"):
        checked(tmp_path, *overrides)


# A second spelling of one trained thing (a scale, a zero weight, an operator's alias), refused
# in a job and as a record, each by the one check both apply: its line, and the spelling it names
# training.
SECOND_SPELLINGS = [
    (("kb.scale=sum",), "kb.scale=sum is kb.w_dfl=30 at kb.scale=mean (scope family: 3 "
     "families); write that", ("kb.w_dfl=30",)),
    (("kb=sum9", "kb.scale=sum"), "kb.scale=sum is kb.w_dfl=20 at kb.scale=mean (scope family: "
     "2 families); write that", ("kb=sum9", "kb.w_dfl=20")),
    # no constant multiple: the weights at mean differ (`both`; `same` at scope formula)
    (("kb=both", "kb.scale=sum"), "kb.scale=sum is kb.w_dfl=20 kb.weights={'same/1': 1.5, "
     "'same/2': 1.5, 'same/3': 1.5} at kb.scale=mean (scope family: same/1, same/2, same/3: 3 "
     "families; sum9/1, sum9/2: 2 families); write that",
     ("kb=both", "kb.w_dfl=20", "kb.weights={same/1:1.5,same/2:1.5,same/3:1.5}")),
    (("kb.scope=formula", "kb.scale=sum"), "kb.scale=sum is kb.w_dfl=30 kb.weights={1: 10, 2: "
     "10} at kb.scale=mean (scope formula: same/1, same/2: 3 families of 10 formulas; same/3: 3 "
     "families); write that", ("kb.scope=formula", "kb.w_dfl=30", "kb.weights={1:10,2:10}")),
    (("kb.weights={1:0}",), "kb.weights={1: 0} is kb.formulas=[2, 3]; write that",
     ("kb.formulas=[2,3]",)),
    (("tnorm=hamacher", "tnorm.p=1"), "tnorm=hamacher tnorm.p=1 is tnorm=frank tnorm.p=1; write "
     "that", ("tnorm=frank", "tnorm.p=1")),
    (("forall=frank", "forall.p=1"), "forall=frank forall.p=1 is forall=product; write that",
     ("forall=product",)),
    (("forall=generalized_mean_error", "forall.p=2"), "forall=generalized_mean_error forall.p=2 "
     "is forall=rmse; write that", ("forall=rmse",)),
    (("kb.w_dfl=1e-50",), "kb.w_dfl=1e-50 is 0 in float32: write kb.w_dfl=0 (no DFL loss) or a "
     "weight of at least 1e-45", ("kb.w_dfl=1e-45",)),
    (("kb.w_dfl=10.0000001",), "kb.w_dfl=10.0000001 is 10.0 in float32: write kb.w_dfl=10.0",
     ("kb.w_dfl=10.0",)),
    # a w_dfl, or a weight times it, that float32 rounds to inf or 0
    (("kb.w_dfl=1e39",), "kb.w_dfl=1e+39 is inf in float32", ("kb.w_dfl=1e20",)),
    (("kb.weights={1:1e-50}",), "kb.weights: same/1's weight 1e-50 (times kb.w_dfl=10.0) is 0 "
     "in float32: leave it out of kb.formulas", ("kb.formulas=[2,3]",)),
]  # fmt: skip


@pytest.mark.parametrize(("overrides", "said", "spelling"), SECOND_SPELLINGS)
def test_a_second_spelling_is_refused_in_a_job_naming_the_one_that_trains(
    tmp_path, overrides, said, spelling
):
    with pytest.raises(ValueError) as refused:
        checked(tmp_path, *overrides)
    assert str(refused.value) == said
    checked(tmp_path, *spelling)


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({"kb__formulas": None, "kb__scale": "sum"}, "kb.scale=sum is kb.w_dfl=30 at kb.scale="
         "mean (scope family: 3 families); write that"),
        ({"kb__scale": "sum", "kb__scope": "formula"}, "kb.scale=sum is kb.w_dfl=30 kb.weights="
         "{1: 10} at kb.scale=mean (scope formula: same/1: 3 families of 10 formulas; same/3: 3 "
         "families); write that"),  # [1, 3]: 10 and 1 formulas
        ({"kb__formulas": None, "kb__weights": {"2": 0}},
         "kb.weights={'2': 0} is kb.formulas=[1, 3]; write that"),
        ({"tconorm": {"name": "schweizer_sklar", "p": 0.0}}, "tconorm=schweizer_sklar "
         "tconorm.p=0 is tconorm=frank tconorm.p=1; write that"),
        ({"exists": {"name": "frank", "p": 1.0}}, "exists=frank exists.p=1 is "
         "exists=probabilistic_sum; write that"),
        ({"kb__w_dfl": 1e-320}, "kb.w_dfl=1e-320 is 0 in float32: write kb.w_dfl=0 (no DFL "
         "loss) or a weight of at least 1e-45"),
        ({"kb__w_dfl": 1e39}, "kb.w_dfl=1e+39 is inf in float32"),
        ({"kb__w_dfl": 10.0000001}, "kb.w_dfl=10.0000001 is 10.0 in float32: write "
         "kb.w_dfl=10.0"),
        ({"kb__formulas": None, "kb__weights": {"2": 2.50000001}}, "kb.weights: same/2's "
         "weight 2.50000001 is 2.5 in float32: write 2.5"),
        ({"profile__metrics_tail": 1000}, "profile.metrics_tail=1000 keeps the last 1000 of "
         "10000 steps, as profile.metrics_tail=0.1 does: write that"),
        ({"profile__metrics_tail": 0.09999}, "profile.metrics_tail=0.09999 keeps the last 1000 of "
         "10000 steps, as profile.metrics_tail=0.1 does: write that"),
        ({"profile__metrics_tail": 0.0999}, None),  # 999 steps: its own window
        ({"data__eval_batch_size": 32}, "data.eval_batch_size=32 sets which test images the "
         "pair accuracy pairs (blocks of 64 within each batch), so it is fixed per evaluated "
         "split: leave it as composed, 2000"),
        ({"data__eval_batch_size": 10000}, "data.eval_batch_size=10000 sets which test images "
         "the pair accuracy pairs (blocks of 64 within each batch), so it is fixed per evaluated "
         "split: leave it as composed, 2000"),
        ({"data__eval_batch_size": 2000}, None),
        ({"profile__eval_every": 20000}, "profile.eval_every=20000 evaluates at the last step "
         "only, as profile.eval_every=10000 (profile.max_steps) does: write that"),
    ],
)  # fmt: skip
def test_a_record_of_a_second_spelling_is_no_record(values, said):
    assert records.invalid(spoiled(FORMULAS, **values)) == said


def test_scale_sum_is_refused_on_the_command_line(tmp_path):
    assert refused_on_cli(tmp_path, "kb.scale=sum") == (
        "[dfl_bench] invalid configuration: kb.scale=sum is kb.w_dfl=30 at kb.scale=mean (scope "
        "family: 3 families); write that\n"
    )


ONE_FORMULA = "one formula each at either scope): write kb.scope=family"


@pytest.mark.parametrize(
    ("overrides", "selection"),
    [(("kb=sum9",), "kb=sum9 (sum9/1, sum9/2"),
     (("kb=same", "kb.formulas=[3]"), "kb=same kb.formulas=[3] (same/3"),
     (("kb=both", "kb.formulas=[same/3,sum9/1]"), "kb=both kb.formulas=['same/3', 'sum9/1'] "
      "(same/3, sum9/1")],
)  # fmt: skip
def test_scope_formula_where_each_family_is_one_formula_is_refused_in_a_job(
    tmp_path, overrides, selection
):
    """Scope formula is then scope family's loss under another hash."""
    with pytest.raises(ValueError) as refused:
        checked(tmp_path, *overrides, "kb.scope=formula")
    assert str(refused.value) == (
        f"kb.scope=formula is kb.scope=family for {selection}: {ONE_FORMULA}"
    )
    checked(tmp_path, "kb=same", "kb.formulas=[1,3]", "kb.scope=formula")  # same/1: 10 formulas


def test_a_record_at_scope_formula_where_each_family_is_one_formula_is_no_record():
    assert records.invalid(json.loads(SUM9.read_text())) is None
    found = records.invalid(spoiled(SUM9, kb__scope="formula"))
    said = f"kb.scope=formula is kb.scope=family for kb=sum9 (sum9/1, sum9/2: {ONE_FORMULA}"
    assert found == said
