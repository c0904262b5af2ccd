"""Tasks: what a run learns. A task is one module with `NAME`, `build(config, operators)` -> one
run (a `contract.TaskRun`) and `data(configs)` -> the LightningDataModule of R >= 1 runs, from
resolved job configs (conf/task/<name>.yaml picks it: `task=mnist_addition`); tasks/contract.py
states the contract. The lifecycle (dfl_bench/lifecycle/) trains, resumes, records and logs any
task alike, as R runs of one `training.RunsModule` (R = 1 for a single run).

    >>> from dfl_bench.tasks import names
    >>> names()
    ['mnist_addition', 'mnist_kb']
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from dfl_bench.schema import CONS_RATIO, CU_ANT, CU_CONS, DIGIT_ACCURACY

# name -> its module (imported on first use, so naming a task costs no torch import)
TASKS: dict[str, str | ModuleType] = {
    "mnist_kb": "dfl_bench.tasks.mnist_kb",
    "mnist_addition": "dfl_bench.tasks.mnist_addition",
}
# What a task declares without importing it: the config groups it does not read (an override of
# one would train the same numbers under another hash: refused) and its own integer settings
# (`task.<key>`: the range it accepts).
IGNORES: dict[str, tuple[str, ...]] = {
    "mnist_addition": ("kb", "tconorm", "implication", "model"),
}
SETTINGS: dict[str, dict[str, tuple[int, int]]] = {
    "mnist_addition": {"digits": (1, 100), "pairing_seed": (0, 2**32 - 1)},
}
# A task's settings that take one of named values, and those that are a fraction in [0, 1).
CHOICES: dict[str, dict[str, tuple[str, ...]]] = {
    "mnist_addition": {"valuation": ("log", "probability"), "loss": ("exact", "digits")},
}
FRACTIONS: dict[str, tuple[str, ...]] = {"mnist_addition": ("validation",)}
# The record fields a run's closing summary line shows beside its accuracy, as (label, field).
MEASURES: dict[str, tuple[tuple[str, str], ...]] = {
    "mnist_kb": (("cons", CONS_RATIO), (CU_CONS, CU_CONS), (CU_ANT, CU_ANT)),
    "mnist_addition": (("digit accuracy", DIGIT_ACCURACY),),
}


DEFAULT = "mnist_kb"  # the task of a config that names none (the paper's)


def name_of(config: Mapping[str, Any]) -> str:
    """The task a job config names (`task.name`; the paper's when absent), checked."""
    return check(str((config.get("task") or {}).get("name", DEFAULT)))


def measures(config: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The (label, record field) pairs of a run's summary line, by its config's task (none
    for a task that declares none)."""
    return MEASURES.get(name_of(config), ())


def names() -> list[str]:
    """The registered task names."""
    return sorted(TASKS)


def task(config: Mapping[str, Any]) -> ModuleType:
    """The task module a resolved job config names (`task.name`; the paper's when absent)."""
    entry = TASKS[name_of(config)]
    return importlib.import_module(entry) if isinstance(entry, str) else entry


def check(name: str) -> str:
    """`name` if it is a registered task, else a ValueError naming the valid ones."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; valid choices: {names()}")
    return name


def check_settings(config: Mapping[str, Any]) -> None:
    """A task config (`task: {name, ...}`): a registered task and each of its integer settings
    in its range, else a ValueError naming the range.

    >>> check_settings({"name": "mnist_addition", "digits": 0, "pairing_seed": 0})
    Traceback (most recent call last):
    ...
    ValueError: task.digits must be an integer in [1, 100], got 0
    """
    name = check(config.get("name", DEFAULT))
    for key, (low, high) in SETTINGS.get(name, {}).items():
        value = config.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"task.{key} must be an integer in [{low}, {high}], got {value!r}")
    for key, valid in CHOICES.get(name, {}).items():
        if key in config and config[key] not in valid:
            raise ValueError(f"task.{key} must be one of {list(valid)}, got {config[key]!r}")
    for key in FRACTIONS.get(name, ()):
        value = config.get(key, 0.0)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
            raise ValueError(f"task.{key} must be a fraction in [0, 1), got {value!r}")


def setting_types(name: str) -> dict[str, type]:
    """The settings task `name` declares (`task.<key>`) and the type of each value."""
    return {
        **{key: int for key in SETTINGS.get(name, {})},
        **{key: str for key in CHOICES.get(name, {})},
        **{key: float for key in FRACTIONS.get(name, ())},
    }


def ignored(name: str) -> tuple[str, ...]:
    """The config groups task `name` does not read."""
    return IGNORES.get(name, ())
