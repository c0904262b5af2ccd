"""The Trainer's settings a job takes (conf/trainer), read without torch or Lightning: the one
check of a job's `trainer` mapping (guards.check_config) and of a run record's
(record_config.config_refusal). Each bad value is one ValueError line naming the key.

    >>> check_trainer({"accelerator": "cpu", "max_steps": 10})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: trainer.max_steps is set by the job (profile, progress_bar, logger); ...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# lightning.Trainer's arguments (inspect.signature(lightning.Trainer.__init__); a test holds them)
ARGUMENTS = ("accelerator", "strategy", "devices", "num_nodes", "precision", "logger",
             "callbacks", "fast_dev_run", "max_epochs", "min_epochs", "max_steps", "min_steps",
             "max_time", "limit_train_batches", "limit_val_batches", "limit_test_batches",
             "limit_predict_batches", "overfit_batches", "val_check_interval",
             "check_val_every_n_epoch", "num_sanity_val_steps", "log_every_n_steps",
             "enable_checkpointing", "enable_progress_bar", "enable_model_summary",
             "accumulate_grad_batches", "gradient_clip_val", "gradient_clip_algorithm",
             "deterministic", "benchmark", "inference_mode", "use_distributed_sampler",
             "profiler", "detect_anomaly", "barebones", "plugins", "sync_batchnorm",
             "reload_dataloaders_every_n_epochs", "default_root_dir", "enable_autolog_hparams",
             "model_registry")  # fmt: skip
# The Trainer arguments a job fixes itself (trainer.trainer_settings): no validation loop (the
# module evaluates on the test set itself), no Lightning checkpoint or summary, ...
FIXED = {
    "max_epochs": -1,
    "enable_checkpointing": False,
    "enable_model_summary": False,
    "num_sanity_val_steps": 0,
    "limit_val_batches": 0,
}
# ... and those it takes from its config: the step budget, logging cadence, progress bar.
FROM_CONFIG = {
    "max_steps": "profile.max_steps",
    "log_every_n_steps": "profile.log_every",
    "enable_progress_bar": "progress_bar",
}
OWNED = (*FIXED, *FROM_CONFIG, "logger", "callbacks")  # the job's loggers and callbacks too
# Trainer arguments of Lightning's own update, which a run's step (manual optimization) never
# uses: one either stops the run with Lightning's traceback or is silently not applied.
MANUAL_STEP = {
    "accumulate_grad_batches": 1,
    "gradient_clip_val": None,
    "gradient_clip_algorithm": None,
}
# The Trainer arguments a job passes through (conf/trainer's keys): where and at what precision
# a run trains. Any other either never reaches the job's own training stream and test pass
# (overfit_batches, limit_*_batches, val_check_interval) or changes nothing it records
# (benchmark, detect_anomaly, min_steps): the same numbers under another hash.
PASSED = ("accelerator", "devices", "precision", "deterministic")
ACCELERATORS = ("auto", "cpu", "cuda", "gpu", "mps")  # Lightning's that train one process
# The precisions of Lightning's (lightning.fabric.connector._PRECISION_INPUT_STR) a job trains:
# its batches reach the network in float32, so one that casts the weights and not the inputs
# (16-true, bf16-true, 64-true, transformer-engine's) stops at the first step ...
PRECISIONS = ("32-true", "16-mixed", "bf16-mixed")
ON_CPU = ("32-true", "bf16-mixed")  # ... and on the CPU Lightning trains 16-mixed as bf16-mixed


def check_trainer(trainer: Mapping[str, Any]) -> None:
    """conf/trainer passes the Trainer arguments of PASSED, not those the job sets itself
    (OWNED), nor those of Lightning's own update (MANUAL_STEP), nor any other; its values
    (`check_values`)."""
    unknown = sorted(set(map(str, trainer)) - set(ARGUMENTS))
    if unknown:
        raise ValueError(
            f"trainer.{unknown[0]} is no lightning.Trainer argument; valid: {sorted(ARGUMENTS)}"
        )
    owned = sorted(set(OWNED) & set(trainer))
    if owned:
        raise ValueError(
            f"trainer.{owned[0]} is set by the job (profile, progress_bar, logger); conf/trainer "
            f"sets {list(PASSED)}"
        )
    for key, default in MANUAL_STEP.items():
        if trainer.get(key, default) not in (default, None):
            raise ValueError(
                f"trainer.{key}={trainer[key]}: a run's step makes its own update (manual "
                f"optimization), which Lightning's {key} never reaches; leave it unset"
            )
    passed = sorted(set(map(str, trainer)) - set(PASSED))
    if passed:
        raise ValueError(
            f"trainer.{passed[0]} is not passed to the Trainer: a job takes only "
            f"{list(PASSED)} from conf/trainer (any other argument either never reaches its "
            "own training and test pass or changes nothing it records)"
        )
    missing = [key for key in PASSED if key not in trainer]
    if missing:
        raise ValueError(
            f"trainer.{missing[0]} is required: conf/trainer sets it (`~trainer.{missing[0]}` "
            "deletes it, and Lightning's default trains under another hash); set a value instead"
        )
    check_values(trainer)


def check_values(trainer: Mapping[str, Any]) -> None:
    """An accelerator of ACCELERATORS, one device (a job trains one run on one device; many
    runs go to many devices through a launcher, docs/scaling.md), a precision the job trains
    on its accelerator (`check_precision`; "auto" is resolved where the job runs)."""
    if trainer["accelerator"] not in ACCELERATORS:
        raise ValueError(
            f"trainer.accelerator={trainer['accelerator']!r} is not valid; valid choices: "
            f"{list(ACCELERATORS)}"
        )
    if type(trainer["devices"]) is not int or trainer["devices"] != 1:
        raise ValueError(
            f"trainer.devices={trainer['devices']!r}: a job trains on one device (the integer "
            "1); to use several, run several jobs (a multirun with the joblib or submitit "
            "launcher)"
        )
    check_precision(trainer["precision"], trainer["accelerator"])


def check_precision(precision: Any, accelerator: str) -> None:
    """`precision` one a job trains as named on `accelerator`: ON_CPU on the CPU, else
    PRECISIONS (also for "auto", which the job resolves where it runs)."""
    valid = ON_CPU if accelerator == "cpu" else PRECISIONS
    if precision not in valid:
        raise ValueError(
            f"trainer.precision={precision!r} is not trained as named on accelerator "
            f"{accelerator!r} (a job's batches are float32; the CPU trains 16-mixed as "
            f"bf16-mixed); valid choices there: {list(valid)}"
        )
