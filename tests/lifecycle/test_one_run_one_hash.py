"""One run, one configuration hash: a job refuses, before it trains, a second spelling of a run
that its config hash would count as another cell (weights with a factor that kb.w_dfl takes, a
key its composition has left out), and a run record's check refuses the same config (one rule
for both: kb_formulas.check_no_factor, composed.check_complete)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from jobs import composed

from dfl_bench.lifecycle import records, train

REPO = Path(__file__).resolve().parents[2]
FORMULAS = REPO / "results/records/formulas/00e405d5662423dd.json"  # same [1, 3], w_dfl 10


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
