"""An optimizer's settings checked without torch (conf/optimizer/<name>.yaml, their one home):
`tasks.optim.spec` calls `check_optimizer` before it builds one, and a run record's optimizer is
held to it (lifecycle/record_config.py), so a job and a record take the same values. Each bad
value is one ValueError line naming the key and what is valid.

    >>> check_optimizer({"name": "sgd", "lr": 0.01, "momentum": -1.0})
    Traceback (most recent call last):
    ...
    ValueError: optimizer.momentum must be a finite number >= 0.0, got -1.0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from dfl_bench.checks import number
from dfl_bench.paths import CONFIG_DIR

SCHEDULE = "cosine_final"  # the last step's learning rate as a fraction of lr (a half cosine)
WARMUP = "warmup"  # steps over which the learning rate rises linearly to the schedule's


def optimizers(conf_dir: str = CONFIG_DIR) -> list[str]:
    """The optimizers a config may name: conf/optimizer's yamls."""
    return sorted(p.stem for p in (Path(conf_dir) / "optimizer").glob("*.yaml"))


@cache
def group_defaults(name: str) -> dict[str, Any]:
    """An optimizer's settings as its yaml gives them (conf/optimizer/<name>.yaml, their one
    home), under what a config sets: a Python caller gets what the command line gets."""
    spec = yaml.safe_load((Path(CONFIG_DIR) / "optimizer" / f"{name}.yaml").read_text())
    return {k: v for k, v in spec.items() if k != "name"}


def check_optimizer(
    cfg: Mapping[str, Any], max_steps: int | None = None, defaults: Mapping[str, Any] = {}
) -> None:
    """`{"name": ..., **params}`: a name of conf/optimizer, its schedule (`check_schedule`), each
    value over its yaml's (`check_value`, of the type of its yaml's value, else of `defaults`:
    the optimizer's own, where the caller has them)."""
    name = cfg.get("name")
    if not isinstance(name, str) or name not in optimizers():
        raise ValueError(f"unknown optimizer {name!r}; valid choices: {optimizers()}")
    check_schedule(cfg, max_steps)
    settings = {**group_defaults(name), **cfg}
    for key, value in settings.items():
        if key not in ("name", SCHEDULE, WARMUP):
            check_value(value, key, group_defaults(name).get(key, defaults.get(key)))


def check_schedule(cfg: Mapping[str, Any], max_steps: int | None = None) -> None:
    """`cosine_final` a fraction in (0, 1] or null; `warmup` whole steps >= 0, shorter than
    `max_steps` where known."""
    final, warmup = cfg.get(SCHEDULE), cfg.get(WARMUP)
    if final is not None and (
        isinstance(final, bool) or not (isinstance(final, int | float) and 0.0 < final <= 1.0)
    ):
        raise ValueError(f"optimizer.{SCHEDULE} must be a fraction in (0, 1], got {final!r}")
    if warmup is None:
        return
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"optimizer.{WARMUP} must be a whole number of steps >= 0, got {warmup!r}")
    if max_steps is not None and warmup >= max_steps:
        raise ValueError(
            f"optimizer.warmup={warmup} steps is not shorter than the run's {max_steps} "
            "(profile.max_steps): the rate would never reach optimizer.lr"
        )


def check_value(value: Any, key: str, default: Any) -> None:
    """One optimizer argument: of its default's type (true/false for a flag, a number for a
    number), a finite number > 0 for lr and >= 0 otherwise, betas two numbers in [0, 1)."""
    name = f"optimizer.{key}"
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, got {value!r}")
    elif isinstance(default, int | float) and (
        isinstance(value, bool) or not isinstance(value, int | float)
    ):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if key == "betas":
        if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2:
            raise ValueError(f"{name} must be two numbers in [0, 1), got {value!r}")
        for beta in value:
            number(beta, name, 0.0, open_low=False)
            if beta >= 1:
                raise ValueError(f"{name} must lie in [0, 1), got {list(value)}")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        number(value, name, 0.0, open_low=key == "lr")
