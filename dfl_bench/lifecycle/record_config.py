"""A run record's config held to the checks a job applies to its own before it trains, read
without torch (the results and campaign tools never import it): a configuration the job refuses
is no run a record may hold, whatever its hash.

    >>> cpu = {"accelerator": "cpu", "devices": 1, "precision": "32-true", "deterministic": False}
    >>> config_refusal({"trainer": cpu, "task": {"name": "mnist_addition", "digits": 99999}})
    'task.digits must be an integer in [1, 100], got 99999'
    >>> config_refusal({"task": {"name": "mnist_addition"}})[:28]
    'trainer.accelerator is requi'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dfl_bench.kinds import KINDS
from dfl_bench.lifecycle.composed import check_complete, check_idle
from dfl_bench.lifecycle.guards import (
    check_profile,
    check_shape,
    recommended_refusal,
    required_keys,
    uncalled_refusal,
)
from dfl_bench.lifecycle.migrate import migrate_config, shape_defect
from dfl_bench.lifecycle.trainer_values import check_trainer
from dfl_bench.operator_params import refusal as operator_refusal
from dfl_bench.tasks import DEFAULT
from dfl_bench.tasks.net_names import net_refusal
from dfl_bench.tasks.optimizer_values import check_optimizer
from dfl_bench.tasks.values import TASKS, check_split_seed


def config_refusal(config: Mapping[str, Any], overrides: Sequence[Any] = ()) -> str | None:
    """Why `config` (a record's; of an older form, as migrate.migrate_config has it today) is
    no configuration a job of this checkout takes (one line naming the key), or None (also for
    groups of another shape: migrate.shape_defect names them where a record is migrated): its
    keys, mappings and kinds (guards.check_shape), its budget (guards.check_profile), its
    Trainer (trainer_values.check_trainer), its optimizer's settings
    (optimizer_values.check_optimizer), each operator a registered one with its parameters in
    range and no other one's spelling (operator_params.refusal, same_operator: a job's too), its
    task's settings (values.TASKS; a task from a user's folder declares them in its class, read
    where it is imported), each key its run does not read at the composed value
    (composed.check_idle), every key its composition has (composed.check_complete: a job
    refuses `~kb.scope`), a split seed not the seed's (values.check_split_seed), and none of
    its `overrides` (the record's) setting an operator no formula of its knowledge base calls
    (guards.uncalled_refusal, a job's too) or a `recommended/<kind>` group
    (guards.recommended_refusal, a job's too), nor a network's name that another network could
    train under (net_names.net_refusal, a job's too). Its data, model, augment and kb values are
    record_fields.FIELDS'."""
    if shape_defect({"config": config}) is not None:
        return None
    config = migrate_config(config)
    try:
        check_shape(config)
        if isinstance(config.get("profile"), Mapping):
            check_profile(config["profile"], given=True)
        check_trainer(config.get("trainer") or {})
        task = config.get("task") or {}
        name = task.get("name", DEFAULT)
        if name in TASKS:
            TASKS[name].check(name, task)
            TASKS[name].check_data(name, config.get("data") or {})
        elif not isinstance(name, str) or not task.get("_target_"):  # tasks.target_of's rule
            raise ValueError(f"unknown task {name!r}; valid choices: {sorted(TASKS)}")
        check_split_seed(config)  # guards.check_config's, after the task's check of its data
        if isinstance(config.get("optimizer"), Mapping):
            steps = (config.get("profile") or {}).get("max_steps")
            check_optimizer(config["optimizer"], steps if isinstance(steps, int) else None)
        check_idle(config)
    except ValueError as err:
        return str(err)
    for kind in KINDS:
        why = (
            operator_refusal(kind, config[kind]) if isinstance(config.get(kind), Mapping) else None
        )
        if why is not None:
            return why
    try:
        check_complete(config, required_keys())
    except ValueError as err:
        return str(err)
    net = config.get("net")
    why = net_refusal(net, job=False) if isinstance(net, Mapping) else None
    if why is not None:  # a job's check too (guards.check_config)
        return why
    recommended = (recommended_refusal(line) for line in overrides)
    return next((why for why in recommended if why), None) or uncalled_refusal(config, overrides)
