"""In-process jobs for the tests: a config composed as `@hydra.main` would pass it to train."""

from __future__ import annotations

import copy
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf, open_dict

from dfl_bench.paths import CONFIG_DIR, REPO_DIR

# conf/trainer/cpu.yaml's group, as a record's config holds it (every key of trainer_values.PASSED)
CPU_TRAINER = {"accelerator": "cpu", "devices": 1, "precision": "32-true", "deterministic": False}

ROWS_EXPERIMENT = """\
# @package _global_
experiment_name: {name}
tnorm: ${{rows[${{row}}].tnorm}}
implication: ${{rows[${{row}}].implication}}
debug:
  nan_at_step: ${{rows[${{row}}].nan_at_step}}
row: product
rows:
  product: {{tnorm: {{name: product}}, implication: {{name: reichenbach}}, nan_at_step: null}}
  godel: {{tnorm: {{name: godel}}, implication: {{name: kleene_dienes}}, nan_at_step: null}}
  poisoned: {{tnorm: {{name: product}}, implication: {{name: reichenbach}}, nan_at_step: 2}}
hydra:
  sweeper:
    params:
      row: product,godel,poisoned
"""


def rows_experiment(tmp: Path, name: str) -> str:
    """Write a three-row test experiment `name` (product, godel and a row poisoned with NaN at
    step 2) under `tmp/conf/experiment/`; returns the override that puts it on Hydra's path."""
    folder = tmp / "conf" / "experiment"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.yaml").write_text(ROWS_EXPERIMENT.format(name=name))
    return f"hydra.searchpath=[file://{tmp / 'conf'}]"


def smoke_overrides(tmp: Path) -> list[str]:
    """A smoke job's overrides: tiny budget, no logger or progress bar, one thread, its records
    and checkpoints under `tmp`."""
    return [
        "profile=smoke",
        "logger=none",
        "progress_bar=false",
        "threads=1",
        f"records_dir={tmp / 'records'}",
        f"checkpoint_dir={tmp / 'checkpoints'}",
    ]


def composed(
    tmp: Path, *overrides: str, mode: RunMode = RunMode.RUN, own_budget: bool = False
) -> tuple[DictConfig, DictConfig]:
    """(job config, hydra config) of a smoke job writing under `tmp`, for `train.run`; with
    `own_budget`, at the budget its experiment's rows set (which refuse `profile=smoke`)."""
    smoke = [o for o in smoke_overrides(tmp) if not (own_budget and o == "profile=smoke")]
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[*smoke, *overrides],
            return_hydra_config=True,
        )
    hydra_cfg = cfg.hydra
    hydra_cfg.runtime.output_dir = str(tmp)
    hydra_cfg.mode = mode
    with open_dict(cfg):
        del cfg["hydra"]
    OmegaConf.set_struct(cfg, True)
    return cfg, hydra_cfg


@cache
def _resolved(overrides: tuple[str, ...]) -> dict[str, Any]:
    from dfl_bench.lifecycle.resolve import resolved_config

    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        return resolved_config(compose("config", overrides=list(overrides)))


def whole_config(*overrides: str, **values: Any) -> dict[str, Any]:
    """A job's resolved config as its record holds it, every key its composition gives (a record
    that lacks one is none: composed.check_complete), of `overrides` (a smoke job's budget where
    they choose none), with `values` at its top-level keys."""
    budget = [] if any(o.startswith("profile=") for o in overrides) else ["profile=smoke"]
    return {**copy.deepcopy(_resolved((*budget, "logger=none", *overrides))), **values}


def built_data(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every data module the paper's task builds from here on, in order (its `data` counted)."""
    from dfl_bench.tasks.mnist_kb import MnistKB

    built: list[Any] = []
    data = MnistKB.data

    def counted(self: MnistKB, configs: Any) -> Any:
        built.append(data(self, configs))
        return built[-1]

    monkeypatch.setattr(MnistKB, "data", counted)
    return built


def refused_on_cli(tmp: Path, override: str) -> str:
    """The stderr of a smoke job run with `override` on the command line, which exits 2
    before it writes a record."""
    import warm_cli

    env = {**os.environ, "PYTHONPATH": str(REPO_DIR), "WANDB_MODE": "disabled"}
    args = [*smoke_overrides(tmp), f"hydra.run.dir={tmp / 'out'}"]
    done = warm_cli.run([*args, override], tmp, env, timeout=600)
    assert done.returncode == 2, done.stderr[-3000:]
    assert not (tmp / "records").exists()
    return done.stderr
