"""Tasks: what a run learns. A task is one class (a `contract.Task`) and one yaml whose
`_target_` names the class: conf/task/<name>.yaml (`task=mnist_addition`), or a `task/` folder
on Hydra's search path (`hydra.searchpath=[file://my/conf] task=parity`, the class importable).
Nothing else registers a task: the composed config's `task._target_` is looked up here. The
lifecycle (dfl_bench/lifecycle/) trains, resumes, records and logs any task alike, as R runs of
one `training.RunsModule` (R = 1 for a single run); tasks/contract.py states the contract.

    >>> names()
    ['mnist_addition', 'mnist_kb']
    >>> task_of({"task": {"name": "mnist_addition"}}).IGNORES
    ('kb', 'tconorm', 'implication', 'model')
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import OmegaConf

from dfl_bench.checks import imported
from dfl_bench.paths import CONFIG_DIR

if TYPE_CHECKING:  # the contract imports torch: a task's class only where one is looked up
    from dfl_bench.tasks.contract import Task

TASK_DIR = Path(CONFIG_DIR) / "task"  # the package's own tasks, one yaml each
DEFAULT = "mnist_kb"  # the task of a config that names none (the paper's)
PAPER_TASK = {"name": DEFAULT}  # its setting in a record's config (no code keys)


def names() -> list[str]:
    """The tasks of conf/task/ (a task on the search path is found by its `_target_`)."""
    return sorted(path.stem for path in TASK_DIR.glob("*.yaml"))


def target_of(config: Mapping[str, Any]) -> str:
    """The class the config's task names: its `task._target_`, else (a record made before tasks
    were classes, a config without a task) that of conf/task/<task.name>.yaml."""
    task = config.get("task") or {}
    if task.get("_target_"):
        return str(task["_target_"])
    name = str(task.get("name", DEFAULT))
    if name not in names():
        raise ValueError(f"unknown task {name!r}; valid choices: {names()}")
    return str(OmegaConf.load(TASK_DIR / f"{name}.yaml")["_target_"])


@cache
def task_class(target: str) -> type[Task]:
    """The Task class `target` names (module.Class), else a ValueError naming the valid ones."""
    from dfl_bench.tasks.contract import Task

    found = imported(target, "task._target_", f"tasks of conf/task: {names()}")
    if not (isinstance(found, type) and issubclass(found, Task)):
        raise ValueError(
            f"task._target_={target!r} is not a task (a dfl_bench.tasks.contract.Task subclass)"
        )
    return found


def task_of(config: Mapping[str, Any]) -> Task:
    """The task a (resolved or composed) job config names, checked: its class, whose NAME is
    the config's `task.name`."""
    cls = task_class(target_of(config))
    name = str((config.get("task") or {}).get("name", DEFAULT))
    if name != cls.NAME:
        if name not in names():
            raise ValueError(f"unknown task {name!r}; valid choices: {names()}")
        raise ValueError(f"task.name={name!r}, but its _target_ is task {cls.NAME!r}")
    return cls()


def setting_types(name: str) -> dict[str, type]:
    """The settings task `name` of conf/task has (`task.<key>`) and the type of each, read from
    its yaml's values without importing its class (the results module needs no torch; a test
    holds them to the class's declarations).

    >>> setting_types("mnist_addition")["validation"]
    <class 'float'>
    """
    if name not in names():
        raise ValueError(f"unknown task {name!r}; valid choices: {names()}")
    values = OmegaConf.to_container(OmegaConf.load(TASK_DIR / f"{name}.yaml"))
    return {key: type(value) for key, value in values.items() if key not in ("_target_", "name")}
