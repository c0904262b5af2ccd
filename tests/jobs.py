"""In-process jobs for the tests: a config composed as `@hydra.main` would pass it to train."""

from __future__ import annotations

from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf, open_dict

from dfl_bench import train


def composed(
    tmp: Path, *overrides: str, mode: RunMode = RunMode.RUN
) -> tuple[DictConfig, DictConfig]:
    """(job config, hydra config) of a smoke job writing under `tmp`, for `train.run`."""
    with initialize_config_dir(config_dir=train.CONFIG_DIR, version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[
                "profile=smoke",
                "logger=none",
                "progress_bar=false",
                "threads=1",
                f"records_dir={tmp / 'records'}",
                f"checkpoint_dir={tmp / 'checkpoints'}",
                *overrides,
            ],
            return_hydra_config=True,
        )
    hydra_cfg = cfg.hydra
    hydra_cfg.runtime.output_dir = str(tmp)
    hydra_cfg.mode = mode
    with open_dict(cfg):
        del cfg["hydra"]
    OmegaConf.set_struct(cfg, True)
    return cfg, hydra_cfg
