"""One run, one configuration hash: a job refuses, before it trains, a second spelling of a run
that its config hash would count as another cell (weights with a factor that kb.w_dfl takes),
and a run record's check refuses the same config (one rule for both:
kb_formulas.check_no_factor)."""

from __future__ import annotations

import copy
import json
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
