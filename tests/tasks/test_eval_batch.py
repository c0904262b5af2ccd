"""`data.eval_batch_size` has one spelling per task, the composed one (values.check_eval_batch,
values.check_sums_eval_batch): a job, a sweep and a record are held to it alike, and every
committed record holds it."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from jobs import composed

from dfl_bench.lifecycle import records, sweep, train
from dfl_bench.tasks.values import EVAL_BATCH

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO / "results/records/formulas/00e405d5662423dd.json"  # same [1, 3], all test images
SUMS = REPO / "results/records/mnist_addition/002eb9d089581073.json"
PAIRS = (
    r"^data.eval_batch_size={} sets which test images the pair accuracy pairs \(blocks of 64 "
    r"within each batch\), so it is fixed per evaluated split: leave it as composed, 2000$"
)
SPEED = (
    r"^data.eval_batch_size={} sets only how many test images are evaluated at once, not what "
    r"they score, so it is fixed: leave it as composed, 2000$"
)
FULL = "profile.subset_test=null"  # smoke's 500 test images -> all 10000
REFUSED = [
    # 500 test images: 128 pairs the blocks 2000 does (another hash), 100 others, 7 none
    ((), 128, PAIRS),
    ((), 100, PAIRS),
    ((), 499, PAIRS),
    ((), 7, PAIRS),
    ((), 3000, r"^data.eval_batch_size=3000 evaluates the 500 images in one batch, as "),
    ((FULL,), 1000, PAIRS),
    ((FULL,), 10000, PAIRS),  # one batch of them all: pairs other images than 2000 does
    ((FULL,), 20000, PAIRS),
    (("task=mnist_addition",), 500, SPEED),
    (("task=mnist_addition", FULL), 10000, SPEED),
]


def checked(tmp: Path, *overrides: str) -> None:
    """The job of `overrides` checked as it is before it trains."""
    train.checked(composed(tmp, *overrides)[0], overrides)


@pytest.mark.parametrize(("others", "size", "said"), REFUSED)
def test_another_eval_batch_size_is_refused_in_a_job_naming_the_key_and_its_spelling(
    tmp_path, others, size, said
):
    overrides = (*others, f"data.eval_batch_size={size}")
    with pytest.raises(ValueError, match=said.format(size)):
        checked(tmp_path, *overrides)


@pytest.mark.parametrize("others", [(), (FULL,), ("task=mnist_addition",)])
def test_the_composed_eval_batch_size_trains(tmp_path, others):
    checked(tmp_path, *others)
    checked(tmp_path, *others, f"data.eval_batch_size={EVAL_BATCH}")


def test_a_sweep_names_each_other_eval_batch_size(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default records and checkpoint folders, checked writable
    jobs = sweep.expand(["profile=smoke", "logger=none", "data.eval_batch_size=100,128,2000"])
    errors = sweep.invalid_jobs(jobs)
    assert [e.split(": ", 1)[0].split()[-1] for e in errors] == [
        "data.eval_batch_size=100",
        "data.eval_batch_size=128",
    ]
    assert all("leave it as composed, 2000" in e for e in errors)


def spoiled(path: Path, **data) -> dict:
    """The committed record at `path` with `data` in its config's data group, hashed anew."""
    record = copy.deepcopy(json.loads(path.read_text()))
    record["config"]["data"].update(data)
    record["config_hash"] = records.config_hash(record["config"])
    return record


@pytest.mark.parametrize(
    ("path", "size", "said"),
    [(PAPER, 1000, PAIRS), (PAPER, 10000, PAIRS), (PAPER, 128, PAIRS), (SUMS, 500, SPEED)],
)
def test_a_record_of_another_eval_batch_size_is_no_record(path, size, said):
    why = records.invalid(spoiled(path, eval_batch_size=size))
    assert why is not None and re.match(said.format(size), why), why
    assert records.invalid(spoiled(path)) is None  # the committed one, as it is


def test_every_committed_record_holds_the_one_spelling():
    sizes = {
        json.loads(p.read_text())["config"]["data"]["eval_batch_size"]
        for p in (REPO / "results/records").rglob("*.json")
    }
    assert sizes == {EVAL_BATCH}
