"""Experiment loggers (Section 10 metrics go to W&B by default, offline unless logged in)."""

from __future__ import annotations

import netrc
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from lightning.pytorch.loggers import CSVLogger, Logger, WandbLogger

LOGGER_KINDS = ("wandb", "csv", "none")
WANDB_MODES = ("auto", "online", "offline", "disabled")


def wandb_logged_in() -> bool:
    """Whether a W&B API key is available (WANDB_API_KEY or a netrc entry for the W&B host)."""
    if os.environ.get("WANDB_API_KEY"):
        return True
    host = urlparse(os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai")).hostname
    try:
        return netrc.netrc().authenticators(host or "api.wandb.ai") is not None
    except (FileNotFoundError, netrc.NetrcParseError, OSError):
        return False


def wandb_mode(requested: str = "auto") -> str:
    """The W&B mode: WANDB_MODE wins, then `requested`; auto = online if logged in, else offline."""
    if requested not in WANDB_MODES:
        valid = list(WANDB_MODES)
        raise ValueError(f"logger.mode={requested!r} is not valid; choose one of {valid}")
    env = os.environ.get("WANDB_MODE")
    if env:
        return env
    if requested != "auto":
        return requested
    return "online" if wandb_logged_in() else "offline"


def build_logger(
    cfg: Mapping[str, Any],
    *,
    name: str,
    group: str,
    config: Mapping[str, Any],
    save_dir: str | Path,
) -> Logger | None:
    """The Lightning logger `cfg.kind` asks for; W&B gets group/name/config and its own dir."""
    kind = cfg.get("kind")
    if kind not in LOGGER_KINDS:
        raise ValueError(f"logger kind {kind!r} is not valid; choose one of {list(LOGGER_KINDS)}")
    if kind == "none":
        return None
    save_dir = Path(cfg.get("save_dir") or save_dir)
    save_dir.mkdir(parents=True, exist_ok=True)
    if kind == "csv":
        return CSVLogger(save_dir=save_dir, name="", version="csv")
    import wandb

    return WandbLogger(
        project=cfg.get("project", "dfl_bench"),
        entity=cfg.get("entity"),
        group=group,
        name=name,
        tags=list(cfg.get("tags") or []),
        config=dict(config),
        save_dir=str(save_dir),
        mode=wandb_mode(cfg.get("mode", "auto")),
        reinit="finish_previous",
        settings=wandb.Settings(console="off", x_disable_stats=True, silent=True),
    )


def log_dir(logger: Logger | None) -> str | None:
    """Where a logger writes: the W&B run folder, the CSV folder, or None."""
    if isinstance(logger, WandbLogger):
        return str(Path(logger.experiment.dir).parent)
    if logger is not None:
        return logger.log_dir
    return None


def finish(logger: Logger | None, failed: bool) -> None:
    """Close the W&B run cleanly (wandb.finish) so the next job of a sweep starts its own run."""
    if isinstance(logger, WandbLogger):
        import wandb

        if wandb.run is not None:
            wandb.finish(exit_code=1 if failed else 0)
