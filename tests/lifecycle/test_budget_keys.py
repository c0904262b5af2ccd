"""A budget's keys that change no number: its name and its checkpoint cadence are those of the
yaml a job composes (no override sets them: file_overrides.BUDGET_KEYS; a record names a budget
some yaml declares: file_overrides.budget_names); the evaluation's batch stays hashed (the pair
accuracy's blocks lie within its batches)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jobs import composed, refused_on_cli

from dfl_bench.lifecycle import records, train
from dfl_bench.lifecycle.file_overrides import (
    BUDGET_CADENCE,
    BUDGET_NAMED,
    budget_names,
    refusal,
)
from dfl_bench.schema import HASHED_AS, NOT_HASHED

REPO = Path(__file__).resolve().parents[2]
FORMULAS = REPO / "results/records/formulas/00e405d5662423dd.json"


def checked(tmp: Path, *overrides: str) -> str:
    """The config hash of the job of `overrides`, checked as it is before it trains."""
    built = train.checked(composed(tmp, *overrides)[0], overrides)
    return records.config_hash(built.config)


def named(path: Path, name: str) -> dict:
    """The committed record at `path` as if its budget were named `name`."""
    record = copy.deepcopy(json.loads(path.read_text()))
    record["profile"] = record["config"]["profile"]["name"] = name
    record["config_hash"] = records.config_hash(record["config"])
    return record


@pytest.mark.parametrize("line", ["profile.name=quick", "++profile.name=mine"])
def test_a_job_that_names_its_budget_is_refused(tmp_path, line):
    with pytest.raises(ValueError) as refused:
        checked(tmp_path, line)
    assert str(refused.value) == f"{line} is refused: {BUDGET_NAMED}"


def test_a_budget_named_by_its_yaml_passes(tmp_path):
    assert checked(tmp_path, "profile=quick") != checked(tmp_path)  # profile=smoke


@pytest.mark.parametrize("applied", [False, True])
def test_a_files_override_that_names_the_budget_is_refused(applied):
    assert refusal("profile.name=quick", applied=applied) == BUDGET_NAMED
    assert refusal("+profile.name=mine", applied=applied) == BUDGET_NAMED
    assert refusal("profile=quick", applied=applied) is None


def test_a_job_naming_its_budget_is_refused_in_one_line_on_the_command_line(tmp_path):
    assert refused_on_cli(tmp_path, "profile.name=quick") == (
        f"[dfl_bench] invalid configuration: profile.name=quick is refused: {BUDGET_NAMED}\n"
    )


def test_a_record_of_a_budget_no_yaml_declares_is_no_record():
    found = records.invalid(named(FORMULAS, "mine"))
    assert found is not None and found.startswith("profile.name='mine' is no budget a yaml")
    assert records.invalid(named(FORMULAS, "quick")) is None  # a declared name: its check passes


def test_a_records_own_profile_field_is_its_configs_declared_budget():
    record = json.loads(FORMULAS.read_text())
    record["profile"] = "mine"
    assert records.invalid(record) == "profile 'mine' is not its config's 'long'"


def test_the_declared_budgets_are_the_profile_yamls_and_the_experiments_own():
    stems = {p.stem for p in (REPO / "conf/profile").glob("*.yaml")}
    assert stems < budget_names()
    assert {"budget", "frontier_nets", "ceiling_search", "recipe"} <= budget_names()


@pytest.mark.parametrize("row", ["bn_wide_warm_n15", "bn_wide_warm_n100", "bn_wide_warm_val"])
def test_a_budget_a_row_names_is_declared(tmp_path, row):
    """mnist_addition_warmup_nets takes its budget's name from its row."""
    cfg = composed(tmp_path, "+experiment=mnist_addition_warmup_nets", f"row={row}",
                   own_budget=True)[0]  # fmt: skip
    assert cfg.profile.name in budget_names()


def test_every_committed_record_names_a_declared_budget():
    paths = sorted((REPO / "results/records").glob("*/*.json"))
    assert len(paths) > 1000
    for path in paths:
        record = json.loads(path.read_text())
        assert record["profile"] in budget_names(), path
        assert record["config"]["profile"]["name"] == record["profile"], path


@pytest.mark.parametrize("line", ["profile.checkpoint_every=1", "profile.checkpoint_every=2"])
def test_a_job_that_sets_its_budgets_checkpoint_cadence_is_refused(tmp_path, line):
    """The cadence changes no number but is hashed (the records hold their budgets'): a job
    takes its budget's (smoke's 2), whatever value the override gives."""
    with pytest.raises(ValueError) as refused:
        checked(tmp_path, line)
    assert str(refused.value) == f"{line} is refused: {BUDGET_CADENCE}"
    assert refusal(line, applied=True) == BUDGET_CADENCE  # a plan's: it would be applied
    assert refusal(line) is None  # a record's (or probe's) tells what its commit ran


def test_the_commit_probes_budget_is_one_a_job_takes(tmp_path):
    from campaign.commit_probe import PROBE

    checked(tmp_path, *PROBE)


@pytest.mark.parametrize("steps", [100, 1100])
def test_the_benchs_paper_slices_are_budgets_a_job_takes(tmp_path, steps):
    """Its last-step evaluation and window of 100 steps in their one spelling."""
    from campaign.bench.runs import paper_slice

    checked(tmp_path, "profile=paper", *paper_slice(steps))


def test_the_evaluations_batch_stays_hashed_the_pair_accuracy_reads_it():
    """MNIST's pair accuracy pairs the images of blocks of PAIR_BLOCK within each evaluation
    batch, so another data.eval_batch_size pairs (and drops) other images: it is no performance
    knob, unlike the device (schema.HASHED_AS)."""
    import torch

    from dfl_bench.tasks.mnist.dfl_run import DFLRun

    assert ("data", "eval_batch_size") not in HASHED_AS and "data" not in NOT_HASHED
    torch.manual_seed(0)
    kinds = ("tnorm", "tconorm", "implication", "forall", "exists")
    ops = dict(zip(kinds, ({"name": "product"}, {"name": "product"}, {"name": "reichenbach"},
                           {"name": "log_product"}, {"name": "maximum"}), strict=True))  # fmt: skip
    run = DFLRun("same", ops, max_steps=4)
    x, y = torch.randn(1000, 1, 28, 28), torch.randint(0, 10, (1000,))
    by = {n: run.evaluate_test(list(zip(x.split(n), y.split(n), strict=True))) for n in (500, 100)}
    assert by[500]["accuracy"] == by[100]["accuracy"]  # a count
    assert by[500]["pair_accuracy/same"] != by[100]["pair_accuracy/same"]


# The whole budget set as a mapping, its name or cadence inside it
QUICK = "name:quick,max_steps:4,eval_every:2,log_every:1,metrics_tail:0.5,checkpoint_every:2"
WHOLE = [
    (f"profile={{{QUICK},subset_train:3000,subset_test:500}}", BUDGET_NAMED),
    ("profile={name:smoke,max_steps:4,checkpoint_every:0}", BUDGET_NAMED),
    ("+profile={name:quick}", BUDGET_NAMED),
    ("++profile={name:quick}", BUDGET_NAMED),
    ("profile={checkpoint_every:2}", BUDGET_CADENCE),
    ("++profile={max_steps:4,checkpoint_every:3}", BUDGET_CADENCE),
]


@pytest.mark.parametrize(("line", "why"), WHOLE)
def test_a_job_that_sets_its_budget_whole_with_a_name_or_cadence_is_refused(tmp_path, line, why):
    with pytest.raises(ValueError) as refused:
        checked(tmp_path, line)
    assert str(refused.value) == f"{line} is refused: {why}"


def test_a_budget_set_whole_without_a_name_or_cadence_passes(tmp_path):
    assert checked(tmp_path, "profile={max_steps:4}") == checked(tmp_path)  # smoke's own


@pytest.mark.parametrize(("line", "why"), WHOLE)
def test_a_files_override_that_sets_the_budget_whole_is_refused_in_the_same_words(line, why):
    assert refusal(line, applied=True) == why
    # a record's cadence is what its commit ran: a mapping is still no one value of a file
    whole = "a config group's option must be a name (no path)"
    assert refusal(line) == (why if why == BUDGET_NAMED else whole)
