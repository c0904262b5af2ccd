"""The run record, every field named once: what a record holds (RECORD_FIELDS, the contract
with the results module), a run's results (METRIC_FIELDS; a task's own in TASK_FIELDS), what a
run's summary gives the record (SUMMARY_FIELDS), and which config keys a record's hash leaves
out (NOT_HASHED, CODE_KEYS) or holds at one value (HASHED_AS). Pure data: every layer reads it
(the trainer writes these fields, the results module reads them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# A run's headline number and its best over the evaluations (the paper reports the best).
TEST_ACCURACY, BEST_TEST_ACCURACY = "test_accuracy", "best_test_accuracy"
CONS_RATIO, CU_CONS, CU_ANT = "cons_ratio", "cu_cons", "cu_ant"  # Section 9.1
DIGIT_ACCURACY = "digit_accuracy"  # MNIST addition's per-image accuracy (tasks/mnist_addition.py)
# A run that holds out a validation split (MNIST addition's task.validation): its accuracy there
# (final, best) and the test accuracy at the evaluation with the best validation accuracy (the
# checkpoint chosen on validation; nothing is chosen on the test set).
VALIDATION_ACCURACY, BEST_VALIDATION_ACCURACY = "validation_accuracy", "best_validation_accuracy"
TEST_AT_BEST_VALIDATION = "test_accuracy_at_best_validation"
# MNIST addition's per-image accuracy on the held-out sums' images (final): a collapsed run's
# digits sit near 0 there while its sums may still be few; the rule of a search may read it.
VALIDATION_DIGIT_ACCURACY = "validation_digit_accuracy"
VALIDATION_FIELDS = (
    VALIDATION_ACCURACY,
    BEST_VALIDATION_ACCURACY,
    TEST_AT_BEST_VALIDATION,
    VALIDATION_DIGIT_ACCURACY,
)
# Whether any nonzero gradient reached the network (a task without a supervised term can train
# nothing: MNIST addition with a nilpotent t-norm; tasks/optim.gradient_reached).
GRADIENT_REACHED = "gradient_reached"

# A run's results in its record: test accuracy (final, best) and the Section 9.1 measures.
METRIC_FIELDS = (
    TEST_ACCURACY,
    BEST_TEST_ACCURACY,
    CONS_RATIO,
    CU_CONS,
    CU_ANT,
    "cons_magnitude",
    "ant_magnitude",
)
TASK_FIELDS = (DIGIT_ACCURACY, GRADIENT_REACHED, *VALIDATION_FIELDS)  # a task's own results
# Results that are shares, in [0, 1] where defined (an accuracy, never a percent; a ratio).
UNIT_FIELDS = (
    TEST_ACCURACY,
    BEST_TEST_ACCURACY,
    CONS_RATIO,
    CU_CONS,
    CU_ANT,
    DIGIT_ACCURACY,
    *VALIDATION_FIELDS,
)
RECORD_FIELDS = (
    "status",
    "reason",
    "config",
    "seed",
    "profile",
    "data_checksum",
    "git_commit",
    "steps",
    "wall_time_s",
    *METRIC_FIELDS,
)
SUMMARY_FIELDS = (
    TEST_ACCURACY,
    BEST_TEST_ACCURACY,
    "pair_accuracy",
    CONS_RATIO,
    CU_CONS,
    CU_ANT,
    "cons_magnitude",
    "ant_magnitude",
    "steps",
)
# What the lifecycle adds to every record (lifecycle/job.py): which job, when, where and how it
# ran; the last two only where they apply (a GPU stack's runs; a record copied from another
# experiment's of the same configuration).
JOB_FIELDS = (
    "experiment",
    "name",
    "row",
    "config_hash",
    "overrides",
    "log_dir",
    "started",
    "finished",
    "resumed",
    "wall_segments_s",
    "torch_threads",
    "machine",
)
OPTIONAL_JOB_FIELDS = ("stack", "reused_from")
# What a task's run adds to its summary (tasks/contract.TaskRun.summary): the step of its last
# evaluation (every task), the paper's pair accuracy (mean over its heads, and per head as
# `pair_accuracy/<predicate>`), magnitudes and logging steps of the final window, MNIST
# addition's sum accuracy (its test_accuracy, by name).
RUN_FIELDS = (
    "evaluated_step",
    "pair_accuracy",
    "cu_cons_magnitude",
    "cu_ant_magnitude",
    "metrics_logs",
    "sum_accuracy",
    "validation_digit_accuracy",
)
PER_HEAD = "pair_accuracy/"  # prefix of a per-head field
# Config keys that name a folder, where something is read or written (with the top-level
# `log_dir`, a record's paths: record_fields.PATH_FIELDS); none leaves its folder.
PATH_KEYS = frozenset(
    {"records_dir", "checkpoint_dir", "data.cache_dir", "data.root", "logger.save_dir"}
)


def named(field: str) -> bool:
    """Whether a record's top-level field is named in this module."""
    known = (*RECORD_FIELDS, *SUMMARY_FIELDS, *TASK_FIELDS, *JOB_FIELDS, *OPTIONAL_JOB_FIELDS)
    return field in known or field in RUN_FIELDS or field.startswith(PER_HEAD)


STATUSES = ("ok", "failed")
# How a failed record's reason begins when the run's loss or optimizer state turned non-finite
# (tasks/contract.py): the seed's own outcome, which a rerun repeats (lifecycle/records.diverged).
NONFINITE = "non-finite "
# What names a job and its outcome, first in a W&B summary and in the results' record columns.
IDENTITY_FIELDS = ("experiment", "row", "seed", "profile", "status", "reason")
# Not hashed: logging, paths and flags, and what names a job rather than changes its result
# (experiment, table row, provenance), so a configuration that is a row of two tables has one hash.
NOT_HASHED = (
    "logger",
    "records_dir",
    "checkpoint_dir",
    "force",
    "progress_bar",
    "cuda_graph",
    "compile_dfl",
    "threads",
    "rows",
    "families",
    "experiment_name",
    "row",
    "provenance",
    "row_provenance",
)

# Keys that name code, not configuration: where the task's and the network's classes and a user's
# knowledge base live (their yamls' `_target_`; `task.name`, `net.name`, `kb.name` say which).
# Never hashed, never compared: a record made before tasks were classes has none and counts for
# its cell as it did.
CODE_KEYS: tuple[tuple[str, str], ...] = (
    ("task", "_target_"),
    ("net", "_target_"),
    ("kb", "_target_"),
)

# Hashed at one value whatever they hold: where a run trains and where its data comes from. A
# configuration has one record whatever the device (a GPU run's record names the stack it trained
# in; docs/scaling.md gives the measured gap to the run alone), so skip, reuse and table cells
# take a GPU run for the CPU's; every data source delivers the same MNIST (the record's
# data_checksum says which arrays it trained on), so a cache folder or a source changes no hash.
HASHED_AS: dict[tuple[str, str], Any] = {
    ("trainer", "accelerator"): "cpu",
    ("data", "source"): "auto",
    ("data", "root"): None,
    ("data", "cache_dir"): None,
}


# What the runs of one table cell may differ in: their seeds (the device is not hashed).
CELL_ASIDE = ("seed", "data.split_seed")


def split_seed_of(config: Mapping[str, Any]) -> Any:
    """The seed of a run's labeled split: `data.split_seed`, null the run's `seed`
    (mnist_data.MnistDataModule); with the seed, what tells a cell's runs apart (CELL_ASIDE)."""
    data = config.get("data")
    split = data.get("split_seed") if isinstance(data, Mapping) else None
    return config.get("seed") if split is None else split
